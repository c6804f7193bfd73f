"""Graph-serialization cases for elementwise primitives (rules/elementwise.py).

Three kinds of cases:
* semantic pins: fixed operands at the corners where TF's kernels and XLA
  disagree (integer division by 0 and -1, shifts by the width, NaN and -0.0 in
  max/min/clamp/sign, float->int saturation, rounding ties ...), compared bit
  for bit;
* a dtype table: every primitive on every dtype JAX accepts for it (the
  combinations are discovered with jax.eval_shape, so what JAX rejects is never
  generated), on random operands in the primitive's domain;
* shape-polymorphic cases and graph assertions (the intended ordinary TF op is
  emitted, never XlaCallModule).
"""

import functools

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax
from jax._src import ad_util

from tests.graph.harness import Case, FLAVOURS, TF_MODES, arg, case_id, run_case

bf16 = ml_dtypes.bfloat16
F32, F16, I8, I16, I32, U8, U16, U32, C64 = (np.float32, np.float16, np.int8, np.int16,
                                             np.int32, np.uint8, np.uint16, np.uint32,
                                             np.complex64)
ALL_DTYPES = [F32, F16, bf16, I8, I16, I32, U8, U16, U32, np.bool_, C64]
X64_DTYPES = [np.float64, np.int64, np.uint64, np.complex128]
# Relative tolerances of the dtype table: TF's kernels (Eigen) and XLA's use
# different polynomial approximations for transcendental functions.
RTOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2, "complex64": 2e-5,
        "float64": 1e-12, "complex128": 1e-12}


def _name(dtype) -> str:
  return np.dtype(dtype).name


def _bits_equal(res, exp):
  """Exact equality, telling -0.0 from 0.0; any NaN matches any NaN."""
  res, exp = np.asarray(res), np.asarray(exp)
  assert res.dtype == exp.dtype and res.shape == exp.shape, (res.dtype, exp.dtype,
                                                             res.shape, exp.shape)
  if exp.dtype.kind in "fc" or exp.dtype == bf16:
    nan = np.isnan(exp)
    np.testing.assert_array_equal(np.isnan(res), nan, err_msg="NaN positions")
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[exp.dtype.itemsize]
    r, e = res.copy(), exp.copy()
    r[nan] = 0
    e[nan] = 0
    np.testing.assert_array_equal(r.view(width), e.view(width), err_msg=f"{res} != {exp}")
  else:
    np.testing.assert_array_equal(res, exp)


def _close(rtol):
  """Tolerance comparison that also covers bfloat16 (which NumPy sees as void)."""
  def compare(res, exp):
    res, exp = np.asarray(res), np.asarray(exp)
    assert res.dtype == exp.dtype and res.shape == exp.shape, (res.dtype, exp.dtype)
    wide = np.complex128 if exp.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(res.astype(wide), exp.astype(wide), rtol=rtol, atol=rtol,
                               equal_nan=True)
  return compare


def exact(name, fun, args, **kw):
  return Case(name, fun, args, compare=_bits_equal, **kw)


def _cast_in(fun, dtype):
  """fun with its float32 operands cast to `dtype` inside the function.

  bfloat16 arguments cannot cross the TF boundary in eager mode, so bfloat16
  values are made inside the converted function.
  """
  return lambda *xs: fun(*[x.astype(dtype) if x.dtype == np.float32 else x for x in xs])


F32_EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5,
                     0.49999997, 3e9, -3e9, 300.0, -1.5, 1e-3, 65520.0], np.float32)
F32_EDGE2 = np.array([1.0, np.nan, np.nan, -0.0, 0.0, -0.0, 2.0, 0.5, -1.0, 1.5, -2.5,
                      0.5, -3e9, 3e9, np.inf, -np.inf, 1e-3, 1.0], np.float32)


def _int_edge(dtype):
  info = np.iinfo(dtype)
  return np.array([7, -7 if info.min else 3, 7, info.min, info.max, 0, 5, info.min, 1],
                  dtype)


def _int_edge_divisors(dtype):
  info = np.iinfo(dtype)
  return np.array([2, 2, -2 if info.min else 3, -1 if info.min else 2, 0, 0, 0,
                   1, info.max], dtype)


# ---------------------------------------------------------------------------
# Semantic pins.

INTS = (I8, I16, I32, U8, U16, U32)


def _per_dtype(fun):
  """fun applied to consecutive pairs of operands (one pair per dtype)."""
  def bundled(*xs):
    return tuple(fun(xs[i], xs[i + 1]) for i in range(0, len(xs), 2))
  return bundled


