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
  in_column,
  rand,
  u32_order_rows,
)

CASES = Cases()

# Native serialization: the module is JAX's, but TF's own XLA runs it, and that
# build returns the first operand of max/min when they compare equal.
NATIVE_MAX_MIN_ZERO = gaps(
    "TF's XLA runtime, which executes the native module, returns the first operand of "
    "max(-0.0, +0.0) and min(+0.0, -0.0) (-0.0 and +0.0) where JAX's gives +0.0 and -0.0",
    ["native"], error="signs of zero differ")

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
_BINARY_GAPS = {"max_nan": NATIVE_MAX_MIN_ZERO, "min_nan": NATIVE_MAX_MIN_ZERO}
for _n, _f, _a, _b, _tol, _exact in BINARY_FLOAT:
  _gaps = _BINARY_GAPS.get(_n)
  CASES.add(f"{_n}_float32", _f, _a, _b, tol=_tol, exact=_exact, gaps=_gaps)
  if _n == "pow_neg_base":
    continue
  for _dt in FLOATS_LOW + (F64,):
    CASES.add(f"{_n}_{dtype_name(_dt)}", _f, dataclasses.replace(_a, dtype=_dt),
              dataclasses.replace(_b, dtype=_dt), slow=True, exact=_exact,
              tol=(1e-10, 1e-12) if _dt == F64 and _tol else None, gaps=_gaps)

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
    _exact("max_nan_zero_sign", lax.max, F32_EDGE, F32_EDGE2, graph_ops=["Maximum"],
           gaps=NATIVE_MAX_MIN_ZERO),
    _exact("min_nan_zero_sign", lax.min, F32_EDGE, F32_EDGE2, graph_ops=["Minimum"],
           gaps=NATIVE_MAX_MIN_ZERO),
    _exact("max_f16_nan", lax.max, F16_EDGE, F16_EDGE2, gaps=NATIVE_MAX_MIN_ZERO),
    _exact("min_bf16_nan", _cast_in(lax.min, BF16), F32_EDGE, F32_EDGE2,
           gaps=NATIVE_MAX_MIN_ZERO),
    # Without XLA, relu is Relu then Abs (one op XNNPack runs); XLA drops the
    # Abs of a Relu, so a jit_compile'd no-XLA graph keeps relu(-0.0) = -0.0.
    _exact("relu_like", lambda x: lax.max(x, 0.0), F32_EDGE,
           gaps={**NATIVE_MAX_MIN_ZERO,
                 **gaps("without XLA ops, under jit_compile, XLA simplifies Abs(Relu(x)) to "
                        "Relu(x), whose -0.0 stays", ["graph_no_xla"], ["compiled"],
                        error="signs of zero differ")}),
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
    _exact("clamp_arrays", lax.clamp, F32_EDGE2, F32_EDGE, F32_EDGE2 + 1,
           gaps=NATIVE_MAX_MIN_ZERO),
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
             F32_EDGE.astype(F64), F32_EDGE2.astype(F64), gaps=NATIVE_MAX_MIN_ZERO),
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
# TFLite (LiteRT): cases whose TF ops TFLite has no builtin kernel for,
# and cases LiteRT runs differently from XLA. Recorded from a run of the
# column; a fix shows up as a failing case to take out of here.
_TFLITE_NO_KERNEL = {  # (JAX primitive, TF op): cases
    ('abs', 'Abs'): [
        'abs_float64', 'abs_int64', 'all_1ary_int64', 'table_abs_float64', 'table_abs_int64'
    ],
    ('acos', 'Acos'): [
        'acos_float64', 'table_acos_complex128', 'table_acos_complex64', 'table_acos_float64'
    ],
    ('acosh', 'Acosh'): [
        'acosh_float64', 'table_acosh_complex128', 'table_acosh_complex64',
        'table_acosh_float64'
    ],
    ('add', 'AddV2'): [
        'add_float64', 'add_uint64', 'all_2ary_bfloat16', 'all_2ary_complex128',
        'all_2ary_complex64', 'all_2ary_float16', 'all_2ary_uint64', 'table_add_complex128',
        'table_add_complex64', 'table_add_float64', 'table_add_uint64'
    ],
    ('add_any', 'AddV2'): [
        'table_add_any_complex128', 'table_add_any_complex64', 'table_add_any_float64',
        'table_add_any_uint64'
    ],
    ('and', 'BitwiseAnd'): [
        'all_2ary_int64', 'and_int64', 'and_uint64', 'table_and_int64', 'table_and_uint64'
    ],
    ('asin', 'AddV2'): [
        'asin_float64', 'table_asin_float64'
    ],
    ('asin', 'Asin'): [
        'asin_complex128', 'asin_complex64', 'table_asin_complex128', 'table_asin_complex64'
    ],
    ('asinh', 'Asinh'): [
        'asinh_float64', 'table_asinh_complex128', 'table_asinh_complex64',
        'table_asinh_float64'
    ],
    ('atan', 'Atan'): [
        'all_1ary_complex128', 'all_1ary_complex64', 'atan_complex128', 'atan_complex64',
        'table_atan_complex128', 'table_atan_complex64'
    ],
    ('atan2', 'AddV2'): [
        'table_atan2_complex128', 'table_atan2_complex64'
    ],
    ('atanh', 'Atanh'): [
        'atanh_float64', 'table_atanh_complex128', 'table_atanh_complex64',
        'table_atanh_float64'
    ],
    ('cbrt', 'Abs'): [
        'cbrt_float64', 'table_cbrt_float64'
    ],
    ('ceil', 'Ceil'): [
        'ceil_float64', 'table_ceil_float64'
    ],
    ('clamp', 'Equal'): [
        'all_3ary_complex128', 'all_3ary_float64', 'table_clamp_complex128',
        'table_clamp_float64'
    ],
    ('clamp', 'Maximum'): [
        'all_3ary_uint64', 'table_clamp_uint64'
    ],
    ('clamp', 'SelectV2'): [
        'table_clamp_complex64'
    ],
    ('clz', 'BitwiseOr'): [
        'clz_int64', 'clz_uint64', 'table_clz_int64', 'table_clz_uint64', 'x64_clz_popcount'
    ],
    ('complex', 'Complex'): [
        'all_2ary_float32', 'complex_float32', 'complex_float64',
        'complex_of_scalar_and_array_in_gradient', 'complex_real_imag',
        'table_complex_float32', 'table_complex_float64', 'table_log2_complex128',
        'table_log2_complex64'
    ],
    ('conj', 'Cast'): [
        'table_conj_float64'
    ],
    ('conj', 'Conj'): [
        'conj_complex128', 'conj_complex64', 'table_conj_complex128', 'table_conj_complex64'
    ],
    ('convert_element_type', 'BitwiseAnd'): [
        'x64_convert_f64_to_narrow_floats'
    ],
    ('convert_element_type', 'Cast'): [
        'convert_float32_to_uint64', 'x64_convert_f32_to_i64', 'x64_convert_f64_to_ints'
    ],
    ('convert_element_type', 'GreaterEqual'): [
        'convert_float64_to_int64'
    ],
    ('convert_element_type', 'NotEqual'): [
        'table_select_n_float64', 'table_select_n_uint64'
    ],
    ('convert_element_type', 'SelectV2'): [
        'convert_bf16_to_all', 'convert_f16_to_ints', 'convert_f32_to_all',
        'convert_float32_to_uint16', 'convert_float32_to_uint8'
    ],
    ('cos', 'Cos'): [
        'cos_complex128', 'cos_complex64', 'cos_float64', 'table_cos_complex128',
        'table_cos_complex64', 'table_cos_float64'
    ],
    ('cosh', 'Abs'): [
        'cosh_float64', 'table_cosh_float64'
    ],
    ('cosh', 'Cosh'): [
        'table_cosh_complex128', 'table_cosh_complex64'
    ],
    ('div', 'Equal'): [
        'all_2ary_uint32', 'div_rem_edges_ints', 'div_uint32', 'div_uint64',
        'floor_divide_uint32', 'floor_divide_uint64', 'table_div_uint32', 'table_div_uint64',
        'x64_div_rem_edges'
    ],
    ('div', 'FloorDiv'): [
        'div_int64', 'floor_divide_int64', 'table_div_int64'
    ],
    ('div', 'RealDiv'): [
        'div_complex64', 'div_float64', 'table_div_complex128', 'table_div_complex64',
        'table_div_float64'
    ],
    ('div', 'SelectV2'): [
        'all_2ary_uint16', 'all_2ary_uint8'
    ],
    ('eq', 'Equal'): [
        'eq_complex64', 'eq_float64', 'eq_uint64', 'table_eq_complex128', 'table_eq_complex64',
        'table_eq_float64', 'table_eq_uint64'
    ],
    ('exp', 'Complex'): [
        'exp_complex128', 'exp_complex64', 'exp_complex64_special_values',
        'table_exp_complex128', 'table_exp_complex64'
    ],
    ('exp', 'Exp'): [
        'exp_float64', 'table_exp_float64'
    ],
    ('exp2', 'Exp'): [
        'exp2_float64', 'table_exp2_complex128', 'table_exp2_complex64', 'table_exp2_float64'
    ],
    ('expm1', 'Expm1'): [
        'expm1_complex128', 'expm1_complex64', 'expm1_float64', 'table_expm1_complex128',
        'table_expm1_complex64', 'table_expm1_float64'
    ],
    ('floor', 'Floor'): [
        'floor_float64', 'table_floor_float64'
    ],
    ('ge', 'GreaterEqual'): [
        'ge_float64', 'ge_uint64', 'table_ge_float64', 'table_ge_uint64'
    ],
    ('gt', 'Greater'): [
        'gt_float64', 'table_gt_float64', 'table_gt_uint64'
    ],
    ('integer_pow', 'Mul'): [
        'integer_pow3_float64', 'integer_pow_neg2_float64', 'integer_pow_uint64',
        'square_of_difference_uint64', 'table_ipow2_complex128', 'table_ipow2_float64',
        'table_ipow2_uint64', 'table_ipow3_complex128', 'table_ipow3_float64',
        'table_ipow3_uint64', 'table_ipow5_complex128', 'table_ipow5_float64',
        'table_ipow5_uint64', 'table_ipow_m2_complex128', 'table_ipow_m2_float64'
    ],
    ('integer_pow', 'RealDiv'): [
        'reciprocal_float64', 'table_ipow_m1_complex128', 'table_ipow_m1_complex64',
        'table_ipow_m1_float64', 'table_ipow_m2_complex64'
    ],
    ('is_finite', 'IsFinite'): [
        'is_finite_float64', 'table_is_finite_float64'
    ],
    ('le', 'LessEqual'): [
        'le_float64', 'table_le_float64', 'table_le_uint64'
    ],
    ('log', 'Log'): [
        'log_complex128', 'log_complex64', 'log_float64', 'table_log2_float64',
        'table_log_complex128', 'table_log_complex64', 'table_log_float64'
    ],
    ('log1p', 'Log1p'): [
        'log1p_complex128', 'log1p_complex64', 'log1p_float64', 'table_log1p_complex128',
        'table_log1p_complex64', 'table_log1p_float64'
    ],
    ('logistic', 'Sigmoid'): [
        'logistic_float64', 'table_logistic_complex128', 'table_logistic_complex64',
        'table_logistic_float64'
    ],
    ('lt', 'Less'): [
        'lt_float64', 'lt_uint64', 'table_lt_float64', 'table_lt_uint64'
    ],
    ('lt_to', 'BitwiseXor'): [
        'total_order_f64'
    ],
    ('lt_to', 'Less'): [
        'total_order_ints_bool'
    ],
    ('max', 'Equal'): [
        'max_nan_float64', 'table_max_complex128', 'table_max_float64', 'x64_max_min_f64'
    ],
    ('max', 'Maximum'): [
        'max_uint64', 'table_max_uint64'
    ],
    ('max', 'SelectV2'): [
        'max_complex_lexicographic', 'table_max_complex64'
    ],
    ('min', 'Equal'): [
        'min_nan_float64', 'table_min_complex128', 'table_min_float64'
    ],
    ('min', 'Minimum'): [
        'min_uint64', 'table_min_uint64'
    ],
    ('min', 'SelectV2'): [
        'min_complex_lexicographic', 'table_min_complex64'
    ],
    ('mul', 'Mul'): [
        'mul_float64', 'mul_uint64', 'table_mul_complex128', 'table_mul_float64',
        'table_mul_uint64'
    ],
    ('mulhi', 'Cast'): [
        'mulhi_uint16', 'mulhi_uint32', 'mulhi_uint8'
    ],
    ('mulhi', 'FloorDiv'): [
        'mulhi_int16', 'mulhi_int32', 'mulhi_int8'
    ],
    ('ne', 'NotEqual'): [
        'all_3ary_complex64', 'ne_float64', 'table_ne_complex128', 'table_ne_complex64',
        'table_ne_float64', 'table_ne_uint64', 'table_select_n_complex128',
        'table_select_n_complex64'
    ],
    ('neg', 'AddV2'): [
        'all_1ary_uint64', 'neg_uint64', 'table_neg_uint64'
    ],
    ('neg', 'Mul'): [
        'neg_float64', 'table_neg_float64'
    ],
    ('neg', 'Neg'): [
        'neg_complex128', 'neg_complex64', 'table_neg_complex128', 'table_neg_complex64'
    ],
    ('nextafter', 'AddV2'): [
        'nextafter_bf16', 'nextafter_bfloat16', 'nextafter_bfloat16_subnormal',
        'nextafter_f16', 'nextafter_float16', 'nextafter_float16_subnormal',
        'poly_nextafter_f16', 'table_nextafter_bfloat16', 'table_nextafter_float16'
    ],
    ('nextafter', 'NextAfter'): [
        'nextafter_f32', 'nextafter_float32', 'nextafter_float64', 'table_nextafter_float32',
        'table_nextafter_float64', 'x64_nextafter_f64'
    ],
    ('not', 'BitwiseXor'): [
        'not_int64', 'not_uint64', 'table_not_int64', 'table_not_uint64'
    ],
    ('or', 'BitwiseOr'): [
        'or_int64', 'or_uint64', 'table_or_int64', 'table_or_uint64'
    ],
    ('population_count', 'Cast'): [
        'population_count_uint64', 'table_population_count_uint64'
    ],
    ('population_count', 'PopulationCount'): [
        'population_count_int64', 'table_population_count_int64'
    ],
    ('pow', 'Equal'): [
        'pow_complex_zero_base'
    ],
    ('pow', 'Pow'): [
        'pow_complex64', 'pow_complex_int_exponent', 'pow_float64', 'table_pow_complex128',
        'table_pow_complex64', 'table_pow_float64'
    ],
    ('reduce_precision', 'AddV2'): [
        'reduce_precision_f16_e4m3', 'table_reduce_precision_bfloat16',
        'table_reduce_precision_float16', 'table_reduce_precision_float64',
        'x64_reduce_precision_f64'
    ],
    ('reduce_precision', 'BitwiseAnd'): [
        'all_1ary_float32', 'poly_reduce_precision', 'reduce_precision',
        'reduce_precision_bf16', 'reduce_precision_mantissa0', 'reduce_precision_to_bf16',
        'reduce_precision_to_f16', 'table_reduce_precision_float32'
    ],
    ('rem', 'Abs'): [
        'all_2ary_float64', 'rem_float64', 'table_rem_float64'
    ],
    ('rem', 'Equal'): [
        'rem_uint32', 'rem_uint64', 'table_rem_uint32', 'table_rem_uint64'
    ],
    ('round', 'Abs'): [
        'all_1ary_float64', 'round_afz_float64', 'table_round_float64', 'x64_round_sign_f64'
    ],
    ('round', 'AddV2'): [
        'all_1ary_bfloat16', 'all_1ary_float16'
    ],
    ('round', 'Round'): [
        'round_even_float64', 'table_round_even_float64'
    ],
    ('rsqrt', 'Rsqrt'): [
        'rsqrt_complex128', 'rsqrt_complex64', 'rsqrt_float64', 'table_rsqrt_complex128',
        'table_rsqrt_complex64', 'table_rsqrt_float64'
    ],
    ('select_n', 'SelectV2'): [
        'select_n_complex'
    ],
    ('shift_left', 'Cast'): [
        'shift_left_uint64', 'table_shift_left_uint64', 'x64_shifts'
    ],
    ('shift_left', 'LeftShift'): [
        'shift_left_int64', 'table_shift_left_int64'
    ],
    ('shift_left', 'SelectV2'): [
        'shifts_edges_ints'
    ],
    ('shift_right_arithmetic', 'Cast'): [
        'shift_right_arithmetic_uint64', 'table_shift_right_arithmetic_uint64'
    ],
    ('shift_right_arithmetic', 'RightShift'): [
        'shift_right_arithmetic_int64', 'table_shift_right_arithmetic_int64'
    ],
    ('shift_right_arithmetic', 'SelectV2'): [
        'shift_right_arithmetic_uint16', 'shift_right_arithmetic_uint8',
        'table_shift_right_arithmetic_uint16', 'table_shift_right_arithmetic_uint8'
    ],
    ('shift_right_logical', 'Cast'): [
        'shift_right_logical_uint64', 'table_shift_right_logical_uint64'
    ],
    ('shift_right_logical', 'RightShift'): [
        'shift_right_logical_int64', 'table_shift_right_logical_int64'
    ],
    ('sign', 'Cast'): [
        'sign_complex128', 'sign_uint64', 'table_sign_complex128', 'table_sign_uint64'
    ],
    ('sign', 'DivNoNan'): [
        'sign_complex64', 'table_sign_complex64'
    ],
    ('sign', 'Equal'): [
        'sign_float64', 'table_sign_float64'
    ],
    ('sign', 'Sign'): [
        'sign_int64', 'table_sign_int64'
    ],
    ('sin', 'Sin'): [
        'sin_complex128', 'sin_complex64', 'sin_float64', 'table_sin_complex128',
        'table_sin_complex64', 'table_sin_float64'
    ],
    ('sinh', 'Sinh'): [
        'sinh_float64', 'table_sinh_complex128', 'table_sinh_complex64', 'table_sinh_float64'
    ],
    ('sqrt', 'Sqrt'): [
        'sqrt_complex128', 'sqrt_complex64', 'sqrt_float64', 'table_sqrt_complex128',
        'table_sqrt_complex64', 'table_sqrt_float64'
    ],
    ('square', 'Square'): [
        'square_float64', 'table_square_complex128', 'table_square_float64',
        'table_square_uint64'
    ],
    ('sub', 'Sub'): [
        'square_of_difference_uint32', 'sub_float64', 'sub_uint32', 'sub_uint64',
        'table_sub_complex128', 'table_sub_complex64', 'table_sub_float64', 'table_sub_uint32',
        'table_sub_uint64'
    ],
    ('tan', 'Tan'): [
        'table_tan_complex128', 'table_tan_complex64', 'table_tan_float64', 'tan_float64'
    ],
    ('tanh', 'Tanh'): [
        'table_tanh_complex128', 'table_tanh_complex64', 'table_tanh_float64',
        'tanh_complex128', 'tanh_complex64', 'tanh_float64'
    ],
    ('xor', 'BitwiseXor'): [
        'table_xor_int64', 'table_xor_uint64', 'xor_int64', 'xor_uint64'
    ],
}
_TFLITE_GAPS = {  # (why, error): cases
    ("LiteRT's kernels differ from XLA's: NaN positions differ",
     'NaN\\ positions\\ differ'): [
        'log1p_float32_specials', 'log_float32_specials', 'log_logistic_huge_arguments',
        'mul_by_constant_zeros', 'rsqrt_float32_specials', 'sin_cos_huge_arguments',
        'tan_huge_arguments'
    ],
    ("LiteRT's kernels differ from XLA's: infinities differ",
     'infinities\\ differ'): [
        'exp_near_overflow'
    ],
    ("LiteRT's kernels differ from XLA's: values differ",
     'values\\ differ'): [
        'sqrt_rsqrt_huge_arguments'
    ],
}
# LiteRT picks its vectorized log kernels by instruction set: what these
# do on a CPU with AVX-512 ("": match JAX), where the gap above holds on others.
_TFLITE_VARIES_BY_CPU = {'log1p_float32_specials': "", 'log_float32_specials': ""}
CASES[:] = in_column(CASES, "tflite", no_kernel=_TFLITE_NO_KERNEL,
                     gaps=_TFLITE_GAPS, varies_by_cpu=_TFLITE_VARIES_BY_CPU)

