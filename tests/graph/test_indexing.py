"""Graph-serialization cases for slices, gathers and scatters (rules/indexing.py).

Out-of-bounds indices are part of the cases on purpose: JAX clamps (dynamic
slices, CLIP and PROMISE_IN_BOUNDS gathers), fills (FILL_OR_DROP gathers) or drops
(scatters) where TF's kernels would fail.
"""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

from tests.graph.harness import Case, FLAVOURS, TF_MODES, arg, case_id, concrete_args, run_case

i32 = np.int32


def idx(*values, dtype=i32):
  return np.array(values, dtype)


def sc(value, dtype=i32):
  return np.array(value, dtype)


def _vmapped_dynamic_slice(x, starts):
  return jax.vmap(lambda s: lax.dynamic_slice(x, (s, 0), (2, x.shape[1])))(starts)


def _batched_dynamic_slice(xs, starts):
  return jax.vmap(lambda x, s: lax.dynamic_slice_in_dim(x, s, 2))(xs, starts)


def _batched_dus(xs, us, starts):
  return jax.vmap(lambda x, u, s: lax.dynamic_update_slice_in_dim(x, u, s, 0))(xs, us, starts)


_APPLY_REFUSED = {"no_xla": "a scatter with an arbitrary combiner needs XlaScatter"}

