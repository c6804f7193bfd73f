"""Primitives LiteRT has no kernel for, lowered to the JAX forms the graph
route writes (jax2tf/native/target_lowerings.py).

A native module for LiteRT would carry `stablehlo.sort` (LiteRT has no
STABLEHLO_SORT kernel), integer convolutions and integer dot_generals (its
CONV_2D and BATCH_MATMUL take integers only quantized), and pooling
gradients `stablehlo.select_and_scatter`, which neither converter takes;
LiteRT's RNG_BIT_GENERATOR gives other bits than XLA's, and Philox's mulhi
needs a 64-bit MUL; only XLA compares in IEEE's total order. Exported for
the litert and tflite targets, they become TopK passes over order keys,
products summed, selects of strided slices, XLA's hashes in uint32 words,
products of 16-bit halves and comparisons of order keys; TF's XLA keeps its
own ops.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export as jax_export
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite, targets  # noqa: E402
from jax2tf.lite import inspect as lite_inspect  # noqa: E402
from jax2tf.native import target_lowerings  # noqa: E402
from tests.cases.elementwise import specials_pairs, total_order  # noqa: E402
from tests.cases.random import _CARRY_KEY, _rbg  # noqa: E402
from tests.support import compare  # noqa: E402

_RNG = np.random.default_rng(0)
_X = _RNG.normal(size=(3, 7)).astype(np.float32)
# NaN and both zeros: sort puts NaN last and keeps -0.0 and +0.0 in their
# order; top_k orders them by IEEE's total order.
_X[0, 2], _X[1, 1], _X[1, 3], _X[2, 5] = np.nan, -0.0, 0.0, -np.nan
_TIES = np.round(_X * 2) / 2  # many equal keys: stability shows
_A = _RNG.integers(-100, 100, (2, 4, 5)).astype(np.int32)
_B = _RNG.integers(-100, 100, (2, 5, 3)).astype(np.int32)
_IMAGE = _RNG.integers(-9, 9, (2, 6, 6, 3)).astype(np.int32)
_KERNEL = _RNG.integers(-9, 9, (3, 3, 3, 4)).astype(np.int32)
# Pools with ties, a NaN (XLA's pick moves past it) and both zeros.
_POOLED = np.round(_RNG.normal(size=(2, 5, 6, 2)) * 2).astype(np.float32) / 2
_POOLED[0, 1, 2, 0], _POOLED[1, 3, 3, 1], _POOLED[0, 0, 0, 1] = np.nan, -0.0, -0.0


def _pool_gradient(combine, init, window, strides, padding):
  def pooled_sum(x):
    pooled = lax.reduce_window(x, init, combine, window, strides, padding)
    return jnp.sum(pooled * jnp.arange(pooled.size, dtype=x.dtype).reshape(pooled.shape))

  return jax.grad(pooled_sum)


_LEFT, _RIGHT = specials_pairs(np.float32)

_WORDS = np.array([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 12345678, 0xDEADBEEF], np.uint32)

_CASES = {
  "sort_last": (lambda x: jnp.sort(x, axis=-1), (_X,)),
  "sort_first": (lambda x: jnp.sort(x, axis=0), (_X,)),
  "argsort_stable": (lambda x: jnp.argsort(x, axis=-1, stable=True), (_TIES,)),
  "sort_two_keys": (lambda x: lax.sort((x[0], x[1], x[2]), num_keys=2), (_TIES,)),
  "sort_uint32": (lambda a: jnp.sort(a.astype(np.uint32).reshape(-1)), (_A,)),
  "sort_int8": (lambda a: jnp.sort(a.astype(np.int8), axis=1), (_A,)),
  "sort_bfloat16": (lambda x: jnp.sort(x.astype(jnp.bfloat16), axis=-1), (_X,)),
  "top_k_float32": (lambda x: lax.top_k(x, 4), (_X,)),
  "top_k_bfloat16": (lambda x: lax.top_k(x.astype(jnp.bfloat16), 4), (_X,)),
  "top_k_float16": (lambda x: lax.top_k(x.astype(np.float16), 3), (_TIES,)),
  "approx_min_k": (lambda x: lax.approx_min_k(x, 2), (_TIES,)),
  # Values from the top keys: each key type turned back, bits and all.
  "top_k_uint32": (lambda a: lax.top_k(a.astype(np.uint32) * np.uint32(99991), 3), (_A,)),
  "top_k_int8": (lambda a: lax.top_k(a.astype(np.int8), 3), (_A,)),
  "top_k_bool": (lambda a: lax.top_k(a > 0, 2), (_A,)),
  "dot_int32_batched": (lambda a, b: a @ b, (_A, _B)),
  "dot_int8_wraps": (lambda a, b: a.astype(np.int8) @ b.astype(np.int8), (_A, _B)),
  "dot_uint32": (
    lambda a, b: a.astype(np.uint32) @ b.astype(np.uint32) * np.uint32(99991),
    (_A, _B),
  ),
  "dot_bool": (
    lambda a, b: lax.dot_general(a > 50, b > 50, (((2,), (1,)), ((0,), (0,)))),
    (_A, _B),
  ),
  "conv_int32_strided": (
    lambda x, k: lax.conv_general_dilated(
      x, k, (2, 1), "SAME", rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")
    ),
    (_IMAGE, _KERNEL),
  ),
  "rbg_philox_uint8": (_rbg((3, 5), np.uint8, "philox"), (_CARRY_KEY,)),
  "rbg_philox_uint32": (_rbg((7,), np.uint32, "philox"), (_CARRY_KEY,)),
  "rbg_threefry_uint16": (_rbg((4, 3), np.uint16, "threefry"), (_CARRY_KEY,)),
  "rbg_threefry_uint32": (_rbg((5, 5), np.uint32, "threefry"), (_CARRY_KEY,)),
  "mulhi_uint32": (lambda a: lax.mulhi(a, a[::-1]), (_WORDS,)),
  "mulhi_int32": (lambda a: lax.mulhi(a.view(np.int32), a[::-1].view(np.int32)), (_WORDS,)),
  "mulhi_int16": (lambda a: lax.mulhi(a.astype(np.int16), a[::-1].astype(np.int16)), (_WORDS,)),
  "total_order": (total_order, (_LEFT, _RIGHT)),
  "total_order_bfloat16": (
    lambda x, y: total_order(x.astype(jnp.bfloat16), y.astype(jnp.bfloat16)),
    (_LEFT, _RIGHT),
  ),
  "max_pool_gradient": (
    _pool_gradient(lax.max, -np.inf, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
    (_POOLED,),
  ),
  "max_pool_gradient_overlapping_same": (
    _pool_gradient(lax.max, -np.inf, (1, 3, 3, 1), (1, 2, 1, 1), "SAME"),
    (_POOLED,),
  ),
  "min_pool_gradient_padded": (
    _pool_gradient(lax.min, np.inf, (1, 3, 2, 1), (1, 1, 2, 1), ((0, 0), (1, 1), (0, 1), (0, 0))),
    (_POOLED,),
  ),
  # Starts that an int32 cast would wrap: XLA clamps them in their own type.
  "dynamic_slice_uint32_start": (
    lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1),
    (_X, np.uint32(4_000_000_000)),
  ),
  "dynamic_update_slice_uint8_start": (
    lambda x, i: lax.dynamic_update_slice_in_dim(x, jnp.ones((3, 2), x.dtype), i, axis=1),
    (_X, np.uint8(250)),
  ),
  # Windows partly outside (at 4, at -1) are skipped whole, windows inside
  # (at 1, twice) written; the indices run as arguments, unfolded.
  "scatter_add_drops_partial_windows": (
    lambda x, i: x.at[:, i[:, None] + jnp.arange(3)].add(10.0, mode="drop"),
    (_X, np.array([4, -1, 1, 1], np.int32)),
  ),
  "scatter_window_indices_int8": (
    lambda x, i: lax.scatter(
      x, i[:, None], jnp.ones((2, 3, 4)), lax.ScatterDimensionNumbers((1, 2), (), (1,)), mode="drop"
    ),
    (_X, np.array([3, 2], np.int8)),
  ),
  # Ties without NaN, which the native route's ARG_MAX does not place as XLA.
  "argmax_uint32_index": (
    lambda x: lax.argmax(x, 1, np.uint32),
    ((_A[0] // 40).astype(np.float32),),
  ),
  "argmax_argmin_of_uint32": (
    lambda a: (jnp.argmax(a.astype(np.uint32) * np.uint32(99991), 1), jnp.argmin(a.astype(np.uint32), 0)),
    (_A[0],),
  ),
  "argmin_int16_index": (lambda x: lax.argmin(x, 0, np.int16), ((_A[0] // 40).astype(np.float32),)),
  "dot_of_no_products": (lambda a, b: a[:, :0] @ b[:0], (_X, _X.T)),
  "reduce_precision_of_its_own_format": (lambda x: lax.reduce_precision(x, 8, 23), (_X,)),
}


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_lowered_forms_compute_what_jax_computes(name, route):
  if route == "native":
    pytest.importorskip("tensorflow")
  fun, args = _CASES[name]
  got = lite.run(jax2tf.to_tflite(fun, *args, route=route, verify=False), *args)
  want = jax.tree.leaves(jax.jit(fun)(*args))
  assert len(got) == len(want)
  for i, (w, g) in enumerate(zip(want, got)):
    compare.assert_same(np.asarray(w), np.asarray(g), exact=True, where=f"{name} result {i}")


_NHWC = ("NHWC", "HWIO", "NHWC")
_IMAGES = _RNG.normal(size=(4, 5, 6, 3)).astype(np.float32)
_FILTERS = _RNG.normal(size=(3, 3, 3, 4)).astype(np.float32)
_REAL_CONVS = {
  "transposed": lambda x, k: lax.conv_transpose(x, k, (2, 2), "SAME", dimension_numbers=_NHWC),
  "input_dilated_strided": lambda x, k: lax.conv_general_dilated(
    x,
    k,
    (2, 1),
    ((1, 1), (2, 0)),
    lhs_dilation=(2, 3),
    rhs_dilation=(1, 2),
    dimension_numbers=_NHWC,
  ),
  "batch_groups": lambda x, k: lax.conv_general_dilated(
    x, k[..., :2], (1, 1), "VALID", batch_group_count=2, dimension_numbers=_NHWC
  ),
  "window_beyond_the_input": lambda x, k: lax.conv_general_dilated(
    x[:, :2], k, (1, 1), "VALID", dimension_numbers=_NHWC
  ),
}


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("name", sorted(_REAL_CONVS))
def test_real_convolutions_the_converters_refuse_are_dots_of_windows(name, route):
  # Both converters refuse a convolution with an input dilation or batch
  # groups, or write a TRANSPOSE_CONV that LiteRT sizes wrongly, and refuse
  # one without results. Sums in another order: a float tolerance.
  if route == "native":
    pytest.importorskip("tensorflow")
  fun = _REAL_CONVS[name]
  model = jax2tf.to_tflite(fun, _IMAGES, _FILTERS, route=route, verify=False)
  (got,) = lite.run(model, _IMAGES, _FILTERS)
  compare.assert_same(
    np.asarray(jax.jit(fun)(_IMAGES, _FILTERS)), np.asarray(got), tol=(1e-5, 1e-5)
  )


def _module_text(fun, args, target):
  exported = jax_export.export(
    jax.jit(fun), _override_lowering_rules=target_lowerings.lowering_rules(target)
  )(*args)
  return exported.mlir_module()


def test_litert_models_hold_no_sort_and_no_integer_products():
  # The forms' TopK is chlo.top_k, which both converters write as TOPK_V2.
  # (No select_and_scatter: the converters refuse it; no RNG_BIT_GENERATOR,
  # whose LiteRT kernel gives other bits than XLA's.)
  for name in (
    "sort_two_keys",
    "dot_int32_batched",
    "conv_int32_strided",
    "max_pool_gradient",
    "rbg_threefry_uint32",
  ):
    fun, args = _CASES[name]
    ops = set(lite_inspect.op_counts(jax2tf.to_tflite(fun, *args, route="litert", verify=False)))
    lacking = {"STABLEHLO_SORT", "BATCH_MATMUL", "FULLY_CONNECTED", "CONV_2D", "RNG_BIT_GENERATOR"}
    assert not ops & lacking, (name, ops)


def test_tf_xla_modules_keep_xla_s_sort_and_products():
  for name, op in (
    ("sort_two_keys", "stablehlo.sort"),
    ("dot_int32_batched", "stablehlo.dot_general"),
    ("conv_int32_strided", "stablehlo.convolution"),
    ("max_pool_gradient", "stablehlo.select_and_scatter"),
    ("rbg_philox_uint8", "stablehlo.rng_bit_generator"),
  ):
    fun, args = _CASES[name]
    assert op in _module_text(fun, args, targets.TF_XLA), name