def _shift_edges(t):
  info = np.iinfo(t)
  return (np.array([1, 5, info.max, info.min, 3, 3, 3, 1], t),
          np.array([0, 1, 1, 1, info.bits - 1, info.bits, info.bits + 3,
                    200 if info.bits > 8 else 100], t))


SEMANTIC_CASES = [
    exact("sign_edges_f32", lax.sign, [F32_EDGE]),
    exact("sign_edges_f16", lax.sign, [F32_EDGE.astype(F16)]),
    exact("sign_bf16", _cast_in(lax.sign, bf16), [F32_EDGE]),
    exact("round_afz_edges", lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
          [F32_EDGE], graph_ops=["Floor", "Ceil"]),
    exact("round_even_edges", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
          [F32_EDGE], graph_ops=["Round"]),
    exact("round_afz_f16", lambda x: lax.round(x), [F32_EDGE.astype(F16)]),
    exact("round_even_bf16",
          _cast_in(lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), bf16),
          [F32_EDGE]),
    exact("is_finite_edges", lax.is_finite, [F32_EDGE], graph_ops=["IsFinite"]),
    exact("max_nan_zero_sign", lax.max, [F32_EDGE, F32_EDGE2], graph_ops=["Maximum"]),
    exact("min_nan_zero_sign", lax.min, [F32_EDGE, F32_EDGE2], graph_ops=["Minimum"]),
    exact("max_f16_nan", lax.max, [F32_EDGE.astype(F16), F32_EDGE2.astype(F16)]),
    exact("min_bf16_nan", _cast_in(lax.min, bf16), [F32_EDGE, F32_EDGE2]),
    exact("relu_like", lambda x: lax.max(x, 0.0), [F32_EDGE]),
    exact("max_const_nonzero", lambda x: lax.max(x, 1.0), [F32_EDGE]),
    exact("max_complex_lexicographic", lax.max,
          [np.array([1 + 2j, 1 + 3j, np.nan, 1, 2 - 1j], C64),
           np.array([1 + 3j, 1 + 2j, 0, np.nan * 1j, 2 - 1j], C64)]),
    exact("min_complex_lexicographic", lax.min,
          [np.array([1 + 2j, 1 + 3j, np.nan, 1, -2 - 1j], C64),
           np.array([1 + 3j, 1 + 2j, 0, np.nan * 1j, 2 - 1j], C64)]),
    exact("max_bool", lax.max, [arg((6,), np.bool_), arg((6,), np.bool_, seed=1)]),
    exact("min_bool", lax.min, [arg((6,), np.bool_), arg((6,), np.bool_, seed=1)]),
    exact("clamp_nan_operand", lambda x: lax.clamp(np.float32(-1), x, np.float32(1)),
          [F32_EDGE]),
    exact("clamp_nan_bound", lambda x: lax.clamp(np.float32(np.nan), x, np.float32(1)),
          [F32_EDGE]),
    exact("clamp_arrays", lax.clamp, [F32_EDGE2, F32_EDGE, F32_EDGE2 + 1]),
    exact("clamp_int", lambda x: lax.clamp(np.int8(-3), x, np.int8(5)), [_int_edge(I8)]),
    exact("clamp_u32", lambda x: lax.clamp(np.uint32(3), x, np.uint32(6)), [_int_edge(U32)]),
    exact("cbrt_edges", lax.cbrt, [np.array([-8, -0.0, 0, 27, np.inf, -np.inf, np.nan, 1e-30,
                                             3e38, -30], np.float32)]),
    exact("pow_edges", lax.pow, [np.array([np.nan, 0, 0, -8, -2, 1, np.inf, -0.0], F32),
                                 np.array([0, -1, 0, 1 / 3, 3, np.nan, -1, -3], F32)]),
    exact("pow_int_exponent", lax.pow, [np.array([2, -2, 0, -1.5, 3], F32),
                                        np.array([3, -3, -1, 2, 0], I32)]),
    Case("pow_complex_int_exponent", lax.pow, [arg((2, 3), C64), arg((2, 3), I32)],
         rtol=1e-5),
    exact("integer_pow_neg_f32", lambda x: lax.integer_pow(x, -3),
          [np.array([2, -0.5, 0, -0.0, np.inf, 3], F32)]),
    exact("integer_pow_7_f32", lambda x: lax.integer_pow(x, 7), [arg((3, 4))]),
    exact("integer_pow_u8_wraps", lambda x: lax.integer_pow(x, 3),
          [np.array([1, 255, 200, 0, 7], U8)]),
    exact("integer_pow_i16_0", lambda x: lax.integer_pow(x, 0), [_int_edge(I16)]),
    exact("exp2_f32", lax.exp2, [np.array([0, 1, -1, 10, 0.5, -149, 128, np.nan], F32)]),
    exact("nextafter_f32", lax.nextafter,
          [np.array([0, 1, -0.0, 1, np.nan, 1, -1], F32),
           np.array([1, 0, -1, 1, 0, np.nan, np.inf], F32)], graph_ops=["NextAfter"]),
    exact("nextafter_f16", lax.nextafter,
          [np.array([0, 1, -0.0, 1, np.nan, 65504, -1, -0.0, 0], F16),
           np.array([1, 0, -1, 1, 0, np.inf, -np.inf, 1, -0.0], F16)]),
    exact("nextafter_bf16", _cast_in(lax.nextafter, bf16),
          [np.array([0, 1, -0.0, 1, np.nan, -1, 3], F32),
           np.array([1, 0, -1, 1, 0, -np.inf, 2], F32)]),
    exact("reduce_precision_to_f16", lambda x: lax.reduce_precision(x, 5, 10),
          [np.array([1e-6, 1e-8, 7e4, 65519, 65520, np.nan, 1.0009766, 1.0014648, -3.3,
                     -np.inf, -0.0], F32)]),
    exact("reduce_precision_to_bf16", lambda x: lax.reduce_precision(x, 8, 7),
          [arg((5, 7), low=-100, high=100)]),
    exact("reduce_precision_mantissa0", lambda x: lax.reduce_precision(x, 5, 0),
          [np.array([np.nan, 1.7, 1.4, 3.0, -1.5], F32)]),
    exact("reduce_precision_f16_e4m3", lambda x: lax.reduce_precision(x, 4, 3),
          [arg((4, 5), F16, low=-500, high=500)]),
    exact("reduce_precision_identity", lambda x: lax.reduce_precision(x, 8, 23),
          [F32_EDGE]),
    # Integer division and remainder: toward zero, x / 0 == -1, x % 0 == x,
    # INT_MIN / -1 == INT_MIN.
    exact("div_rem_edges_ints", _per_dtype(lambda x, y: (lax.div(x, y), lax.rem(x, y))),
          [a for t in INTS for a in (_int_edge(t), _int_edge_divisors(t))],
          graph_ops=["TruncateDiv"]),
    exact("rem_f32_edges", lax.rem, [F32_EDGE, F32_EDGE2]),
    exact("rem_f16", lax.rem, [arg((3, 4), F16, low=-20, high=20),
                               arg((3, 4), F16, low=0.5, high=4, seed=1)]),
    exact("div_scalar_divisor_zero", lambda x: lax.div(x, np.int32(0)), [_int_edge(I32)]),
    # Shifts by the bit width or more, and by negative amounts.
    exact("shifts_edges_ints", _per_dtype(lambda x, y: (lax.shift_left(x, y),
                                                         lax.shift_right_logical(x, y),
                                                         lax.shift_right_arithmetic(x, y))),
          [a for t in INTS for a in _shift_edges(t)], graph_ops=["LeftShift", "RightShift"]),
    exact("shift_negative_amount", lambda x, y: (lax.shift_left(x, y),
                                                 lax.shift_right_logical(x, y),
                                                 lax.shift_right_arithmetic(x, y)),
          [np.array([-8, 8, 1], I32), np.array([-1, -3, -32], I32)]),
    # Conversions: NaN -> 0, saturation at the bounds, truncation toward zero.
    exact("convert_f32_to_all",
          lambda x: tuple(x.astype(t) for t in (*INTS, np.bool_, F16, bf16, C64)),
          [F32_EDGE], graph_ops=["Cast"]),
    exact("convert_f16_to_ints", lambda x: tuple(x.astype(t) for t in INTS),
          [F32_EDGE.astype(F16)]),
    exact("convert_bf16_to_all",
          lambda x: tuple(x.astype(bf16).astype(t) for t in (*INTS, np.bool_, F16, C64)),
          [F32_EDGE]),
    exact("convert_f32_to_bf16_rounding", lambda x: x.astype(bf16),
          [np.array([1.00390625, 1.01171875, 1.0039063, 3.4e38, np.nan, -0.0], F32)]),
    exact("convert_complex_to_real", lambda x: lax.convert_element_type(x, np.float32),
          [arg((3,), C64)]),
    exact("convert_complex_to_int", lambda x: lax.convert_element_type(x, np.int8),
          [np.array([1.7 + 2j, -300 + 1j, np.nan], C64)]),
    exact("convert_complex_to_bool", lambda x: lax.convert_element_type(x, np.bool_),
          [np.array([0j, 1j, 1 + 0j], C64)]),
    exact("convert_int_wraps", lambda x: (x.astype(I8), x.astype(U8), x.astype(U16)),
          [np.array([-1, 300, 70000, -129], I32)]),
    exact("convert_u32_to_f32_i32", lambda x: (x.astype(F32), x.astype(I32)),
          [np.array([0, 2**31, 2**32 - 1, 12345], U32)]),
    exact("convert_bool_to_all",
          lambda x: tuple(x.astype(t) for t in (F32, F16, bf16, I8, U32, C64)),
          [arg((5,), np.bool_)]),
    exact("convert_int_to_bool", lambda x: x.astype(np.bool_), [_int_edge(I16)]),
    # Bitcasts, also between widths.
    exact("bitcast_f32_i32", lambda x: lax.bitcast_convert_type(x, I32), [F32_EDGE],
          graph_ops=["Bitcast"]),
    exact("bitcast_f32_u8", lambda x: lax.bitcast_convert_type(x, U8), [arg((2, 3))]),
    exact("bitcast_u8_f32", lambda x: lax.bitcast_convert_type(x, F32),
          [np.arange(24, dtype=U8).reshape(2, 3, 4)]),
    exact("bitcast_bf16_u16", lambda x: lax.bitcast_convert_type(x.astype(bf16), U16),
          [F32_EDGE]),
    exact("bitcast_i16_f16", lambda x: lax.bitcast_convert_type(x, F16),
          [np.array([0, 15360, -1024, 31744], I16)]),
    exact("bitcast_f16_u32", lambda x: lax.bitcast_convert_type(x, U32),
          [arg((3, 2), F16)]),
    # Bits.
    exact("clz_i32", lax.clz, [np.array([0, 1, -1, 255, 2**30, -2**31], I32)],
          graph_ops=["PopulationCount"]),
    exact("clz_u8", lax.clz, [np.array([0, 1, 255, 16, 128], U8)]),
    exact("clz_i16", lax.clz, [np.array([0, 1, -1, 255, 2**14], I16)]),
    exact("population_count_i8", lax.population_count, [np.array([0, 1, -1, 127, -128], I8)],
          graph_ops=["PopulationCount"]),
    exact("not_i8", lax.bitwise_not, [_int_edge(I8)], graph_ops=["Invert"]),
    exact("not_bool", lax.bitwise_not, [arg((5,), np.bool_)], graph_ops=["LogicalNot"]),
    # select_n with a bool and an int32 selector, and a scalar selector.
    exact("select_n_bool", lax.select_n, [arg((3, 4), np.bool_), arg((3, 4)),
                                          arg((3, 4), seed=1)], graph_ops=["SelectV2"]),
    exact("select_n_int3", lax.select_n,
          [arg((3, 4), I32, low=0, high=2), arg((3, 4)), arg((3, 4), seed=1),
           arg((3, 4), seed=2)]),
    exact("select_n_scalar_pred", lax.select_n,
          [np.bool_(True), arg((3, 4), I8), arg((3, 4), I8, seed=1)]),
    exact("select_n_one_case", lax.select_n, [arg((3,), np.bool_), arg((3,))]),
    exact("select_n_u32_cases", lax.select_n,
          [arg((4,), np.bool_), arg((4,), U32, high=100), arg((4,), U32, high=100, seed=1)]),
    exact("select_n_complex", lax.select_n,
          [arg((4,), I32, low=0, high=1), arg((4,), C64), arg((4,), C64, seed=1)]),
    # Complex parts.
    exact("conj_of_real", lax.conj, [arg((3,))]),
    exact("complex_real_imag", lambda x, y: (lax.complex(x, y), lax.real(lax.complex(x, y)),
                                             lax.imag(lax.complex(x, y))),
          [arg((3,)), arg((3,), seed=1)], graph_ops=["Complex"]),
    exact("abs_complex", lax.abs, [np.array([3 + 4j, -1j, 0], C64)]),
    # Identities.
    exact("stop_gradient", lax.stop_gradient, [arg((3,))]),
    exact("copy", jnp.copy, [arg((3,), I8)]),
    exact("optimization_barrier", lambda x, y: lax.optimization_barrier((x * 2, y)),
          [arg((3,)), arg((2,), I32)]),
    exact("add_any", lambda x, y: ad_util.add_jaxvals_p.bind(x, y),
          [arg((3,)), arg((3,), seed=1)]),
    exact("add_any_u8", lambda x, y: ad_util.add_jaxvals_p.bind(x, y),
          [arg((3,), U8, high=255), arg((3,), U8, high=255, seed=1)]),
    exact("mul_out_dtype", lambda x, y: lax.mul(x, y, out_dtype=np.float32),
          [arg((3,), F16), arg((3,), F16, seed=1)]),
    exact("neg_u8_wraps", lax.neg, [np.array([0, 1, 255], U8)]),
    exact("neg_int_min", lax.neg, [_int_edge(I32)]),
    exact("abs_int_min", lax.abs, [_int_edge(I8)]),
    exact("sign_ints", lambda x, y: (lax.sign(x), lax.sign(y)), [_int_edge(I16), _int_edge(U16)]),
    exact("lt_bool", lambda x, y: (lax.lt(x, y), lax.ge(x, y)),
          [np.array([True, False, True, False]), np.array([True, True, False, False])]),
]


