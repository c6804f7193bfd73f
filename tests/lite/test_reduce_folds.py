"""Reductions and windows no TFLite kernel runs, as the folds XLA computes
(jax2tf/native/reduce_folds.py), on both StableHLO routes, exactly as
`jax.jit` gives them."""

import jax
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from jax2tf.lite import inspect as lite_inspect  # noqa: E402

# The case table's bodies: neither associative nor commutative (the result
# shows the fold's order), and an argmax of pairs.
from tests.cases.reductions import _argmax_body as _argmax  # noqa: E402
from tests.cases.reductions import _ordered  # noqa: E402
from tests.cases.reductions import _ordered_pair as _pair  # noqa: E402
from tests.support import compare  # noqa: E402

_RNG = np.random.default_rng(0)


def _ints(shape, dtype=np.int32, seed=0):
  return np.random.default_rng(seed).integers(-9, 9, size=shape).astype(dtype)


def _bits(dtype, shape=(5, 4)):
  info = np.iinfo(dtype)
  return _RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


_CASES = {
  # XLA folds 100 elements as a tree: windows of 32, SAME-padded.
  "ordered_tree": (lambda x: lax.reduce(x, np.int32(7), _ordered, (1,)), (_ints((3, 100)),)),
  "ordered_two_axes": (lambda x: lax.reduce(x, np.int32(7), _ordered, (0, 2)), (_ints((3, 4, 5)),)),
  "pair": (
    lambda x, y: lax.reduce((x, y), (np.int32(1), np.int32(2)), _pair, (0, 2)),
    (_ints((3, 4, 5)), _ints((3, 4, 5), seed=1)),
  ),
  "and_int32": (lambda x: lax.reduce_and(x, (1,)), (_bits(np.int32),)),
  "or_uint8": (lambda x: lax.reduce_or(x, (0,)), (_bits(np.uint8),)),
  "xor_int16": (lambda x: lax.reduce_xor(x, (0, 1)), (_bits(np.int16),)),
  "empty": (lambda x: lax.reduce(x, np.int32(7), _ordered, (0,)), (_ints((0, 3)),)),
  "max_from_a_finite_init": (
    lambda x: lax.reduce(x, np.float32(0.5), lax.max, (0, 2)),
    (
      np.where(_RNG.random((3, 4, 5)) < 0.1, np.nan, _RNG.normal(size=(3, 4, 5))).astype(
        np.float32
      ),
    ),
  ),
  # Windows: padding (skipped, not folded in), strides, both dilations.
  "window_ordered": (
    lambda x: lax.reduce_window(x, np.int32(7), _ordered, (3,), (2,), ((2, 1),)),
    (_ints((9,)),),
  ),
  "window_dilated": (
    lambda x: lax.reduce_window(
      x, np.int32(7), _ordered, (2, 3), (1, 2), ((1, 0), (2, 1)), (2, 2), (1, 2)
    ),
    (_ints((5, 6)),),
  ),
  "window_cropped": (
    lambda x: lax.reduce_window(x, np.int32(7), _ordered, (4,), (1,), ((-1, 2),)),
    (_ints((7,)),),
  ),
  "window_argmax_pool": (
    lambda x, i: lax.reduce_window(
      (x, i), (-np.inf, np.int32(-1)), _argmax, (2, 2), (2, 2), ((0, 1), (1, 0))
    ),
    (_RNG.normal(size=(5, 5)).astype(np.float32), np.arange(25, dtype=np.int32).reshape(5, 5)),
  ),
  "window_sum_from_another_init": (
    lambda x: lax.reduce_window(x, np.int32(5), lax.add, (3,), (1,), ((1, 1),)),
    (_ints((8,)),),
  ),
  "min_from_a_nan_init": (
    lambda x: lax.reduce(x, np.float32(np.nan), lax.min, (1,)),
    (_RNG.normal(size=(3, 4)).astype(np.float32),),
  ),
}


# Cases whose NaN the native route's MAXIMUM/MINIMUM may drop: that route
# keeps JAX's module as it is and says so (to_tflite warns, docs/tflite.md).
_NAN = {"max_from_a_finite_init", "min_from_a_nan_init"}
_ONE_OP_BODIES = {"window_sum_from_another_init"}


