"""Cases of the elementwise family (elementwise.py): math, comparisons, logic, conversions.

Four kinds:
* primitives on random operands in their domain, with NaN, infinities and
  signed zeros written in (`*_specials`), per dtype;
* semantic pins: fixed operands at the corners where TF's kernels and XLA
  disagree (integer division by 0 and -1, shifts by the width, NaN and -0.0 in
  max/min/clamp/sign, float->int saturation, rounding ties ...), bit for bit;
* a dtype table: every primitive on every dtype JAX accepts for it (the
  combinations are discovered with jax.eval_shape, so what JAX rejects is never
  generated); the fast tier runs it bundled, one case per dtype and arity;
* shape-polymorphic cases and graph assertions (the intended TF op is emitted).
"""

import dataclasses

import jax
import jax.extend.core.primitives as core_primitives
import jax.numpy as jnp
import ml_dtypes
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
  SPECIALS,
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
  fast_representatives,
  gaps,
  rand,
  u32_order_rows,
)

CASES = Cases()

_RELU_FUSED_INTO_ADD = gaps(
    "TF's TFLite converter fuses the max(x + b, 0) of a native module into an ADD with a "
    "fused RELU, which keeps the -0.0 of a sum of two -0.0 where JAX's relu gives +0.0",
    ["tflite_native"], error="signs of zero differ")

FLOATS_LOW = (F16, BF16)
INTS = (I8, I16, I32, U8, U16, U32)
INTS64 = (I64, U64)

# ---------------------------------------------------------------------------
# Unary float math: (name, function, lo, hi, tol for float32, exact)
UNARY_FLOAT = [
    ("sin", lax.sin, -5, 5, None, False), ("cos", lax.cos, -5, 5, None, False),
    ("tan", lax.tan, -1.4, 1.4, (1e-4, 1e-5), False),
    ("asin", lax.asin, -1, 1, None, False), ("acos", lax.acos, -1, 1, None, False),
    ("atan", lax.atan, -5, 5, None, False), ("sinh", lax.sinh, -4, 4, None, False),
    ("cosh", lax.cosh, -4, 4, None, False), ("tanh", lax.tanh, -4, 4, None, False),
    ("asinh", lax.asinh, -5, 5, None, False), ("acosh", lax.acosh, 1, 6, None, False),
    ("atanh", lax.atanh, -0.99, 0.99, None, False),
    ("exp", lax.exp, -5, 5, None, False), ("exp2", lax.exp2, -5, 5, None, False),
    ("expm1", lax.expm1, -3, 3, None, False), ("log", lax.log, 0.01, 10, None, False),
    ("log1p", lax.log1p, -0.9, 5, None, False), ("sqrt", lax.sqrt, 0, 9, None, False),
    ("rsqrt", lax.rsqrt, 0.01, 9, None, False), ("cbrt", lax.cbrt, -8, 8, None, False),
    ("logistic", lax.logistic, -8, 8, None, False),
    ("abs", lax.abs, -5, 5, None, True), ("sign", lax.sign, -5, 5, None, True),
    ("floor", lax.floor, -5, 5, None, True), ("ceil", lax.ceil, -5, 5, None, True),
    ("round_afz", lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), -5, 5, None,
     True),
    ("round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), -5, 5, None,
     True),
    ("is_finite", lax.is_finite, -5, 5, None, True), ("neg", lax.neg, -5, 5, None, True),
    ("square", lax.square, -5, 5, None, False),
    ("reciprocal", lax.reciprocal, 0.1, 5, None, False),
    ("integer_pow3", lambda x: lax.integer_pow(x, 3), -3, 3, None, False),
    ("integer_pow_neg2", lambda x: lax.integer_pow(x, -2), 0.2, 3, None, False),
]

for _n, _f, _lo, _hi, _tol, _exact in UNARY_FLOAT:
  CASES.add(f"{_n}_float32", _f, A(4, 6, lo=_lo, hi=_hi), tol=_tol, exact=_exact, slow=True)
  CASES.add(f"{_n}_float32_specials", _f, A(16, lo=_lo, hi=_hi, specials=SPECIALS), tol=_tol,
            exact=_exact)
  for _dt in FLOATS_LOW:
    CASES.add(f"{_n}_{dtype_name(_dt)}", _f, A(4, 6, dtype=_dt, lo=_lo, hi=_hi), exact=_exact,
              slow=True)
  CASES.add(f"{_n}_float64", _f, A(4, 6, dtype=F64, lo=_lo, hi=_hi, specials=SPECIALS),
            tol=None if _exact else (1e-10, 1e-12), exact=_exact, slow=True)

# Complex unary ops
_COMPLEX_EXACT = ("neg", "real", "imag", "conj")
for _n, _f in [("exp", lax.exp), ("log", lax.log), ("sqrt", lax.sqrt), ("sin", lax.sin),
               ("cos", lax.cos), ("tanh", lax.tanh), ("abs", lax.abs), ("neg", lax.neg),
               ("real", lax.real), ("imag", lax.imag), ("conj", lax.conj),
               ("expm1", lax.expm1), ("log1p", lax.log1p), ("sign", lax.sign),
               ("rsqrt", lax.rsqrt), ("asin", lax.asin), ("atan", lax.atan)]:
  _exact = _n in _COMPLEX_EXACT
  CASES.add(f"{_n}_complex64", _f, A(3, 4, dtype=C64), tol=None if _exact else (1e-4, 1e-5),
            exact=_exact, slow=_n not in ("exp", "abs", "real", "imag", "conj"))
  CASES.add(f"{_n}_complex128", _f, A(3, 4, dtype=C128),
            tol=None if _exact else (1e-10, 1e-12), exact=_exact, slow=True)
CASES.add("complex_float32", lax.complex, A(3, 4), A(3, 4), exact=True)
# The gradient of imag(complex(x)) makes a complex of a scalar 0 and an
# array: TF.js's Complex takes only parts of one shape.
CASES.add("complex_of_scalar_and_array_in_gradient",
          jax.grad(lambda x: jnp.sum(jnp.imag(x.astype(jnp.complex64)) * x)), A(2, 3),
          exact=True)
CASES.add("complex_float64", lax.complex, A(3, 4, dtype=F64), A(3, 4, dtype=F64), exact=True,
          slow=True)
CASES.add("mul_complex64", lax.mul, A(3, 4, dtype=C64), A(3, 4, dtype=C64))
# A product with zeros computed from constants alone: NaN for inf and NaN,
# -0.0 for negative numbers (IEEE's 0 * x, which XLA keeps). TF's TFLite
# converter folds it into zeros on the graph route (a gap there).
CASES.add("mul_by_constant_zeros",
          lambda x: (x * jnp.zeros_like(x), jnp.pad(x[:0], (0, 8)) * x),
          V(np.array([np.inf, -np.inf, np.nan, -2.0, -0.0, 0.0, 3.0, 1e-45], np.float32), F32),
          exact=True)
CASES.add("div_complex64", lax.div, A(3, 4, dtype=C64), A(3, 4, dtype=C64, lo=0.5),
          tol=(1e-5, 1e-6))
CASES.add("pow_complex64", lax.pow, A(3, 4, dtype=C64, lo=0.2),
          A(3, 4, dtype=C64, lo=-1, hi=1), tol=(1e-4, 1e-5), slow=True)
CASES.add("eq_complex64", lax.eq, A(3, 4, dtype=C64), V(np.ones((3, 4)), C64))
# Arguments far beyond 2*pi, where the range reduction does all the work.
CASES.add("sin_cos_huge_arguments", lambda x: (lax.sin(x), lax.cos(x)),
          V(np.array([1e4, 8e6, 1e8, 1e10, 1e20, -3.4e38]), F32), tol=(1e-4, 1e-4))
