"""Parameter semantics of `jax.experimental.jax2tf` that this package keeps,
each compared with JAX itself."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf


def test_one_polymorphic_shape_string_applies_to_every_argument():
  def f(x, y):
    return x * 2 + y

  converted = tf.function(jax2tf.convert(f, polymorphic_shapes="(b,)"), autograph=False)
  spec = tf.TensorSpec([None], tf.float32)
  concrete = converted.get_concrete_function(spec, spec)
  for n in (1, 5):
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, -1.5, np.float32)
    np.testing.assert_array_equal(concrete(x, y).numpy(), np.asarray(jax.jit(f)(x, y)))


@pytest.mark.parametrize("native", [True, False])
def test_parameters_named_args_and_kwargs(native):
  def f(args, kwargs):
    return args - kwargs

  converted = tf.function(jax2tf.convert(f, native_serialization=native), autograph=False)
  x, y = np.float32(3.0), np.float32(0.25)
  assert converted(x, y).numpy() == jax.jit(f)(x, y)
  inputs = converted.get_concrete_function(*[tf.TensorSpec([], tf.float32)] * 2).inputs
  assert [t.name for t in inputs] == ["args:0", "kwargs:0"]


@tf.function(jit_compile=True, autograph=False)
def _no_results(x):
  del x


@pytest.mark.parametrize("staged", [False, True])
def test_call_tf_of_a_function_with_no_results_returns_none(staged):
  f = jax2tf.call_tf(_no_results)
  if staged:
    f = jax.jit(f)
  assert f(np.zeros(3, np.float32)) is None


def test_converted_call_tf_of_a_function_run_for_its_effect():
  printed = []

  def tf_effect(x):
    printed.append(x)  # at tracing: a stand-in for tf.print
    tf.print(x)

  def f(x):
    jax2tf.call_tf(tf_effect, call_tf_graph=True)(x)
    return jnp.sin(x)

  x = np.float32(0.5)
  assert jax2tf.convert(f)(x).numpy() == np.asarray(jax.jit(jnp.sin)(x))
  assert printed


def test_declared_results_of_a_function_with_none():
  f = jax2tf.call_tf(_no_results, output_shape_dtype=jax.ShapeDtypeStruct((3,), jnp.float32))
  with pytest.raises(ValueError, match="output_shape_dtype"):
    f(np.zeros(3, np.float32))