def _params():
  for name in sorted(_CASES):
    for route in ("litert", "native"):
      if route == "native" and name in _NAN:
        continue
      yield pytest.param(name, route, id=f"{name}-{route}")


@pytest.mark.parametrize("name,route", list(_params()))
def test_reduction_runs_as_jax(name, route):
  if route == "native":
    pytest.importorskip("tensorflow")
  fun, args = _CASES[name]
  model = jax2tf.to_tflite(fun, *args, route=route, verify=False)
  ops = lite_inspect.op_counts(model)
  assert "STABLEHLO_REDUCE" not in ops, ops
  if name not in _ONE_OP_BODIES:  # which LiteRT's STABLEHLO_REDUCE_WINDOW runs
    assert "STABLEHLO_REDUCE_WINDOW" not in ops, ops
  got = lite.run(model, *args)
  want = jax.tree_util.tree_leaves(jax.jit(fun)(*args))
  assert len(got) == len(want)
  for w, g in zip(want, got, strict=True):
    compare.assert_same(np.asarray(w), np.asarray(g), exact=True)


@pytest.mark.parametrize("route", ["litert", "native"])
def test_a_level_too_long_to_unroll_folds_in_a_loop(route):
  # 40 x 50 elements take 32 x 32 positions at the first tree level (both
  # axes padded), more than a level unrolls: a WHILE over the positions,
  # in XLA's order, then the last level of 2 x 2 unrolled.
  if route == "native":
    pytest.importorskip("tensorflow")
  fun = lambda x: lax.reduce(x, np.int32(7), _ordered, (0, 2))  # noqa: E731
  x = _ints((40, 3, 50))
  model = jax2tf.to_tflite(fun, x, route=route, verify=False)
  ops = lite_inspect.op_counts(model)
  assert "STABLEHLO_REDUCE" not in ops and ops["WHILE"] == 1, ops
  compare.assert_same(np.asarray(jax.jit(fun)(x)), lite.run(model, x)[0], exact=True)


# Windows at polymorphic sizes: padding on both sides of the polymorphic
# axis, strides, a window dilation, and a body with a constant. (With several
# axes padded along a later one, XLA's CPU loop folds in an order of its own,
# jax2tf/graph/windowing.py: there a body that counts, which sees only which
# elements are folded in.)
_POLYMORPHIC_WINDOWS = {
  "same_counted": (
    lambda x: lax.reduce_window(x, np.int32(7), lambda a, b: a + b + 1, (2, 2), (1, 1), "SAME"),
    "(b, 5)",
  ),
  "padded_strided_dilated": (
    lambda x: lax.reduce_window(
      x, np.int32(7), _ordered, (3, 2), (2, 1), ((1, 2), (0, 0)), None, (2, 1)
    ),
    "(b, 5)",
  ),
  # At batch 1 no window fits: no output.
  "strided_past_the_end": (
    lambda x: lax.reduce_window(x, np.int32(7), _ordered, (3, 1), (2, 1), "VALID"),
    "(b, 5)",
  ),
  "both_polymorphic": (
    lambda x: lax.reduce_window(
      x, np.int32(3), lambda a, b: a * 2 + b + 1, (2, 3), (1, 2), ((0, 1), (1, 1))
    ),
    "(b, c)",
  ),
}


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("name", sorted(_POLYMORPHIC_WINDOWS))
def test_a_window_at_polymorphic_sizes_runs_as_jax(name, route):
  if route == "native":
    pytest.importorskip("tensorflow")
  fun, spec = _POLYMORPHIC_WINDOWS[name]
  model = jax2tf.to_tflite(fun, _ints((6, 5)), route=route, polymorphic_shapes=[spec], verify=False)
  assert "STABLEHLO_REDUCE_WINDOW" not in lite_inspect.op_counts(model)
  for seed, shape in enumerate([(6, 5), (9, 5) if spec == "(b, 5)" else (9, 7), (1, 5)]):
    x = _ints(shape, seed=seed)
    compare.assert_same(np.asarray(jax.jit(fun)(x)), lite.run(model, x)[0], exact=True)
