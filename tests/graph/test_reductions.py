"""Reductions (sum/prod/max/min/and/or/xor, argmax/argmin, generic reduce) against jax.jit."""

import jax
import ml_dtypes
import numpy as np
import pytest
from jax import lax

from tests.graph.harness import Case, FLAVOURS, TF_MODES, arg, run_case, params

BF16 = ml_dtypes.bfloat16


def red(prim, axes, **params):
  return lambda x: prim.bind(x, axes=tuple(axes), **params)


def rsum(axes):
  return lambda x: lax.reduce_sum(x, axes)


def rmax(axes):
  return lambda x: lax.reduce_max(x, axes)


def rmin(axes):
  return lambda x: lax.reduce_min(x, axes)


def rprod(axes):
  return lambda x: lax.reduce_prod(x, axes)


def argmax(axis, index_dtype=np.int32):
  return lambda x: lax.argmax(x, axis, index_dtype)


def argmin(axis, index_dtype=np.int32):
  return lambda x: lax.argmin(x, axis, index_dtype)


def in_bf16(f):
  return lambda x: f(x.astype(BF16))


def with_specials(shape, dtype=np.float32, seed=0):
  """Random values with NaNs, infinities, ties and signed zeros sprinkled in."""
  x = arg(shape, dtype, seed=seed).round().astype(dtype)
  flat = x.reshape(-1)
  rng = np.random.default_rng(seed + 7)
  for v in (np.nan, np.inf, -np.inf, 0.0, -0.0, -0.0):
    flat[rng.integers(0, flat.size)] = v
  return x


def signed_zeros(shape, seed=0, dtype=np.float32):
  rng = np.random.default_rng(seed)
  return np.where(rng.random(shape) < 0.5, -0.0, 0.0).astype(dtype)


def bf16_close(rtol):
  """The harness compares bfloat16 (NumPy kind 'V') exactly; JAX's bfloat16
  sums round after every step while the rule rounds once."""
  def compare(res, exp):
    assert res.dtype == exp.dtype, (res.dtype, exp.dtype)
    np.testing.assert_allclose(res.astype(np.float32), exp.astype(np.float32), rtol=rtol,
                               atol=rtol)
  return compare


def same_bits(res, exp):
  np.testing.assert_array_equal(np.signbit(res), np.signbit(exp))
  np.testing.assert_array_equal(res, exp)