# tan near its poles and far from zero, where a formulation without Tan
# (TFLite's) must reduce its argument in more than float32's precision.
CASES.add("tan_near_poles_and_far", lax.tan,
          V(np.array([1.5707963, -1.5707964, 4.712389, 1.5, -0.0, 100.0, 1000.5, 7853.982,
                      -8000.25]), F32), tol=(2e-6, 1e-7))
# Beyond |x| of about 8192 that reduction (three float32 parts of pi/2) is
# ever further off: a gap of TFLite's column.
CASES.add("tan_huge_arguments", lax.tan, V(np.array([1e4, 1e6, 1e10, -3e38]), F32),
          tol=(1e-5, 1e-6))
# The hyperbolic functions and their inverses where a formulation without
# their ops (TFLite's) changes branch: series to logarithm, near overflow,
# beyond where x * x overflows.
CASES.add("hyperbolic_branch_edges",
          lambda h, s, c, t: (lax.sinh(h), lax.cosh(h), lax.asinh(s), lax.acosh(c),
                              lax.atanh(t)),
          V(np.array([1.0, -0.99999994, 1e-30, -0.0, 88.5, -89.4, 89.5, -90.0]), F32),
          V(np.array([0.5, -0.49999997, 1e-30, -0.0, 2.0**32, -3e38, 3.4028235e38, 1e19]), F32),
          V(np.array([1.0, 1.25, 1.2499999, 1.0000001, 2.0**32, 3e38, 0.99999994, 1e19]), F32),
          V(np.array([0.25, -0.24999999, 1e-30, -0.0, 0.99999994, -1.0, 1.0, 1.0000001]), F32))
# sin of -0.0 is -0.0 also in a branch's subgraph and in the gradient of cos
# (-sin(x)): LiteRT's SIN alone gives +0.0.
CASES.add("sin_zero_sign_in_cond_and_gradient",
          lambda x: (lax.cond(x[4] < 1, lax.sin, lax.cos, x),
                     jax.grad(lambda v: jnp.sum(jnp.cos(v)))(x)),
          V(np.array([-0.0, 0.0, 1e-30, -1e-30, 0.5, -2.0, 3.0, -0.0]), F32), tol=(1e-6, 1e-6))

# Beyond 2**126 LiteRT's SQRT and RSQRT are off by a factor of 1.5.
CASES.add("sqrt_rsqrt_huge_arguments", lambda x: (lax.sqrt(x), lax.rsqrt(x)),
          V(np.array([1e30, 5e37, 1e38, 3.4028234e38]), F32), tol=(1e-6, 1e-6))
# LiteRT's LOG overflows to inf from about 2**127.6, and its LOGISTIC gives
# NaN for |x| from about 2**88.75 (4.4e26) to 2**127.25.
CASES.add("log_logistic_huge_arguments",
          lambda x: (lax.log(x), lax.logistic(x), lax.logistic(-x)),
          V(np.array([1e20, 5e26, 1e30, 2.6e38, 3e38]), F32), tol=(1e-6, 1e-6))
# exp just short of float32's overflow (at 88.72): LiteRT's EXP gives inf
# from 88.38.
CASES.add("exp_near_overflow", lax.exp, V(np.array([88.0, 88.3, 88.5, 88.7, 88.8]), F32),
          tol=(1e-5, 1e-6))
# log1p too: the converter writes it as LOG(1 + x).
CASES.add("log1p_huge_arguments", lax.log1p,
          V(np.array([1e20, 1e30, 2.6e38, 3e38, 3.4028235e38]), F32), tol=(1e-6, 1e-6))
# Small results of log1p, and log near 1 (LiteRT's LOG alone is 1.2e-7 off
# in absolute terms there: log1p(1e-6) 5% off).
CASES.add("log1p_small_results", lax.log1p,
          V(np.array([1e-6, 3e-4, -1e-5, 1e-10, -0.0, -0.35, 0.39, 0.41]), F32), tol=(1e-6, 0.0))
CASES.add("log_near_one", lax.log,
          V(np.array([0.9999999, 1.0000001, 0.999, 1.001, 0.61, 1.39, 1.41, 1.0]), F32),
          tol=(1e-6, 0.0))
# Results below the smallest normal float32 (1.2e-38): JAX's XLA on CPU
# flushes them to zeros of their sign; a runtime that keeps them gives the
# sign of a nonzero (1 / 3.4e38 is 2.9e-39).
CASES.add("subnormal_results", lambda x: lax.sign(lax.integer_pow(x, -1)),
          V(np.array([3.4e38, -3.4e38, 1e38, 2.0]), F32), exact=True)
# Grappler fuses the square of a difference (integer_pow, square, or a product
# with itself, also of two equal differences) into SquaredDifference, which has
# no kernel for narrow and unsigned integers.
for _dt in (I8, U8, I16, U16, U32, U64):
  CASES.add(f"square_of_difference_{dtype_name(_dt)}",
            lambda x, y: (lax.integer_pow(x - y, 2), lax.square(x - y), (x - y) * (x - y)),
            A(5, dtype=_dt, lo=0, hi=9), A(5, dtype=_dt, lo=0, hi=9), exact=True,
            slow=_dt not in (I8, U32))

# Patterns TF's graph optimizer rewrites in a tf.function into ops computing
# other numbers: pow with exponent 0.5, -0.5 or -1 (Sqrt, Rsqrt, Reciprocal),
# 0 - x (Neg), log(1 + x) (Log1p), exp(x) - 1 (Expm1), 1 / x (Reciprocal)
# and x / sqrt(y) (Rsqrt). 32 elements, as the vector kernels that miss the
# last bit take 8 or 16 at a time; floor tells 1.0 from 0.99999994.
_GRAPPLER_X = np.resize(np.array([-0.0, 0.0, -np.inf, np.inf, np.nan, 1.0, 4.0, 1e-3, 0.1, 7.0,
                                  -2.0, 1e-30], np.float32), 32)
CASES.add("graph_optimizer_patterns_specials",
          lambda x: (lax.pow(x, 0.5), lax.pow(x, -0.5), lax.pow(x, -1.0), 0.0 - x),
          V(_GRAPPLER_X, F32), tol=(1e-5, 1e-6))
CASES.add("graph_optimizer_patterns_log_exp",
          lambda x: (jnp.log(1.0 + x), jnp.exp(x) - 1.0), V(_GRAPPLER_X, F32),
          tol=(1e-5, 1e-6))
# The same patterns with bfloat16 constants (numpy cannot compare those with
# Python ints) and, in a scan over nothing, with empty constants.
CASES.add("graph_optimizer_patterns_bfloat16",
          lambda x: (0 - x, 1 / x, jnp.log(1 + x), jnp.exp(x) - 1, lax.pow(x, jnp.bfloat16(0.5)),
                     lax.scan(lambda c, r: (c + r, c - r), x[:0], x[None, :0])[1]),
          V(np.array([-0.0, 0.0, 1.0, 4.0, -np.inf, np.inf, np.nan, 0.1]), BF16),
          tol=(1e-2, 1e-2))
CASES.add("graph_optimizer_patterns_integral_quotients",
          lambda x, y, z: (jnp.floor(1.0 / x), jnp.floor(lax.integer_pow(x, -1)),
                           jnp.floor(lax.integer_pow(x, -3)), jnp.floor(z / jnp.sqrt(y))),
          V(np.resize(np.array([1.0, 0.5, 0.25, 0.125, 2.0 ** -5], np.float32), 32), F32),
          V(np.resize(np.array([4.0, 9.0, 1.0, 0.25, 2.0 ** -10], np.float32), 32), F32),
          V(np.resize(np.array([2.0, 3.0, 5.0, 1.0, 2.0 ** -5], np.float32), 32), F32))

# exp of complex special values: zeros of either sign, infinities, NaN,
# subnormals, and real parts whose e^a overflows where e^a cis(b) does not.
_EXP_PARTS = (0.0, -0.0, 1.0, -3.0, 100.0, 89.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e30,
              1.5707964)