# ---------------------------------------------------------------------------
# TFLite (LiteRT), native route: cases whose TF ops TFLite has no builtin kernel for,
# and cases LiteRT runs differently from XLA. Recorded from a run of the
# column; a fix shows up as a failing case to take out of here.
_TFLITE_NATIVE_NO_KERNEL = {  # (JAX primitive, TF op): cases
}
_TFLITE_NATIVE_GAPS = {  # (why, error): cases
    ('LiteRT fails to run it (RuntimeError: Division by ##ode number # (FLOOR_MOD) failed to invoke.)',
     'Division\\ by\\ \\d+Node\\ number\\ \\d+\\ \\(FLOOR_MOD\\)\\ failed\\ to\\ i'): [
        'graph_rem_i32'
    ],
    ('LiteRT fails to run it (RuntimeError: tflite/kernels/div.cc:# data[i] != zero_point was not true.#)',
     'tflite/kernels/div\\.cc:\\d+\\ data\\[i\\]\\ !=\\ zero_point\\ wa'): [
        'div_scalar_divisor_zero', 'poly_div_int'
    ],
    ("LiteRT's interpreter crashes running it (pinned in a child process)",
     'crashes LiteRT'): [
        'eq_uint8', 'table_eq_uint8'
    ],
    ("LiteRT's kernels differ from XLA's: NaN positions differ",
     'NaN\\ positions\\ differ'): [
        'acosh_float32_specials', 'atanh_float32_specials', 'cbrt_edges', 'cbrt_float32',
        'cbrt_float32_specials', 'clamp_arrays', 'clamp_nan_bound', 'clamp_nan_bounds_float32',
        'clamp_nan_float32', 'graph_optimizer_patterns_specials', 'log1p_float32_specials',
        'log_float32_specials', 'max_nan_float32', 'max_nan_zero_sign', 'min_nan_float32',
        'min_nan_zero_sign', 'rsqrt_float32_specials', 'sin_cos_huge_arguments',
        'table_cbrt_float32', 'tan_huge_arguments'
    ],
    ("LiteRT's kernels differ from XLA's: infinities differ",
     'infinities\\ differ'): [
        'asinh_float32_specials', 'exp_near_overflow', 'hyperbolic_branch_edges',
        'log1p_huge_arguments', 'log_logistic_huge_arguments', 'rem_float32',
        'tan_near_poles_and_far'
    ],
    ("LiteRT's kernels differ from XLA's: signs of zero differ",
     'signs\\ of\\ zero\\ differ'): [
        'expm1_float32_specials', 'log1p_small_results', 'neg_float32_specials', 'relu_like',
        'sign_edges_f32', 'sign_float32_specials', 'sign_float64', 'sinh_float32_specials',
        'subnormal_results'
    ],
    ("LiteRT's kernels differ from XLA's: values differ",
     'values\\ differ'): [
        'all_3ary_float32', 'all_3ary_int32', 'all_3ary_int64', 'convert_complex_to_int',
        'convert_f16_to_ints', 'convert_f32_to_all', 'convert_float32_to_int16',
        'convert_float32_to_int32', 'convert_float32_to_int64', 'convert_float32_to_int8',
        'convert_float32_to_uint16', 'convert_float32_to_uint32', 'convert_float32_to_uint8',
        'convert_float64_to_int64', 'log_near_one', 'rem_f32_edges', 'rem_int16', 'rem_int32',
        'rem_int64', 'rem_int8', 'shift_right_logical_int16', 'shift_right_logical_int32',
        'shift_right_logical_int8', 'sqrt_rsqrt_huge_arguments', 'table_clamp_float32',
        'table_clamp_int32', 'table_clamp_int64', 'table_rem_float32', 'table_rem_int16',
        'table_rem_int32', 'table_rem_int64', 'table_rem_int8',
        'x64_convert_f64_to_narrow_floats'
    ],
    ('the converter fails on it',
     "TF's TFLite converter failed"): [
        'all_1ary_int32', 'all_2ary_bool', 'all_2ary_float32', 'all_2ary_int32',
        'asin_complex64', 'atan_complex64', 'cbrt_bfloat16', 'cbrt_float16', 'cbrt_float64',
        'clz_i16', 'clz_i32', 'clz_int16', 'clz_int32', 'clz_int64', 'clz_int8', 'clz_u8',
        'clz_uint16', 'clz_uint32', 'clz_uint64', 'clz_uint8', 'conj_complex64',
        'exp_complex64', 'exp_complex64_special_values', 'expm1_complex128', 'expm1_complex64',
        'floor_divide_int16', 'floor_divide_int8', 'floor_divide_uint32', 'floor_divide_uint8',
        'log1p_complex64', 'log_complex64', 'min_bool', 'neg_complex128', 'neg_complex64',
        'nextafter_f32', 'nextafter_float32', 'poly_max_nan', 'poly_reduce_precision',
        'reciprocals_of_a_transpose', 'reduce_precision', 'reduce_precision_bf16',
        'reduce_precision_f16_e4m3', 'reduce_precision_identity', 'reduce_precision_mantissa0',
        'reduce_precision_to_bf16', 'reduce_precision_to_f16', 'sign_complex128',
        'sign_complex64', 'sqrt_complex64', 'table_acos_complex64', 'table_acosh_complex64',
        'table_asin_complex64', 'table_asinh_complex64', 'table_atan_complex64',
        'table_atanh_complex64', 'table_cbrt_bfloat16', 'table_cbrt_float16',
        'table_cbrt_float64', 'table_clz_int16', 'table_clz_int32', 'table_clz_int64',
        'table_clz_int8', 'table_clz_uint16', 'table_clz_uint32', 'table_clz_uint64',
        'table_clz_uint8', 'table_expm1_complex128', 'table_min_bool', 'table_neg_complex128',
        'table_neg_complex64', 'table_nextafter_float32', 'table_reduce_precision_bfloat16',
        'table_reduce_precision_float16', 'table_reduce_precision_float32',
        'table_reduce_precision_float64', 'table_sign_complex128', 'table_sign_complex64',
        'table_square_complex64', 'table_xor_bool', 'total_order_bf16_f16', 'total_order_f64',
        'total_order_specials', 'x64_clz_popcount', 'x64_reduce_precision_f64', 'xor_bool'
    ],
    ('the converter has no builtin lowering for BitwiseAnd',
     "TF's TFLite converter failed"): [
        'and_int16', 'and_int32', 'and_int8', 'and_uint32', 'and_uint8', 'table_and_int16',
        'table_and_uint32', 'table_and_uint64', 'table_and_uint8'
    ],
    ('the converter has no builtin lowering for BitwiseOr',
     "TF's TFLite converter failed"): [
        'or_int16', 'or_int32', 'or_int64', 'or_int8', 'or_uint16', 'or_uint64', 'or_uint8',
        'table_or_int32', 'table_or_int8', 'table_or_uint16', 'table_or_uint64'
    ],
    ('the converter has no builtin lowering for BitwiseXor',
     "TF's TFLite converter failed"): [
        'table_not_uint64'
    ],
    ('the converter has no builtin lowering for Cast',
     "TF's TFLite converter failed"): [
        'table_population_count_uint64'
    ],
    ('the converter has no builtin lowering for Complex',
     "TF's TFLite converter failed"): [
        'complex_float32', 'complex_float64', 'conj_of_real', 'table_complex_float32',
        'table_complex_float64', 'table_conj_float32'
    ],
    ('the converter has no builtin lowering for LeftShift',
     "TF's TFLite converter failed"): [
        'shift_left_int16', 'shift_left_int32', 'shift_left_int64', 'shift_left_int8',
        'shift_left_uint16', 'shift_left_uint64', 'shift_negative_amount',
        'table_shift_left_int32', 'table_shift_left_int8', 'table_shift_left_uint16',
        'table_shift_left_uint64'
    ],
    ('the converter has no builtin lowering for PopulationCount',
     "TF's TFLite converter failed"): [
        'population_count_int16', 'population_count_int32', 'population_count_int8',
        'population_count_uint32', 'population_count_uint8', 'table_population_count_int16',
        'table_population_count_uint32', 'table_population_count_uint8'
    ],
    ('the converter has no builtin lowering for Rsqrt',
     "TF's TFLite converter failed"): [
        'rsqrt_complex128', 'rsqrt_complex64', 'table_rsqrt_complex128'
    ],
    ('the converter has no builtin lowering for Sub',
     "TF's TFLite converter failed"): [
        'sub_uint32', 'table_sub_uint32'
    ],
    ('the converter has no builtin lowering for Tanh',
     "TF's TFLite converter failed"): [
        'table_tanh_complex128', 'tanh_complex128', 'tanh_complex64'
    ],
    ('the converter has no builtin lowering for mhlo.exponential_minus_one',
     "TF's TFLite converter failed"): [
        'cos_complex128', 'expm1_bfloat16', 'expm1_float16', 'expm1_float64', 'sin_complex128',
        'sinh_float64', 'table_cos_complex128', 'table_expm1_bfloat16', 'table_expm1_float16',
        'table_expm1_float64', 'table_sin_complex128', 'table_sinh_float64'
    ],
    ('the converter has no builtin lowering for mhlo.is_finite',
     "TF's TFLite converter failed"): [
        'is_finite_bfloat16', 'is_finite_float16', 'is_finite_float64',
        'table_is_finite_bfloat16', 'table_is_finite_float16', 'table_is_finite_float64',
        'table_square_complex128'
    ],
    ('the converter has no builtin lowering for mhlo.log_plus_one',
     "TF's TFLite converter failed"): [
        'acosh_bfloat16', 'acosh_float16', 'acosh_float64', 'all_1ary_complex128',
        'asin_complex128', 'asinh_bfloat16', 'asinh_float16', 'asinh_float64',
        'atan_complex128', 'atanh_bfloat16', 'atanh_float16', 'atanh_float64',
        'log1p_bfloat16', 'log1p_complex128', 'log1p_float16', 'log1p_float64',
        'log_complex128', 'table_acos_complex128', 'table_acosh_bfloat16',
        'table_acosh_complex128', 'table_acosh_float16', 'table_acosh_float64',
        'table_asin_complex128', 'table_asinh_bfloat16', 'table_asinh_complex128',
        'table_asinh_float16', 'table_asinh_float64', 'table_atan_complex128',
        'table_atanh_bfloat16', 'table_atanh_complex128', 'table_atanh_float16',
        'table_atanh_float64', 'table_cosh_complex128', 'table_log1p_bfloat16',
        'table_log1p_complex128', 'table_log1p_float16', 'table_log1p_float64',
        'table_log2_complex128', 'table_log_complex128', 'table_sinh_complex128'
    ],
    ('the converter has no builtin lowering for mhlo.round_nearest_afz',
     "TF's TFLite converter failed"): [
        'all_1ary_bfloat16', 'all_1ary_float16', 'all_1ary_float32', 'all_1ary_float64',
        'round_afz_bfloat16', 'round_afz_edges', 'round_afz_f16', 'round_afz_float16',
        'round_afz_float32', 'round_afz_float32_specials', 'round_afz_float64',
        'table_round_bfloat16', 'table_round_float16', 'table_round_float32',
        'table_round_float64', 'x64_round_sign_f64'
    ],
    ('the converter has no builtin lowering for tf.BitwiseAnd',
     "TF's TFLite converter failed"): [
        'and_int64', 'and_uint16', 'and_uint64', 'table_and_int32', 'table_and_int64',
        'table_and_int8', 'table_and_uint16'
    ],
    ('the converter has no builtin lowering for tf.BitwiseOr',
     "TF's TFLite converter failed"): [
        'or_uint32', 'table_or_int16', 'table_or_int64', 'table_or_uint32', 'table_or_uint8'
    ],
    ('the converter has no builtin lowering for tf.BitwiseXor',
     "TF's TFLite converter failed"): [
        'not_int64', 'not_uint64', 'table_not_int64'
    ],
    ('the converter has no builtin lowering for tf.Complex',
     "TF's TFLite converter failed"): [
        'complex_real_imag', 'table_conj_complex64', 'table_conj_float64',
        'table_exp2_complex64', 'table_exp_complex64', 'table_log1p_complex64',
        'table_log2_complex64', 'table_log_complex64', 'table_sqrt_complex64'
    ],
    ('the converter has no builtin lowering for tf.Expm1',
     "TF's TFLite converter failed"): [
        'table_expm1_complex64'
    ],
    ('the converter has no builtin lowering for tf.LeftShift',
     "TF's TFLite converter failed"): [
        'shift_left_uint32', 'shift_left_uint8', 'shifts_edges_ints', 'table_shift_left_int16',
        'table_shift_left_int64', 'table_shift_left_uint32', 'table_shift_left_uint8'
    ],
    ('the converter has no builtin lowering for tf.PopulationCount',
     "TF's TFLite converter failed"): [
        'bit_counts_int16', 'bit_counts_int32', 'bit_counts_int8', 'bit_counts_uint16',
        'bit_counts_uint32', 'bit_counts_uint8', 'population_count_i8',
        'population_count_int64', 'population_count_uint16', 'population_count_uint64',
        'table_population_count_int32', 'table_population_count_int64',
        'table_population_count_int8', 'table_population_count_uint16'
    ],
    ('the converter has no builtin lowering for tf.Rsqrt',
     "TF's TFLite converter failed"): [
        'table_rsqrt_complex64'
    ],
    ('the converter has no builtin lowering for tf.Sub',
     "TF's TFLite converter failed"): [
        'square_of_difference_uint32'
    ],
    ('the converter has no builtin lowering for tf.Tanh',
     "TF's TFLite converter failed"): [
        'table_tanh_complex64'
    ],
    ('the converter has no builtin lowering for tfl.abs',
     "TF's TFLite converter failed"): [
        'abs_bfloat16', 'abs_float16', 'abs_float64', 'abs_int64', 'abs_int8', 'abs_int_min',
        'table_abs_bfloat16', 'table_abs_float16', 'table_abs_float64', 'table_abs_int64',
        'table_abs_int8'
    ],
    ('the converter has no builtin lowering for tfl.add',
     "TF's TFLite converter failed"): [
        'add_any_u8', 'add_bfloat16', 'add_float16', 'add_float64', 'add_int8', 'add_uint16',
        'add_uint64', 'add_uint8', 'all_1ary_complex64', 'all_2ary_bfloat16',
        'all_2ary_complex128', 'all_2ary_complex64', 'all_2ary_float16', 'all_2ary_float64',
        'all_2ary_int8', 'all_2ary_uint16', 'all_2ary_uint64', 'all_2ary_uint8',
        'cosh_float64', 'table_add_any_bfloat16', 'table_add_any_bool',
        'table_add_any_complex128', 'table_add_any_complex64', 'table_add_any_float16',
        'table_add_any_float64', 'table_add_any_int8', 'table_add_any_uint16',
        'table_add_any_uint64', 'table_add_any_uint8', 'table_add_bfloat16',
        'table_add_complex128', 'table_add_complex64', 'table_add_float16',
        'table_add_float64', 'table_add_int8', 'table_add_uint16', 'table_add_uint64',
        'table_add_uint8', 'table_cosh_complex64', 'table_cosh_float64',
        'table_logistic_complex64', 'table_sinh_complex64'
    ],
    ('the converter has no builtin lowering for tfl.atan2',
     "TF's TFLite converter failed"): [
        'atan2_bfloat16', 'atan2_float16', 'atan_bfloat16', 'atan_float16',
        'table_atan2_bfloat16', 'table_atan2_complex128', 'table_atan2_complex64',
        'table_atan2_float16', 'table_atan_bfloat16', 'table_atan_float16'
    ],
    ('the converter has no builtin lowering for tfl.bitwise_xor',
     "TF's TFLite converter failed"): [
        'table_xor_int64', 'table_xor_uint64', 'xor_int64', 'xor_uint64'
    ],
    ('the converter has no builtin lowering for tfl.cast',
     "TF's TFLite converter failed"): [
        'convert_float32_to_uint64', 'mulhi_uint32', 'x64_convert_f32_to_i64',
        'x64_convert_f64_to_ints'
    ],
    ('the converter has no builtin lowering for tfl.ceil',
     "TF's TFLite converter failed"): [
        'ceil_bfloat16', 'ceil_float16', 'ceil_float64', 'table_ceil_bfloat16',
        'table_ceil_float16', 'table_ceil_float64'
    ],
    ('the converter has no builtin lowering for tfl.cos',
     "TF's TFLite converter failed"): [
        'cos_bfloat16', 'cos_float16', 'cos_float64', 'table_cos_bfloat16',
        'table_cos_float16', 'table_cos_float64'
    ],
    ('the converter has no builtin lowering for tfl.div',
     "TF's TFLite converter failed"): [
        'all_2ary_int64', 'all_2ary_uint32', 'div_bfloat16', 'div_complex64', 'div_float16',
        'div_float64', 'div_int16', 'div_int64', 'div_int8', 'div_rem_edges_ints',
        'div_uint16', 'div_uint32', 'div_uint64', 'div_uint8', 'floor_divide_int64',
        'floor_divide_uint16', 'floor_divide_uint64', 'reciprocal_bfloat16',
        'reciprocal_float16', 'reciprocal_float64', 'table_div_bfloat16',
        'table_div_complex128', 'table_div_complex64', 'table_div_float16',
        'table_div_float64', 'table_div_int16', 'table_div_int64', 'table_div_int8',
        'table_div_uint16', 'table_div_uint32', 'table_div_uint64', 'table_div_uint8',
        'table_ipow_m1_bfloat16', 'table_ipow_m1_complex128', 'table_ipow_m1_complex64',
        'table_ipow_m1_float16', 'table_ipow_m1_float64', 'table_ipow_m2_complex64',
        'table_tan_complex64', 'x64_div_rem_edges'
    ],
    ('the converter has no builtin lowering for tfl.equal',
     "TF's TFLite converter failed"): [
        'eq_bfloat16', 'eq_complex64', 'eq_float16', 'eq_float64', 'eq_int8', 'eq_uint16',
        'eq_uint32', 'eq_uint64', 'sign_uint16', 'sign_uint32', 'sign_uint64',
        'table_eq_bfloat16', 'table_eq_complex128', 'table_eq_complex64', 'table_eq_float16',
        'table_eq_float64', 'table_eq_int8', 'table_eq_uint16', 'table_eq_uint32',
        'table_eq_uint64', 'table_max_complex128', 'table_min_complex128', 'table_sign_uint16',
        'table_sign_uint32', 'table_sign_uint64'
    ],
    ('the converter has no builtin lowering for tfl.exp',
     "TF's TFLite converter failed"): [
        'exp_bfloat16', 'exp_complex128', 'exp_float16', 'exp_float64', 'table_exp_bfloat16',
        'table_exp_complex128', 'table_exp_float16', 'table_exp_float64',
        'table_logistic_complex128'
    ],
    ('the converter has no builtin lowering for tfl.floor',
     "TF's TFLite converter failed"): [
        'floor_bfloat16', 'floor_float16', 'floor_float64', 'table_floor_bfloat16',
        'table_floor_float16', 'table_floor_float64'
    ],
    ('the converter has no builtin lowering for tfl.floor_mod',
     "TF's TFLite converter failed"): [
        'poly_rem_u8_scalar', 'rem_bfloat16', 'rem_f16', 'rem_float16', 'rem_float64',
        'rem_uint16', 'rem_uint32', 'rem_uint64', 'rem_uint8', 'table_rem_bfloat16',
        'table_rem_float16', 'table_rem_float64', 'table_rem_uint16', 'table_rem_uint32',
        'table_rem_uint64', 'table_rem_uint8'
    ],
    ('the converter has no builtin lowering for tfl.greater',
     "TF's TFLite converter failed"): [
        'gt_bfloat16', 'gt_float16', 'gt_float64', 'table_gt_bfloat16', 'table_gt_bool',
        'table_gt_float16', 'table_gt_float64', 'table_gt_int16', 'table_gt_int8',
        'table_gt_uint16', 'table_gt_uint32', 'table_gt_uint64', 'table_gt_uint8'
    ],
    ('the converter has no builtin lowering for tfl.greater_equal',
     "TF's TFLite converter failed"): [
        'ge_bfloat16', 'ge_float16', 'ge_float64', 'ge_int8', 'ge_uint16', 'ge_uint32',
        'ge_uint64', 'ge_uint8', 'sqrt_complex128', 'table_ge_bfloat16', 'table_ge_bool',
        'table_ge_float16', 'table_ge_float64', 'table_ge_int8', 'table_ge_uint16',
        'table_ge_uint32', 'table_ge_uint64', 'table_ge_uint8', 'table_sqrt_complex128'
    ],
    ('the converter has no builtin lowering for tfl.less',
     "TF's TFLite converter failed"): [
        'lt_bfloat16', 'lt_bool', 'lt_float16', 'lt_float64', 'lt_ge_bool', 'lt_int8',
        'lt_uint16', 'lt_uint32', 'lt_uint64', 'lt_uint8', 'table_lt_bfloat16',
        'table_lt_bool', 'table_lt_float16', 'table_lt_float64', 'table_lt_int8',
        'table_lt_uint16', 'table_lt_uint32', 'table_lt_uint64', 'table_lt_uint8',
        'total_order_ints_bool', 'u32_order_compare'
    ],
    ('the converter has no builtin lowering for tfl.less_equal',
     "TF's TFLite converter failed"): [
        'le_bfloat16', 'le_float16', 'le_float64', 'table_le_bfloat16', 'table_le_bool',
        'table_le_float16', 'table_le_float64', 'table_le_int16', 'table_le_int8',
        'table_le_uint16', 'table_le_uint32', 'table_le_uint64', 'table_le_uint8'
    ],
    ('the converter has no builtin lowering for tfl.log',
     "TF's TFLite converter failed"): [
        'log_bfloat16', 'log_float16', 'log_float64', 'table_log2_bfloat16',
        'table_log2_float16', 'table_log2_float64', 'table_log_bfloat16', 'table_log_float16',
        'table_log_float64'
    ],
    ('the converter has no builtin lowering for tfl.maximum',
     "TF's TFLite converter failed"): [
        'max_bool', 'max_f16_nan', 'max_int16', 'max_int8', 'max_nan_bfloat16',
        'max_nan_float16', 'max_nan_float64', 'max_uint16', 'max_uint32', 'max_uint64',
        'max_uint8', 'table_max_bfloat16', 'table_max_bool', 'table_max_float16',
        'table_max_float64', 'table_max_int16', 'table_max_int8', 'table_max_uint16',
        'table_max_uint32', 'table_max_uint64', 'table_max_uint8', 'x64_max_min_f64'
    ],
    ('the converter has no builtin lowering for tfl.minimum',
     "TF's TFLite converter failed"): [
        'all_3ary_bfloat16', 'all_3ary_bool', 'all_3ary_complex128', 'all_3ary_complex64',
        'all_3ary_float16', 'all_3ary_float64', 'all_3ary_int16', 'all_3ary_int8',
        'all_3ary_uint16', 'all_3ary_uint32', 'all_3ary_uint64', 'all_3ary_uint8', 'clamp_int',
        'clamp_u32', 'min_bf16_nan', 'min_int16', 'min_int8', 'min_nan_bfloat16',
        'min_nan_float16', 'min_nan_float64', 'min_uint16', 'min_uint32', 'min_uint64',
        'min_uint8', 'table_clamp_bfloat16', 'table_clamp_bool', 'table_clamp_complex128',
        'table_clamp_complex64', 'table_clamp_float16', 'table_clamp_float64',
        'table_clamp_int16', 'table_clamp_int8', 'table_clamp_uint16', 'table_clamp_uint32',
        'table_clamp_uint64', 'table_clamp_uint8', 'table_min_bfloat16', 'table_min_float16',
        'table_min_float64', 'table_min_int16', 'table_min_int8', 'table_min_uint16',
        'table_min_uint32', 'table_min_uint64', 'table_min_uint8'
    ],
    ('the converter has no builtin lowering for tfl.mul',
     "TF's TFLite converter failed"): [
        'exp2_16_bit_rounding', 'exp2_bfloat16', 'exp2_float16', 'exp2_float64',
        'integer_pow3_bfloat16', 'integer_pow3_float16', 'integer_pow3_float64',
        'integer_pow_int8', 'integer_pow_neg2_bfloat16', 'integer_pow_neg2_float16',
        'integer_pow_neg2_float64', 'integer_pow_u8_wraps', 'integer_pow_uint16',
        'integer_pow_uint64', 'integer_pow_uint8', 'mul_bfloat16', 'mul_float16',
        'mul_float64', 'mul_int8', 'mul_uint16', 'mul_uint64', 'mul_uint8', 'mulhi_uint8',
        'polynomial_bf16', 'square_bfloat16', 'square_float16', 'square_float64',
        'table_exp2_bfloat16', 'table_exp2_complex128', 'table_exp2_float16',
        'table_exp2_float64', 'table_ipow2_bfloat16', 'table_ipow2_complex128',
        'table_ipow2_float16', 'table_ipow2_float64', 'table_ipow2_int8', 'table_ipow2_uint16',
        'table_ipow2_uint64', 'table_ipow2_uint8', 'table_ipow3_bfloat16',
        'table_ipow3_complex128', 'table_ipow3_float16', 'table_ipow3_float64',
        'table_ipow3_int8', 'table_ipow3_uint16', 'table_ipow3_uint64', 'table_ipow3_uint8',
        'table_ipow5_bfloat16', 'table_ipow5_complex128', 'table_ipow5_float16',
        'table_ipow5_float64', 'table_ipow5_int8', 'table_ipow5_uint16', 'table_ipow5_uint64',
        'table_ipow5_uint8', 'table_ipow_m2_bfloat16', 'table_ipow_m2_complex128',
        'table_ipow_m2_float16', 'table_ipow_m2_float64', 'table_mul_bfloat16',
        'table_mul_complex128', 'table_mul_float16', 'table_mul_float64', 'table_mul_int8',
        'table_mul_uint16', 'table_mul_uint64', 'table_mul_uint8', 'table_square_bfloat16',
        'table_square_float16', 'table_square_float64', 'table_square_int8',
        'table_square_uint16', 'table_square_uint64', 'table_square_uint8'
    ],
    ('the converter has no builtin lowering for tfl.neg',
     "TF's TFLite converter failed"): [
        'all_1ary_int16', 'all_1ary_int8', 'all_1ary_uint16', 'all_1ary_uint32',
        'all_1ary_uint64', 'all_1ary_uint8', 'conj_complex128', 'logistic_bfloat16',
        'logistic_float16', 'logistic_float64', 'neg_bfloat16', 'neg_float16', 'neg_float64',
        'neg_int16', 'neg_int8', 'neg_u8_wraps', 'neg_uint16', 'neg_uint32', 'neg_uint64',
        'neg_uint8', 'table_conj_complex128', 'table_logistic_bfloat16',
        'table_logistic_float16', 'table_logistic_float64', 'table_neg_bfloat16',
        'table_neg_float16', 'table_neg_float64', 'table_neg_int16', 'table_neg_int8',
        'table_neg_uint16', 'table_neg_uint32', 'table_neg_uint64', 'table_neg_uint8'
    ],
    ('the converter has no builtin lowering for tfl.not_equal',
     "TF's TFLite converter failed"): [
        'convert_bf16_to_all', 'convert_int_to_bool', 'ne_bfloat16', 'ne_float16',
        'ne_float64', 'nextafter_bf16', 'nextafter_bfloat16', 'nextafter_bfloat16_subnormal',
        'nextafter_f16', 'nextafter_float16', 'nextafter_float16_subnormal',
        'nextafter_float64', 'poly_nextafter_f16', 'table_ne_bfloat16', 'table_ne_complex128',
        'table_ne_complex64', 'table_ne_float16', 'table_ne_float64', 'table_ne_int16',
        'table_ne_int8', 'table_ne_uint16', 'table_ne_uint32', 'table_ne_uint64',
        'table_ne_uint8', 'table_nextafter_bfloat16', 'table_nextafter_float16',
        'table_nextafter_float64', 'table_select_n_bfloat16', 'table_select_n_complex128',
        'table_select_n_complex64', 'table_select_n_float16', 'table_select_n_float64',
        'table_select_n_int16', 'table_select_n_int8', 'table_select_n_uint16',
        'table_select_n_uint32', 'table_select_n_uint64', 'table_select_n_uint8',
        'x64_nextafter_f64'
    ],
    ('the converter has no builtin lowering for tfl.pow',
     "TF's TFLite converter failed"): [
        'pow_bfloat16', 'pow_complex64', 'pow_complex_int_exponent', 'pow_complex_zero_base',
        'pow_float16', 'pow_float64', 'table_pow_bfloat16', 'table_pow_complex128',
        'table_pow_complex64', 'table_pow_float16', 'table_pow_float64'
    ],
    ('the converter has no builtin lowering for tfl.right_shift',
     "TF's TFLite converter failed"): [
        'mulhi_int32', 'shift_right_arithmetic_int64', 'shift_right_arithmetic_uint64',
        'shift_right_logical_int64', 'shift_right_logical_uint64',
        'table_shift_right_arithmetic_int64', 'table_shift_right_arithmetic_uint64',
        'table_shift_right_logical_int64', 'table_shift_right_logical_uint64', 'x64_shifts'
    ],
    ('the converter has no builtin lowering for tfl.round',
     "TF's TFLite converter failed"): [
        'round_even_bf16', 'round_even_bfloat16', 'round_even_float16', 'round_even_float64',
        'table_round_even_bfloat16', 'table_round_even_float16', 'table_round_even_float64'
    ],
    ('the converter has no builtin lowering for tfl.rsqrt',
     "TF's TFLite converter failed"): [
        'rsqrt_bfloat16', 'rsqrt_float16', 'rsqrt_float64', 'table_rsqrt_bfloat16',
        'table_rsqrt_float16', 'table_rsqrt_float64'
    ],
    ('the converter has no builtin lowering for tfl.select',
     "TF's TFLite converter failed"): [
        'cos_complex64', 'max_complex_lexicographic', 'min_complex_lexicographic',
        'select_n_complex', 'sign_uint8', 'sin_complex64', 'table_cos_complex64',
        'table_max_complex64', 'table_min_complex64', 'table_sin_complex64'
    ],
    ('the converter has no builtin lowering for tfl.select_v2',
     "TF's TFLite converter failed"): [
        'table_sign_uint8'
    ],
    ('the converter has no builtin lowering for tfl.sign',
     "TF's TFLite converter failed"): [
        'all_1ary_int64', 'sign_bf16', 'sign_bfloat16', 'sign_edges_f16', 'sign_float16',
        'sign_int16', 'sign_int64', 'sign_int8', 'sign_ints', 'table_sign_bfloat16',
        'table_sign_float16', 'table_sign_int16', 'table_sign_int64', 'table_sign_int8'
    ],
    ('the converter has no builtin lowering for tfl.sin',
     "TF's TFLite converter failed"): [
        'sin_bfloat16', 'sin_float16', 'sin_float64', 'table_sin_bfloat16',
        'table_sin_float16', 'table_sin_float64', 'table_tan_bfloat16', 'table_tan_complex128',
        'table_tan_float16', 'table_tan_float64', 'tan_bfloat16', 'tan_float16', 'tan_float64'
    ],
    ('the converter has no builtin lowering for tfl.sqrt',
     "TF's TFLite converter failed"): [
        'sqrt_bfloat16', 'sqrt_float16', 'sqrt_float64', 'table_sqrt_bfloat16',
        'table_sqrt_float16', 'table_sqrt_float64'
    ],
    ('the converter has no builtin lowering for tfl.sub',
     "TF's TFLite converter failed"): [
        'acos_bfloat16', 'acos_float16', 'acos_float64', 'all_2ary_int16', 'asin_bfloat16',
        'asin_float16', 'asin_float64', 'graph_optimizer_patterns_bfloat16',
        'square_of_difference_int16', 'square_of_difference_int8',
        'square_of_difference_uint16', 'square_of_difference_uint64',
        'square_of_difference_uint8', 'sub_bfloat16', 'sub_float16', 'sub_float64',
        'sub_int16', 'sub_int8', 'sub_uint16', 'sub_uint64', 'sub_uint8',
        'table_acos_bfloat16', 'table_acos_float16', 'table_acos_float64',
        'table_asin_bfloat16', 'table_asin_float16', 'table_asin_float64',
        'table_sub_bfloat16', 'table_sub_complex128', 'table_sub_complex64',
        'table_sub_float16', 'table_sub_float64', 'table_sub_int16', 'table_sub_int8',
        'table_sub_uint16', 'table_sub_uint64', 'table_sub_uint8'
    ],
    ('the converter has no builtin lowering for tfl.tanh',
     "TF's TFLite converter failed"): [
        'table_tanh_bfloat16', 'table_tanh_float16', 'table_tanh_float64', 'tanh_bfloat16',
        'tanh_float16', 'tanh_float64'
    ],
}
# As for the graph route: what these do on a CPU with AVX-512.
_ZERO_SIGNS = 'signs\\ of\\ zero\\ differ'
_TFLITE_NATIVE_VARIES_BY_CPU = {
    'acosh_float32_specials': "", 'asinh_float32_specials': _ZERO_SIGNS,
    'atanh_float32_specials': _ZERO_SIGNS, 'log1p_float32_specials': _ZERO_SIGNS,
    'log_float32_specials': "",
    # LiteRT's float64 -> float16 convert rounds twice (through float32) on
    # some x86 CPUs (seen on a Xeon with AVX512-FP16), once on others.
    'x64_convert_f64_to_narrow_floats': "",
}
CASES[:] = in_column(CASES, "tflite_native", no_kernel=_TFLITE_NATIVE_NO_KERNEL,
                     gaps=_TFLITE_NATIVE_GAPS, varies_by_cpu=_TFLITE_NATIVE_VARIES_BY_CPU)

