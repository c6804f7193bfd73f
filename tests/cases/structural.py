"""Cases of the structural family (structural.py): iota, broadcasts, reshapes, transposes, pads.

Every structural primitive moves values without computing, so every case is
compared bit for bit.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import (
  BF16,
  BOOL,
  C64,
  C128,
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
  dtype_name,
  exact_case,
  rand,
  u32_order_rows,
)

CASES = Cases()


_exact = exact_case


CASES += [
    _exact("iota", lambda x: x + lax.iota(np.int32, 5), A(5, dtype=I32)),
    _exact("iota_2d", lambda x: x + lax.broadcasted_iota(np.float32, (3, 4), 1), A(3, 4)),
    _exact("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), A(3, 1)),
    _exact("reshape", lambda x: lax.reshape(x, (6, 4)), A(2, 3, 4)),
    _exact("reshape_dims", lambda x: lax.reshape(x, (4, 6), dimensions=(2, 1, 0)), A(2, 3, 4)),
    _exact("squeeze", lambda x: lax.squeeze(x, (0, 2)), A(1, 3, 1, 4)),
    _exact("expand_dims", lambda x: lax.expand_dims(x, (0, 3)), A(3, 4)),
    _exact("transpose", lambda x: lax.transpose(x, (2, 0, 1)), A(2, 3, 4)),
    _exact("rev", lambda x: lax.rev(x, (0, 2)), A(2, 3, 4)),
    _exact("concatenate", lambda x, y: lax.concatenate([x, y, x], 1), A(2, 3), A(2, 1)),
    _exact("split", lambda x: jnp.split(x, [1, 3], axis=1), A(2, 5)),
    _exact("pad_neg_interior", lambda x: lax.pad(x, np.float32(-7), [(1, -1, 2), (-2, 3, 1)]),
           A(3, 4)),
    _exact("pad_int8_lax", lambda x: lax.pad(x, np.int8(5), [(2, 0, 1), (0, 1, 0)]),
           A(3, 4, dtype=I8)),
]


def _pad(config):
  def f(x):
    unsigned = jnp.issubdtype(x.dtype, jnp.unsignedinteger)
    value = True if x.dtype == jnp.bool_ else 7 if unsigned else -7
    return lax.pad(x, jnp.array(value, x.dtype), config)
  return f


CASES += [
    # iota
    _exact("iota_i32_dim1", lambda x: lax.broadcasted_iota(jnp.int32, (3, 4), 1), rand((1,))),
    _exact("iota_f32_3d_dim0", lambda x: lax.broadcasted_iota(jnp.float32, (3, 4, 2), 0),
           rand((1,))),
    _exact("iota_f16_1d", lambda x: lax.iota(jnp.float16, 5), rand((1,))),
    _exact("iota_bf16_dim2", lambda x: lax.broadcasted_iota(jnp.bfloat16, (2, 2, 3), 2),
           rand((1,))),
    _exact("iota_u8", lambda x: lax.iota(jnp.uint8, 7), rand((1,))),
    _exact("iota_i8_dim0", lambda x: lax.broadcasted_iota(jnp.int8, (4, 2), 0), rand((1,))),
    _exact("iota_u32", lambda x: lax.iota(jnp.uint32, 6), rand((1,))),
    _exact("iota_poly", lambda x: lax.broadcasted_iota(jnp.int32, x.shape, 0) + x,
           rand((3, 4), I32), polymorphic_shapes=["(b, _)"]),
    _exact("arange_poly", lambda x: jnp.arange(x.shape[0], dtype=jnp.float32) * x[:, 0],
           rand((5, 2)), polymorphic_shapes=["(b, _)"]),
    # broadcast_in_dim
    _exact("broadcast_row", lambda x: jnp.broadcast_to(x, (2, 3)), rand((3,)),
           graph_ops=["BroadcastTo"]),
    _exact("broadcast_col", lambda x: jnp.broadcast_to(x, (3, 4)), rand((3, 1))),
    _exact("broadcast_scalar", lambda x: jnp.broadcast_to(x, (2, 3)), rand(())),
    _exact("broadcast_to_empty", lambda x: jnp.broadcast_to(x, (0, 3)), rand((3,))),
    _exact("broadcast_in_dim_middle", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)),
           rand((3,))),
    _exact("expand_dims_jnp", lambda x: jnp.expand_dims(x, (0, 2)), rand((3, 4))),
    _exact("broadcast_poly_b3", lambda x: jnp.broadcast_to(x[:, None], (x.shape[0], 3)),
           rand((4,)), polymorphic_shapes=["(b,)"]),
    _exact("broadcast_poly_from_other", lambda x, y: jnp.broadcast_to(x, (y.shape[0], 3)) + y,
           rand((3,)), rand((5, 3)), polymorphic_shapes=[None, "(b, _)"]),
    # reshape
    _exact("reshape_flat", lambda x: x.reshape(20), rand((4, 5)), graph_ops=["Reshape"]),
    _exact("reshape_2_10", lambda x: x.reshape(2, 10), rand((4, 5))),
    _exact("reshape_order_F", lambda x: jnp.reshape(x, (20,), order="F"), rand((4, 5))),
    _exact("reshape_order_F_3d", lambda x: jnp.reshape(x, (6, 4), order="F"), rand((2, 3, 4))),
    _exact("reshape_poly_b4", lambda x: x.reshape(-1), rand((3, 4)),
           polymorphic_shapes=["(b, _)"]),
    _exact("reshape_poly_split", lambda x: x.reshape(x.shape[0], 2, 2), rand((3, 4)),
           polymorphic_shapes=["(b, _)"]),
    _exact("reshape_poly_merge_back", lambda x: x.reshape(-1, 4), rand((3, 2, 2)),
           polymorphic_shapes=["(b, _, _)"]),
    # squeeze, transpose, rev
    _exact("squeeze_jnp", lambda x: jnp.squeeze(x, (0, 2)), rand((1, 3, 1, 2))),
    _exact("squeeze_poly", lambda x: jnp.squeeze(x, 1), rand((3, 1)),
           polymorphic_shapes=["(b, _)"]),
    _exact("transpose_2d", lambda x: x.T, rand((3, 4)), graph_ops=["Transpose"]),
    _exact("transpose_3d", lambda x: jnp.transpose(x, (2, 0, 1)), rand((2, 3, 4))),
    _exact("transpose_poly", lambda x: jnp.transpose(x, (1, 2, 0)), rand((2, 3, 4)),
           polymorphic_shapes=["(b, _, _)"]),
    _exact("rev_0", lambda x: x[::-1], rand((3, 4)), graph_ops=["ReverseV2"]),
    _exact("rev_01", lambda x: lax.rev(x, (0, 1)), rand((3, 4))),
    _exact("rev_poly", lambda x: x[::-1, ::-1], rand((3, 4)), polymorphic_shapes=["(b, _)"]),
    # concatenate, split, stack, tile
    _exact("concat_0", lambda x, y: jnp.concatenate([x, y, x]), rand((2, 3)), rand((4, 3)),
           graph_ops=["ConcatV2"]),
    _exact("concat_1", lambda x, y: jnp.concatenate([x, y], 1), rand((2, 3)), rand((2, 1))),
    _exact("concat_poly_symbolic_axis", lambda x: jnp.concatenate([x, x * 2, x[:1]], 0),
           rand((3, 2)), polymorphic_shapes=["(b, _)"]),
    _exact("concat_poly_other_axis", lambda x, y: jnp.concatenate([x, y], 1),
           rand((3, 2)), rand((3, 5)), polymorphic_shapes=["(b, _)", "(b, _)"]),
    _exact("split_static", lambda x: jnp.split(x, [1, 3], axis=1), rand((2, 5)),
           graph_ops=["SplitV"]),
    _exact("split_even", lambda x: jnp.split(x, 2, axis=0), rand((4, 3))),
    _exact("split_poly_static_axis", lambda x: jnp.split(x, [2], axis=1), rand((3, 5)),
           polymorphic_shapes=["(b, _)"]),
    _exact("split_poly_symbolic_sizes", lambda x: lax.split(x, (1, x.shape[0] - 1), axis=0),
           rand((4, 2)), polymorphic_shapes=["(b, _)"]),
    _exact("stack", lambda x, y: jnp.stack([x, y], axis=1), rand((2, 3)), rand((2, 3))),
    _exact("unstack", lambda x: jnp.unstack(x, axis=1), rand((2, 3))),
    _exact("tile", lambda x: jnp.tile(x, (2, 3)), rand((2, 3))),
    _exact("tile_poly", lambda x: jnp.tile(x, (2, 1)), rand((3, 2)),
           polymorphic_shapes=["(b, _)"]),
    _exact("array_copy", lambda x: jnp.array(x, copy=True) + 1, rand((2, 3))),
    # pad
    _exact("pad_positive", _pad([(1, 2, 0), (0, 3, 0)]), rand((3, 4)), graph_ops=["PadV2"]),
    _exact("pad_negative", _pad([(-1, 1, 0), (2, -2, 0)]), rand((3, 4))),
    _exact("pad_interior", _pad([(0, 0, 2), (1, 0, 1)]), rand((3, 4))),
    _exact("pad_all_kinds", _pad([(-2, -1, 1), (-1, 2, 3)]), rand((3, 4))),
    _exact("pad_interior_empty", _pad([(1, 1, 2)]), rand((0,))),
    # The gradient of an empty strided slice: an empty operand padded at one end.
    _exact("pad_interior_empty_low", _pad([(1, 0, 2), (0, 0, 0)]), rand((0, 2))),
    # An operand empty along another axis than the interior-padded one.
    _exact("pad_interior_empty_other_axis", _pad([(1, 0, 0), (1, 1, 0), (0, 0, 1)]),
           rand((1, 0, 1), dtype=I32)),
    # A -0.0 padding value keeps its sign (LiteRT's and TF.js's pads wrote +0.0).
    _exact("pad_negative_zero_value",
           lambda x: lax.pad(x, np.float32(-0.0), [(-1, 0, 1), (2, 2, 0)]), rand((3, 2))),
    # A pad that writes nothing, of a converted boolean (TF's XLA rewrote the
    # product with -1 that a -0.0 padding value brings on LiteRT's route).
    _exact("pad_negative_zero_nothing_to_write",
           lambda p: lax.pad(p.astype(np.float32), np.float32(-0.0), [(0, 0, 0)]),
           V(np.array([False, True]), BOOL)),
    # One that writes padding, between and around a converted boolean's zeros.
    _exact("pad_negative_zero_around_booleans",
           lambda p: lax.pad(p.astype(np.float32), np.float32(-0.0), [(1, 2, 1)]),
           V(np.array([False, True, False]), BOOL)),
    _exact("pad_value_arg", lambda x, v: lax.pad(x, v, [(1, -1, 1)]), rand((4,)), rand(())),
    _exact("jnp_pad_edge", lambda x: jnp.pad(x, ((1, 2), (2, 1)), mode="edge"), rand((3, 4))),
    _exact("pad_poly", _pad([(1, 2, 0), (-1, 1, 0)]), rand((3, 4)),
           polymorphic_shapes=["(b, _)"]),
    _exact("pad_poly_interior", _pad([(1, -1, 2), (0, 0, 1)]), rand((3, 4)),
           polymorphic_shapes=["(b, _)"]),
]


# Every structural primitive on every dtype.
DTYPE_FUNS = {
    "reshape": lambda x: x.reshape(-1),
    "broadcast": lambda x: jnp.broadcast_to(x[:, None], (3, 2, 4)),
    "transpose": lambda x: x.T,
    "rev": lambda x: x[::-1],
    "concat": lambda x: jnp.concatenate([x, x], 1),
    "pad": _pad([(1, -1, 1), (2, 0, 0)]),
    "tile": lambda x: jnp.tile(x, (2, 2)),
    "split": lambda x: jnp.split(x, [1], axis=0)[1],
    "iota": lambda x: lax.broadcasted_iota(x.dtype, (3, 4), 1) if x.dtype != jnp.bool_ else x,
}
ALL_DTYPES = [F32, F16, BF16, I8, I16, I32, U8, U16, U32, BOOL, C64]
# One op per kind runs every dtype in the fast tier, the rest in the exhaustive one.
FAST_DTYPES = [F16, BF16, I8, U8, U16, U32, BOOL, C64]
FAST_OPS = ("pad", "tile", "rev", "iota")


def _dtype_case(op, fn, dtype, **kw):
  if dtype == BF16:
    # bfloat16 values are made inside the function, as this table always did.
    return _exact(f"{op}_bfloat16", lambda x: fn(x.astype(jnp.bfloat16)), rand((3, 4)), **kw)
  return _exact(f"{op}_{dtype_name(dtype)}", fn, rand((3, 4), dtype), **kw)


for _op, _fn in DTYPE_FUNS.items():
  for _dt in ALL_DTYPES:
    CASES.append(_dtype_case(_op, _fn, _dt, slow=not (_op in FAST_OPS and _dt in FAST_DTYPES)))
  with jax.enable_x64(True):
    for _dt in (F64, I64, U64, C128):
      CASES.append(_dtype_case(_op, _fn, _dt, x64=True))

# uint32 moved around (TFLite moves it as int32 keys: graph/ordered_lanes.py).
CASES += [
    _exact("u32_order_moves", lambda x: (
        x.T, x[::-1, ::-2], jnp.concatenate([x, x[:1]]), jnp.broadcast_to(x[:1], (2, 3, 8)),
        lax.pad(x, np.uint32(0x80000000), [(1, 0, 0), (0, 1, 1)]), jnp.tile(x, (1, 2)),
        x.reshape(4, 6)), u32_order_rows()),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/structural.json.
CASES[:] = recorded.apply(CASES, "tflite", "structural")
CASES[:] = recorded.apply(CASES, "tflite_native", "structural")
CASES[:] = recorded.apply(CASES, "tflite_litert", "structural")
CASES[:] = recorded.apply(CASES, "tfjs", "structural")