x34 = arg((3, 4, 5))
CASES = [
    Case("sum_f32", rsum((0, 2)), [x34], rtol=1e-5, graph_ops=["Sum"]),
    Case("sum_all_f32", rsum((0, 1, 2)), [x34], rtol=1e-5),
    Case("sum_f16_accumulates_wide", rsum((0,)), [np.ones((4096,), np.float16)]),
    Case("sum_bf16", in_bf16(rsum((1,))), [x34], compare=bf16_close(2e-2)),
    Case("sum_i8_wraps", rsum((1,)), [arg((3, 40), np.int8, -128, 127)]),
    Case("sum_u8_wraps", rsum((1,)), [arg((3, 40), np.uint8, 0, 255)]),
    Case("sum_i16", rsum((0,)), [arg((30, 4), np.int16, -30000, 30000)]),
    Case("sum_u16", rsum((0,)), [arg((30, 4), np.uint16, 0, 65535)]),
    Case("sum_i32_wraps", rsum((0,)), [arg((30, 4), np.int32, -2**31, 2**31 - 1)]),
    Case("sum_u32_wraps", rsum((0,)), [arg((30, 4), np.uint32, 0, 2**32 - 1)]),
    Case("sum_c64", rsum((1,)), [arg((3, 4), np.complex64)], rtol=1e-5),
    Case("prod_f32", rprod((1,)), [x34], rtol=1e-5),
    Case("prod_i32_wraps", rprod((0,)), [arg((12, 3), np.int32, -1000, 1000)]),
    Case("prod_u8", rprod((0,)), [arg((5, 3), np.uint8, 0, 255)]),
    Case("prod_c64", rprod((0,)), [arg((3, 4), np.complex64)], rtol=1e-5),
    Case("max_f32", rmax((1,)), [x34], graph_ops=["Max"]),
    Case("max_nan_inf_f32", rmax((1,)), [with_specials((4, 6))]),
    Case("min_nan_inf_f32", rmin((0,)), [with_specials((4, 6), seed=1)]),
    Case("max_signed_zeros", rmax((1,)), [signed_zeros((6, 5))], compare=same_bits),
    Case("min_signed_zeros", rmin((1,)), [signed_zeros((6, 5), seed=1)], compare=same_bits),
    Case("max_f16", rmax((0,)), [with_specials((5, 4), np.float16)]),
    Case("max_f16_signed_zeros", rmax((0,)), [signed_zeros((5, 4), 3, np.float16)],
         compare=same_bits),
    Case("min_bf16", in_bf16(rmin((0,))), [with_specials((5, 4))], compare=bf16_close(0)),
    Case("max_i8", rmax((0,)), [arg((5, 4), np.int8, -128, 127)]),
    Case("min_u8", rmin((0,)), [arg((5, 4), np.uint8, 0, 255)]),
    Case("max_u32", rmax((0,)), [arg((5, 4), np.uint32, 0, 2**32 - 1)]),
    Case("min_i16", rmin((1,)), [arg((5, 4), np.int16, -999, 999)]),
    Case("max_bool", rmax((1,)), [arg((5, 4), np.bool_)]),
    Case("min_bool", rmin((1,)), [arg((5, 4), np.bool_)]),
    Case("and_bool", red(lax.reduce_and_p, (1,)), [arg((5, 4), np.bool_)]),
    Case("or_bool", red(lax.reduce_or_p, (0,)), [arg((5, 4), np.bool_)]),
    Case("xor_bool", red(lax.reduce_xor_p, (0, 1)), [arg((5, 4), np.bool_)]),
    Case("and_i32", red(lax.reduce_and_p, (1,)), [arg((5, 4), np.int32, -2**31, 2**31 - 1)]),
    Case("or_u8", red(lax.reduce_or_p, (0,)), [arg((5, 4), np.uint8, 0, 255)]),
    Case("xor_i16", red(lax.reduce_xor_p, (0,)), [arg((5, 4), np.int16, -2**15, 2**15 - 1)]),
    Case("argmax_f32", argmax(1), [x34], graph_ops=["ArgMax"]),
    Case("argmin_f32_i64_index", argmin(0, np.int32), [x34]),
    Case("argmax_ties_nan", argmax(1), [with_specials((4, 8))]),
    Case("argmin_ties_nan", argmin(1), [with_specials((4, 8), seed=2)]),
    Case("argmax_signed_zeros", argmax(1), [signed_zeros((4, 8))]),
    Case("argmax_int_ties", argmax(0), [arg((9, 5), np.int32, 0, 2)]),
    Case("argmin_u8_ties", argmin(1), [arg((5, 9), np.uint8, 0, 2)]),
    Case("argmax_bool", argmax(1), [arg((5, 9), np.bool_)]),
    Case("argmax_f16", argmax(0), [with_specials((6, 4), np.float16)]),
    Case("argmin_bf16", in_bf16(argmin(1)), [with_specials((4, 6))]),
    Case("argmax_i8_index_i16", argmax(1, np.int16), [arg((4, 6), np.int8)]),
    Case("reduce_add_init", lambda x: lax.reduce(x, np.float32(2.5), lax.add, (1,)), [x34],
         rtol=1e-5),
    Case("reduce_max_init", lambda x: lax.reduce(x, np.float32(0.5), lax.max, (0, 2)),
         [with_specials((3, 4, 5))]),
    Case("reduce_mul_i32", lambda x: lax.reduce(x, np.int32(3), lax.mul, (0,)),
         [arg((4, 3), np.int32)]),
    Case("reduce_or_bool", lambda x: lax.reduce(x, True, lax.bitwise_or, (0,)),
         [arg((4, 3), np.bool_)]),
    Case("reduce_variadic_argmax",
         lambda x, i: lax.reduce((x, i), (np.float32(-np.inf), np.int32(0)),
                                 lambda a, b: (lax.max(a[0], b[0]),
                                               lax.max(a[1], b[1])), (1,)),
         [x34, arg((3, 4, 5), np.int32, 0, 9, seed=1)],
         refused={"no_xla": "a multi-operand reduction body needs XlaVariadicReduceV2"}),
    Case("poly_sum_symbolic_axis", rsum((1,)), [x34], polymorphic_shapes=["(3, b, 5)"],
         rtol=1e-5),
    Case("poly_max_symbolic_axis", rmax((0, 1)), [with_specials((3, 4, 5))],
         polymorphic_shapes=["(a, b, 5)"]),
    Case("poly_argmax_symbolic_axis", argmax(1), [with_specials((3, 8))],
         polymorphic_shapes=["(a, b)"]),
    Case("poly_xor_int", red(lax.reduce_xor_p, (1,)), [arg((3, 7), np.int8, -128, 127)],
         polymorphic_shapes=["(a, b)"]),
]


SLOW = ['and_i32', 'argmax_bool', 'argmax_f16', 'argmax_i8_index_i16', 'argmin_bf16', 'argmin_f32_i64_index', 'argmin_u8_ties', 'max_f16', 'max_i8', 'max_u32', 'min_bool', 'min_i16', 'min_nan_inf_f32', 'min_u8', 'or_bool', 'or_u8', 'poly_xor_int', 'prod_c64', 'prod_i32_wraps', 'prod_u8', 'reduce_mul_i32', 'reduce_or_bool', 'sum_all_f32', 'sum_c64', 'sum_i16', 'sum_i32_wraps', 'sum_u16', 'sum_u32_wraps', 'sum_u8_wraps', 'xor_i16']


@pytest.mark.parametrize("case", params(CASES, SLOW))
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_reductions(case, mode, flavour):
  run_case(case, mode, flavour)


# 64-bit cases run with x64 enabled, the conversion included.
X64_CASES = [
    Case("sum_f64", rsum((0,)), [arg((5, 4), np.float64)], rtol=1e-12),
    Case("sum_i64_wraps", rsum((0,)), [arg((5, 4), np.int64, -2**62, 2**62)]),
    Case("sum_u64", rsum((0,)), [arg((5, 4), np.uint64, 0, 2**63)]),
    Case("max_f64_nan", rmax((1,)), [with_specials((4, 6), np.float64)]),
    Case("min_f64_signed_zeros", rmin((1,)), [signed_zeros((6, 5), 2, np.float64)],
         compare=same_bits),
    Case("argmax_i64_index", argmax(1, np.int64), [with_specials((4, 6), np.float64)]),
    Case("xor_u64", red(lax.reduce_xor_p, (0,)), [arg((5, 4), np.uint64, 0, 2**63)]),
    Case("prod_c128", rprod((0,)), [arg((3, 4), np.complex128)], rtol=1e-12),
]
X64_SLOW = ['max_f64_nan', 'prod_c128', 'sum_u64', 'xor_u64']


@pytest.mark.parametrize("case", params(X64_CASES, X64_SLOW))
def test_reductions_x64(case):
  with jax.enable_x64(True):
    for mode in TF_MODES:
      for flavour in FLAVOURS:
        run_case(case, mode, flavour)
