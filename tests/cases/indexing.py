"""Cases of the indexing family (indexing.py): slices, dynamic slices, gathers and scatters.

Out-of-bounds indices are part of the cases on purpose: JAX clamps (dynamic
slices, CLIP and PROMISE_IN_BOUNDS gathers), fills (FILL_OR_DROP gathers) or
drops (scatters) where TF's kernels would fail. Moving values is exact; only
scatters that add or multiply floats get a tolerance.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import (
  BF16,
  BOOL,
  F16,
  F32,
  F64,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  A,
  Cases,
  V,
  case,
  dtype_name,
  exact_case,
  rand,
  refused,
  u32_order_rows,
)

CASES = Cases()


_exact = exact_case


def idx(*values, dtype=I32):
  return np.array(values, dtype)


def sc(value, dtype=I32):
  return np.array(value, dtype)


# ---------------------------------------------------------------------------
# Random operands.
CASES += [
    _exact("slice_strided", lambda x: lax.slice(x, (1, 0), (5, 6), (2, 3)), A(6, 7)),
    _exact("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 1), (3, 2)), A(6, 4),
           V(2, I32)),
    _exact("dynamic_slice_clamped", lambda x, i: lax.dynamic_slice(x, (i, -3), (3, 2)),
           A(6, 4), V(9, I32)),
    _exact("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 2)),
           A(6, 4), A(2, 2), V(-1, I32)),
    _exact("dynamic_update_slice_clamped",
           lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 3)), A(6, 4), A(2, 2), V(8, I32),
           slow=True),
    # Starts clamped to [0, 6]: TF's TFLite converter turned a ClipByValue to
    # 6 into RELU6, which has no integer kernel.
    _exact("dynamic_slices_clamped_to_six", lambda x, u, i: (
        lax.dynamic_slice(x, (i, i), (1, 2)), lax.dynamic_update_slice(x, u, (i, i))),
        A(3, 8), A(1, 2), V(5, I32)),
    _exact("gather_numpy_index", lambda x, i: x[i], A(6, 4), V(np.array([0, 5, -1, 2, 2]), I32)),
    _exact("gather_2d_index", lambda x, i, j: x[i, j], A(6, 4),
           V(np.array([[0, 1], [5, 2]]), I32), V(np.array([[3, 0], [1, 1]]), I32)),
    _exact("gather_out_of_bounds", lambda x, i: x[i], A(6, 4), V(np.array([7, -9, 100]), I32)),
    _exact("gather_take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1),
           A(3, 5), A(3, 2, dtype=I32, lo=0, hi=4)),
    _exact("gather_mask_bool", lambda x: jnp.where(x > 0, x, 0.0)[jnp.array([1, 2])], A(4, 3)),
]
for _mode in ("set", "add", "mul", "min", "max"):
  _idx = V(np.array([0, 3, 5, 1]) if _mode == "set" else np.array([0, 3, 3, 1, 0]), I32)
  _n_upd = 4 if _mode == "set" else 5
  CASES.add(f"scatter_{_mode}", lambda x, i, u, _mode=_mode: getattr(x.at[i], _mode)(u),
            A(6, 3), _idx, A(_n_upd, 3), exact=_mode in ("set", "min", "max"))
  CASES.add(f"scatter_{_mode}_int32", lambda x, i, u, _mode=_mode: getattr(x.at[i], _mode)(u),
            A(6, 3, dtype=I32, lo=-9, hi=9), _idx, A(_n_upd, 3, dtype=I32, lo=-9, hi=9),
            slow=True)
CASES += [
    case("scatter_add_2d", lambda x, i, j, u: x.at[i, j].add(u), A(4, 5),
         V(np.array([0, 1, 1, 3]), I32), V(np.array([4, 2, 2, 0]), I32), A(4)),
    _exact("scatter_set_out_of_bounds_dropped", lambda x, i, u: x.at[i].set(u, mode="drop"),
           A(5), V(np.array([1, 9, -20]), I32), A(3)),
    # -0.0 where no update lands (or a dropped one) stays -0.0, as in JAX.
    _exact("scatter_add_keeps_negative_zero", lambda x, i, u: x.at[i].add(u),
           np.array([-0.0, -0.0, 1.0, -0.0], F32), np.array([5, 1, 2], I32),
           np.array([1.0, 0.0, -0.0], F32)),
    _exact("scatter_max_nan", lambda x, i, u: x.at[i].max(u), A(4, specials=(np.nan,)),
           V(np.array([0, 1, 2]), I32), A(3, specials=(1.0, np.nan))),
    case("scatter_bool", lambda x, i: x.at[i].set(True), A(6, dtype=BOOL),
         V(np.array([1, 4]), I32), slow=True),
]


# ---------------------------------------------------------------------------
# Fixed operands.

def _vmapped_dynamic_slice(x, starts):
  return jax.vmap(lambda s: lax.dynamic_slice(x, (s, 0), (2, x.shape[1])))(starts)


def _batched_dynamic_slice(xs, starts):
  return jax.vmap(lambda x, s: lax.dynamic_slice_in_dim(x, s, 2))(xs, starts)


def _batched_dus(xs, us, starts):
  return jax.vmap(lambda x, u, s: lax.dynamic_update_slice_in_dim(x, u, s, 0))(xs, us, starts)


_APPLY_REFUSED = refused("scatter", "a scatter with an arbitrary combiner needs XlaScatter",
                         "graph_no_xla")

CASES += [
    # slice
    _exact("slice_basic", lambda x: x[1:3, 2:], rand((4, 5)), graph_ops=["Slice"]),
    _exact("slice_strided_numpy", lambda x: x[::2, 1::3], rand((5, 7)),
           graph_ops=["StridedSlice"]),
    _exact("slice_lax_strides", lambda x: lax.slice(x, (1, 0), (4, 5), (2, 2)), rand((4, 5))),
    _exact("slice_int_index", lambda x: x[1], rand((4, 5))),
    _exact("slice_ellipsis", lambda x: x[..., 1:3], rand((2, 3, 4))),
    _exact("slice_scalar", lambda x: lax.slice(x, (), ()), A(dtype=F32)),
    # The gradient of a pad of a scalar slices the scalar cotangent.
    _exact("slice_scalar_pad_grad", jax.grad(lambda x: lax.pad(x, np.float32(0), [])),
           A(dtype=F32)),
    _exact("slice_poly_tail", lambda x: x[:, 1:], rand((3, 4)), polymorphic_shapes=["(b, _)"]),
    _exact("slice_poly_symbolic_axis", lambda x: x[1:, ::2], rand((5, 4)),
           polymorphic_shapes=["(b, _)"]),
    _exact("slice_poly_strided_symbolic", lambda x: x[::2], rand((5, 3)),
           polymorphic_shapes=["(b, _)"]),
    # dynamic_slice: starts are clamped so the slice stays in bounds
    _exact("dynamic_slice_two_starts", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
           rand((4, 5)), sc(1), sc(2), graph_ops=["Slice"]),
    _exact("dynamic_slice_oob_high", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
           rand((4, 5)), sc(7), sc(3)),
    _exact("dynamic_slice_oob_negative", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
           rand((4, 5)), sc(-5), sc(-1)),
    _exact("dynamic_slice_int8_index", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2),
           rand((6,)), sc(100, dtype=I8)),
    _exact("dynamic_slice_uint32_index", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2),
           rand((6,)), sc(4000000000, dtype=U32)),
    _exact("dynamic_slice_poly_sizes", lambda x, i: lax.dynamic_slice(x, (0, i), (x.shape[0], 2)),
           rand((3, 5)), sc(4), polymorphic_shapes=["(b, _)", None]),
    _exact("dynamic_slice_poly_symbolic_size",
           lambda x, i: lax.dynamic_slice_in_dim(x, i, x.shape[0] - 1, axis=0),
           rand((4, 3)), sc(3), polymorphic_shapes=["(b, _)", None]),
    # dynamic_update_slice
    _exact("dus", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)),
           rand((4, 5)), rand((2, 3), seed=1), sc(1)),
    _exact("dus_oob", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
           rand((4, 5)), rand((2, 3), seed=1), sc(9), sc(-4)),
    _exact("dus_bool_1d", lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
           rand((6,), BOOL), rand((2,), BOOL, seed=1), sc(3)),
    _exact("dus_poly", lambda x, u, i: lax.dynamic_update_slice(x, u, (0, i)),
           rand((3, 5)), rand((3, 2), seed=1), sc(4),
           polymorphic_shapes=["(b, _)", "(b, _)", None]),
    # A start computed through a bitcast (a logical shift of int8): XLA
    # (jit_compile) could not bound the shape of a pad by the start.
    _exact("dus_start_through_bitcast", lambda x, u: lax.dynamic_update_slice(
        x, u, (lax.argmin(lax.shift_right_logical(x, x), 0, np.int32),)),
           V(np.array([3, 1, 2, 5], np.int8), I8), V(np.array([127], np.int8), I8)),
    _exact("dus_empty_update", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)),
           rand((3, 2)), rand((0, 2), seed=1), sc(1)),
    _exact("dus_scalar_operand", lambda x, u: lax.dynamic_update_slice(x, u, ()),
           rand(()), rand((), seed=1)),
    # gather from NumPy-style indexing (PROMISE_IN_BOUNDS: out of range clamps)
    _exact("gather_x_idx_axis0", lambda x, i: x[i], rand((4, 5)), idx(1, 3, 0, -1),
           graph_ops=["GatherV2"]),
    _exact("gather_x_idx_axis1", lambda x, i: x[:, i], rand((4, 5)), idx(4, 0, -2),
           graph_ops=["GatherV2"]),
    _exact("gather_oob_clamps", lambda x, i: x[i], rand((4, 5)), idx(7, -9, 2)),
    _exact("gather_scalar_traced_index", lambda x, i: x[i], rand((4, 5)), idx(2)),
    _exact("gather_2d_index_array", lambda x, i: x[i], rand((4, 5)),
           np.array([[0, 3], [2, 1]], I32)),
    _exact("gather_two_arrays", lambda x, i, j: x[i, j], rand((4, 5)), idx(0, 3, 2),
           idx(4, 1, 1), graph_ops=["GatherNd"]),
    _exact("gather_mixed", lambda x, i: x[1:3, i, ::2], rand((4, 5, 6)), idx(0, 4)),
    _exact("gather_ellipsis_array", lambda x, i: x[..., i], rand((2, 3, 4)), idx(3, 0)),
    _exact("gather_bool_mask_static", lambda x: x[np.array([True, False, True, True])],
           rand((4, 3))),
    _exact("take_fill_default", lambda x, i: jnp.take(x, i, axis=1), rand((3, 5)),
           idx(1, 7, -1, -8)),
    _exact("take_clip", lambda x, i: jnp.take(x, i, axis=0, mode="clip"), rand((3, 5)),
           idx(1, 7, -4)),
    _exact("take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1), rand((3, 5)),
           np.array([[0, 4], [2, 2], [1, 3]], I32)),
    _exact("take_along_axis_oob", lambda x, i: jnp.take_along_axis(x, i, axis=0), rand((3, 5)),
           np.array([[0, 4, 1, -1, 3]], I32)),
    _exact("at_get_fill_value", lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0),
           rand((4, 3)), idx(1, 4, -5, 3)),
    _exact("at_get_fill_int", lambda x, i: x.at[i].get(mode="fill"), rand((4,), I32),
           idx(1, 4)),
    _exact("at_get_fill_uint8", lambda x, i: x.at[i].get(mode="fill"), rand((4,), U8, 0, 9),
           idx(1, 4)),
    _exact("at_get_fill_int8", lambda x, i: x.at[i].get(mode="fill"), rand((4,), I8),
           idx(1, 4, -5)),
    _exact("at_get_fill_bool", lambda x, i: x.at[i].get(mode="fill"), rand((4,), BOOL),
           idx(1, 4, 0)),
    _exact("gather_window_vmap_dynamic_slice", _vmapped_dynamic_slice, rand((5, 3)),
           idx(0, 4, -2, 2)),
    _exact("gather_batching_dims", _batched_dynamic_slice, rand((3, 6)), idx(1, 5, -1)),
    _exact("gather_poly_batch_operand", lambda x, i: x[:, i], rand((3, 5)), idx(4, 0),
           polymorphic_shapes=["(b, _)", None]),
    _exact("gather_poly_batch_index", lambda x, i: x[i], rand((4, 5)), idx(1, 3, 0),
           polymorphic_shapes=[None, "(b,)"]),
    _exact("take_along_axis_poly", lambda x, i: jnp.take_along_axis(x, i, axis=1),
           rand((3, 5)), np.array([[0, 4], [2, 9], [1, 3]], I32),
           polymorphic_shapes=["(b, _)", "(b, _)"]),
    _exact("gather_window_poly", _vmapped_dynamic_slice, rand((5, 3)), idx(0, 4, 1),
           polymorphic_shapes=["(_, c)", "(b,)"]),
    # scatter from .at[] (FILL_OR_DROP: out-of-range windows are dropped)
    _exact("at_set", lambda x, i: x.at[i].set(7.0), rand((4, 5)), idx(1, 3),
           graph_ops=["TensorScatterUpdate"]),
    _exact("at_set_updates", lambda x, i, u: x.at[:, i].set(u), rand((4, 5)), idx(4, 0),
           rand((4, 2), seed=1)),
    _exact("at_set_oob_dropped", lambda x, i: x.at[i].set(7.0), rand((4, 5)), idx(1, 6, -7)),
    _exact("at_set_clip", lambda x, i: x.at[i].set(7.0, mode="clip"), rand((4, 5)), idx(9)),
    case("at_add_duplicates", lambda x, i: x.at[i].add(1.5), rand((4, 5)), idx(1, 1, 3, 8),
         graph_ops=["ScatterNd"]),
    case("at_add_int", lambda x, i: x.at[i].add(3), rand((6,), I32), idx(0, 0, 5)),
    case("at_mul", lambda x, i: x.at[i].mul(2.5), rand((4, 5)), idx(0, 3, 9)),
    case("at_mul_int_duplicates", lambda x, i: x.at[i].mul(3), rand((6,), I32), idx(2, 2, 5)),
    _exact("at_min", lambda x, i, u: x.at[i].min(u), rand((6,)), idx(0, 2, 2, 9),
           rand((4,), seed=2)),
    _exact("at_max_nan", lambda x, i, u: x.at[i].max(u), np.array([np.nan, 1, 2, 3], F32),
           idx(0, 1, 1, 2), np.array([5, np.nan, 0, 1], F32)),
    _exact("at_min_nan", lambda x, i, u: x.at[i].min(u), np.array([np.nan, 1, 2, 3], F32),
           idx(0, 1, 1, 2), np.array([5, np.nan, 0, 1], F32)),
    _exact("at_min_int", lambda x, i: x.at[i].min(-1), rand((5,), I8), idx(1, 4)),
    case("scatter_sub", lambda x, i, u: lax.scatter_sub(
        x, i[:, None], u, lax.ScatterDimensionNumbers((1,), (0,), (0,))),
         rand((4, 3)), idx(0, 3, 0), rand((3, 3), seed=1)),
    _exact("scatter_window_partly_oob", lambda x: lax.scatter(
        x, jnp.array([[3], [-1], [1]]), jnp.ones((3, 3)),
        lax.ScatterDimensionNumbers((1,), (), (0,)), mode="drop"), rand((5,))),
    _exact("scatter_window_clip", lambda x: lax.scatter(
        x, jnp.array([[4]]), jnp.ones((1, 3)),
        lax.ScatterDimensionNumbers((1,), (), (0,)), mode="clip"), rand((5,))),
    _exact("scatter_batching_dims", _batched_dus, rand((3, 6)), rand((3, 2), seed=1),
           idx(1, 5, -1)),
    _exact("at_set_two_arrays", lambda x, i, j: x.at[i, j].set(0.0), rand((4, 5)), idx(0, 3),
           idx(4, 9)),
    _exact("at_set_bool_true", lambda x, i: x.at[i].set(True), rand((5,), BOOL), idx(0, 3)),
    _exact("at_set_complex", lambda x, i: x.at[i].set(1j), rand((5,), np.complex64), idx(0, 3)),
    case("at_apply", lambda x, i: x.at[i].apply(jnp.sin), rand((5,)), idx(0, 3),
         refuse=_APPLY_REFUSED),
    case("at_add_poly", lambda x, i: x.at[:, i].add(1.0), rand((3, 5)), idx(4, 0, 4),
         polymorphic_shapes=["(b, _)", None]),
    _exact("at_set_poly_rows", lambda x, i, u: x.at[i].set(u), rand((4, 5)), idx(1, 3),
           rand((2, 5), seed=1), polymorphic_shapes=["(_, c)", None, "(_, c)"]),
]


# ---------------------------------------------------------------------------
# Every indexing form on every dtype.
DTYPE_FUNS = {
    "gather": lambda x, i: x[i],
    "take_fill": lambda x, i: jnp.take(x, i, axis=1),
    "dynamic_slice": lambda x, i: lax.dynamic_slice(x, (i[0], 1), (2, 2)),
    "dus": lambda x, i: lax.dynamic_update_slice(x, x[:2, :2], (i[0], 1)),
    "at_set": lambda x, i: x.at[i].set(x[0]),
    "at_add": lambda x, i: x.at[i].add(x[0]),
    "at_max": lambda x, i: x.at[i].max(x[0]),
    "at_mul": lambda x, i: x.at[i].mul(x[0]),
}
# JAX has no add/mul/max scatter on bool; TF none for complex max.
_UNSUPPORTED = {("at_add", "bool"), ("at_mul", "bool"), ("at_max", "complex64"),
                ("at_max", "bool")}
# Adding and multiplying scatters combine the updates of a duplicated index
# first (ScatterNd sums them, and TF has no sequential multiplying scatter),
# so floats may differ from JAX by a rounding per duplicate.
_MUL_RTOL = {"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-6, "float64": 1e-15}
DTYPES = [F16, BF16, I8, I16, U8, U16, U32, BOOL, np.complex64]


def _dtype_cases(dtypes, index_dtype=I32, **kw):
  cases = []
  for op, fn in DTYPE_FUNS.items():
    for dt in dtypes:
      name = dtype_name(dt)
      if (op, name) in _UNSUPPORTED:
        continue
      i = idx(2, 0, 7, 2, dtype=index_dtype)
      if op in ("at_add", "at_mul"):
        rtol = _MUL_RTOL.get(name, 1e-6)
        expect = dict(tol=(rtol, 0 if dt == BF16 else 1e-6))
      else:
        expect = dict(exact=True)
      if dt == BF16:
        # bfloat16 values are made inside the function, as this table always did.
        cases.append(case(f"{op}_bfloat16", lambda x, i, fn=fn: fn(x.astype(jnp.bfloat16), i),
                          rand((3, 4)), i, **expect, **kw))
      else:
        cases.append(case(f"{op}_{name}", fn, rand((3, 4), dt, 0, 5), i, **expect, **kw))
  return cases


def _tiered(cases, fast_prefixes):
  """The cases whose names start with one of `fast_prefixes` in the fast tier, the rest slow."""
  return [c if c.name.startswith(fast_prefixes) else dataclasses.replace(c, slow=True)
          for c in cases]


CASES += _tiered(_dtype_cases(DTYPES), ("gather_", "dus_", "at_set_"))
CASES += _dtype_cases([F32, I32], slow=True)
with jax.enable_x64(True):
  CASES += _tiered(_dtype_cases([F64, I64, U64], I64, x64=True),
                   ("gather_", "dus_", "at_set_", "take_fill_"))

# uint32 gathered, sliced and scattered with int32 indices (TFLite moves
# int32 keys); a gather's fill stays uint32 (not in keys).
CASES += [
    _exact("u32_order_indexing", lambda x, i: (
        jnp.take(x, i, axis=1, mode="clip"), lax.dynamic_slice(x, (i[0], i[1]), (2, 3)),
        lax.dynamic_update_slice(x, x[:1, :2], (i[2], i[0])), x.at[i[:2]].set(x[1]),
        x.at[1, 2:5].set(np.uint32(0xFFFFFFFF))),
        u32_order_rows(), np.array([1, 5, 2, -1], I32)),
    _exact("u32_gather_fill", lambda x, i: jnp.take(x, i, axis=1, mode="fill",
                                                    fill_value=np.uint32(0x80000001)),
           u32_order_rows(), np.array([1, 9, 2, -1], I32)),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/indexing.json.
CASES[:] = recorded.apply(CASES, "tflite", "indexing")
CASES[:] = recorded.apply(CASES, "tflite_native", "indexing")
CASES[:] = recorded.apply(CASES, "tflite_litert", "indexing")
CASES[:] = recorded.apply(CASES, "tfjs", "indexing")
