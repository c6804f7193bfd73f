"""Sorts, top_k, take_along_axis, argmax and cumulative sums of polymorphic
shapes on the litert route, as LiteRT's own operators written into the module
(jax2tf/native/tflite_ops.py): the sort forms' TopK as TOPK_V2 with k read
at run time, the gathers along the sorted axis as GATHER with batch
dimensions (jax2tf/native/dynamic_ops.py), a gather of elements as
GATHER_ND, an argmax as ARG_MAX, a cumulative sum as CUMSUM.
Without them the converter wrote STABLEHLO_SORT, which LiteRT cannot run,
refused the gather of a polymorphic operand, or left the cumulative sum a
dynamic window it does not convert."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from jax2tf.lite import inspect as lite_inspect  # noqa: E402
from tests.lite.test_polymorphic_operands import rows_with_specials  # noqa: E402
from tests.support import compare  # noqa: E402

# Two sizes of each polymorphic dimension.
_RECTANGLES = ((3, 7), (6, 11))
_SEVEN_WIDE = ((3, 7), (6, 7))
_PAIRS = ((3, 2), (9, 2))

_FUNCTIONS = {
  # name: (function, polymorphic shape, the shapes run, the op that must appear)
  "sort_rows": (lambda x: jnp.sort(x, axis=-1), "(b, n)", _RECTANGLES, "TOPK_V2"),
  "sort_columns": (lambda x: jnp.sort(x, axis=0), "(b, n)", _RECTANGLES, "TOPK_V2"),
  "argsort": (lambda x: jnp.argsort(x, axis=-1), "(b, n)", _RECTANGLES, "TOPK_V2"),
  "descending_argsort": (
    lambda x: jnp.argsort(-x, axis=-1, descending=True),
    "(b, n)",
    _RECTANGLES,
    "TOPK_V2",
  ),
  "top_k_of_a_static_k": (lambda x: lax.top_k(x, 3), "(b, 7)", _SEVEN_WIDE, "TOPK_V2"),
  "sort_by_a_key": (
    lambda x: lax.sort((x[:, 0], x[:, 1]), num_keys=1)[1],
    "(b, 2)",
    _PAIRS,
    "TOPK_V2",
  ),
  "take_along_axis": (
    lambda x: jnp.take_along_axis(x * 2.0, jnp.argsort(-x, axis=-1), axis=-1),
    "(b, n)",
    _RECTANGLES,
    "GATHER",
  ),
  "argmax": (lambda x: jnp.argmax(x, axis=1), "(b, n)", _RECTANGLES, "ARG_MAX"),
  "argmin": (lambda x: jnp.argmin(x, axis=1), "(b, n)", _RECTANGLES, "ARG_MIN"),
  "argmax_of_int32": (lambda x: jnp.argmax(x.astype(np.int32), axis=1), "(b, n)", _RECTANGLES,
                      "ARG_MAX"),
  # Narrower types take ARG_MAX widened, NaN and ties as JAX orders them.
  "argmax_of_float16": (lambda x: jnp.argmax(x.astype(np.float16), axis=1), "(b, n)",
                        _RECTANGLES, "ARG_MAX"),
  "argmin_of_int8_signs": (
    lambda x: jnp.argmin((x > 0).astype(np.int8) - (x < 0).astype(np.int8), axis=1),
    "(b, n)", _RECTANGLES, "ARG_MIN"),
  # Along a static axis of a polymorphic batch (a batched solve's pivots).
  "argmax_of_a_polymorphic_batch": (lambda x: jnp.argmax(x, axis=1), "(b, 7)", _SEVEN_WIDE,
                                    "ARG_MAX"),
  # JAX writes the reversal of a polymorphic axis as a gather of elements.
  "reversed": (lambda x: x[::-1, ::-1], "(b, n)", _RECTANGLES, "GATHER_ND"),
  "reversed_rows": (lambda x: x[::-1], "(b, 7)", _SEVEN_WIDE, "GATHER"),
}


@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_polymorphic_sorts_and_gathers_run_on_litert_as_jax_computes_them(name):
  fun, spec, shapes, op = _FUNCTIONS[name]
  model = jax2tf.to_tflite(fun, rows_with_specials(shapes[0]), route="litert", polymorphic_shapes=[spec])
  ops = lite_inspect.op_counts(model)
  assert op in ops, ops
  assert "STABLEHLO_SORT" not in ops, ops
  for seed, shape in enumerate(shapes):
    x = rows_with_specials(shape, seed)
    got = lite.run(model, x)
    want = jax.tree.leaves(jax.jit(fun)(x))
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
      compare.assert_same(np.asarray(w), g, exact=True, where=f"{name} {x.shape} result {i}")


def test_a_static_sort_keeps_the_converters_topk():
  # Static shapes keep the composite the converter writes TOPK_V2 of.
  x = rows_with_specials((3, 7))
  model = jax2tf.to_tflite(lambda x: lax.top_k(x, 3), x, route="litert")
  assert "TOPK_V2" in lite_inspect.op_counts(model)
  compare.assert_same(np.asarray(lax.top_k(x, 3)[0]), lite.run(model, x)[0], exact=True)


_CUMULATIVE = {
  # name: (function, polymorphic shape, the shapes run, tolerance or None: exact)
  "cumsum_rows": (lambda x: jnp.cumsum(x, axis=1), "(b, n)", _RECTANGLES, (1e-6, 1e-6)),
  "reverse_cumsum": (lambda x: lax.cumsum(x, 0, reverse=True), "(b, n)", _RECTANGLES, (1e-6, 1e-6)),
  "cumsum_of_int32": (lambda x: jnp.cumsum(x.astype(np.int32) * 1000003, axis=1), "(b, n)",
                      _RECTANGLES, None),
  # XLA keeps -0.0 along an axis of one element.
  "cumsum_of_one_row": (lambda x: jnp.cumsum(x, axis=0), "(b, n)", ((1, 7), (4, 7)), None),
}


@pytest.mark.parametrize("name", sorted(_CUMULATIVE))
def test_polymorphic_cumulative_sums_run_on_litert(name):
  fun, spec, shapes, tol = _CUMULATIVE[name]
  model = jax2tf.to_tflite(fun, rows_with_specials(shapes[0]), route="litert", polymorphic_shapes=[spec])
  assert "CUMSUM" in lite_inspect.op_counts(model)
  for seed, shape in enumerate(shapes):
    x = np.nan_to_num(rows_with_specials(shape, seed))
    (got,) = lite.run(model, x)
    want = np.asarray(jax.jit(fun)(x))
    compare.assert_same(want, got, tol=tol, exact=tol is None, where=f"{name} {shape}")


def _crops(images, offsets):
  # Random crops: each image's window at its own offset.
  crop = lambda image, at: lax.dynamic_slice(image, (at[0], at[1], 0), (4, 4, 3))  # noqa: E731
  return jax.vmap(crop)(images, offsets)


def _windows_of_one_array(x, starts):
  return jax.vmap(lambda s: lax.dynamic_slice(x, (s, 0), (2, x.shape[1])))(starts)


@pytest.mark.parametrize(
  "name,fun,specs",
  [
    ("crops", _crops, ["(b, 8, 8, 3)", "(b, 2)"]),
    ("windows_of_one_array", _windows_of_one_array, ["(5, c)", "(b,)"]),
  ],
)
def test_batched_dynamic_slices_of_polymorphic_operands(name, fun, specs):
  # A gather of whole windows, which the converter refuses at polymorphic
  # sizes: GATHER_ND of every element of every window, from clamped starts.
  rng = np.random.default_rng(13)
  if name == "crops":
    make = lambda b, _: (rng.normal(size=(b, 8, 8, 3)).astype(np.float32),  # noqa: E731
                         rng.integers(-2, 8, size=(b, 2)).astype(np.int32))
  else:
    make = lambda b, c: (rng.normal(size=(5, c)).astype(np.float32),  # noqa: E731
                         rng.integers(-2, 6, size=(b,)).astype(np.int32))
  model = jax2tf.to_tflite(fun, *make(3, 4), route="litert", polymorphic_shapes=specs)
  assert "GATHER_ND" in lite_inspect.op_counts(model)
  for b, c in [(3, 4), (6, 7)]:
    args = make(b, c)
    compare.assert_same(np.asarray(jax.jit(fun)(*args)), lite.run(model, *args)[0], exact=True)