CASES.add("exp_complex64_special_values", lax.exp,
          V(np.array([complex(a, b) for a in _EXP_PARTS for b in _EXP_PARTS]), C64),
          tol=(1e-5, 1e-6))

# A constant minus (or over) a transposed value: TF's TFLite converter swapped
# the operands when it moved the transpose below the op.
CASES.add("sub_constant_minus_transposed", lambda a: 3.0 - a.T,
          A(2, 3, specials=(0.0, -0.0, np.inf, np.nan)), exact=True)
CASES.add("div_constant_over_transposed", lambda a: (1.0 / a.T, 3.0 / jnp.exp(a.T)),
          A(2, 3, specials=(0.0, -0.0, np.inf)), tol=(1e-6, 1e-6))
CASES.add("sub_constant_minus_transposed_int32", lambda a: 7 - a.T, A(3, 4, dtype=I32),
          exact=True)

# Binary float math: (name, function, lhs, rhs, tol for float32, exact)
_NAN_PAIRS = (np.nan, 1.0, np.nan, -np.inf, np.inf, 0.0, -0.0)
_NAN_PAIRS2 = (2.0, np.nan, np.nan, np.nan, 1.0, -0.0, 0.0)
BINARY_FLOAT = [
    ("add", lax.add, A(4, 5), A(4, 5), None, False),
    ("sub", lax.sub, A(4, 5), A(4, 5), None, False),
    ("mul", lax.mul, A(4, 5), A(4, 5), None, False),
    ("div", lax.div, A(4, 5), A(4, 5, specials=(0.0, -0.0, np.nan)), None, False),
    ("rem", lax.rem, A(4, 5, lo=-9, hi=9), A(4, 5, specials=(0.0, np.inf)), None, True),
    ("pow", lax.pow, A(4, 5, lo=0, hi=3), A(4, 5), (1e-5, 1e-6), False),
    ("pow_neg_base", lax.pow, A(4, 5, lo=-3, hi=0),
     V(np.arange(-5.0, 15.0).reshape(4, 5), F32), None, False),
    ("atan2", lax.atan2, A(4, 5), A(4, 5, specials=(0.0, -0.0, np.inf)), None, False),
    ("max_nan", lax.max, A(7, specials=_NAN_PAIRS), A(7, specials=_NAN_PAIRS2), None, True),
    ("min_nan", lax.min, A(7, specials=_NAN_PAIRS), A(7, specials=_NAN_PAIRS2), None, True),
    ("nextafter", lax.nextafter, A(6, specials=(0.0, np.nan, np.inf, 1.0)),
     A(6, specials=(1.0, 1.0, 0.0, np.nan)), None, True),
    ("eq", lax.eq, A(6, specials=(np.nan, 1.0, 0.0)), A(6, specials=(np.nan, 1.0, -0.0)), None,
     True),
    ("ne", lax.ne, A(6, specials=(np.nan, 1.0, 0.0)), A(6, specials=(np.nan, 1.0, -0.0)), None,
     True),
    ("lt", lax.lt, A(6, specials=(np.nan,)), A(6), None, True),
    ("le", lax.le, A(6, specials=(np.nan,)), A(6), None, True),
    ("gt", lax.gt, A(6), A(6, specials=(np.nan,)), None, True),
    ("ge", lax.ge, A(6), A(6, specials=(np.nan,)), None, True),
]
for _n, _f, _a, _b, _tol, _exact in BINARY_FLOAT:
  CASES.add(f"{_n}_float32", _f, _a, _b, tol=_tol, exact=_exact)
  if _n == "pow_neg_base":
    continue
  for _dt in FLOATS_LOW + (F64,):
    CASES.add(f"{_n}_{dtype_name(_dt)}", _f, dataclasses.replace(_a, dtype=_dt),
              dataclasses.replace(_b, dtype=_dt), slow=True, exact=_exact,
              tol=(1e-10, 1e-12) if _dt == F64 and _tol else None)

CASES.add("clamp_nan_float32", lax.clamp, V(-1.0, F32), A(8, specials=(np.nan, np.inf, -np.inf)),
          V(1.0, F32), exact=True)
CASES.add("clamp_nan_bounds_float32", lax.clamp, A(4, specials=(np.nan,)),
          A(4, specials=(0.0, np.nan)), A(4, lo=3, hi=5), exact=True)
CASES.add("clamp_int32", lax.clamp, V(-2, I32), A(10, dtype=I32, lo=-9, hi=9), V(3, I32))

# ---------------------------------------------------------------------------
# Integer ops, including negatives and shifts past the bit width
_INT_BINARY = [
    ("add", lax.add), ("sub", lax.sub), ("mul", lax.mul), ("max", lax.max), ("min", lax.min),
    ("and", lax.bitwise_and), ("or", lax.bitwise_or), ("xor", lax.bitwise_xor),
    ("eq", lax.eq), ("lt", lax.lt), ("ge", lax.ge),
]


def _int_div_args(dt):
  signed = np.dtype(dt).kind == "i"
  lo = -20 if signed else 0
  a = A(4, 6, dtype=dt, lo=lo, hi=20)
  # No zero divisor: XLA leaves division by zero implementation defined.
  b = V(np.array([[1, 2, 3, 5, 7, 9]] * 2 + ([[-1, -2, -3, -5, -7, -9]] * 2 if signed
                                                else [[4, 6, 8, 10, 11, 13]] * 2)), dt)
  return a, b


def _shift_amounts(dt):
  bits = np.dtype(dt).itemsize * 8
  return V(np.array([0, 1, 3, bits - 1, bits, bits + 1, 2 * bits, 5]), dt)


for _dt in INTS + INTS64:
  _slow = _dt != I32
  _name = dtype_name(_dt)
  _lo = -100 if np.dtype(_dt).kind == "i" else 0
  for _n, _f in _INT_BINARY:
    CASES.add(f"{_n}_{_name}", _f, A(3, 4, dtype=_dt, lo=_lo, hi=100),
              A(3, 4, dtype=_dt, lo=_lo, hi=100), slow=_slow)
  _a, _b = _int_div_args(_dt)
  CASES.add(f"div_{_name}", lax.div, _a, _b, slow=_slow and _dt not in (I8, U8))
  CASES.add(f"rem_{_name}", lax.rem, _a, _b, slow=_slow and _dt not in (I8, U8))
  CASES.add(f"floor_divide_{_name}", jnp.floor_divide, _a, _b, slow=True)
  _x = A(8, dtype=_dt, lo=_lo, hi=100, specials=(-1 if _lo else 255, 1))
  for _n, _f in [("shift_left", lax.shift_left), ("shift_right_logical", lax.shift_right_logical),
                 ("shift_right_arithmetic", lax.shift_right_arithmetic)]:
    CASES.add(f"{_n}_{_name}", _f, _x, _shift_amounts(_dt), slow=_slow and _dt not in (I8, U8))
  CASES.add(f"population_count_{_name}", lax.population_count, _x, slow=_slow)
  CASES.add(f"clz_{_name}", lax.clz, _x, slow=_slow)
  CASES.add(f"not_{_name}", lax.bitwise_not, _x, slow=_slow)
  CASES.add(f"neg_{_name}", lax.neg, _x, slow=True)
  if np.dtype(_dt).kind == "i":
    CASES.add(f"abs_{_name}", lax.abs, _x, slow=True)
  CASES.add(f"sign_{_name}", lax.sign, _x, slow=_slow)
  CASES.add(f"integer_pow_{_name}", lambda x: lax.integer_pow(x, 3), _x, slow=True)

for _n, _f in [("and", lax.bitwise_and), ("or", lax.bitwise_or), ("xor", lax.bitwise_xor),
               ("eq", lax.eq), ("lt", lax.lt)]:
  CASES.add(f"{_n}_bool", _f, A(8, dtype=BOOL), A(8, dtype=BOOL))