# ---------------------------------------------------------------------------
# The dtype table: (name, function, arity, (low, high) for float operands,
# exact?). Integer operands are drawn from a small range around 0 (>= 0 when
# unsigned), so division by 0 is exercised too.

def _ipow(y):
  return lambda x: lax.integer_pow(x, y)


def _log2_inexact(x):
  # jnp.log2 (a primitive of its own since JAX 0.12) on float and complex
  # operands; it promotes integers to float, which the table does not compare.
  if not jnp.issubdtype(x.dtype, jnp.inexact):
    raise TypeError(f"log2 of {x.dtype}")
  return jnp.log2(x)


UNARY = [
    ("neg", lax.neg, (-3, 3), True), ("sign", lax.sign, (-3, 3), True),
    ("floor", lax.floor, (-3, 3), True), ("ceil", lax.ceil, (-3, 3), True),
    ("round", lax.round, (-3, 3), True),
    ("round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), (-3, 3), True),
    ("is_finite", lax.is_finite, (-3, 3), True),
    ("exp", lax.exp, (-3, 3), False), ("exp2", lax.exp2, (-3, 3), False),
    ("log", lax.log, (0.1, 5), False), ("expm1", lax.expm1, (-2, 2), False),
    ("log2", lambda x: _log2_inexact(x), (0.1, 5), False),
    ("log1p", lax.log1p, (-0.9, 3), False), ("tanh", lax.tanh, (-3, 3), False),
    ("logistic", lax.logistic, (-4, 4), False), ("sin", lax.sin, (-3, 3), False),
    ("cos", lax.cos, (-3, 3), False), ("tan", lax.tan, (-1.2, 1.2), False),
    ("asin", lax.asin, (-0.95, 0.95), False), ("acos", lax.acos, (-0.95, 0.95), False),
    ("atan", lax.atan, (-3, 3), False), ("sinh", lax.sinh, (-3, 3), False),
    ("cosh", lax.cosh, (-3, 3), False), ("asinh", lax.asinh, (-3, 3), False),
    ("acosh", lax.acosh, (1.1, 5), False), ("atanh", lax.atanh, (-0.9, 0.9), False),
    ("sqrt", lax.sqrt, (0, 5), False), ("rsqrt", lax.rsqrt, (0.1, 5), False),
    ("cbrt", lax.cbrt, (-5, 5), False), ("abs", lax.abs, (-3, 3), True),
    ("square", lax.square, (-3, 3), False),
    ("ipow2", _ipow(2), (-3, 3), False), ("ipow3", _ipow(3), (-3, 3), False),
    ("ipow_m1", _ipow(-1), (0.5, 3), False), ("ipow_m2", _ipow(-2), (0.5, 3), False),
    ("ipow5", _ipow(5), (-2, 2), False),
    ("real", lax.real, (-3, 3), True), ("imag", lax.imag, (-3, 3), True),
    ("conj", lax.conj, (-3, 3), True), ("not", lax.bitwise_not, (-3, 3), True),
    ("population_count", lax.population_count, (-3, 3), True),
    ("clz", lax.clz, (-3, 3), True),
    ("reduce_precision", lambda x: lax.reduce_precision(x, 4, 2), (-30, 30), True),
    ("copy", jnp.copy, (-3, 3), True), ("stop_gradient", lax.stop_gradient, (-3, 3), True),
]

BINARY = [
    ("add", lax.add, (-3, 3), False), ("sub", lax.sub, (-3, 3), False),
    ("mul", lax.mul, (-3, 3), False), ("div", lax.div, (-3, 3), False),
    ("rem", lax.rem, (-3, 3), True), ("max", lax.max, (-3, 3), True),
    ("min", lax.min, (-3, 3), True), ("pow", lax.pow, (0.1, 3), False),
    ("atan2", lax.atan2, (-3, 3), False), ("nextafter", lax.nextafter, (-3, 3), True),
    ("complex", lax.complex, (-3, 3), True),
    ("eq", lax.eq, (-3, 3), True), ("ne", lax.ne, (-3, 3), True),
    ("lt", lax.lt, (-3, 3), True), ("le", lax.le, (-3, 3), True),
    ("gt", lax.gt, (-3, 3), True), ("ge", lax.ge, (-3, 3), True),
    ("and", lax.bitwise_and, (-3, 3), True), ("or", lax.bitwise_or, (-3, 3), True),
    ("xor", lax.bitwise_xor, (-3, 3), True),
    ("shift_left", lax.shift_left, (-3, 3), True),
    ("shift_right_logical", lax.shift_right_logical, (-3, 3), True),
    ("shift_right_arithmetic", lax.shift_right_arithmetic, (-3, 3), True),
    ("add_any", ad_util.add_jaxvals_p.bind, (-3, 3), False),
]

TERNARY = [
    ("clamp", lax.clamp, (-3, 3), True),
    ("select_n", lambda p, x, y: lax.select_n(p.astype(np.bool_), x, y), (-3, 3), True),
]


def _operand(dtype, shape, low, high, seed, name):
  dtype = np.dtype(dtype)
  if dtype.kind in "iu":
    if name.startswith("shift"):
      bits = dtype.itemsize * 8
      return arg(shape, dtype, low=0, high=bits + 2, seed=seed)
    if name.startswith("ipow"):
      return arg(shape, dtype, low=-3, high=3, seed=seed)
    return arg(shape, dtype, low=-40, high=40, seed=seed)
  as_dtype = dtype if dtype != np.dtype(bf16) else F32
  if name == "nextafter" and seed == 1:   # neighbours in both directions
    return arg(shape, as_dtype, low=low, high=high, seed=0)[::-1].copy()
  return arg(shape, as_dtype, low=low, high=high, seed=seed)


def _tol_for(dtype, is_exact):
  # abs and sign of complex numbers involve a rounded hypot.
  if is_exact and np.dtype(dtype).kind != "c":
    return dict(compare=_bits_equal)
  r = RTOL.get(_name(dtype), 0)
  return dict(compare=_close(r))


def _table_case(name, fun, arity, domain, is_exact, dtype, shape=(3, 4)):
  """A dtype-table case, or None when JAX rejects `fun` on `dtype`."""
  args = [_operand(dtype, shape, domain[0], domain[1], i, name) for i in range(arity)]
  f = _cast_in(fun, bf16) if dtype == bf16 else fun
  try:
    jax.eval_shape(f, *args)
  except (TypeError, ValueError):
    return None
  return Case(f"{name}_{_name(dtype)}", f, args, **_tol_for(dtype, is_exact))


def _table(dtypes):
  cases = []
  for table, arity in ((UNARY, 1), (BINARY, 2), (TERNARY, 3)):
    for name, fun, domain, is_exact in table:
      for dt in dtypes:
        c = _table_case(name, fun, arity, domain, is_exact, dt)
        if c is not None:
          cases.append(c)
  return cases


def _bundle(name, cases, rtol):
  """One case computing every case of `cases` at once (one conversion per mode)."""
  arities = [len(c.args) for c in cases]

  def fun(*xs):
    outs, i = [], 0
    for c, n in zip(cases, arities):
      outs.append(c.fun(*xs[i:i + n]))
      i += n
    return tuple(outs)
  return Case(name, fun, [a for c in cases for a in c.args], compare=_close(rtol))


def _bundles(dtypes):
  """Per dtype, all unary, all binary and all ternary table cases in three cases."""
  out = []
  for dt in dtypes:
    for table, arity in ((UNARY, 1), (BINARY, 2), (TERNARY, 3)):
      cases = [c for name, fun, domain, is_exact in table
               if (c := _table_case(name, fun, arity, domain, is_exact, dt)) is not None]
      if cases:
        out.append(_bundle(f"all_{arity}ary_{_name(dt)}", cases, RTOL.get(_name(dt), 0)))
  return out


# The fast tier checks every (primitive, dtype) pair through the bundles; the
# slow tier has the same pairs one by one, with exact comparison where exact.
TABLE = _table(ALL_DTYPES)
FAST_TABLE = _bundles([F32, bf16, U32, C64])
SLOW_TABLE_BUNDLES = _bundles([F16, I8, np.bool_, I16, I32, U8, U16])
SLOW_TABLE = TABLE


POLY_CASES = [
    Case("poly_add_scalar", lambda x: x + 2.0, [arg((3, 4))], polymorphic_shapes=["(b, _)"]),
    Case("poly_div_int", lax.div, [arg((5, 2), I32, -9, 9), arg((5, 2), I32, -2, 2, seed=1)],
         polymorphic_shapes=["(b, _)", "(b, _)"]),
    Case("poly_rem_u8_scalar", lambda x: lax.rem(x, np.uint8(3)), [arg((4, 3), U8, 0, 200)],
         polymorphic_shapes=["(b, _)"]),
    Case("poly_shift", lax.shift_right_arithmetic,
         [arg((4,), I16, -300, 300), arg((4,), I16, 0, 18, seed=1)],
         polymorphic_shapes=["(b,)", "(b,)"]),
    Case("poly_convert_saturate", lambda x: (x * 1e10).astype(np.int32), [arg((3, 2))],
         polymorphic_shapes=["(b, _)"]),
    Case("poly_clamp", lambda x: jnp.clip(x, -1.0, 1.0), [arg((2, 5))],
         polymorphic_shapes=["(_, b)"]),
    Case("poly_select", lambda p, x: lax.select_n(p, x, -x),
         [arg((3, 2), np.bool_), arg((3, 2))], polymorphic_shapes=["(b, _)", "(b, _)"]),
    Case("poly_nextafter_f16", lax.nextafter, [arg((4,), F16), arg((4,), F16, seed=1)],
         polymorphic_shapes=["(b,)", "(b,)"]),
    Case("poly_max_nan", lambda x: lax.max(x, jnp.float32(jnp.nan) * x[0]),
         [arg((3,))], polymorphic_shapes=["(b,)"]),
    Case("poly_bitcast_widen", lambda x: lax.bitcast_convert_type(x, U8), [arg((3,))],
         polymorphic_shapes=["(b,)"]),
    Case("poly_reduce_precision", lambda x: lax.reduce_precision(x, 5, 10), [arg((3, 4))],
         polymorphic_shapes=["(b, _)"]),
]

def _horner(x, *coeffs):
  """lax.polynomial where JAX has it (0.12 on), else the same Horner steps."""
  if hasattr(lax, "polynomial"):
    return lax.polynomial(x, coeffs)
  acc = coeffs[-1]
  for c in reversed(coeffs[:-1]):
    acc = acc * x + c
  return acc


_POLY_X = np.array([0.5, -1.5, 2.0, -0.0, np.inf, -np.inf, np.nan, 3.0], np.float32)
_COEFFS = [np.float32(v) for v in (1.5, -2.0, 0.5, 0.25, -1.0, 3.0, 0.125, -0.5, 2.0, 1.0)]

POLYNOMIAL_CASES = [
    Case("polynomial_f32", lambda x: _horner(x, *_COEFFS[:3]), [_POLY_X]),
    # More than 8 coefficients: JAX evaluates them with a scan from zeros.
    Case("polynomial_f32_long", lambda x: _horner(x, *_COEFFS), [_POLY_X]),
    Case("polynomial_broadcast_coeffs", _horner,
         [arg((3, 4)), arg((1, 4), seed=1), arg((3, 1), seed=2), arg((3, 4), seed=3)]),
    Case("polynomial_i32_wraps", lambda x: _horner(x, np.int32(7), np.int32(-3),
                                                   np.int32(2**30)),
         [arg((5,), I32, -9, 9)]),
    Case("polynomial_bf16", lambda x: _horner(x, *[c.astype(bf16) for c in _COEFFS[:4]]),
         [arg((6,), bf16)], rtol=1e-2, atol=1e-2),
    Case("polynomial_poly_shape", lambda x: _horner(x, *_COEFFS[:4]), [arg((3, 2))],
         polymorphic_shapes=["(b, _)"]),
]

GRAPH_CASES = [
    Case("graph_sin", lax.sin, [arg((3,))], graph_ops=["Sin"]),
    Case("graph_exp2", lax.exp2, [arg((3,))], graph_ops=["Exp"]),
    Case("graph_tanh", lax.tanh, [arg((3,))], graph_ops=["Tanh"]),
    Case("graph_logistic", lax.logistic, [arg((3,))], graph_ops=["Sigmoid"]),
    Case("graph_add", lax.add, [arg((3,)), arg((3,))], graph_ops=["AddV2"]),
    Case("graph_rem_i32", lax.rem, [arg((3,), I32), arg((3,), I32, seed=1)],
         graph_ops=["TruncateMod"], compare=_bits_equal),
    Case("graph_pow", lax.pow, [arg((3,), low=0.1), arg((3,))], graph_ops=["Pow"]),
    Case("graph_atan2", lax.atan2, [arg((3,)), arg((3,), seed=1)], graph_ops=["Atan2"]),
    Case("graph_and_bool", lax.bitwise_and, [arg((3,), np.bool_), arg((3,), np.bool_)],
         graph_ops=["LogicalAnd"]),
    Case("graph_xor_i8", lax.bitwise_xor, [arg((3,), I8), arg((3,), I8, seed=1)],
         graph_ops=["BitwiseXor"]),
]


@pytest.mark.parametrize("case", SEMANTIC_CASES + POLY_CASES + POLYNOMIAL_CASES + GRAPH_CASES
                         + FAST_TABLE, ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_elementwise(case, mode, flavour):
  run_case(case, mode, flavour)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_TABLE + SLOW_TABLE_BUNDLES, ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_elementwise_dtypes(case, mode, flavour):
  run_case(case, mode, flavour)


def _x64_pins():
  info = np.iinfo(np.int64)
  big = np.array([np.nan, np.inf, -np.inf, 9.3e18, -9.3e18, 1.8e19, -0.5, 2.5], np.float64)
  return [
      exact("x64_div_rem_edges", _per_dtype(lambda x, y: (lax.div(x, y), lax.rem(x, y))),
            [_int_edge(np.int64), _int_edge_divisors(np.int64),
             _int_edge(np.uint64), _int_edge_divisors(np.uint64)]),
      exact("x64_convert_f64_to_ints", lambda x: (x.astype(np.int64), x.astype(np.uint64),
                                                  x.astype(np.int32), x.astype(np.uint8)),
            [big]),
      exact("x64_convert_f32_to_i64", lambda x: (x.astype(np.int64), x.astype(np.uint64)),
            [F32_EDGE]),
      exact("x64_convert_f64_to_narrow_floats",
            lambda x: (x.astype(np.float32), x.astype(np.float16), x.astype(bf16)),
            [np.array([1 + 2.0**-11 + 2.0**-40, 1e300, -1e-300, 0.1, 65519.99], np.float64)]),
      exact("x64_convert_i64_to_floats", lambda x: (x.astype(np.float32), x.astype(np.float64)),
            [np.array([info.max, info.min, 2**53 + 1], np.int64)]),
      exact("x64_shifts", _per_dtype(lambda x, y: (lax.shift_left(x, y),
                                                   lax.shift_right_logical(x, y),
                                                   lax.shift_right_arithmetic(x, y))),
            [*_shift_edges(np.uint64), *_shift_edges(np.int64)]),
      exact("x64_nextafter_f64", lax.nextafter, [np.array([0.0, 1.0, -0.0], np.float64),
                                                 np.array([1.0, 0.0, -1.0], np.float64)]),
      exact("x64_reduce_precision_f64", lambda x: lax.reduce_precision(x, 8, 23),
            [np.array([1 + 2.0**-30, 1e300, 1e-300, np.nan, 0.1], np.float64)]),
      exact("x64_clz_popcount", lambda x, y: (lax.clz(x), lax.clz(y),
                                              lax.population_count(x)),
            [np.array([0, 1, 2**63, 2**40], np.uint64), np.array([0, -1, 1, 2**40], np.int64)]),
      exact("x64_bitcast_f64_u32", lambda x: lax.bitcast_convert_type(x, np.uint32),
            [np.array([1.0, -2.5], np.float64)]),
      exact("x64_max_min_f64", lambda x, y: (lax.max(x, y), lax.min(x, y)),
            [F32_EDGE.astype(np.float64), F32_EDGE2.astype(np.float64)]),
      exact("x64_round_sign_f64", lambda x: (lax.round(x), lax.sign(x), lax.round(x, 1)),
            [F32_EDGE.astype(np.float64)]),
  ]


@functools.cache
def _x64_fast_cases():
  with jax.enable_x64(True):
    return _x64_pins() + _bundles(X64_DTYPES)


@functools.cache
def _x64_slow_cases():
  with jax.enable_x64(True):
    return _table(X64_DTYPES)


@pytest.mark.parametrize("case", _x64_fast_cases(), ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_elementwise_x64(case, mode, flavour):
  with jax.enable_x64(True):
    run_case(case, mode, flavour)


@pytest.mark.slow
@pytest.mark.parametrize("case", _x64_slow_cases(), ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_elementwise_x64_dtypes(case, mode, flavour):
  with jax.enable_x64(True):
    run_case(case, mode, flavour)