CASES = [
    # slice
    Case("slice_basic", lambda x: x[1:3, 2:], [arg((4, 5))], graph_ops=["Slice"]),
    Case("slice_strided", lambda x: x[::2, 1::3], [arg((5, 7))], graph_ops=["StridedSlice"]),
    Case("slice_lax_strides", lambda x: lax.slice(x, (1, 0), (4, 5), (2, 2)), [arg((4, 5))]),
    Case("slice_int_index", lambda x: x[1], [arg((4, 5))]),
    Case("slice_ellipsis", lambda x: x[..., 1:3], [arg((2, 3, 4))]),
    Case("slice_poly_tail", lambda x: x[:, 1:], [arg((3, 4))], polymorphic_shapes=["(b, _)"]),
    Case("slice_poly_symbolic_axis", lambda x: x[1:, ::2], [arg((5, 4))],
         polymorphic_shapes=["(b, _)"]),
    Case("slice_poly_strided_symbolic", lambda x: x[::2], [arg((5, 3))],
         polymorphic_shapes=["(b, _)"]),
    # dynamic_slice: starts are clamped so the slice stays in bounds
    Case("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
         [arg((4, 5)), sc(1), sc(2)], graph_ops=["Slice"]),
    Case("dynamic_slice_oob_high", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
         [arg((4, 5)), sc(7), sc(3)]),
    Case("dynamic_slice_oob_negative", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
         [arg((4, 5)), sc(-5), sc(-1)]),
    Case("dynamic_slice_int8_index", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2),
         [arg((6,)), sc(100, dtype=np.int8)]),
    Case("dynamic_slice_uint32_index", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2),
         [arg((6,)), sc(4000000000, dtype=np.uint32)]),
    Case("dynamic_slice_poly_sizes",
         lambda x, i: lax.dynamic_slice(x, (0, i), (x.shape[0], 2)),
         [arg((3, 5)), sc(4)], polymorphic_shapes=["(b, _)", None]),
    Case("dynamic_slice_poly_symbolic_size",
         lambda x, i: lax.dynamic_slice_in_dim(x, i, x.shape[0] - 1, axis=0),
         [arg((4, 3)), sc(3)], polymorphic_shapes=["(b, _)", None]),
    # dynamic_update_slice
    Case("dus", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)),
         [arg((4, 5)), arg((2, 3), seed=1), sc(1)]),
    Case("dus_oob", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
         [arg((4, 5)), arg((2, 3), seed=1), sc(9), sc(-4)]),
    Case("dus_bool", lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
         [arg((6,), np.bool_), arg((2,), np.bool_, seed=1), sc(3)]),
    Case("dus_poly", lambda x, u, i: lax.dynamic_update_slice(x, u, (0, i)),
         [arg((3, 5)), arg((3, 2), seed=1), sc(4)], polymorphic_shapes=["(b, _)", "(b, _)", None]),
    Case("dus_scalar_operand", lambda x, u: lax.dynamic_update_slice(x, u, ()),
         [arg(()), arg((), seed=1)]),
    # gather from NumPy-style indexing (PROMISE_IN_BOUNDS: out of range clamps)
    Case("gather_x_idx_axis0", lambda x, i: x[i], [arg((4, 5)), idx(1, 3, 0, -1)],
         graph_ops=["GatherV2"]),
    Case("gather_x_idx_axis1", lambda x, i: x[:, i], [arg((4, 5)), idx(4, 0, -2)],
         graph_ops=["GatherV2"]),
    Case("gather_oob_clamps", lambda x, i: x[i], [arg((4, 5)), idx(7, -9, 2)]),
    Case("gather_scalar_traced_index", lambda x, i: x[i], [arg((4, 5)), idx(2)]),
    Case("gather_2d_index", lambda x, i: x[i], [arg((4, 5)), np.array([[0, 3], [2, 1]], i32)]),
    Case("gather_two_arrays", lambda x, i, j: x[i, j], [arg((4, 5)), idx(0, 3, 2), idx(4, 1, 1)],
         graph_ops=["GatherNd"]),
    Case("gather_mixed", lambda x, i: x[1:3, i, ::2], [arg((4, 5, 6)), idx(0, 4)]),
    Case("gather_ellipsis_array", lambda x, i: x[..., i], [arg((2, 3, 4)), idx(3, 0)]),
    Case("gather_bool_mask_static", lambda x: x[np.array([True, False, True, True])],
         [arg((4, 3))]),
    Case("take_fill_default", lambda x, i: jnp.take(x, i, axis=1),
         [arg((3, 5)), idx(1, 7, -1, -8)]),
    Case("take_clip", lambda x, i: jnp.take(x, i, axis=0, mode="clip"),
         [arg((3, 5)), idx(1, 7, -4)]),
    Case("take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1),
         [arg((3, 5)), np.array([[0, 4], [2, 2], [1, 3]], i32)]),
    Case("take_along_axis_oob", lambda x, i: jnp.take_along_axis(x, i, axis=0),
         [arg((3, 5)), np.array([[0, 4, 1, -1, 3]], i32)]),
    Case("at_get_fill_value", lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0),
         [arg((4, 3)), idx(1, 4, -5, 3)]),
    Case("at_get_fill_int", lambda x, i: x.at[i].get(mode="fill"),
         [arg((4,), np.int32), idx(1, 4)]),
    Case("at_get_fill_uint8", lambda x, i: x.at[i].get(mode="fill"),
         [arg((4,), np.uint8, 0, 9), idx(1, 4)]),
    Case("at_get_fill_bool", lambda x, i: x.at[i].get(mode="fill"),
         [arg((4,), np.bool_), idx(1, 4, 0)]),
    Case("gather_window_vmap_dynamic_slice", _vmapped_dynamic_slice,
         [arg((5, 3)), idx(0, 4, -2, 2)]),
    Case("gather_batching_dims", _batched_dynamic_slice,
         [arg((3, 6)), idx(1, 5, -1)]),
    Case("gather_poly_batch_operand", lambda x, i: x[:, i], [arg((3, 5)), idx(4, 0)],
         polymorphic_shapes=["(b, _)", None]),
    Case("gather_poly_batch_index", lambda x, i: x[i], [arg((4, 5)), idx(1, 3, 0)],
         polymorphic_shapes=[None, "(b,)"]),
    Case("take_along_axis_poly", lambda x, i: jnp.take_along_axis(x, i, axis=1),
         [arg((3, 5)), np.array([[0, 4], [2, 9], [1, 3]], i32)],
         polymorphic_shapes=["(b, _)", "(b, _)"]),
    Case("gather_window_poly", _vmapped_dynamic_slice, [arg((5, 3)), idx(0, 4, 1)],
         polymorphic_shapes=["(_, c)", "(b,)"]),
    # scatter from .at[] (FILL_OR_DROP: out-of-range windows are dropped)
    Case("at_set", lambda x, i: x.at[i].set(7.0), [arg((4, 5)), idx(1, 3)],
         graph_ops=["TensorScatterUpdate"]),
    Case("at_set_updates", lambda x, i, u: x.at[:, i].set(u),
         [arg((4, 5)), idx(4, 0), arg((4, 2), seed=1)]),
    Case("at_set_oob_dropped", lambda x, i: x.at[i].set(7.0), [arg((4, 5)), idx(1, 6, -7)]),
    Case("at_set_clip", lambda x, i: x.at[i].set(7.0, mode="clip"), [arg((4, 5)), idx(9)]),
    Case("at_add_duplicates", lambda x, i: x.at[i].add(1.5), [arg((4, 5)), idx(1, 1, 3, 8)],
         graph_ops=["TensorScatterAdd"]),
    Case("at_add_int", lambda x, i: x.at[i].add(3), [arg((6,), np.int32), idx(0, 0, 5)]),
    Case("at_mul", lambda x, i: x.at[i].mul(2.5), [arg((4, 5)), idx(0, 3, 9)]),
    Case("at_mul_int_duplicates", lambda x, i: x.at[i].mul(3),
         [arg((6,), np.int32), idx(2, 2, 5)]),
    Case("at_min", lambda x, i, u: x.at[i].min(u), [arg((6,)), idx(0, 2, 2, 9), arg((4,), seed=2)]),
    Case("at_max_nan", lambda x, i, u: x.at[i].max(u),
         [np.array([np.nan, 1, 2, 3], np.float32), idx(0, 1, 1, 2),
          np.array([5, np.nan, 0, 1], np.float32)]),
    Case("at_min_nan", lambda x, i, u: x.at[i].min(u),
         [np.array([np.nan, 1, 2, 3], np.float32), idx(0, 1, 1, 2),
          np.array([5, np.nan, 0, 1], np.float32)]),
    Case("at_min_int", lambda x, i: x.at[i].min(-1), [arg((5,), np.int8), idx(1, 4)]),
    Case("scatter_sub", lambda x, i, u: lax.scatter_sub(
        x, i[:, None], u, lax.ScatterDimensionNumbers((1,), (0,), (0,))),
        [arg((4, 3)), idx(0, 3, 0), arg((3, 3), seed=1)]),
    Case("scatter_window_partly_oob", lambda x: lax.scatter(
        x, jnp.array([[3], [-1], [1]]), jnp.ones((3, 3)),
        lax.ScatterDimensionNumbers((1,), (), (0,)), mode="drop"), [arg((5,))]),
    Case("scatter_window_clip", lambda x: lax.scatter(
        x, jnp.array([[4]]), jnp.ones((1, 3)),
        lax.ScatterDimensionNumbers((1,), (), (0,)), mode="clip"), [arg((5,))]),
    Case("scatter_batching_dims", _batched_dus,
         [arg((3, 6)), arg((3, 2), seed=1), idx(1, 5, -1)]),
    Case("at_set_two_arrays", lambda x, i, j: x.at[i, j].set(0.0),
         [arg((4, 5)), idx(0, 3), idx(4, 9)]),
    Case("at_set_bool", lambda x, i: x.at[i].set(True), [arg((5,), np.bool_), idx(0, 3)]),
    Case("at_set_complex", lambda x, i: x.at[i].set(1j), [arg((5,), np.complex64), idx(0, 3)]),
    Case("at_apply", lambda x, i: x.at[i].apply(jnp.sin), [arg((5,)), idx(0, 3)],
         refused=_APPLY_REFUSED),
    Case("at_add_poly", lambda x, i: x.at[:, i].add(1.0), [arg((3, 5)), idx(4, 0, 4)],
         polymorphic_shapes=["(b, _)", None]),
    Case("at_set_poly_rows", lambda x, i, u: x.at[i].set(u),
         [arg((4, 5)), idx(1, 3), arg((2, 5), seed=1)],
         polymorphic_shapes=["(_, c)", None, "(_, c)"]),
]