CASES.add("not_bool", lax.bitwise_not, A(8, dtype=BOOL))
CASES.add("select_n_bool", lax.select_n, A(3, 4, dtype=BOOL), A(3, 4), A(3, 4), exact=True)
CASES.add("select_n_int32_3way", lax.select_n, A(3, 4, dtype=I32, lo=0, hi=2), A(3, 4), A(3, 4),
          A(3, 4), exact=True)
CASES.add("select_n_bool_int8", lax.select_n, A(6, dtype=BOOL), A(6, dtype=I8), A(6, dtype=I8),
          slow=True)

# ---------------------------------------------------------------------------
# Conversions
_OUT_OF_RANGE = (np.nan, np.inf, -np.inf, 3e9, -3e9, 300.0, -300.0, 70000.0, -1.5, 2.5, 255.9)
for _to in (I8, I32, U8, U32, BOOL, F16, BF16):
  CASES.add(f"convert_float32_to_{dtype_name(_to)}",
            lambda x, _to=_to: lax.convert_element_type(x, _to),
            A(16, lo=-5, hi=5, specials=_OUT_OF_RANGE), exact=True,
            slow=_to not in (I32, U8, BOOL))
for _to in (I64, U64, I16, U16):
  CASES.add(f"convert_float32_to_{dtype_name(_to)}",
            lambda x, _to=_to: lax.convert_element_type(x, _to),
            A(16, lo=-5, hi=5, specials=_OUT_OF_RANGE), slow=True, x64=True)
CASES.add("convert_float64_to_int64", lambda x: lax.convert_element_type(x, I64),
          A(16, dtype=F64, specials=_OUT_OF_RANGE + (1e19, -1e19)), slow=True)
for _fr, _to in [(I32, F32), (I32, BOOL), (BOOL, F32), (BOOL, I32), (U8, F32), (I32, I8),
                 (U32, I32), (I8, U16), (F32, C64), (F16, F32), (BF16, F32), (I64, F32),
                 (F64, F32)]:
  CASES.add(f"convert_{dtype_name(_fr)}_to_{dtype_name(_to)}",
            lambda x, _to=_to: lax.convert_element_type(x, _to),
            A(12, dtype=_fr, lo=-300, hi=300, specials=(0,)), exact=True,
            slow=(_fr, _to) not in [(I32, F32), (BOOL, F32), (F32, C64)])
# An empty result whose other dimensions are 1: the rule selects scalars into
# it, which TF.js broadcasts to shape [1, 1] (fuzz seed 12, p501).
CASES.add("convert_float32_to_int32_empty", lambda x: lax.convert_element_type(x, I32),
          A(0, 1), exact=True)
CASES.add("convert_int32_to_float32_large", lambda x: lax.convert_element_type(x, F32),
          V(np.array([2**24 + 1, -2**31, 2**31 - 1, 16777217]), I32), exact=True)
for _fr, _to in [(F32, I32), (I32, F32), (F32, U8), (F32, F16), (U32, I32), (F64, U32),
                 (F64, I64)]:
  CASES.add(f"bitcast_{dtype_name(_fr)}_to_{dtype_name(_to)}",
            lambda x, _to=_to: lax.bitcast_convert_type(x, _to),
            A(3, 4, dtype=_fr, lo=-100, hi=100), exact=True,
            slow=(_fr, _to) not in [(F32, I32), (F32, U8)])

CASES.add("reduce_precision", lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
          A(10, lo=-1e5, hi=1e5, specials=(np.nan, np.inf, 1e-8, 70000.0)), exact=True)
CASES.add("reduce_precision_bf16",
          lambda x: lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7),
          A(10, lo=-1e5, hi=1e5), exact=True, slow=True)
CASES.add("optimization_barrier", lambda x: lax.optimization_barrier((x, x + 1))[1], A(3),
          exact=True, slow=True)
CASES.add("nn_gelu", jax.nn.gelu, A(6), tol=(1e-5, 1e-6))

# Exhaustive-tier cases that also run in the fast tier, so that CI exercises
# every dtype.
CASES[:] = fast_representatives(CASES, [
    "sin_float16", "exp_bfloat16", "atan2_float64", "div_int64",
    "shift_right_logical_uint64", "exp_complex128", "convert_float64_to_int64"])


# ---------------------------------------------------------------------------
# Semantic pins, bit for bit.

F32_EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5,
                     0.49999997, 3e9, -3e9, 300.0, -1.5, 1e-3, 65520.0], np.float32)
F32_EDGE2 = np.array([1.0, np.nan, np.nan, -0.0, 0.0, -0.0, 2.0, 0.5, -1.0, 1.5, -2.5,
                      0.5, -3e9, 3e9, np.inf, -np.inf, 1e-3, 1.0], np.float32)
# F32_EDGE and F32_EDGE2 stacked, a bias for them (-0.0 under their zeros and
# elsewhere, +0.0, NaN and infinities too) and a residual term (-0.0 where
# both are -0.0).
_RELU_X = np.stack([F32_EDGE, F32_EDGE2])
_RELU_BIAS = np.array([[-0.0, 0.0, np.nan, -0.0, -0.0, -0.0, 0.0, -0.5, 1.0, np.inf, -np.inf,
                        -0.0, 0.0, -0.0, -0.0, 0.0, -1e-3, -0.0]], np.float32)
_RELU_RESIDUAL = np.where(np.signbit(_RELU_X + _RELU_BIAS) & (_RELU_X == 0), np.float32(-0.0),
                          np.stack([F32_EDGE2, -F32_EDGE2]))
with np.errstate(over="ignore"):   # +-3e9 become +-inf
  F16_EDGE, F16_EDGE2 = F32_EDGE.astype(F16), F32_EDGE2.astype(F16)


def _int_edge(dtype):
  info = np.iinfo(dtype)
  return np.array([7, -7 if info.min else 3, 7, info.min, info.max, 0, 5, info.min, 1],
                  dtype)


def _int_edge_divisors(dtype):
  info = np.iinfo(dtype)
  return np.array([2, 2, -2 if info.min else 3, -1 if info.min else 2, 0, 0, 0,
                   1, info.max], dtype)


def _tiny(dtype) -> float:
  """The smallest subnormal of a floating dtype."""
  return float(ml_dtypes.finfo(dtype).smallest_subnormal)


def _cast_in(fun, dtype):
  """fun with its float32 operands cast to `dtype` inside the function.

  The dtype tables were written when bfloat16 NumPy arguments could not cross
  the TF boundary; their bfloat16 values are still made inside the function.
  """
  return lambda *xs: fun(*[x.astype(dtype) if x.dtype == np.float32 else x for x in xs])


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


_exact = exact_case


_add_any = core_primitives.add_jaxvals_p.bind

