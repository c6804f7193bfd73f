"""call_tf behaviours that JAX's own call_tf test suite (jax-v0.10.2,
jax/experimental/jax2tf/tests/call_tf_test.py) relies on: an explicit
`output_shape_dtype=None`, declared dtypes without x64, sparse TF gradients,
captured variables under a tf.function, and results JAX cannot represent.
Expected values come from JAX itself wherever it can compute them."""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from jax2tf import call_tf

MODES = ["eager", "jit", "native", "graph"]


def _run(mode, f, *args):
  """`f` (a JAX function) applied op by op, under jax.jit, or converted back to
  TF (native or graph serialization) and run in a tf.function."""
  if mode == "eager":
    return f(*args)
  if mode == "jit":
    return jax.jit(f)(*args)
  converted = jax2tf.convert(f, native_serialization=mode == "native")
  return tf.function(converted, autograph=False)(*args)


def _identity_tf(x):
  return tf.identity(x)


@tf.function(jit_compile=True, autograph=False)
def _no_results_tf(x):
  del x


# -- output_shape_dtype: omitted (inferred) versus an explicit None -----------


def test_omitted_output_shape_dtype_is_not_none():
  default = inspect.signature(call_tf).parameters["output_shape_dtype"].default
  assert default is not None
  assert "infer" in repr(default)


@pytest.mark.parametrize("mode", MODES)
def test_omitted_output_shape_dtype_infers_the_results(mode):
  x = np.arange(10, dtype=np.float32)
  declared = call_tf(_identity_tf, output_shape_dtype=jax.ShapeDtypeStruct(x.shape, x.dtype))
  np.testing.assert_array_equal(_run(mode, call_tf(_identity_tf), x), _run(mode, declared, x))


@pytest.mark.parametrize("mode", ["eager", "jit", "native"])
def test_explicit_none_declares_no_results(mode):
  # JAX's call_tf: output_shape_dtype=None is the pytree of no results, so a
  # function that returns something disagrees with it.
  x = np.zeros(10, np.float32)
  f = call_tf(_identity_tf, output_shape_dtype=None)
  with pytest.raises(ValueError, match=r"structure PyTreeDef\(None\).*returns PyTreeDef\(\*\)"):
    _run(mode, f, x)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_explicit_none_for_a_function_without_results(mode):
  x = np.zeros(10, np.float32)
  assert _run(mode, call_tf(_no_results_tf, output_shape_dtype=None), x) is None
  assert _run(mode, call_tf(_no_results_tf), x) is None


def test_declared_result_for_a_function_without_results():
  f = call_tf(_no_results_tf, output_shape_dtype=jax.ShapeDtypeStruct((10,), np.float32))
  with pytest.raises(ValueError, match=r"structure PyTreeDef\(\*\).*returns PyTreeDef\(None\)"):
    f(np.zeros(10, np.float32))


# -- declared dtypes and jax_enable_x64 ----------------------------------------


def _cast_to(dtype):
  return lambda x: tf.cast(x, dtype)


# (dtype TF returns, declared dtype): the declaration may name the TF dtype or
# what JAX makes of it; anything else is an error.
X32_AGREE = [
  (tf.float32, np.float32),
  (tf.float64, np.float64),
  (tf.float64, np.float32),
  (tf.int64, np.int64),
  (tf.int64, np.int32),
]
X32_DISAGREE = [(tf.float32, np.float64), (tf.int32, np.int64), (tf.float32, np.int32)]


@pytest.mark.parametrize("mode", ["eager", "jit", "native"])
@pytest.mark.parametrize("tf_dtype,declared", X32_AGREE, ids=str)
def test_declared_dtype_that_agrees_without_x64(mode, tf_dtype, declared):
  x = np.array([7, 8, 9, 10], np.float32)
  inferred = _run(mode, call_tf(_cast_to(tf_dtype)), x)
  f = call_tf(_cast_to(tf_dtype), output_shape_dtype=jax.ShapeDtypeStruct(x.shape, declared))
  res = _run(mode, f, x)
  got = res.dtype.as_numpy_dtype if mode == "native" else res.dtype
  assert np.dtype(got) == jax.dtypes.canonicalize_dtype(declared)
  np.testing.assert_array_equal(np.asarray(res), np.asarray(inferred))


@pytest.mark.parametrize("mode", ["eager", "jit", "native", "graph"])
@pytest.mark.parametrize("tf_dtype,declared", X32_DISAGREE, ids=str)
def test_declared_dtype_that_disagrees_without_x64(mode, tf_dtype, declared):
  # As in JAX's call_tf: a float64 declaration for a float32 result is wrong
  # even though JAX without x64 would represent both as float32.
  x = np.array([7, 8, 9, 10], np.float32)
  f = call_tf(_cast_to(tf_dtype), output_shape_dtype=jax.ShapeDtypeStruct(x.shape, declared))
  want, got = np.dtype(declared).name, tf_dtype.name
  with pytest.raises(ValueError, match=rf"result 0 .* as {want}\[4\], but TF computes {got}"):
    _run(mode, f, x)


