"""The native route's flatbuffer rewrites (jax2tf/lite/rewrite.py): a
polymorphic batch leaves LiteRT nothing to size at run time, the converter's
fusions happen, and JAX's numbers stay."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jax2tf
from jax2tf import lite
from jax2tf.lite import inspect as lite_inspect
from jax2tf.lite import rewrite
from tests.lite.litert_plan import operators_left_unsized

pytestmark = pytest.mark.filterwarnings("ignore:to_tflite\\(route='native'\\)")

rng = np.random.default_rng(0)


def _normal(*shape):
  return rng.normal(size=shape).astype(np.float32)


def _native(fun, example, spec, **kwargs):
  return jax2tf.to_tflite(fun, example, polymorphic_shapes=[spec], route="native", **kwargs)


def _assert_like_jax(model, fun, *args):
  (got,) = lite.run(model, *args)
  want = np.asarray(jax.jit(fun)(*args))
  assert got.shape == want.shape
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dense_layers_are_fully_connected_ops_at_any_batch():
  w1, b1, w2, b2 = _normal(8, 16), _normal(16), _normal(16, 3), _normal(3)

  def f(x):
    return jax.nn.relu(x @ w1 + b1) @ w2 + b2

  model = _native(f, _normal(2, 8), "(b, 8)")
  # Unrewritten: 30 operators, a reshape and a broadcast per layer at
  # shapes computed at run time.
  assert lite_inspect.op_counts(model) == {"FULLY_CONNECTED": 2}
  assert operators_left_unsized(model, 7) == []
  for batch in (1, 7):
    _assert_like_jax(model, f, _normal(batch, 8))


def test_a_dense_layer_over_tokens_keeps_dims_and_its_bias_across_heads():
  w, b = _normal(8, 6), _normal(2, 3)

  def f(x):  # (batch, tokens, 8) -> (batch, tokens, heads 2, 3), bias per head
    return (x @ w).reshape(x.shape[0], 4, 2, 3) + b

  model = _native(f, _normal(2, 4, 8), "(b, 4, 8)")
  assert lite_inspect.op_counts(model) == {"FULLY_CONNECTED": 1, "RESHAPE": 1}
  assert operators_left_unsized(model, 3) == []
  for batch in (1, 3):
    _assert_like_jax(model, f, _normal(batch, 4, 8))


def test_conv_batch_norm_relu_and_average_pool_fold_into_two_ops():
  w = _normal(3, 3, 2, 4)
  mean, scale, beta = _normal(4), rng.uniform(0.5, 2, 4).astype(np.float32), _normal(4)

  def f(x):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu((y - mean) * scale + beta)
    return lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0

  model = _native(f, _normal(1, 8, 8, 2), "(b, 8, 8, 2)")
  assert lite_inspect.op_counts(model) == {"CONV_2D": 1, "AVERAGE_POOL_2D": 1}
  assert operators_left_unsized(model, 5) == []
  for batch in (1, 5):
    _assert_like_jax(model, f, _normal(batch, 8, 8, 2))


@pytest.mark.parametrize(
  "after, kept",
  [
    # x * 0 is NaN where x is infinite; zero weights would give 0.
    (lambda y: y * np.array([1.0, 0.0, 2.0, 1.0], np.float32), "MUL"),
    # Scaled weights would overflow where the products do not.
    (lambda y: y * np.array([1.0, 3e38, 2.0, 1.0], np.float32), "MUL"),
    # c - y is no bias.
    (lambda y: np.arange(4, dtype=np.float32) - y, "SUB"),
  ],
)
def test_affine_ops_that_weights_cannot_hold_stay(after, kept):
  w = np.full((1, 1, 2, 4), 2.0, np.float32)  # 2 * 3e38 overflows

  def f(x):
    return after(lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")))

  model = _native(f, _normal(1, 3, 3, 2), "(b, 3, 3, 2)")
  assert lite_inspect.op_counts(model)[kept] == 1
  x = _normal(2, 3, 3, 2)
  x[0, 0, 0, 0] = np.inf
  _assert_like_jax(model, f, x)


def test_a_causal_mask_becomes_a_constant_the_select_broadcasts():
  def f(scores):
    n = scores.shape[-1]
    causal = jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]
    return jnp.where(causal, scores, -1e9)

  model = _native(f, _normal(1, 2, 4, 4), "(b, 2, 4, 4)")
  ops = lite_inspect.op_counts(model)
  assert "BROADCAST_TO" not in ops and "SHAPE" not in ops, ops
  assert operators_left_unsized(model, 3) == []
  for batch in (1, 3):
    _assert_like_jax(model, f, _normal(batch, 2, 4, 4))


def test_a_model_without_those_patterns_comes_back_unchanged():
  model = jax2tf.to_tflite(lambda x: jnp.tanh(x) @ _normal(3, 3), _normal(2, 3), route="graph")
  assert rewrite.simplify(bytes(model)) == bytes(model)


@pytest.mark.parametrize(
  "fun, op",
  [(jax.nn.softmax, "SOFTMAX"), (jax.nn.log_softmax, "LOG_SOFTMAX"), (jax.nn.gelu, "GELU")],
)
def test_softmax_and_gelu_are_single_ops_with_jax_specials(fun, op):
  model = _native(fun, _normal(2, 4), "(b, 4)")
  assert lite_inspect.op_counts(model) == {op: 1}
  assert operators_left_unsized(model, 6) == []
  x = _normal(6, 4)
  # Rows holding NaN, +inf, -inf, all -inf (JAX: NaN, NaN, a zero, NaN).
  x[1, 0], x[2, 1], x[3, 2], x[4] = np.nan, np.inf, -np.inf, -np.inf
  _assert_like_jax(model, fun, x)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int32])
def test_clamp_with_crossed_bounds_gives_the_upper_one(dtype):
  # XLA's clamp is min(max(x, lo), hi), hi where lo > hi; TF's converter
  # lowers clamp as max(min(x, hi), lo), which gave lo there.
  lo = np.array([0, 2, -1, 5, 3], dtype)
  x = np.array([1, 1, 3, 4, -2], dtype)
  hi = np.array([2, 1, 0, 3, 3], dtype)

  def f(lo, x, hi):
    return lax.clamp(lo, x, hi), lax.clamp(lo[1], x, hi[3])

  model = jax2tf.to_tflite(f, lo, x, hi, route="native")
  for w, g in zip(jax.jit(f)(lo, x, hi), lite.run(model, lo, x, hi), strict=True):
    np.testing.assert_array_equal(g, np.asarray(w))
