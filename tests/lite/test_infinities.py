"""Infinite constants survive TF's TFLite converter, which writes them as the
largest finite float32 (jax2tf/lite/infinities.py)."""

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from tensorflow.lite.python import schema_py_generated as schema

import jax2tf
from jax2tf import lite
from jax2tf.lite import flatbuffer, infinities

_LARGEST = np.finfo(np.float32).max
_X = np.array([2.0, -1.0, 0.0, 0.5], np.float32)


def _assert_same_bits(got, want):
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  finite = ~np.isnan(want)
  np.testing.assert_array_equal(got[finite], want[finite])


def _with_infinities(x):
  # inf and -inf as values, inf * 0 (NaN), a comparison with inf.
  big = jnp.where(x > 1, jnp.inf, jnp.where(x < 0, -jnp.inf, x))
  return big, x * jnp.inf, (x * 1e38 * 10 >= jnp.inf).astype(jnp.float32)


@pytest.mark.parametrize("route", ["graph", "native"])
def test_infinite_constants_stay_infinite(route):
  model = jax2tf.to_tflite(_with_infinities, _X, route=route)
  for got, want in zip(lite.run(model, _X), jax.jit(_with_infinities)(_X)):
    _assert_same_bits(got, np.asarray(want))


@pytest.mark.parametrize("route", ["graph", "native"])
def test_a_largest_float_constant_is_kept_and_the_conversion_warns(route):
  def f(x):
    return jnp.where(x > 1, _LARGEST, x), jnp.where(x < 0, -jnp.inf, x)

  with pytest.warns(UserWarning, match=r"holds the constant \+-3\.4028235e\+38 \(the largest float32\)"):
    model = jax2tf.to_tflite(f, _X, route=route, verify=False)
  largest, lowest = lite.run(model, _X)
  _assert_same_bits(largest, np.asarray(f(_X)[0]))
  # The infinity the converter wrote as the lowest float stays that value.
  assert lowest[1] == -_LARGEST


_SPECIALS = [np.float32(v) for v in (2.0, -1.0, -0.0, np.inf, -np.inf, np.nan, -3e38)]


@pytest.mark.parametrize("route", ["graph", "native"])
@pytest.mark.parametrize("op", [lax.min, lax.max], ids=["min", "max"])
def test_a_max_or_min_with_an_infinite_constant_is_kept(route, op):
  # TF's TFLite converter drops a Maximum or Minimum whose other operand is a
  # constant of infinities or largest floats of the result's shape, whatever
  # their signs: min(x, -inf) became x, and so did min(x, max of nothing)
  # (fuzz p55815; on the native route the converter folds the reduction).
  def infinite(*xs):
    outs = [op(x, c) for x in xs for c in (-np.inf, np.inf)]
    outs += [op(np.full((2,), -np.inf, np.float32), x) for x in xs]
    if route == "graph":
      outs += [op(x, lax.reduce_max(np.ones((0,), np.float32), (0,))) for x in xs]
    return outs

  def largest(*xs):
    return [op(x, c) for x in xs for c in (-_LARGEST, _LARGEST)]

  with pytest.warns(UserWarning) if route == "native" else contextlib.nullcontext():
    model = jax2tf.to_tflite(infinite, *_SPECIALS, route=route, verify=False)
  for got, want in zip(lite.run(model, *_SPECIALS), jax.jit(infinite)(*_SPECIALS), strict=True):
    _assert_same_bits(got, np.asarray(want))
  with pytest.warns(UserWarning, match="largest float32"):
    model = jax2tf.to_tflite(largest, *_SPECIALS, route=route, verify=False)
  for got, want in zip(lite.run(model, *_SPECIALS), jax.jit(largest)(*_SPECIALS), strict=True):
    _assert_same_bits(got, np.asarray(want))


def test_restorable_finds_constants_in_nested_computations():
  def in_cond(x):
    return lax.cond(x[0] > 0, lambda v: v * _LARGEST, lambda v: v, x)

  def in_scan(x):
    return lax.scan(lambda c, v: (c + v, c), jnp.float32(-_LARGEST), x)[1]

  spec = jax.ShapeDtypeStruct((4,), np.float32)

  def held(f):
    return flatbuffer.TensorType.FLOAT32 not in infinities.restorable(jax.make_jaxpr(f)(spec))

  assert held(in_cond)
  assert held(in_scan)
  assert held(lambda x: x + jnp.asarray([0.0, _LARGEST, 0.0, 0.0]))
  assert not held(lambda x: jnp.maximum(x, -jnp.inf) * 3.0e38)
  assert not infinities.restorable(None)  # JAX could not trace: keep the constants


def test_restore_leaves_a_buffer_that_an_integer_constant_shares():
  # The converter shares one buffer between constants of equal bytes, of any
  # type: an int32 2139095039 has the bytes of float32 3.4028235e38.
  def f(x):
    return jnp.where(x > 1, _LARGEST, x)

  with pytest.warns(UserWarning, match="holds the constant"):
    content = bytes(jax2tf.to_tflite(f, _X, verify=False))

  def largest_buffers(model):
    graph = flatbuffer.Graph(model, 0)
    values = [(t.buffer, graph.constant(i)) for i, t in enumerate(graph.subgraph.tensors)]
    return [b for b, v in values if v is not None and v.dtype == np.float32 and (v == _LARGEST).any()]

  assert infinities.restore(flatbuffer.load(content))
  model = flatbuffer.load(content)
  shared = schema.TensorT()
  shared.shape, shared.type, shared.buffer = [], flatbuffer.TensorType.INT32, largest_buffers(model)[0]
  model.subgraphs[0].tensors.append(shared)
  assert not infinities.restore(model)
  assert largest_buffers(model)


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16], ids=["float16", "bfloat16"])
def test_infinite_16_bit_constants_stay_infinite(dtype):
  # The converter folds the identity of an empty max into a constant of the
  # 16-bit type's largest finite value.
  def f(x):
    return lax.reduce_max(x[:, :0], (1,)), lax.reduce_min(x[:0], (0,)), x * jnp.inf

  x = _X.reshape(2, 2).astype(dtype)
  model = jax2tf.to_tflite(f, x, route="graph")
  for got, want in zip(lite.run(model, x), jax.jit(f)(x)):
    assert got.dtype == want.dtype
    _assert_same_bits(got.astype(np.float32), np.asarray(want, np.float32))


def test_a_type_whose_largest_float_the_function_holds_keeps_only_its_constants():
  # The float16 results fold into constants. float32 65510 rounds to float16's
  # largest: the float16 constants stay (and the conversion warns), the
  # float32 ones are restored.
  def f(x):
    empty = x[:0].astype(jnp.float16)
    largest = (jnp.float32(65510.0) + lax.reduce_sum(x[:0], (0,))).astype(jnp.float16)
    return lax.reduce_max(empty, (0,)), largest, jnp.where(x > 1, jnp.inf, x)

  traced = jax.make_jaxpr(f)(_X)
  assert infinities.restorable(traced) == infinities.EVERY_TYPE - {flatbuffer.TensorType.FLOAT16}
  with pytest.warns(UserWarning, match=r"holds the constant \+-65504 \(the largest float16\)"):
    model = jax2tf.to_tflite(f, _X, route="graph", verify=False)
  empty_max, largest, single = lite.run(model, _X)
  assert empty_max == -65504  # JAX: -inf, which the constant cannot tell from -65504
  assert largest == 65504
  _assert_same_bits(single, np.asarray(f(_X)[2]))