def test_declared_float64_for_float32_polymorphic():
  x = np.array([7, 8, 9, 10], np.float32)

  def fun_jax(x):
    return call_tf(
      lambda x: x * np.float64(3.0), output_shape_dtype=jax.ShapeDtypeStruct(x.shape, np.float64)
    )(x)

  with pytest.raises(ValueError, match=r"as float64\[b\], but TF computes float32"):
    jax2tf.convert(fun_jax, polymorphic_shapes=["b"])(x)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_declared_dtype_with_x64(mode):
  x = np.array([7, 8, 9, 10], np.float32)
  with jax.enable_x64(True):
    ok = call_tf(_cast_to(tf.float64), output_shape_dtype=jax.ShapeDtypeStruct((4,), np.float64))
    res = _run(mode, ok, x)
    assert res.dtype == np.float64
    np.testing.assert_array_equal(res, _run(mode, call_tf(_cast_to(tf.float64)), x))
    # With x64 JAX keeps float64, so float32 names neither it nor JAX's form.
    bad = call_tf(_cast_to(tf.float64), output_shape_dtype=jax.ShapeDtypeStruct((4,), np.float32))
    with pytest.raises(ValueError, match=r"as float32\[4\], but TF computes float64"):
      _run(mode, bad, x)


# -- gradients TF gives as tf.IndexedSlices ---------------------------------


@tf.function(jit_compile=True, autograph=False)
def _std_of_gather_tf(operand, indices):
  return tf.experimental.numpy.std(tf.gather(operand, indices))


@pytest.mark.parametrize("mode", MODES)
def test_grad_through_tf_gather(mode):
  rng = np.random.default_rng(0)
  operand = rng.uniform(size=(10, 8)).astype(np.float32)
  indices = rng.integers(0, 10, size=(40,)).astype(np.int32)
  grad = jax.grad(call_tf(_std_of_gather_tf))
  want = jax.grad(lambda o, i: jnp.std(o[i]))(operand, indices)
  res = _run(mode, grad, operand, indices)
  assert res.shape == (10, 8)
  np.testing.assert_allclose(np.asarray(res), want, rtol=1e-5, atol=1e-6)


def test_vjp_of_a_python_function_using_tf_gather():
  # Not a tf.function: the tape sees the gather itself.
  operand = np.arange(12, dtype=np.float32).reshape(4, 3)
  indices = np.array([0, 2, 2], np.int32)
  f = call_tf(lambda o, i: tf.reduce_sum(tf.gather(o, i) ** 2))
  want = jax.grad(lambda o, i: jnp.sum(o[i] ** 2))(operand, indices)
  np.testing.assert_allclose(jax.grad(f)(operand, indices), want)
  np.testing.assert_allclose(jax.jit(jax.grad(f))(operand, indices), want)


# -- captured variables, converted again, under a tf.function ----------------


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("in_tf_function", [False, True])
def test_captured_variable_then_convert_again(native, in_tf_function):
  captured = tf.Variable(np.arange(16, dtype=np.float32))

  def tf_fn(x):
    return tf.math.add(x, captured)

  x = np.arange(16, dtype=np.float32) * 0.5
  f_tf = jax2tf.convert(call_tf(tf_fn), native_serialization=native)
  if in_tf_function:
    f_tf = tf.function(f_tf, autograph=False)
  want = jax.jit(lambda x, v: x + v)(x, captured.numpy())
  np.testing.assert_array_equal(f_tf(x).numpy(), want)


def test_captured_variable_converted_in_a_tf_function_then_saved(tmp_path):
  captured = tf.Variable(np.float32([1.0, -2.0, 3.0]))
  module = tf.Module()
  module.v = captured
  module.f = tf.function(
    jax2tf.convert(call_tf(lambda x: x * captured)),
    autograph=False,
    input_signature=[tf.TensorSpec([3], tf.float32)],
  )
  tf.saved_model.save(module, str(tmp_path))
  restored = tf.saved_model.load(str(tmp_path))
  x = np.float32([2.0, 3.0, 4.0])
  np.testing.assert_array_equal(restored.f(x).numpy(), x * captured.numpy())


# -- results JAX cannot represent ----------------------------------------------


def _string_tf():
  return tf.constant("foo")


def _tensor_array_tf():
  ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
  return ta.unstack([0, 1, 2, 3, 4])


def _second_is_string_tf(x):
  return x, tf.strings.as_string(x)


@pytest.mark.parametrize("staged", [False, True])
@pytest.mark.parametrize(
  "fun_tf,args,pattern",
  [
    (_string_tf, (), r"result 0 .* TF dtype string, which JAX cannot represent"),
    (_tensor_array_tf, (), r"result 0 .* is a tf\.TensorArray .*not convertible to a tensor"),
    (_second_is_string_tf, (np.float32(1.0),), r"result 1 .* TF dtype string"),
  ],
  ids=["string", "tensor_array", "second_result"],
)
def test_result_jax_cannot_represent_is_a_value_error(staged, fun_tf, args, pattern):
  f = call_tf(fun_tf)
  if staged:
    f = jax.jit(f)
  with pytest.raises(ValueError, match=pattern) as e:
    f(*args)
  # This package raised TypeError for such results before; it still may be caught so.
  assert isinstance(e.value, TypeError)
  assert "numeric or boolean" in str(e.value)
