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


def test_parameters_kept_in_a_tf_module_are_pytrees(tmp_path):
  # tf.Module wraps list, tuple and dict attributes in TF's trackable
  # containers: the usual way to save parameters as variables.
  rng = np.random.default_rng(0)
  params = {
    "dense": [rng.normal(size=(3, 4)).astype(np.float32), np.float32([0.5, -1, 0, 2])],
    "scale": (np.float32(2.0),),
  }

  def f(p, x):
    w, b = p["dense"]
    return (x @ w + b) * p["scale"][0]

  module = tf.Module()
  module.params = tf.nest.map_structure(tf.Variable, params)
  converted = jax2tf.convert(f, polymorphic_shapes=[None, "(b, 3)"])
  module.f = tf.function(
    lambda x: converted(module.params, x),
    autograph=False,
    input_signature=[tf.TensorSpec([None, 3], tf.float32)],
  )
  x = rng.normal(size=(5, 3)).astype(np.float32)
  want = np.asarray(jax.jit(f)(params, x))
  np.testing.assert_allclose(module.f(x).numpy(), want, rtol=1e-6)
  tf.saved_model.save(module, str(tmp_path))
  loaded = tf.saved_model.load(str(tmp_path))
  np.testing.assert_allclose(loaded.f(x).numpy(), want, rtol=1e-6)
