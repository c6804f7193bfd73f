"""The graph route's ABS after a ReLU (XLA's relu(-0.0) is +0.0) moves past
pools and goes where a biased matmul or convolution reads the value; JAX's
zeros keep their signs (jax2tf/lite/signed_zeros.py). On the litert route,
max and min, their reductions and pools order the zeros as XLA does
(jax2tf/native/module_patterns.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jax2tf
from jax2tf import lite
from jax2tf.lite import inspect as lite_inspect
from tests.support import compare

_NHWC = ("NHWC", "HWIO", "NHWC")


def _conv(x, w):
  return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=_NHWC)


def _graph(fun, x):
  return jax2tf.to_tflite(fun, x, polymorphic_shapes=["(b, 6, 6, 2)"], route="graph")


def _inputs(batch):
  rng = np.random.default_rng(batch)
  x = rng.normal(size=(batch, 6, 6, 2)).astype(np.float32)
  x[0] = 0.0  # every product -0.0 with negative weights: the ReLU sees -0.0
  return x


def _assert_same_with_zero_signs(model, fun, x):
  (got,) = lite.run(model, x)
  want = np.asarray(jax.jit(fun)(x))
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  zeros = want == 0
  np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


def _op_names(model):
  from ai_edge_litert import interpreter  # pylint: disable=import-outside-toplevel

  runner = interpreter.Interpreter(model_content=bytes(model))
  return [op["op_name"] for op in runner._get_ops_details()]  # pylint: disable=protected-access


def test_the_abs_moves_after_a_pool():
  w = -np.abs(np.random.default_rng(0).normal(size=(3, 3, 2, 4))).astype(np.float32)

  def f(x):
    y = jax.nn.relu(_conv(x, w))
    return lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0

  model = _graph(f, _inputs(2))
  assert _op_names(model) == ["CONV_2D", "AVERAGE_POOL_2D", "ABS"]
  for batch in (1, 3):
    _assert_same_with_zero_signs(model, f, _inputs(batch))


@pytest.mark.parametrize("bias_has_a_zero", [False, True])
def test_the_abs_goes_before_a_convolution_with_a_bias_free_of_zeros(bias_has_a_zero):
  rng = np.random.default_rng(1)
  w1 = -np.abs(rng.normal(size=(3, 3, 2, 4))).astype(np.float32)
  w2 = rng.normal(size=(3, 3, 4, 3)).astype(np.float32)
  b2 = np.array([0.5, 0.0 if bias_has_a_zero else -0.25, 1.0], np.float32)

  def f(x):
    return _conv(jax.nn.relu(_conv(x, w1)), w2) + b2

  model = _graph(f, _inputs(2))
  assert lite_inspect.op_counts(model).get("ABS", 0) == (1 if bias_has_a_zero else 0)
  for batch in (1, 3):
    _assert_same_with_zero_signs(model, f, _inputs(batch))


# Both zeros against each other, against NaN and against numbers.
_LEFT = np.array([-0.0, 0.0, -0.0, 0.0, np.nan, -0.0, -1.0, 2.0], np.float32)
_RIGHT = np.array([0.0, -0.0, -0.0, 0.0, -0.0, np.nan, -0.0, 0.0], np.float32)


def _exactly_as_jax(model, fun, *args):
  (got,) = lite.run(model, *args)
  # Exact: the same numbers, NaNs where JAX's are, the same signs of zero.
  compare.assert_same(np.asarray(jax.jit(fun)(*args)), np.asarray(got), exact=True)


@pytest.mark.parametrize("fun", [lax.max, lax.min], ids=["max", "min"])
def test_litert_orders_the_zeros_of_a_max_and_a_min(fun):
  # XLA orders -0.0 below +0.0; LiteRT's MAXIMUM and MINIMUM return either.
  pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")
  model = jax2tf.to_tflite(fun, _LEFT, _RIGHT, route="litert", verify=False)
  _exactly_as_jax(model, fun, _LEFT, _RIGHT)


def test_litert_relu_of_negative_zero_is_positive_zero():
  # litert-converter writes max(x, 0.0) as RELU, which keeps -0.0.
  pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")
  fun = lambda x: lax.max(x, 0.0)  # noqa: E731
  model = jax2tf.to_tflite(fun, _LEFT, route="litert", verify=False)
  _exactly_as_jax(model, fun, _LEFT)
  assert "ABS" in _op_names(model)


def _pool(kind):
  init, combine = (-np.inf, lax.max) if kind == "max" else (np.inf, lax.min)
  return lambda x: lax.reduce_window(x, init, combine, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


# Slices that hold both zeros, in either order, beside ones of one zero, a
# NaN or neither.
_ZEROS_AND_NAN = np.array(
  [
    [
      [0.0, -0.0, 1.0, 0.0],
      [-0.0, 0.0, -0.0, -0.0],
      [np.nan, -0.0, 0.0, -2.0],
      [-3.0, 0.0, -0.0, 4.0],
    ],
    [
      [-0.0, -0.0, 0.0, 0.0],
      [0.0, -0.0, 2.0, -1.0],
      [-0.0, 0.0, np.nan, 0.0],
      [0.0, 0.0, -0.0, -0.0],
    ],
  ],
  np.float32,
)[..., None]


@pytest.mark.parametrize(
  "fun",
  [
    lambda x: lax.reduce_max(x, (1,)),
    lambda x: lax.reduce_min(x, (2,)),
    lambda x: lax.reduce_max(x, (0, 1)),
    _pool("max"),
    _pool("min"),
    lambda x: lax.cummax(x, axis=2),
  ],
  ids=["reduce_max", "reduce_min", "reduce_max_two_axes", "max_pool", "min_pool", "cummax"],
)
def test_litert_max_and_min_reductions_keep_the_decisive_zero_and_nan(fun):
  # LiteRT's pools and REDUCE_MAX/MIN return whichever zero of a tie they
  # meet first and skip NaN; XLA's return +0.0 (max) or -0.0 (min) and NaN.
  pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")
  model = jax2tf.to_tflite(fun, _ZEROS_AND_NAN, route="litert", verify=False)
  _exactly_as_jax(model, fun, _ZEROS_AND_NAN)


def _relu_pool(x):
  return _pool("max")(jax.nn.relu(x))


def _softmaxes(x):
  return jax.nn.softmax(x, axis=2) + jax.nn.log_softmax(x, axis=1)


@pytest.mark.parametrize(
  "fun, tells_zeros_apart",
  [(_pool("max"), True), (_relu_pool, False), (_softmaxes, False)],
  ids=["pool", "pool_of_relu", "softmaxes"],
)
def test_litert_tells_zeros_apart_only_where_their_sign_can_differ(fun, tells_zeros_apart):
  # A ReLU's result holds no -0.0, and softmax reads the max only through
  # exp: neither needs the zeros' marks (where x == 0 and 1/x > 0, the only
  # LOGICAL_AND these functions have). Their NaN is still propagated.
  pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")
  model = jax2tf.to_tflite(fun, _ZEROS_AND_NAN, route="litert", verify=False)
  assert ("LOGICAL_AND" in lite_inspect.op_counts(model)) == tells_zeros_apart
  (got,) = lite.run(model, _ZEROS_AND_NAN)
  # NaNs where JAX's are and the same signs of zero; exp and log round.
  want = np.asarray(jax.jit(fun)(_ZEROS_AND_NAN))
  compare.assert_same(want, np.asarray(got), tol=(1e-6, 1e-6))


@pytest.mark.parametrize("route", ["litert", "native"])
def test_pads_with_negative_zero_write_negative_zeros(route):
  # The converters write a constant -0.0 as +0.0.
  pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")
  if route == "native":
    pytest.importorskip("tensorflow")

  def fun(x):
    return lax.pad(x, np.float32(-0.0), [(2, 1, 1)])

  model = jax2tf.to_tflite(fun, _LEFT, route=route, verify=False)
  _exactly_as_jax(model, fun, _LEFT)


_SPECIALS = np.array([np.inf, -np.inf, np.nan, -2.0, -0.0, 0.0, 3.0, 1e-45], np.float32)


@pytest.mark.parametrize(
  "name, fun",
  [
    ("times_zero", lambda x: x * 0.0),
    ("times_negative_zero", lambda x: -0.0 * x),
    ("times_zeros_like", lambda x: x * jnp.zeros_like(x)),
    # XLA drops the + 0.0, keeping the product's -0.0.
    ("times_zero_plus_zero", lambda x: x * 0.0 + 0.0),
    ("switch_branch_times_zero", lambda x: lax.switch(0, [lambda v: v * 0 + 0, jnp.sin], x)),
  ],
)
def test_products_with_zero_keep_nan_and_the_sign_on_litert(name, fun):
  # litert-converter folds x * 0.0 into zeros
  # (module_patterns.MULTIPLY_BY_ZEROS_FROM_THE_OPERAND).
  (got,) = lite.run(jax2tf.to_tflite(fun, _SPECIALS, route="litert"), _SPECIALS)
  compare.assert_same(np.asarray(jax.jit(fun)(_SPECIALS)), got, exact=True, where=name)