CASES += [
    _exact("sign_edges_f32", lax.sign, F32_EDGE),
    _exact("sign_edges_f16", lax.sign, F16_EDGE),
    _exact("sign_bf16", _cast_in(lax.sign, BF16), F32_EDGE),
    _exact("round_afz_edges", lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
           F32_EDGE, graph_ops=["Floor", "Ceil"]),
    _exact("round_even_edges", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
           F32_EDGE, graph_ops=["Round"]),
    _exact("round_afz_f16", lambda x: lax.round(x), F16_EDGE),
    _exact("round_even_bf16",
           _cast_in(lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), BF16), F32_EDGE),
    _exact("is_finite_edges", lax.is_finite, F32_EDGE, graph_ops=["IsFinite"]),
    _exact("max_nan_zero_sign", lax.max, F32_EDGE, F32_EDGE2, graph_ops=["Maximum"]),
    _exact("min_nan_zero_sign", lax.min, F32_EDGE, F32_EDGE2, graph_ops=["Minimum"]),
    _exact("max_f16_nan", lax.max, F16_EDGE, F16_EDGE2),
    _exact("min_bf16_nan", _cast_in(lax.min, BF16), F32_EDGE, F32_EDGE2),
    # Without XLA, relu is Relu then Abs (one op XNNPack runs); XLA drops the
    # Abs of a Relu, so a jit_compile'd no-XLA graph keeps relu(-0.0) = -0.0.
    _exact("relu_like", lambda x: lax.max(x, 0.0), F32_EDGE,
           gaps=gaps("without XLA ops, under jit_compile, XLA simplifies Abs(Relu(x)) to "
                     "Relu(x), whose -0.0 stays", ["graph_no_xla"], ["compiled"],
                     error="signs of zero differ")),
    # relu of a sum with a broadcast term, and of a residual sum of one, is a
    # plain Relu with the term's zeros made +0.0 (graph/fusions.py): -0.0
    # meets -0.0, +0.0 and NaN in the sum, in both orders of the terms.
    _exact("relu_of_biased_sum", lambda x, b: jax.nn.relu(x + b), _RELU_X, _RELU_BIAS,
           graph_ops=["Relu"], gaps=_RELU_FUSED_INTO_ADD),
    _exact("relu_of_residual_sum", lambda x, b, r: jax.nn.relu(r + (b + x)),
           _RELU_X, _RELU_BIAS, _RELU_RESIDUAL, graph_ops=["Relu"],
           gaps=_RELU_FUSED_INTO_ADD),
    _exact("max_const_nonzero", lambda x: lax.max(x, 1.0), F32_EDGE),
    _exact("max_complex_lexicographic", lax.max,
           np.array([1 + 2j, 1 + 3j, np.nan, 1, 2 - 1j], C64),
           np.array([1 + 3j, 1 + 2j, 0, np.nan * 1j, 2 - 1j], C64)),
    _exact("min_complex_lexicographic", lax.min,
           np.array([1 + 2j, 1 + 3j, np.nan, 1, -2 - 1j], C64),
           np.array([1 + 3j, 1 + 2j, 0, np.nan * 1j, 2 - 1j], C64)),
    _exact("max_bool", lax.max, rand((6,), BOOL), rand((6,), BOOL, seed=1)),
    _exact("min_bool", lax.min, rand((6,), BOOL), rand((6,), BOOL, seed=1)),
    _exact("clamp_nan_operand", lambda x: lax.clamp(np.float32(-1), x, np.float32(1)),
           F32_EDGE),
    _exact("clamp_nan_bound", lambda x: lax.clamp(np.float32(np.nan), x, np.float32(1)),
           F32_EDGE),
    # TF's XLA clamp gives the first operand of tied zeros (the native module
    # writes a clamp whose bounds may tie a zero as min(max(x, lo), hi)).
    _exact("clamp_arrays", lax.clamp, F32_EDGE2, F32_EDGE, F32_EDGE2 + 1),
    _exact("clamp_zero_to_six", lambda x: lax.clamp(np.float32(0), x, np.float32(6)),
           F32_EDGE,
           gaps=gaps("TF's TFLite converter writes the native module's clamp(0, x, 6) as "
                     "RELU6, which keeps -0.0 where JAX gives +0.0 (to_tflite warns on "
                     "this route)", ["tflite_native"], error="signs of zero differ")),
    _exact("clamp_to_negative_zero", lambda x: lax.clamp(np.float32(-1), x, np.float32(-0.0)),
           F32_EDGE,
           gaps=gaps("the TFLite converters write a constant -0.0 as +0.0, so a min with "
                     "it gives +0.0 where JAX gives -0.0",
                     ["tflite", "tflite_native", "tflite_litert"],
                     error="signs of zero differ")),
    _exact("clamp_int", lambda x: lax.clamp(np.int8(-3), x, np.int8(5)), _int_edge(I8)),
    _exact("clamp_u32", lambda x: lax.clamp(np.uint32(3), x, np.uint32(6)), _int_edge(U32)),
    _exact("cbrt_edges", lax.cbrt, np.array([-8, -0.0, 0, 27, np.inf, -np.inf, np.nan, 1e-30,
                                             3e38, -30], np.float32),
           gaps=gaps("TF's XLA runtime, which executes the native module, approximates cbrt "
                     "differently from JAX's: they part in the 7th digit at 1e-30 and 3e38",
                     ["native"], tol=(2e-6, 0))),
    _exact("pow_edges", lax.pow, np.array([np.nan, 0, 0, -8, -2, 1, np.inf, -0.0], F32),
           np.array([0, -1, 0, 1 / 3, 3, np.nan, -1, -3], F32)),
    _exact("pow_int_exponent", lax.pow, np.array([2, -2, 0, -1.5, 3], F32),
           np.array([3, -3, -1, 2, 0], I32)),
    case("pow_complex_int_exponent", lax.pow, rand((2, 3), C64), rand((2, 3), I32),
         tol=(1e-5, 1e-6)),
    _exact("integer_pow_neg_f32", lambda x: lax.integer_pow(x, -3),
           np.array([2, -0.5, 0, -0.0, np.inf, 3], F32)),
    _exact("integer_pow_7_f32", lambda x: lax.integer_pow(x, 7), rand((3, 4))),
    # Reciprocals of a transpose: TF's TFLite converter moved the transpose
    # below a division by a constant numerator, swapping its operands.
    case("reciprocals_of_a_transpose", lambda x: (
        lax.integer_pow(x.T, -1), lax.integer_pow(lax.sort(x, dimension=0), -1),
        lax.integer_pow(x.T, -3), lax.rsqrt(x.T), jnp.power(x.T, -0.5)),
         rand((2, 3), low=0.25, high=4.0)),
    _exact("integer_pow_u8_wraps", lambda x: lax.integer_pow(x, 3),
           np.array([1, 255, 200, 0, 7], U8)),
    _exact("integer_pow_i16_0", lambda x: lax.integer_pow(x, 0), _int_edge(I16)),
    _exact("exp2_f32", lax.exp2, np.array([0, 1, -1, 10, 0.5, -149, 128, np.nan], F32)),
    # JAX rounds log(2) * x to a 16-bit x's dtype before exp: exp2(2.828125)
    # is 7.0625 in bfloat16, where computing in float32 gives the nearer 7.09375.
    _exact("exp2_16_bit_rounding", lambda x, y: (lax.exp2(x), lax.exp2(y)),
           np.array([2.828125, -8, -5.625, -3.578125, -2.140625, 0.55859375, 3.6875], BF16),
           np.array([-8, -6.421875, -4.828125, -3.009765625, 0.469970703125, 3, 6.3203125],
                    F16)),
    _exact("nextafter_f32", lax.nextafter,
           np.array([0, 1, -0.0, 1, np.nan, 1, -1], F32),
           np.array([1, 0, -1, 1, 0, np.nan, np.inf], F32), graph_ops=["NextAfter"]),
    _exact("nextafter_f16", lax.nextafter,
           np.array([0, 1, -0.0, 1, np.nan, 65504, -1, -0.0, 0], F16),
           np.array([1, 0, -1, 1, 0, np.inf, -np.inf, 1, -0.0], F16)),
    _exact("nextafter_bf16", _cast_in(lax.nextafter, BF16),
           np.array([0, 1, -0.0, 1, np.nan, -1, 3], F32),
           np.array([1, 0, -1, 1, 0, -np.inf, 2], F32)),
    # From and to subnormals: XLA's CPU code compares subnormals as zeros, JAX steps.
    *[_exact(f"nextafter_{dtype_name(dt)}_subnormal", lax.nextafter,
             (np.array([1, 2, -1, -2, 1, 3], np.float32) * _tiny(dt)).astype(dt),
             np.array([3, 3, -3, -3, _tiny(dt), 1], np.float32).astype(dt))
      for dt in (BF16, F16)],
    # TF's graph optimizer would rewrite LogicalNot(Less) to GreaterEqual, wrong at NaN.
    _exact("not_of_lt_nan", lambda a, b: lax.bitwise_not(lax.lt(a, b)),
           np.array([np.inf, 1, np.nan, 0], F32), np.array([np.nan, 2, 0, np.nan], F32)),
    _exact("reduce_precision_to_f16", lambda x: lax.reduce_precision(x, 5, 10),
           np.array([1e-6, 1e-8, 7e4, 65519, 65520, np.nan, 1.0009766, 1.0014648, -3.3,
                     -np.inf, -0.0], F32)),
    _exact("reduce_precision_to_bf16", lambda x: lax.reduce_precision(x, 8, 7),
           rand((5, 7), low=-100, high=100)),
    _exact("reduce_precision_mantissa0", lambda x: lax.reduce_precision(x, 5, 0),
           np.array([np.nan, 1.7, 1.4, 3.0, -1.5], F32)),
    _exact("reduce_precision_f16_e4m3", lambda x: lax.reduce_precision(x, 4, 3),
           rand((4, 5), F16, low=-500, high=500)),
    _exact("reduce_precision_identity", lambda x: lax.reduce_precision(x, 8, 23), F32_EDGE),
    # Integer division and remainder: toward zero, x / 0 == -1, x % 0 == x,
    # INT_MIN / -1 == INT_MIN.
    _exact("div_rem_edges_ints", _per_dtype(lambda x, y: (lax.div(x, y), lax.rem(x, y))),
           *[a for t in INTS for a in (_int_edge(t), _int_edge_divisors(t))],
           graph_ops=["TruncateDiv"]),
    _exact("rem_f32_edges", lax.rem, F32_EDGE, F32_EDGE2),
    _exact("rem_f16", lax.rem, rand((3, 4), F16, low=-20, high=20),
           rand((3, 4), F16, low=0.5, high=4, seed=1)),
    _exact("div_scalar_divisor_zero", lambda x: lax.div(x, np.int32(0)), _int_edge(I32)),
    # Shifts by the bit width or more, and by negative amounts.
    _exact("shifts_edges_ints", _per_dtype(lambda x, y: (lax.shift_left(x, y),
                                                          lax.shift_right_logical(x, y),
                                                          lax.shift_right_arithmetic(x, y))),
           *[a for t in INTS for a in _shift_edges(t)],
           # Without XLA, up to 32 bits, a left shift is a product with a power of two.
           graph_ops={"graph": ["LeftShift", "RightShift"], "graph_no_xla": ["RightShift", "Pow"]}),
    _exact("shift_negative_amount", lambda x, y: (lax.shift_left(x, y),
                                                  lax.shift_right_logical(x, y),
                                                  lax.shift_right_arithmetic(x, y)),
           np.array([-8, 8, 1], I32), np.array([-1, -3, -32], I32)),
    # Conversions: NaN -> 0, saturation at the bounds, truncation toward zero.
    _exact("convert_f32_to_all",
           lambda x: tuple(x.astype(t) for t in (*INTS, np.bool_, F16, BF16, C64)),
           F32_EDGE, graph_ops=["Cast"]),
    _exact("convert_f16_to_ints", lambda x: tuple(x.astype(t) for t in INTS),
           F16_EDGE),
    _exact("convert_bf16_to_all",
           lambda x: tuple(x.astype(BF16).astype(t) for t in (*INTS, np.bool_, F16, C64)),
           F32_EDGE),
    _exact("convert_f32_to_bf16_rounding", lambda x: x.astype(BF16),
           np.array([1.00390625, 1.01171875, 1.0039063, 3.4e38, np.nan, -0.0], F32)),
    _exact("convert_complex_to_real", lambda x: lax.convert_element_type(x, np.float32),
           rand((3,), C64)),
    _exact("convert_complex_to_int", lambda x: lax.convert_element_type(x, np.int8),
           np.array([1.7 + 2j, -300 + 1j, np.nan], C64)),
    _exact("convert_complex_to_bool", lambda x: lax.convert_element_type(x, np.bool_),
           np.array([0j, 1j, 1 + 0j], C64)),
    # A complex zero to each kind of power: 1 for 0 ** 0, 0 for a positive
    # real exponent, NaN for any other (TF's kernel gave NaN for 0 ** 0).
    _exact("pow_complex_zero_base", lax.pow,
           np.array([0j, complex(-0.0, 0.0), complex(0.0, -0.0)] * 3, C64),
           np.array([0j, complex(-0.0, 0.0), 1 + 0j, 0.5 + 0j, 2 + 1j, -1 + 0j, 1j,
                     complex(np.nan, 0.0), -2 + 3j], C64)),
    _exact("convert_int_wraps", lambda x: (x.astype(I8), x.astype(U8), x.astype(U16)),
           np.array([-1, 300, 70000, -129], I32)),
    _exact("convert_u32_to_f32_i32", lambda x: (x.astype(F32), x.astype(I32)),
           np.array([0, 2**31, 2**32 - 1, 12345], U32)),
    _exact("convert_bool_to_all",
           lambda x: tuple(x.astype(t) for t in (F32, F16, BF16, I8, U32, C64)),
           rand((5,), BOOL)),
    _exact("convert_int_to_bool", lambda x: x.astype(np.bool_), _int_edge(I16)),
    # Bitcasts, also between widths.
    _exact("bitcast_f32_i32", lambda x: lax.bitcast_convert_type(x, I32), F32_EDGE,
           graph_ops=["Bitcast"]),
    _exact("bitcast_f32_u8", lambda x: lax.bitcast_convert_type(x, U8), rand((2, 3))),
    _exact("bitcast_u8_f32", lambda x: lax.bitcast_convert_type(x, F32),
           np.arange(24, dtype=U8).reshape(2, 3, 4)),
    _exact("bitcast_bf16_u16", lambda x: lax.bitcast_convert_type(x.astype(BF16), U16),
           F32_EDGE),
    _exact("bitcast_i16_f16", lambda x: lax.bitcast_convert_type(x, F16),
           np.array([0, 15360, -1024, 31744], I16)),
    _exact("bitcast_f16_u32", lambda x: lax.bitcast_convert_type(x, U32), rand((3, 2), F16)),
    # Bits.
    _exact("clz_i32", lax.clz, np.array([0, 1, -1, 255, 2**30, -2**31], I32),
           graph_ops=["PopulationCount"]),
    _exact("clz_u8", lax.clz, np.array([0, 1, 255, 16, 128], U8)),
    _exact("clz_i16", lax.clz, np.array([0, 1, -1, 255, 2**14], I16)),
    _exact("population_count_i8", lax.population_count, np.array([0, 1, -1, 127, -128], I8),
           graph_ops=["PopulationCount"]),
    _exact("not_i8", lax.bitwise_not, _int_edge(I8), graph_ops=["BitwiseXor"]),
    # Every bit and none, alternating bits, the sign bit alone.
    *[_exact(f"bit_counts_{np.dtype(t).name}",
             lambda x: (lax.population_count(x), lax.clz(x)),
             np.concatenate([_int_edge(t), np.array(
                 [-1, 0x55555555, 0x2AAAAAAA, 1 << (8 * np.dtype(t).itemsize - 1)],
                 np.int64).astype(t)]))
      for t in (I8, U8, I16, U16, I32, U32)],
    # The high half of the double-width product, signed and unsigned.
    *[_exact(f"mulhi_{np.dtype(t).name}", lax.mulhi, _int_edge(t), _int_edge(t)[::-1].copy())
      for t in (I8, U8, I16, U16, I32, U32) if hasattr(lax, "mulhi")],
    _exact("not_bool_edges", lax.bitwise_not, rand((5,), BOOL), graph_ops=["Equal"]),
    # select_n with a bool and an int32 selector, and a scalar selector.
    _exact("select_n_bool_fixed", lax.select_n, rand((3, 4), BOOL), rand((3, 4)),
           rand((3, 4), seed=1), graph_ops=["SelectV2"]),
    _exact("select_n_int3", lax.select_n, rand((3, 4), I32, low=0, high=2), rand((3, 4)),
           rand((3, 4), seed=1), rand((3, 4), seed=2)),
    _exact("select_n_scalar_pred", lax.select_n, np.bool_(True), rand((3, 4), I8),
           rand((3, 4), I8, seed=1)),
    _exact("select_n_one_case", lax.select_n, rand((3,), BOOL), rand((3,))),
    _exact("select_n_u32_cases", lax.select_n, rand((4,), BOOL), rand((4,), U32, high=100),
           rand((4,), U32, high=100, seed=1)),
    _exact("select_n_complex", lax.select_n, rand((4,), I32, low=0, high=1), rand((4,), C64),
           rand((4,), C64, seed=1)),
    # Complex parts.
    _exact("conj_of_real", lax.conj, rand((3,))),
    _exact("complex_real_imag", lambda x, y: (lax.complex(x, y), lax.real(lax.complex(x, y)),
                                              lax.imag(lax.complex(x, y))),
           rand((3,)), rand((3,), seed=1), graph_ops=["Complex"]),
    _exact("abs_complex", lax.abs, np.array([3 + 4j, -1j, 0], C64)),
    # Identities.
    _exact("stop_gradient", lax.stop_gradient, rand((3,))),
    _exact("copy", jnp.copy, rand((3,), I8)),
    _exact("optimization_barrier_pair", lambda x, y: lax.optimization_barrier((x * 2, y)),
           rand((3,)), rand((2,), I32)),
    _exact("add_any", _add_any, rand((3,)), rand((3,), seed=1)),
    _exact("add_any_u8", _add_any, rand((3,), U8, high=255), rand((3,), U8, high=255, seed=1)),
    _exact("mul_out_dtype", lambda x, y: lax.mul(x, y, out_dtype=np.float32),
           rand((3,), F16), rand((3,), F16, seed=1)),
    _exact("neg_u8_wraps", lax.neg, np.array([0, 1, 255], U8)),
    _exact("neg_int_min", lax.neg, _int_edge(I32)),
    _exact("abs_int_min", lax.abs, _int_edge(I8)),
    _exact("sign_ints", lambda x, y: (lax.sign(x), lax.sign(y)), _int_edge(I16), _int_edge(U16)),
    _exact("lt_ge_bool", lambda x, y: (lax.lt(x, y), lax.ge(x, y)),
           np.array([True, False, True, False]), np.array([True, True, False, False])),
]


