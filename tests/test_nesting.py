"""A converted function is refused where JAX traces, as upstream's is, but
runs inside TF code that call_tf runs for JAX."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax2tf

_REFUSED = "convert must be used outside all JAX transformations"


def test_convert_of_a_function_that_converts_its_tracers():
  def outer(y):
    return jax2tf.convert(jnp.sin)(y)

  with pytest.raises(ValueError, match=_REFUSED):
    jax2tf.convert(outer)(np.ones((4,), np.float32))


def test_convert_of_a_function_that_converts_a_constant():
  def outer(y):
    return y + jax2tf.convert(jnp.sin)(np.float32(1.0))

  with pytest.raises(ValueError, match=_REFUSED):
    jax2tf.convert(outer)(np.float32(2.0))


@pytest.mark.parametrize("transform", [jax.jit, jax.grad, jax.vmap])
def test_converted_function_under_a_jax_transformation(transform):
  def f(y):
    return jax2tf.convert(jnp.sin)(y)

  x = np.ones((3,), np.float32) if transform is jax.vmap else np.float32(0.5)
  with pytest.raises(ValueError, match=_REFUSED):
    transform(f)(x)


@pytest.mark.parametrize("under_jit", [False, True])
def test_tf_code_of_call_tf_may_call_converted_functions(under_jit):
  def tf_code(x):
    return jax2tf.convert(jnp.cos)(x) * 2

  f = jax2tf.call_tf(tf_code)
  if under_jit:
    f = jax.jit(f)
  x = np.float32(0.5)
  np.testing.assert_allclose(np.asarray(f(x)), np.asarray(jnp.cos(x) * 2), rtol=1e-6)


def test_conj_bound_without_its_input_dtype():
  # JAX's own harness binds conj_p without input_dtype, which JAX accepts.
  def f(x):
    return jax.lax.conj_p.bind(x)

  x = np.array([1 + 2j, -3 - 0.5j], np.complex64)
  for native in (False, True):
    got = jax2tf.convert(f, native_serialization=native)(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.jit(f)(x)))