# ---------------------------------------------------------------------------
# TF.js (Node): cases whose TF ops TF.js has no kernel for, or whose dtypes it
# has no tensors of, and cases TF.js runs differently from XLA. Recorded from
# a run of the column (tools/record_column.py tfjs); a fix shows up as a
# failing case to take out of here.
_TFJS_NO_KERNEL = {  # (JAX primitive, TF op): cases
    ('abs', 'dtype bfloat16'): [
        'abs_bfloat16'
    ],
    ('abs', 'dtype complex128'): [
        'abs_complex128', 'table_abs_complex128'
    ],
    ('abs', 'dtype float16'): [
        'abs_float16', 'table_abs_float16'
    ],
    ('abs', 'dtype float64'): [
        'abs_float64', 'table_abs_float64'
    ],
    ('abs', 'dtype int16'): [
        'abs_int16', 'table_abs_int16'
    ],
    ('abs', 'dtype int8'): [
        'abs_int8', 'abs_int_min', 'table_abs_int8'
    ],
    ('acos', 'Acos'): [
        'all_1ary_complex64', 'table_acos_complex64'
    ],
    ('acos', 'dtype bfloat16'): [
        'acos_bfloat16'
    ],
    ('acos', 'dtype complex128'): [
        'table_acos_complex128'
    ],
    ('acos', 'dtype float16'): [
        'acos_float16', 'table_acos_float16'
    ],
    ('acos', 'dtype float64'): [
        'acos_float64', 'table_acos_float64'
    ],
    ('acosh', 'Acosh'): [
        'table_acosh_complex64'
    ],
    ('acosh', 'dtype bfloat16'): [
        'acosh_bfloat16'
    ],
    ('acosh', 'dtype complex128'): [
        'table_acosh_complex128'
    ],
    ('acosh', 'dtype float16'): [
        'acosh_float16', 'table_acosh_float16'
    ],
    ('acosh', 'dtype float64'): [
        'acosh_float64', 'table_acosh_float64'
    ],
    ('add', 'dtype bfloat16'): [
        'add_bfloat16'
    ],
    ('add', 'dtype complex128'): [
        'table_add_complex128'
    ],
    ('add', 'dtype float16'): [
        'add_float16', 'table_add_float16'
    ],
    ('add', 'dtype float64'): [
        'add_float64', 'table_add_float64'
    ],
    ('add', 'dtype int16'): [
        'add_int16', 'table_add_int16'
    ],
    ('add', 'dtype int8'): [
        'add_int8', 'table_add_int8'
    ],
    ('add', 'dtype uint16'): [
        'add_uint16', 'table_add_uint16'
    ],
    ('add', 'dtype uint64'): [
        'add_uint64', 'table_add_uint64'
    ],
    ('add', 'dtype uint8'): [
        'add_uint8', 'table_add_uint8'
    ],
    ('add_any', 'dtype complex128'): [
        'table_add_any_complex128'
    ],
    ('add_any', 'dtype float16'): [
        'table_add_any_float16'
    ],
    ('add_any', 'dtype float64'): [
        'table_add_any_float64'
    ],
    ('add_any', 'dtype int16'): [
        'table_add_any_int16'
    ],
    ('add_any', 'dtype int8'): [
        'table_add_any_int8'
    ],
    ('add_any', 'dtype uint16'): [
        'table_add_any_uint16'
    ],
    ('add_any', 'dtype uint64'): [
        'table_add_any_uint64'
    ],
    ('add_any', 'dtype uint8'): [
        'add_any_u8', 'table_add_any_uint8'
    ],
    ('and', 'BitwiseAnd'): [
        'and_int64', 'and_uint64', 'table_and_int64', 'table_and_uint64'
    ],
    ('and', 'BitwiseXor'): [
        'and_int16', 'and_int8', 'and_uint16', 'and_uint8', 'table_and_int16',
        'table_and_int8', 'table_and_uint16', 'table_and_uint8'
    ],
    ('asin', 'Asin'): [
        'asin_complex64', 'table_asin_complex64'
    ],
    ('asin', 'dtype bfloat16'): [
        'asin_bfloat16'
    ],
    ('asin', 'dtype complex128'): [
        'asin_complex128', 'table_asin_complex128'
    ],
    ('asin', 'dtype float16'): [
        'asin_float16', 'table_asin_float16'
    ],
    ('asin', 'dtype float64'): [
        'asin_float64', 'table_asin_float64'
    ],
    ('asinh', 'Asinh'): [
        'table_asinh_complex64'
    ],
    ('asinh', 'dtype bfloat16'): [
        'asinh_bfloat16'
    ],
    ('asinh', 'dtype complex128'): [
        'table_asinh_complex128'
    ],
    ('asinh', 'dtype float16'): [
        'asinh_float16', 'table_asinh_float16'
    ],
    ('asinh', 'dtype float64'): [
        'asinh_float64', 'table_asinh_float64'
    ],
    ('atan', 'Atan'): [
        'atan_complex64', 'table_atan_complex64'
    ],
    ('atan', 'dtype bfloat16'): [
        'atan_bfloat16'
    ],
    ('atan', 'dtype complex128'): [
        'atan_complex128', 'table_atan_complex128'
    ],
    ('atan', 'dtype float16'): [
        'atan_float16', 'table_atan_float16'
    ],
    ('atan', 'dtype float64'): [
        'atan_float64', 'table_atan_float64'
    ],
    ('atan2', 'Log'): [
        'table_atan2_complex64'
    ],
    ('atan2', 'dtype bfloat16'): [
        'atan2_bfloat16'
    ],
    ('atan2', 'dtype complex128'): [
        'all_2ary_complex128', 'table_atan2_complex128'
    ],
    ('atan2', 'dtype float16'): [
        'atan2_float16', 'table_atan2_float16'
    ],
    ('atan2', 'dtype float64'): [
        'atan2_float64', 'table_atan2_float64'
    ],
    ('atanh', 'Atanh'): [
        'table_atanh_complex64'
    ],
    ('atanh', 'dtype bfloat16'): [
        'atanh_bfloat16'
    ],
    ('atanh', 'dtype complex128'): [
        'table_atanh_complex128'
    ],
    ('atanh', 'dtype float16'): [
        'atanh_float16', 'table_atanh_float16'
    ],
    ('atanh', 'dtype float64'): [
        'atanh_float64', 'table_atanh_float64'
    ],
    ('bitcast_convert_type', 'Bitcast'): [
        'bitcast_bf16_u16', 'bitcast_f16_u32', 'bitcast_f32_i32', 'bitcast_f32_u8',
        'bitcast_float32_to_float16', 'bitcast_float32_to_int32', 'bitcast_float32_to_uint8',
        'bitcast_float64_to_int64', 'bitcast_float64_to_uint32', 'bitcast_i16_f16',
        'bitcast_u8_f32', 'poly_bitcast_widen', 'x64_bitcast_f64_u32'
    ],
    ('broadcast_in_dim', 'dtype bfloat16'): [
        'graph_optimizer_patterns_bfloat16'
    ],
    ('cbrt', 'dtype bfloat16'): [
        'cbrt_bfloat16'
    ],
    ('cbrt', 'dtype float16'): [
        'cbrt_float16', 'table_cbrt_float16'
    ],
    ('cbrt', 'dtype float64'): [
        'cbrt_float64', 'table_cbrt_float64'
    ],
    ('ceil', 'dtype bfloat16'): [
        'ceil_bfloat16'
    ],
    ('ceil', 'dtype float16'): [
        'ceil_float16', 'table_ceil_float16'
    ],
    ('ceil', 'dtype float64'): [
        'ceil_float64', 'table_ceil_float64'
    ],
    ('clamp', 'SelectV2'): [
        'table_clamp_complex64'
    ],
    ('clamp', 'dtype bfloat16'): [
        'all_3ary_bfloat16', 'table_clamp_bfloat16'
    ],
    ('clamp', 'dtype complex128'): [
        'table_clamp_complex128'
    ],
    ('clamp', 'dtype float16'): [
        'all_3ary_float16', 'table_clamp_float16'
    ],
    ('clamp', 'dtype float64'): [
        'all_3ary_float64', 'table_clamp_float64'
    ],
    ('clamp', 'dtype int16'): [
        'table_clamp_int16'
    ],
    ('clamp', 'dtype int8'): [
        'clamp_int', 'table_clamp_int8'
    ],
    ('clamp', 'dtype uint16'): [
        'table_clamp_uint16'
    ],
    ('clamp', 'dtype uint32'): [
        'all_3ary_uint32', 'clamp_u32', 'table_clamp_uint32', 'u32_order_compare'
    ],
    ('clamp', 'dtype uint64'): [
        'table_clamp_uint64'
    ],
    ('clamp', 'dtype uint8'): [
        'table_clamp_uint8'
    ],
    ('clz', 'Bitcast'): [
        'all_1ary_int16', 'all_1ary_int64', 'all_1ary_int8', 'all_1ary_uint16',
        'all_1ary_uint64', 'all_1ary_uint8', 'bit_counts_int16', 'bit_counts_int8',
        'bit_counts_uint16', 'bit_counts_uint8', 'clz_i16', 'clz_int16', 'clz_int64',
        'clz_int8', 'clz_u8', 'clz_uint16', 'clz_uint64', 'clz_uint8', 'table_clz_int16',
        'table_clz_int64', 'table_clz_int8', 'table_clz_uint16', 'table_clz_uint64',
        'table_clz_uint8', 'x64_clz_popcount'
    ],
    ('complex', 'dtype complex128'): [
        'complex_float64', 'table_complex_float64'
    ],
    ('conj', 'Conj'): [
        'all_1ary_complex128', 'conj_complex128', 'conj_complex64', 'table_conj_complex128',
        'table_conj_complex64'
    ],
    ('conj', 'dtype complex128'): [
        'table_conj_float64'
    ],
    ('convert_element_type', 'Bitcast'): [
        'x64_convert_f64_to_narrow_floats'
    ],
    ('convert_element_type', 'dtype bfloat16'): [
        'convert_bf16_to_all', 'convert_bfloat16_to_float32', 'convert_bool_to_all',
        'convert_f32_to_all', 'convert_f32_to_bf16_rounding', 'convert_float32_to_bfloat16',
        'round_even_bf16', 'table_abs_bfloat16', 'table_acos_bfloat16', 'table_acosh_bfloat16',
        'table_add_any_bfloat16', 'table_add_bfloat16', 'table_asin_bfloat16',
        'table_asinh_bfloat16', 'table_atan2_bfloat16', 'table_atan_bfloat16',
        'table_atanh_bfloat16', 'table_cbrt_bfloat16', 'table_ceil_bfloat16',
        'table_copy_bfloat16', 'table_cos_bfloat16', 'table_cosh_bfloat16',
        'table_div_bfloat16', 'table_eq_bfloat16', 'table_exp_bfloat16',
        'table_expm1_bfloat16', 'table_floor_bfloat16', 'table_ge_bfloat16',
        'table_gt_bfloat16', 'table_ipow2_bfloat16', 'table_ipow3_bfloat16',
        'table_ipow5_bfloat16', 'table_is_finite_bfloat16', 'table_le_bfloat16',
        'table_log1p_bfloat16', 'table_log_bfloat16', 'table_logistic_bfloat16',
        'table_lt_bfloat16', 'table_mul_bfloat16', 'table_ne_bfloat16', 'table_pow_bfloat16',
        'table_rem_bfloat16', 'table_round_even_bfloat16', 'table_rsqrt_bfloat16',
        'table_select_n_bfloat16', 'table_sin_bfloat16', 'table_sinh_bfloat16',
        'table_sqrt_bfloat16', 'table_square_bfloat16', 'table_stop_gradient_bfloat16',
        'table_sub_bfloat16', 'table_tan_bfloat16', 'table_tanh_bfloat16'
    ],
    ('convert_element_type', 'dtype float16'): [
        'convert_f16_to_ints', 'convert_float16_to_float32', 'convert_float32_to_float16',
        'table_select_n_float16'
    ],
    ('convert_element_type', 'dtype float64'): [
        'convert_float64_to_float32', 'convert_float64_to_int64', 'table_select_n_float64',
        'x64_convert_f64_to_ints', 'x64_convert_i64_to_floats'
    ],
    ('convert_element_type', 'dtype int16'): [
        'all_3ary_int16', 'convert_float32_to_int16', 'convert_int_to_bool',
        'table_select_n_int16'
    ],
    ('convert_element_type', 'dtype int8'): [
        'all_3ary_int8', 'convert_complex_to_int', 'convert_float32_to_int8',
        'convert_int32_to_int8', 'convert_int8_to_uint16', 'convert_int_wraps',
        'table_select_n_int8'
    ],
    ('convert_element_type', 'dtype uint16'): [
        'all_3ary_uint16', 'convert_float32_to_uint16', 'table_select_n_uint16'
    ],
    ('convert_element_type', 'dtype uint32'): [
        'convert_float32_to_uint32'
    ],
    ('convert_element_type', 'dtype uint64'): [
        'all_3ary_uint64', 'convert_float32_to_uint64', 'table_select_n_uint64',
        'x64_convert_f32_to_i64'
    ],
    ('convert_element_type', 'dtype uint8'): [
        'all_3ary_uint8', 'convert_float32_to_uint8', 'convert_uint8_to_float32',
        'table_select_n_uint8'
    ],
    ('cos', 'Cos'): [
        'cos_complex64', 'table_cos_complex64'
    ],
    ('cos', 'dtype bfloat16'): [
        'cos_bfloat16'
    ],
    ('cos', 'dtype complex128'): [
        'cos_complex128', 'table_cos_complex128'
    ],
    ('cos', 'dtype float16'): [
        'cos_float16', 'table_cos_float16'
    ],
    ('cos', 'dtype float64'): [
        'cos_float64', 'table_cos_float64'
    ],
    ('cosh', 'Cosh'): [
        'table_cosh_complex64'
    ],
    ('cosh', 'dtype bfloat16'): [
        'cosh_bfloat16'
    ],
    ('cosh', 'dtype complex128'): [
        'table_cosh_complex128'
    ],
    ('cosh', 'dtype float16'): [
        'cosh_float16', 'table_cosh_float16'
    ],
    ('cosh', 'dtype float64'): [
        'cosh_float64', 'table_cosh_float64'
    ],
    ('div', 'RealDiv'): [
        'div_complex64', 'table_div_complex64'
    ],
    ('div', 'TruncateDiv'): [
        'all_2ary_uint32', 'div_int16', 'div_int8', 'div_rem_edges_ints', 'div_uint16',
        'div_uint32', 'div_uint64', 'div_uint8', 'floor_divide_uint16', 'floor_divide_uint32',
        'floor_divide_uint64', 'floor_divide_uint8', 'table_div_int16', 'table_div_int8',
        'table_div_uint16', 'table_div_uint32', 'table_div_uint64', 'table_div_uint8',
        'x64_div_rem_edges'
    ],
    ('div', 'dtype bfloat16'): [
        'div_bfloat16'
    ],
    ('div', 'dtype complex128'): [
        'table_div_complex128'
    ],
    ('div', 'dtype float16'): [
        'div_float16', 'table_div_float16'
    ],
    ('div', 'dtype float64'): [
        'div_float64', 'table_div_float64'
    ],
    ('eq', 'Equal'): [
        'all_2ary_complex64', 'eq_complex64', 'table_eq_complex64'
    ],
    ('eq', 'dtype bfloat16'): [
        'eq_bfloat16'
    ],
    ('eq', 'dtype complex128'): [
        'table_eq_complex128'
    ],
    ('eq', 'dtype float16'): [
        'eq_float16', 'table_eq_float16'
    ],
    ('eq', 'dtype float64'): [
        'eq_float64', 'table_eq_float64'
    ],
    ('eq', 'dtype int16'): [
        'eq_int16', 'table_eq_int16'
    ],
    ('eq', 'dtype int8'): [
        'eq_int8', 'table_eq_int8'
    ],
    ('eq', 'dtype uint16'): [
        'eq_uint16', 'table_eq_uint16'
    ],
    ('eq', 'dtype uint64'): [
        'eq_uint64', 'table_eq_uint64'
    ],
    ('eq', 'dtype uint8'): [
        'eq_uint8', 'table_eq_uint8'
    ],
    ('exp', 'dtype bfloat16'): [
        'exp_bfloat16'
    ],
    ('exp', 'dtype complex128'): [
        'exp_complex128', 'table_exp_complex128'
    ],
    ('exp', 'dtype float16'): [
        'exp_float16', 'table_exp_float16'
    ],
    ('exp', 'dtype float64'): [
        'exp_float64', 'table_exp_float64'
    ],
    ('exp2', 'Exp'): [
        'table_exp2_complex64'
    ],
    ('exp2', 'dtype bfloat16'): [
        'exp2_16_bit_rounding', 'exp2_bfloat16', 'table_exp2_bfloat16'
    ],
    ('exp2', 'dtype complex128'): [
        'table_exp2_complex128'
    ],
    ('exp2', 'dtype float16'): [
        'exp2_float16', 'table_exp2_float16'
    ],
    ('exp2', 'dtype float64'): [
        'exp2_float64', 'table_exp2_float64'
    ],
    ('expm1', 'Expm1'): [
        'expm1_complex64', 'table_expm1_complex64'
    ],
    ('expm1', 'dtype bfloat16'): [
        'expm1_bfloat16'
    ],
    ('expm1', 'dtype complex128'): [
        'expm1_complex128', 'table_expm1_complex128'
    ],
    ('expm1', 'dtype float16'): [
        'expm1_float16', 'table_expm1_float16'
    ],
    ('expm1', 'dtype float64'): [
        'expm1_float64', 'table_expm1_float64'
    ],
    ('floor', 'dtype bfloat16'): [
        'floor_bfloat16'
    ],
    ('floor', 'dtype float16'): [
        'floor_float16', 'table_floor_float16'
    ],
    ('floor', 'dtype float64'): [
        'floor_float64', 'table_floor_float64'
    ],
    ('ge', 'dtype bfloat16'): [
        'ge_bfloat16'
    ],
    ('ge', 'dtype float16'): [
        'ge_float16', 'table_ge_float16'
    ],
    ('ge', 'dtype float64'): [
        'ge_float64', 'table_ge_float64'
    ],
    ('ge', 'dtype int16'): [
        'ge_int16', 'table_ge_int16'
    ],
    ('ge', 'dtype int8'): [
        'ge_int8', 'table_ge_int8'
    ],
    ('ge', 'dtype uint16'): [
        'ge_uint16', 'table_ge_uint16'
    ],
    ('ge', 'dtype uint64'): [
        'ge_uint64', 'table_ge_uint64'
    ],
    ('ge', 'dtype uint8'): [
        'ge_uint8', 'table_ge_uint8'
    ],
    ('gt', 'dtype bfloat16'): [
        'gt_bfloat16'
    ],
    ('gt', 'dtype float16'): [
        'gt_float16', 'table_gt_float16'
    ],
    ('gt', 'dtype float64'): [
        'gt_float64', 'table_gt_float64'
    ],
    ('gt', 'dtype int16'): [
        'table_gt_int16'
    ],
    ('gt', 'dtype int8'): [
        'table_gt_int8'
    ],
    ('gt', 'dtype uint16'): [
        'table_gt_uint16'
    ],
    ('gt', 'dtype uint64'): [
        'table_gt_uint64'
    ],
    ('gt', 'dtype uint8'): [
        'table_gt_uint8'
    ],
    ('imag', 'dtype complex128'): [
        'imag_complex128', 'table_imag_complex128'
    ],
    ('integer_pow', 'RealDiv'): [
        'table_ipow_m1_complex64', 'table_ipow_m2_complex64'
    ],
    ('integer_pow', 'dtype bfloat16'): [
        'integer_pow3_bfloat16', 'integer_pow_neg2_bfloat16', 'reciprocal_bfloat16',
        'table_ipow_m1_bfloat16', 'table_ipow_m2_bfloat16'
    ],
    ('integer_pow', 'dtype complex128'): [
        'table_ipow2_complex128', 'table_ipow3_complex128', 'table_ipow5_complex128',
        'table_ipow_m1_complex128', 'table_ipow_m2_complex128'
    ],
    ('integer_pow', 'dtype float16'): [
        'integer_pow3_float16', 'integer_pow_neg2_float16', 'reciprocal_float16',
        'table_ipow2_float16', 'table_ipow3_float16', 'table_ipow5_float16',
        'table_ipow_m1_float16', 'table_ipow_m2_float16'
    ],
    ('integer_pow', 'dtype float64'): [
        'integer_pow3_float64', 'integer_pow_neg2_float64', 'reciprocal_float64',
        'table_ipow2_float64', 'table_ipow3_float64', 'table_ipow5_float64',
        'table_ipow_m1_float64', 'table_ipow_m2_float64'
    ],
    ('integer_pow', 'dtype int16'): [
        'integer_pow_i16_0', 'integer_pow_int16', 'table_ipow2_int16', 'table_ipow3_int16',
        'table_ipow5_int16'
    ],
    ('integer_pow', 'dtype int8'): [
        'integer_pow_int8', 'table_ipow2_int8', 'table_ipow3_int8', 'table_ipow5_int8'
    ],
    ('integer_pow', 'dtype uint16'): [
        'integer_pow_uint16', 'table_ipow2_uint16', 'table_ipow3_uint16', 'table_ipow5_uint16'
    ],
    ('integer_pow', 'dtype uint64'): [
        'integer_pow_uint64', 'table_ipow2_uint64', 'table_ipow3_uint64', 'table_ipow5_uint64'
    ],
    ('integer_pow', 'dtype uint8'): [
        'integer_pow_u8_wraps', 'integer_pow_uint8', 'table_ipow2_uint8', 'table_ipow3_uint8',
        'table_ipow5_uint8'
    ],
    ('is_finite', 'dtype bfloat16'): [
        'is_finite_bfloat16'
    ],
    ('is_finite', 'dtype float16'): [
        'is_finite_float16', 'table_is_finite_float16'
    ],
    ('is_finite', 'dtype float64'): [
        'is_finite_float64', 'table_is_finite_float64'
    ],
    ('le', 'dtype bfloat16'): [
        'le_bfloat16'
    ],
    ('le', 'dtype float16'): [
        'le_float16', 'table_le_float16'
    ],
    ('le', 'dtype float64'): [
        'le_float64', 'table_le_float64'
    ],
    ('le', 'dtype int16'): [
        'table_le_int16'
    ],
    ('le', 'dtype int8'): [
        'table_le_int8'
    ],
    ('le', 'dtype uint16'): [
        'table_le_uint16'
    ],
    ('le', 'dtype uint64'): [
        'table_le_uint64'
    ],
    ('le', 'dtype uint8'): [
        'table_le_uint8'
    ],
    ('log', 'Log'): [
        'log_complex64', 'table_log2_complex64', 'table_log_complex64'
    ],
    ('log', 'dtype bfloat16'): [
        'log_bfloat16', 'table_log2_bfloat16'
    ],
    ('log', 'dtype complex128'): [
        'log_complex128', 'table_log2_complex128', 'table_log_complex128'
    ],
    ('log', 'dtype float16'): [
        'log_float16', 'table_log2_float16', 'table_log_float16'
    ],
    ('log', 'dtype float64'): [
        'log_float64', 'table_log2_float64', 'table_log_float64'
    ],
    ('log1p', 'Log1p'): [
        'log1p_complex64', 'table_log1p_complex64'
    ],
    ('log1p', 'dtype bfloat16'): [
        'log1p_bfloat16'
    ],
    ('log1p', 'dtype complex128'): [
        'log1p_complex128', 'table_log1p_complex128'
    ],
    ('log1p', 'dtype float16'): [
        'log1p_float16', 'table_log1p_float16'
    ],
    ('log1p', 'dtype float64'): [
        'log1p_float64', 'table_log1p_float64'
    ],
    ('logistic', 'Sigmoid'): [
        'table_logistic_complex64'
    ],
    ('logistic', 'dtype bfloat16'): [
        'logistic_bfloat16'
    ],
    ('logistic', 'dtype complex128'): [
        'table_logistic_complex128'
    ],
    ('logistic', 'dtype float16'): [
        'logistic_float16', 'table_logistic_float16'
    ],
    ('logistic', 'dtype float64'): [
        'logistic_float64', 'table_logistic_float64'
    ],
    ('lt', 'dtype bfloat16'): [
        'lt_bfloat16'
    ],
    ('lt', 'dtype float16'): [
        'lt_float16', 'table_lt_float16'
    ],
    ('lt', 'dtype float64'): [
        'lt_float64', 'table_lt_float64'
    ],
    ('lt', 'dtype int16'): [
        'lt_int16', 'table_lt_int16'
    ],
    ('lt', 'dtype int8'): [
        'lt_int8', 'table_lt_int8'
    ],
    ('lt', 'dtype uint16'): [
        'lt_uint16', 'table_lt_uint16'
    ],
    ('lt', 'dtype uint64'): [
        'lt_uint64', 'table_lt_uint64'
    ],
    ('lt', 'dtype uint8'): [
        'lt_uint8', 'table_lt_uint8'
    ],
    ('lt_to', 'Bitcast'): [
        'total_order_bf16_f16', 'total_order_f64', 'total_order_specials'
    ],
    ('lt_to', 'dtype uint8'): [
        'total_order_ints_bool'
    ],
    ('max', 'SelectV2'): [
        'max_complex_lexicographic', 'table_max_complex64'
    ],
    ('max', 'dtype bfloat16'): [
        'max_nan_bfloat16', 'table_max_bfloat16'
    ],
    ('max', 'dtype complex128'): [
        'table_max_complex128'
    ],
    ('max', 'dtype float16'): [
        'max_f16_nan', 'max_nan_float16', 'table_max_float16'
    ],
    ('max', 'dtype float64'): [
        'max_nan_float64', 'table_max_float64', 'x64_max_min_f64'
    ],
    ('max', 'dtype int16'): [
        'max_int16', 'table_max_int16'
    ],
    ('max', 'dtype int8'): [
        'max_int8', 'table_max_int8'
    ],
    ('max', 'dtype uint16'): [
        'max_uint16', 'table_max_uint16'
    ],
    ('max', 'dtype uint64'): [
        'max_uint64', 'table_max_uint64'
    ],
    ('max', 'dtype uint8'): [
        'max_uint8', 'table_max_uint8'
    ],
    ('min', 'SelectV2'): [
        'min_complex_lexicographic', 'table_min_complex64'
    ],
    ('min', 'dtype bfloat16'): [
        'min_bf16_nan', 'min_nan_bfloat16', 'table_min_bfloat16'
    ],
    ('min', 'dtype complex128'): [
        'table_min_complex128'
    ],
    ('min', 'dtype float16'): [
        'min_nan_float16', 'table_min_float16'
    ],
    ('min', 'dtype float64'): [
        'min_nan_float64', 'table_min_float64'
    ],
    ('min', 'dtype int16'): [
        'min_int16', 'table_min_int16'
    ],
    ('min', 'dtype int8'): [
        'min_int8', 'table_min_int8'
    ],
    ('min', 'dtype uint16'): [
        'min_uint16', 'table_min_uint16'
    ],
    ('min', 'dtype uint64'): [
        'min_uint64', 'table_min_uint64'
    ],
    ('min', 'dtype uint8'): [
        'min_uint8', 'table_min_uint8'
    ],
    ('mul', 'dtype bfloat16'): [
        'mul_bfloat16', 'polynomial_bf16'
    ],
    ('mul', 'dtype complex128'): [
        'table_mul_complex128'
    ],
    ('mul', 'dtype float16'): [
        'mul_float16', 'mul_out_dtype', 'table_mul_float16'
    ],
    ('mul', 'dtype float64'): [
        'mul_float64', 'table_mul_float64'
    ],
    ('mul', 'dtype int16'): [
        'mul_int16', 'table_mul_int16'
    ],
    ('mul', 'dtype int8'): [
        'mul_int8', 'table_mul_int8'
    ],
    ('mul', 'dtype uint16'): [
        'mul_uint16', 'table_mul_uint16'
    ],
    ('mul', 'dtype uint64'): [
        'mul_uint64', 'table_mul_uint64'
    ],
    ('mul', 'dtype uint8'): [
        'mul_uint8', 'table_mul_uint8'
    ],
    ('mulhi', 'dtype int16'): [
        'mulhi_int16'
    ],
    ('mulhi', 'dtype int8'): [
        'mulhi_int8'
    ],
    ('mulhi', 'dtype uint16'): [
        'mulhi_uint16'
    ],
    ('mulhi', 'dtype uint64'): [
        'mulhi_uint8'
    ],
    ('ne', 'NotEqual'): [
        'all_3ary_complex64', 'table_ne_complex64', 'table_select_n_complex64'
    ],
    ('ne', 'dtype bfloat16'): [
        'ne_bfloat16'
    ],
    ('ne', 'dtype complex128'): [
        'all_3ary_complex128', 'table_ne_complex128', 'table_select_n_complex128'
    ],
    ('ne', 'dtype float16'): [
        'ne_float16', 'table_ne_float16'
    ],
    ('ne', 'dtype float64'): [
        'ne_float64', 'table_ne_float64'
    ],
    ('ne', 'dtype int16'): [
        'table_ne_int16'
    ],
    ('ne', 'dtype int8'): [
        'table_ne_int8'
    ],
    ('ne', 'dtype uint16'): [
        'table_ne_uint16'
    ],
    ('ne', 'dtype uint64'): [
        'table_ne_uint64'
    ],
    ('ne', 'dtype uint8'): [
        'table_ne_uint8'
    ],
    ('neg', 'BitwiseXor'): [
        'neg_u8_wraps', 'neg_uint16', 'neg_uint64', 'neg_uint8', 'table_neg_uint16',
        'table_neg_uint64', 'table_neg_uint8'
    ],
    ('neg', 'Neg'): [
        'neg_complex64', 'table_neg_complex64'
    ],
    ('neg', 'dtype bfloat16'): [
        'neg_bfloat16', 'table_neg_bfloat16'
    ],
    ('neg', 'dtype complex128'): [
        'neg_complex128', 'table_neg_complex128'
    ],
    ('neg', 'dtype float16'): [
        'neg_float16', 'table_neg_float16'
    ],
    ('neg', 'dtype float64'): [
        'neg_float64', 'table_neg_float64'
    ],
    ('neg', 'dtype int16'): [
        'neg_int16', 'table_neg_int16'
    ],
    ('neg', 'dtype int8'): [
        'neg_int8', 'table_neg_int8'
    ],
    ('nextafter', 'Bitcast'): [
        'all_2ary_bfloat16', 'all_2ary_float16', 'nextafter_bf16', 'nextafter_bfloat16',
        'nextafter_bfloat16_subnormal', 'nextafter_f16', 'nextafter_float16',
        'nextafter_float16_subnormal', 'poly_nextafter_f16', 'table_nextafter_bfloat16',
        'table_nextafter_float16'
    ],
    ('nextafter', 'NextAfter'): [
        'all_2ary_float32', 'all_2ary_float64', 'nextafter_f32', 'nextafter_float32',
        'nextafter_float64', 'table_nextafter_float32', 'table_nextafter_float64',
        'x64_nextafter_f64'
    ],
    ('not', 'BitwiseXor'): [
        'not_i8', 'not_int16', 'not_int64', 'not_int8', 'not_uint16', 'not_uint64',
        'not_uint8', 'table_not_int16', 'table_not_int64', 'table_not_int8',
        'table_not_uint16', 'table_not_uint64', 'table_not_uint8'
    ],
    ('or', 'BitwiseOr'): [
        'or_int64', 'or_uint64', 'table_or_int64', 'table_or_uint64'
    ],
    ('or', 'BitwiseXor'): [
        'or_int16', 'or_int8', 'or_uint16', 'or_uint8', 'table_or_int16', 'table_or_int8',
        'table_or_uint16', 'table_or_uint8'
    ],
    ('population_count', 'PopulationCount'): [
        'population_count_i8', 'population_count_int16', 'population_count_int64',
        'population_count_int8', 'population_count_uint16', 'population_count_uint64',
        'population_count_uint8', 'table_population_count_int16',
        'table_population_count_int64', 'table_population_count_int8',
        'table_population_count_uint16', 'table_population_count_uint64',
        'table_population_count_uint8'
    ],
    ('pow', 'BroadcastTo'): [
        'pow_complex_zero_base'
    ],
    ('pow', 'Pow'): [
        'pow_complex64', 'pow_complex_int_exponent', 'table_pow_complex64'
    ],
    ('pow', 'dtype bfloat16'): [
        'pow_bfloat16'
    ],
    ('pow', 'dtype complex128'): [
        'table_pow_complex128'
    ],
    ('pow', 'dtype float16'): [
        'pow_float16', 'table_pow_float16'
    ],
    ('pow', 'dtype float64'): [
        'pow_float64', 'table_pow_float64'
    ],
    ('real', 'dtype complex128'): [
        'real_complex128', 'table_real_complex128'
    ],
    ('reduce_precision', 'Bitcast'): [
        'all_1ary_bfloat16', 'all_1ary_float16', 'all_1ary_float32', 'all_1ary_float64',
        'poly_reduce_precision', 'reduce_precision', 'reduce_precision_bf16',
        'reduce_precision_f16_e4m3', 'reduce_precision_identity', 'reduce_precision_mantissa0',
        'reduce_precision_to_bf16', 'reduce_precision_to_f16',
        'table_reduce_precision_bfloat16', 'table_reduce_precision_float16',
        'table_reduce_precision_float32', 'table_reduce_precision_float64',
        'x64_reduce_precision_f64'
    ],
    ('rem', 'TruncateDiv'): [
        'floor_divide_int16', 'floor_divide_int8', 'poly_rem_u8_scalar', 'rem_int16',
        'rem_int8', 'rem_uint16', 'rem_uint32', 'rem_uint64', 'rem_uint8', 'table_rem_int16',
        'table_rem_int8', 'table_rem_uint16', 'table_rem_uint32', 'table_rem_uint64',
        'table_rem_uint8'
    ],
    ('rem', 'dtype bfloat16'): [
        'rem_bfloat16'
    ],
    ('rem', 'dtype float16'): [
        'rem_f16', 'rem_float16', 'table_rem_float16'
    ],
    ('rem', 'dtype float64'): [
        'rem_float64', 'table_rem_float64'
    ],
    ('round', 'dtype bfloat16'): [
        'round_afz_bfloat16', 'round_even_bfloat16', 'table_round_bfloat16'
    ],
    ('round', 'dtype float16'): [
        'round_afz_f16', 'round_afz_float16', 'round_even_float16', 'table_round_even_float16',
        'table_round_float16'
    ],
    ('round', 'dtype float64'): [
        'round_afz_float64', 'round_even_float64', 'table_round_even_float64',
        'table_round_float64', 'x64_round_sign_f64'
    ],
    ('rsqrt', 'Rsqrt'): [
        'rsqrt_complex64', 'table_rsqrt_complex64'
    ],
    ('rsqrt', 'dtype bfloat16'): [
        'rsqrt_bfloat16'
    ],
    ('rsqrt', 'dtype complex128'): [
        'rsqrt_complex128', 'table_rsqrt_complex128'
    ],
    ('rsqrt', 'dtype float16'): [
        'rsqrt_float16', 'table_rsqrt_float16'
    ],
    ('rsqrt', 'dtype float64'): [
        'rsqrt_float64', 'table_rsqrt_float64'
    ],
    ('select_n', 'SelectV2'): [
        'select_n_complex'
    ],
    ('select_n', 'dtype int8'): [
        'select_n_bool_int8', 'select_n_scalar_pred'
    ],
    ('shift_left', 'LeftShift'): [
        'shift_left_int64', 'shift_left_uint64', 'table_shift_left_int64',
        'table_shift_left_uint64'
    ],
    ('shift_left', 'RightShift'): [
        'shift_left_int16', 'shift_left_int8', 'shift_left_uint16', 'shift_left_uint8',
        'table_shift_left_int16', 'table_shift_left_int8', 'table_shift_left_uint16',
        'table_shift_left_uint8'
    ],
    ('shift_right_arithmetic', 'Bitcast'): [
        'poly_shift', 'shift_right_arithmetic_int16', 'shift_right_arithmetic_int64',
        'shift_right_arithmetic_int8', 'shift_right_arithmetic_uint16',
        'shift_right_arithmetic_uint64', 'shift_right_arithmetic_uint8',
        'table_shift_right_arithmetic_int16', 'table_shift_right_arithmetic_int64',
        'table_shift_right_arithmetic_int8', 'table_shift_right_arithmetic_uint16',
        'table_shift_right_arithmetic_uint64', 'table_shift_right_arithmetic_uint8'
    ],
    ('shift_right_logical', 'Bitcast'): [
        'all_2ary_int16', 'all_2ary_int64', 'all_2ary_int8', 'all_2ary_uint16',
        'all_2ary_uint64', 'all_2ary_uint8', 'shift_right_logical_int16',
        'shift_right_logical_int64', 'shift_right_logical_int8', 'shift_right_logical_uint16',
        'shift_right_logical_uint64', 'shift_right_logical_uint8', 'shifts_edges_ints',
        'table_shift_right_logical_int16', 'table_shift_right_logical_int64',
        'table_shift_right_logical_int8', 'table_shift_right_logical_uint16',
        'table_shift_right_logical_uint64', 'table_shift_right_logical_uint8', 'x64_shifts'
    ],
    ('sign', 'DivNoNan'): [
        'sign_complex64', 'table_sign_complex64'
    ],
    ('sign', 'dtype bfloat16'): [
        'sign_bf16', 'sign_bfloat16', 'table_sign_bfloat16'
    ],
    ('sign', 'dtype complex128'): [
        'sign_complex128', 'table_sign_complex128'
    ],
    ('sign', 'dtype float16'): [
        'sign_edges_f16', 'sign_float16', 'table_sign_float16'
    ],
    ('sign', 'dtype float64'): [
        'sign_float64', 'table_sign_float64'
    ],
    ('sign', 'dtype int16'): [
        'sign_int16', 'sign_ints', 'table_sign_int16'
    ],
    ('sign', 'dtype int8'): [
        'sign_int8', 'table_sign_int8'
    ],
    ('sign', 'dtype uint16'): [
        'sign_uint16', 'table_sign_uint16'
    ],
    ('sign', 'dtype uint32'): [
        'all_1ary_uint32', 'sign_uint32', 'table_sign_uint32'
    ],
    ('sign', 'dtype uint64'): [
        'sign_uint64', 'table_sign_uint64'
    ],
    ('sign', 'dtype uint8'): [
        'sign_uint8', 'table_sign_uint8'
    ],
    ('signature', 'dtype complex128'): [
        'table_copy_complex128'
    ],
    ('signature', 'dtype complex64'): [
        'abs_complex', 'abs_complex64', 'complex_float32', 'complex_real_imag', 'conj_of_real',
        'convert_complex_to_bool', 'convert_complex_to_real', 'convert_float32_to_complex64',
        'exp_complex64', 'exp_complex64_special_values', 'imag_complex64', 'mul_complex64',
        'real_complex64', 'table_abs_complex64', 'table_add_any_complex64',
        'table_add_complex64', 'table_complex_float32', 'table_conj_float32',
        'table_copy_complex64', 'table_exp_complex64', 'table_imag_complex64',
        'table_ipow2_complex64', 'table_ipow3_complex64', 'table_ipow5_complex64',
        'table_mul_complex64', 'table_real_complex64', 'table_stop_gradient_complex64',
        'table_sub_complex64'
    ],
    ('signature', 'dtype float16'): [
        'table_copy_float16'
    ],
    ('signature', 'dtype float64'): [
        'table_copy_float64'
    ],
    ('signature', 'dtype int16'): [
        'table_copy_int16'
    ],
    ('signature', 'dtype int64'): [
        'abs_int64', 'add_int64', 'all_3ary_int64', 'convert_float32_to_int64',
        'convert_int64_to_float32', 'div_int64', 'eq_int64', 'floor_divide_int64', 'ge_int64',
        'integer_pow_int64', 'lt_int64', 'max_int64', 'min_int64', 'mul_int64', 'neg_int64',
        'rem_int64', 'sign_int64', 'sub_int64', 'table_abs_int64', 'table_add_any_int64',
        'table_add_int64', 'table_clamp_int64', 'table_copy_int64', 'table_div_int64',
        'table_eq_int64', 'table_ge_int64', 'table_gt_int64', 'table_ipow2_int64',
        'table_ipow3_int64', 'table_ipow5_int64', 'table_le_int64', 'table_lt_int64',
        'table_max_int64', 'table_min_int64', 'table_mul_int64', 'table_ne_int64',
        'table_neg_int64', 'table_rem_int64', 'table_select_n_int64', 'table_sign_int64',
        'table_square_int64', 'table_stop_gradient_int64', 'table_sub_int64'
    ],
    ('signature', 'dtype int8'): [
        'copy', 'table_copy_int8'
    ],
    ('signature', 'dtype uint16'): [
        'table_copy_uint16'
    ],
    ('signature', 'dtype uint64'): [
        'table_copy_uint64'
    ],
    ('signature', 'dtype uint8'): [
        'table_copy_uint8'
    ],
    ('sin', 'Sin'): [
        'sin_complex64', 'table_sin_complex64'
    ],
    ('sin', 'dtype bfloat16'): [
        'sin_bfloat16'
    ],
    ('sin', 'dtype complex128'): [
        'sin_complex128', 'table_sin_complex128'
    ],
    ('sin', 'dtype float16'): [
        'sin_float16', 'table_sin_float16'
    ],
    ('sin', 'dtype float64'): [
        'sin_float64', 'table_sin_float64'
    ],
    ('sinh', 'Sinh'): [
        'table_sinh_complex64'
    ],
    ('sinh', 'dtype bfloat16'): [
        'sinh_bfloat16'
    ],
    ('sinh', 'dtype complex128'): [
        'table_sinh_complex128'
    ],
    ('sinh', 'dtype float16'): [
        'sinh_float16', 'table_sinh_float16'
    ],
    ('sinh', 'dtype float64'): [
        'sinh_float64', 'table_sinh_float64'
    ],
    ('sort', 'Bitcast'): [
        'reciprocals_of_a_transpose'
    ],
    ('sqrt', 'Sqrt'): [
        'sqrt_complex64', 'table_sqrt_complex64'
    ],
    ('sqrt', 'dtype bfloat16'): [
        'sqrt_bfloat16'
    ],
    ('sqrt', 'dtype complex128'): [
        'sqrt_complex128', 'table_sqrt_complex128'
    ],
    ('sqrt', 'dtype float16'): [
        'sqrt_float16', 'table_sqrt_float16'
    ],
    ('sqrt', 'dtype float64'): [
        'sqrt_float64', 'table_sqrt_float64'
    ],
    ('square', 'Square'): [
        'table_square_complex64'
    ],
    ('square', 'dtype bfloat16'): [
        'square_bfloat16'
    ],
    ('square', 'dtype complex128'): [
        'table_square_complex128'
    ],
    ('square', 'dtype float16'): [
        'square_float16', 'table_square_float16'
    ],
    ('square', 'dtype float64'): [
        'square_float64', 'table_square_float64'
    ],
    ('square', 'dtype int16'): [
        'table_square_int16'
    ],
    ('square', 'dtype int8'): [
        'table_square_int8'
    ],
    ('square', 'dtype uint16'): [
        'table_square_uint16'
    ],
    ('square', 'dtype uint64'): [
        'table_square_uint64'
    ],
    ('square', 'dtype uint8'): [
        'table_square_uint8'
    ],
    ('stop_gradient', 'dtype complex128'): [
        'table_stop_gradient_complex128'
    ],
    ('stop_gradient', 'dtype float16'): [
        'table_stop_gradient_float16'
    ],
    ('stop_gradient', 'dtype float64'): [
        'table_stop_gradient_float64'
    ],
    ('stop_gradient', 'dtype int16'): [
        'table_stop_gradient_int16'
    ],
    ('stop_gradient', 'dtype int8'): [
        'table_stop_gradient_int8'
    ],
    ('stop_gradient', 'dtype uint16'): [
        'table_stop_gradient_uint16'
    ],
    ('stop_gradient', 'dtype uint64'): [
        'table_stop_gradient_uint64'
    ],
    ('stop_gradient', 'dtype uint8'): [
        'table_stop_gradient_uint8'
    ],
    ('sub', 'dtype bfloat16'): [
        'sub_bfloat16'
    ],
    ('sub', 'dtype complex128'): [
        'table_sub_complex128'
    ],
    ('sub', 'dtype float16'): [
        'sub_float16', 'table_sub_float16'
    ],
    ('sub', 'dtype float64'): [
        'sub_float64', 'table_sub_float64'
    ],
    ('sub', 'dtype int16'): [
        'square_of_difference_int16', 'sub_int16', 'table_sub_int16'
    ],
    ('sub', 'dtype int8'): [
        'square_of_difference_int8', 'sub_int8', 'table_sub_int8'
    ],
    ('sub', 'dtype uint16'): [
        'square_of_difference_uint16', 'sub_uint16', 'table_sub_uint16'
    ],
    ('sub', 'dtype uint64'): [
        'square_of_difference_uint64', 'sub_uint64', 'table_sub_uint64'
    ],
    ('sub', 'dtype uint8'): [
        'square_of_difference_uint8', 'sub_uint8', 'table_sub_uint8'
    ],
    ('tan', 'Tan'): [
        'table_tan_complex64'
    ],
    ('tan', 'dtype bfloat16'): [
        'tan_bfloat16'
    ],
    ('tan', 'dtype complex128'): [
        'table_tan_complex128'
    ],
    ('tan', 'dtype float16'): [
        'table_tan_float16', 'tan_float16'
    ],
    ('tan', 'dtype float64'): [
        'table_tan_float64', 'tan_float64'
    ],
    ('tanh', 'Tanh'): [
        'table_tanh_complex64', 'tanh_complex64'
    ],
    ('tanh', 'dtype bfloat16'): [
        'tanh_bfloat16'
    ],
    ('tanh', 'dtype complex128'): [
        'table_tanh_complex128', 'tanh_complex128'
    ],
    ('tanh', 'dtype float16'): [
        'table_tanh_float16', 'tanh_float16'
    ],
    ('tanh', 'dtype float64'): [
        'table_tanh_float64', 'tanh_float64'
    ],
    ('xor', 'BitwiseXor'): [
        'graph_xor_i8', 'table_xor_int16', 'table_xor_int64', 'table_xor_int8',
        'table_xor_uint16', 'table_xor_uint64', 'table_xor_uint8', 'xor_int16', 'xor_int64',
        'xor_int8', 'xor_uint16', 'xor_uint64', 'xor_uint8'
    ],
}
_TFJS_GAPS = {  # (why, error): cases
    ("TF.js's kernels differ from XLA's: NaN positions differ",
     'NaN\\ positions\\ differ'): [
        'pow_edges'
    ],
    ("TF.js's kernels differ from XLA's: signs of zero differ",
     'signs\\ of\\ zero\\ differ'): [
        'round_even_edges'
    ],
    ("TF.js's kernels differ from XLA's: values differ",
     'values\\ differ'): [
        'exp2_f32', 'subnormal_results'
    ],
}
CASES[:] = in_column(CASES, "tfjs", no_kernel=_TFJS_NO_KERNEL, gaps=_TFJS_GAPS)