DTYPES = [np.float16, ml_dtypes.bfloat16, np.int8, np.int16, np.uint8, np.uint16,
          np.uint32, np.bool_, np.complex64]
X64_DTYPES = [np.float64, np.int64, np.uint64]

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


def _as_bfloat16(fn):
  return lambda x, i: fn(x.astype(jnp.bfloat16), i)


def _compare_bfloat16(rtol):
  # NumPy compares bfloat16 NaNs as different; compare as float32 instead.
  def compare(res, exp):
    assert res.dtype == exp.dtype, (res.dtype, exp.dtype)
    np.testing.assert_allclose(res.astype(np.float32), exp.astype(np.float32), rtol=rtol)
  return compare


# A multiplying scatter multiplies the updates of a duplicated index together
# before the operand (TF has no sequential multiplying scatter), so floats may
# differ from JAX by a rounding per duplicate.
_MUL_RTOL = {"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-6, "float64": 1e-15}


def _dtype_cases(dtypes, index_dtype=i32):
  cases = []
  for op, fn in DTYPE_FUNS.items():
    for dt in dtypes:
      name = np.dtype(dt).name
      if (op, name) in _UNSUPPORTED:
        continue
      i = idx(2, 0, 7, 2, dtype=index_dtype)
      rtol = _MUL_RTOL.get(name, 1e-6) if op == "at_mul" else 1e-6
      if dt == ml_dtypes.bfloat16:
        # bfloat16 NumPy arguments are not accepted by convert() in eager mode.
        cases.append(Case(f"{op}_bfloat16", _as_bfloat16(fn), [arg((3, 4)), i],
                          compare=_compare_bfloat16(rtol)))
      else:
        cases.append(Case(f"{op}_{name}", fn, [arg((3, 4), dt, 0, 5), i], rtol=rtol))
  return cases


FAST_DTYPE_CASES = [c for c in _dtype_cases(DTYPES)
                    if c.name.split("_")[0] in ("gather", "dus") or c.name.startswith("at_set")]
_FAST_NAMES = {c.name for c in FAST_DTYPE_CASES}
SLOW_DTYPE_CASES = [c for c in _dtype_cases(DTYPES + [np.float32, np.int32])
                    if c.name not in _FAST_NAMES]


@pytest.mark.parametrize("case", CASES + FAST_DTYPE_CASES, ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_indexing(case, mode, flavour):
  run_case(case, mode, flavour)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_DTYPE_CASES, ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_indexing_dtypes(case, mode, flavour):
  run_case(case, mode, flavour)


_X64_CASES = _dtype_cases(X64_DTYPES, np.int64)
_X64_FAST = ("gather_", "dus_", "at_set_", "take_fill_")


@pytest.mark.parametrize("case", [c for c in _X64_CASES if c.name.startswith(_X64_FAST)],
                         ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_indexing_x64(case, mode, flavour):
  with jax.enable_x64(True):
    run_case(case, mode, flavour)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in _X64_CASES if not c.name.startswith(_X64_FAST)],
                         ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_indexing_x64_slow(case, mode, flavour):
  with jax.enable_x64(True):
    run_case(case, mode, flavour)


@pytest.mark.parametrize("op", ["min", "max"])
def test_scatter_min_max_complex_is_refused(op):
  # TF has no min/max scatter for complex numbers.
  import jax2tf
  fn = lambda x, i: getattr(x.at[i], op)(x[0])  # noqa: E731
  with pytest.raises(NotImplementedError, match=f"scatter-{op}"):
    jax2tf.convert(fn, native_serialization=False)(arg((3,), np.complex64), idx(1))


def _graph_op_types(case, flavour):
  import tensorflow as tf
  from tests.graph.harness import convert
  args = concrete_args(case)
  specs = [tf.TensorSpec(np.shape(a), tf.as_dtype(np.asarray(a).dtype)) for a in args]
  fn = tf.function(convert(case, flavour), autograph=False)
  return {op.type for op in fn.get_concrete_function(*specs).graph.get_operations()}


def test_windowed_gather_uses_xla_gather_when_allowed():
  case = next(c for c in CASES if c.name == "gather_window_vmap_dynamic_slice")
  assert "XlaGather" in _graph_op_types(case, "xla")
  assert "GatherNd" in _graph_op_types(case, "no_xla")