# ---------------------------------------------------------------------------
# Total-order comparisons (lt_to, le_to, eq_to): -NaN < -inf < ... < -0.0 < +0.0 < ... < NaN.

def total_order(x, y):
  return (core_primitives.lt_to_p.bind(x, y), core_primitives.le_to_p.bind(x, y),
          core_primitives.eq_to_p.bind(x, y))


def specials_pairs(dtype):
  vals = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5], dtype)
  x, y = np.meshgrid(vals, vals)
  return x.reshape(-1), y.reshape(-1)


_TO_X, _TO_Y = specials_pairs(np.float32)

CASES += [
    case("total_order_specials", total_order, _TO_X, _TO_Y),
    case("total_order_bf16_f16", lambda x, y, u, v: total_order(x, y) + total_order(u, v),
         *specials_pairs(BF16), *specials_pairs(F16), slow=True),
    case("total_order_ints_bool", lambda x, y: total_order(x, y) + total_order(x > 0, y > 0),
         rand((20,), I32, -3, 3), rand((20,), I32, -3, 3, seed=1), slow=True),
    case("total_order_f64", total_order, _TO_X.astype(F64), _TO_Y.astype(F64), x64=True,
         slow=True),
]


# ---------------------------------------------------------------------------
# The dtype table: (name, function, arity, (low, high) for float operands,
# exact?). Integer operands are drawn from a small range around 0 (>= 0 when
# unsigned), so division by 0 is exercised too.

ALL_DTYPES = [F32, F16, BF16, I8, I16, I32, U8, U16, U32, BOOL, C64]
X64_DTYPES = [F64, I64, U64, C128]
# Relative tolerances of the dtype table: TF's kernels (Eigen) and XLA's use
# different polynomial approximations for transcendental functions.
RTOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2, "complex64": 2e-5,
        "float64": 1e-12, "complex128": 1e-12}


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
    ("log2", _log2_inexact, (0.1, 5), False),
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
    ("add_any", _add_any, (-3, 3), False),
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
      return rand(shape, dtype, low=0, high=bits + 2, seed=seed)
    if name.startswith("ipow"):
      return rand(shape, dtype, low=-3, high=3, seed=seed)
    return rand(shape, dtype, low=-40, high=40, seed=seed)
  as_dtype = dtype if dtype != np.dtype(BF16) else F32
  if name == "nextafter" and seed == 1:   # neighbours in both directions
    return rand(shape, as_dtype, low=low, high=high, seed=0)[::-1].copy()
  return rand(shape, as_dtype, low=low, high=high, seed=seed)


def _tol_for(dtype, is_exact):
  # abs and sign of complex numbers involve a rounded hypot.
  if is_exact and np.dtype(dtype).kind != "c":
    return dict(exact=True)
  r = RTOL.get(dtype_name(dtype), 0)
  return dict(tol=(r, r)) if r else dict(exact=True)


def _table_case(name, fun, arity, domain, is_exact, dtype, shape=(3, 4), **kw):
  """A dtype-table case, or None when JAX rejects `fun` on `dtype`."""
  args = [_operand(dtype, shape, domain[0], domain[1], i, name) for i in range(arity)]
  f = _cast_in(fun, BF16) if dtype == BF16 else fun
  try:
    jax.eval_shape(f, *args)
  except (TypeError, ValueError):
    return None
  return case(f"table_{name}_{dtype_name(dtype)}", f, *args, **_tol_for(dtype, is_exact), **kw)


def _table(dtypes, **kw):
  cases = []
  for table, arity in ((UNARY, 1), (BINARY, 2), (TERNARY, 3)):
    for name, fun, domain, is_exact in table:
      for dt in dtypes:
        c = _table_case(name, fun, arity, domain, is_exact, dt, **kw)
        if c is not None:
          cases.append(c)
  return cases


def _bundle(name, cases, rtol, **kw):
  """One case computing every case of `cases` at once (one conversion per column)."""
  arities = [len(c.args) for c in cases]

  def fun(*xs):
    outs, i = [], 0
    for c, n in zip(cases, arities):
      outs.append(c.fun(*xs[i:i + n]))
      i += n
    return tuple(outs)
  tol = dict(tol=(rtol, rtol)) if rtol else dict(exact=True)
  return case(name, fun, *[a for c in cases for a in c.args], **tol, **kw)


def _bundles(dtypes, **kw):
  """Per dtype, all unary, all binary and all ternary table cases in three cases."""
  out = []
  for dt in dtypes:
    for table, arity in ((UNARY, 1), (BINARY, 2), (TERNARY, 3)):
      cases = [c for name, fun, domain, is_exact in table
               if (c := _table_case(name, fun, arity, domain, is_exact, dt)) is not None]
      if cases:
        out.append(_bundle(f"all_{arity}ary_{dtype_name(dt)}", cases,
                           RTOL.get(dtype_name(dt), 0), **kw))
  return out


# The fast tier checks every (primitive, dtype) pair through the bundles; the
# exhaustive tier has the same pairs one by one, with exact comparison where exact.
CASES += _bundles([F32, BF16, U32, C64])
CASES += _bundles([F16, I8, BOOL, I16, I32, U8, U16], slow=True)
CASES += _table(ALL_DTYPES, slow=True)


# ---------------------------------------------------------------------------
# Shape polymorphism, polynomials and graph structure.

CASES += [
    case("poly_add_scalar", lambda x: x + 2.0, rand((3, 4)), polymorphic_shapes=["(b, _)"]),
    case("poly_div_int", lax.div, rand((5, 2), I32, -9, 9), rand((5, 2), I32, -2, 2, seed=1),
         polymorphic_shapes=["(b, _)", "(b, _)"]),
    case("poly_rem_u8_scalar", lambda x: lax.rem(x, np.uint8(3)), rand((4, 3), U8, 0, 200),
         polymorphic_shapes=["(b, _)"]),
    case("poly_shift", lax.shift_right_arithmetic,
         rand((4,), I16, -300, 300), rand((4,), I16, 0, 18, seed=1),
         polymorphic_shapes=["(b,)", "(b,)"]),
    case("poly_convert_saturate", lambda x: (x * 1e10).astype(np.int32), rand((3, 2)),
         polymorphic_shapes=["(b, _)"]),
    case("poly_clamp", lambda x: jnp.clip(x, -1.0, 1.0), rand((2, 5)), exact=True,
         polymorphic_shapes=["(_, b)"]),
    case("poly_select", lambda p, x: lax.select_n(p, x, -x), rand((3, 2), BOOL), rand((3, 2)),
         exact=True, polymorphic_shapes=["(b, _)", "(b, _)"]),
    case("poly_nextafter_f16", lax.nextafter, rand((4,), F16), rand((4,), F16, seed=1),
         exact=True, polymorphic_shapes=["(b,)", "(b,)"]),
    case("poly_max_nan", lambda x: lax.max(x, jnp.float32(jnp.nan) * x[0]), rand((3,)),
         exact=True, polymorphic_shapes=["(b,)"]),
    case("poly_bitcast_widen", lambda x: lax.bitcast_convert_type(x, U8), rand((3,)),
         polymorphic_shapes=["(b,)"],
         gaps=gaps("TF's XlaCallModule cannot refine the symbolic shape of a widening "
                   "bitcast_convert: 'Module has dynamic shapes'", ["native"],
                   error="has dynamic shapes")),
    case("poly_reduce_precision", lambda x: lax.reduce_precision(x, 5, 10), rand((3, 4)),
         exact=True, polymorphic_shapes=["(b, _)"]),
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

CASES += [
    case("polynomial_f32", lambda x: _horner(x, *_COEFFS[:3]), _POLY_X),
    # More than 8 coefficients: JAX evaluates them with a scan from zeros.
    case("polynomial_f32_long", lambda x: _horner(x, *_COEFFS), _POLY_X),
    case("polynomial_broadcast_coeffs", _horner,
         rand((3, 4)), rand((1, 4), seed=1), rand((3, 1), seed=2), rand((3, 4), seed=3)),
    case("polynomial_i32_wraps", lambda x: _horner(x, np.int32(7), np.int32(-3),
                                                   np.int32(2**30)),
         rand((5,), I32, -9, 9)),
    case("polynomial_bf16", lambda x: _horner(x, *[c.astype(BF16) for c in _COEFFS[:4]]),
         rand((6,), BF16), tol=(1e-2, 1e-2)),
    case("polynomial_poly_shape", lambda x: _horner(x, *_COEFFS[:4]), rand((3, 2)),
         polymorphic_shapes=["(b, _)"]),
]

CASES += [
    case("graph_sin", lax.sin, rand((3,)), graph_ops=["Sin"]),
    case("graph_exp2", lax.exp2, rand((3,)), graph_ops=["Exp"]),
    case("graph_tanh", lax.tanh, rand((3,)), graph_ops=["Tanh"]),
    case("graph_logistic", lax.logistic, rand((3,)), graph_ops=["Sigmoid"]),
    case("graph_add", lax.add, rand((3,)), rand((3,)), graph_ops=["AddV2"]),
    # Without XLA, FloorMod: TFLite and TF.js have no TruncateMod.
    case("graph_rem_i32", lax.rem, rand((3,), I32), rand((3,), I32, seed=1),
         graph_ops={"graph": ["TruncateMod"], "graph_no_xla": ["FloorMod"]}),
    case("graph_pow", lax.pow, rand((3,), low=0.1), rand((3,)), graph_ops=["Pow"]),
    case("graph_atan2", lax.atan2, rand((3,)), rand((3,), seed=1), graph_ops=["Atan2"]),
    case("graph_and_bool", lax.bitwise_and, rand((3,), BOOL), rand((3,), BOOL),
         graph_ops=["LogicalAnd"]),
    case("graph_xor_i8", lax.bitwise_xor, rand((3,), I8), rand((3,), I8, seed=1),
         graph_ops=["BitwiseXor"]),
]


# ---------------------------------------------------------------------------
# 64-bit semantic pins and dtype table (traced with jax.enable_x64).

def _x64_pins():
  info = np.iinfo(np.int64)
  big = np.array([np.nan, np.inf, -np.inf, 9.3e18, -9.3e18, 1.8e19, -0.5, 2.5], np.float64)
  return [
      _exact("x64_div_rem_edges", _per_dtype(lambda x, y: (lax.div(x, y), lax.rem(x, y))),
             _int_edge(I64), _int_edge_divisors(I64), _int_edge(U64), _int_edge_divisors(U64)),
      _exact("x64_convert_f64_to_ints", lambda x: (x.astype(I64), x.astype(U64),
                                                   x.astype(I32), x.astype(U8)), big),
      _exact("x64_convert_f32_to_i64", lambda x: (x.astype(I64), x.astype(U64)), F32_EDGE,
             x64=True),
      _exact("x64_convert_f64_to_narrow_floats",
             lambda x: (x.astype(F32), x.astype(F16), x.astype(BF16)),
             np.array([1 + 2.0**-11 + 2.0**-40, 1e300, -1e-300, 0.1, 65519.99], F64)),
      _exact("x64_convert_i64_to_floats", lambda x: (x.astype(F32), x.astype(F64)),
             np.array([info.max, info.min, 2**53 + 1], I64)),
      _exact("x64_shifts", _per_dtype(lambda x, y: (lax.shift_left(x, y),
                                                    lax.shift_right_logical(x, y),
                                                    lax.shift_right_arithmetic(x, y))),
             *_shift_edges(U64), *_shift_edges(I64)),
      _exact("x64_nextafter_f64", lax.nextafter, np.array([0.0, 1.0, -0.0], F64),
             np.array([1.0, 0.0, -1.0], F64)),
      _exact("x64_reduce_precision_f64", lambda x: lax.reduce_precision(x, 8, 23),
             np.array([1 + 2.0**-30, 1e300, 1e-300, np.nan, 0.1], F64)),
      _exact("x64_clz_popcount", lambda x, y: (lax.clz(x), lax.clz(y),
                                               lax.population_count(x)),
             np.array([0, 1, 2**63, 2**40], U64), np.array([0, -1, 1, 2**40], I64)),
      _exact("x64_bitcast_f64_u32", lambda x: lax.bitcast_convert_type(x, U32),
             np.array([1.0, -2.5], F64)),
      _exact("x64_max_min_f64", lambda x, y: (lax.max(x, y), lax.min(x, y)),
             F32_EDGE.astype(F64), F32_EDGE2.astype(F64)),
      _exact("x64_round_sign_f64", lambda x: (lax.round(x), lax.sign(x), lax.round(x, 1)),
             F32_EDGE.astype(F64)),
  ]


with jax.enable_x64(True):
  CASES += _x64_pins()
  CASES += _bundles(X64_DTYPES, x64=True)
  CASES += _table(X64_DTYPES, x64=True, slow=True)

# uint32 compared (TFLite compares int32 keys of the same order).
CASES += [
    _exact("u32_order_compare", lambda x, y: (
        x < y, x <= y, x > y, x >= y, x == y, x != y, jnp.maximum(x, y), jnp.minimum(x, y),
        lax.clamp(np.uint32(5), x, np.uint32(0x80000000)), lax.select(x < y, y, x)),
        u32_order_rows(), u32_order_rows()[::-1].copy()),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/elementwise.json.
CASES[:] = recorded.apply(CASES, "tflite", "elementwise")
CASES[:] = recorded.apply(CASES, "tflite_native", "elementwise")
CASES[:] = recorded.apply(CASES, "tflite_litert", "elementwise")
CASES[:] = recorded.apply(CASES, "tfjs", "elementwise")
