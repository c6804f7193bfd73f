"""Elementary functions from ops every target has, written once.

Without XLA, a graph feeds the TFLite and TF.js converters. Neither has
Atan, Asin or Cosh kernels, and TFLite has no Tan, Acos, Sinh, Asinh,
Acosh, Atanh, Expm1 or Log1p either (litert-converter writes StableHLO's
`exponential_minus_one` as EXP(x) - 1 and `log_plus_one` as LOG(1 + x),
+0.0 for -0.0 and 5% off at 1e-6). Where a target's kernel list says it
lacks one (`Target.lacks_kernel`), the graph route's rule
(jax2tf/graph/rules/elementwise.py) and the native module's form
(jax2tf/native/kernel_forms.py) compute it with these formulas, each IR
through an adapter, `MathOps`, over its own values: exact at zeros (of
either sign), infinities and NaN, within a few units in the last place
elsewhere (LiteRT's own Exp is further off for large arguments). LiteRT's
Log is accurate only to about 1.2e-7 absolute near 1, so where a result is
small an odd Taylor series takes over (each truncated below 1e-9 relative
at its threshold), and the results taken never come from Log or Sqrt of
values beyond 2**126 (LiteRT's Sqrt is off there, its Log overflows from
about 2.6e38), nor from Log of inf or NaN (on x86 CPUs without AVX-512 its
vectorized Log gives about 88.7 for both). No TensorFlow or JAX here.
"""

import math
from typing import Any, Protocol

import numpy as np


class MathOps(Protocol):
  """Float operations of one IR, on float32 values (16-bit floats are
  computed in float32 by the caller). A Python float `c` is a constant of
  the other operands' shape and type."""

  def constant(self, c: float, like: Any) -> Any: ...

  def abs(self, x: Any) -> Any: ...

  def add(self, x: Any, y: Any) -> Any: ...

  def sub(self, x: Any, y: Any) -> Any: ...

  def mul(self, x: Any, y: Any) -> Any: ...

  def div(self, x: Any, y: Any) -> Any: ...

  def negate(self, x: Any) -> Any: ...

  def exp(self, x: Any) -> Any: ...

  def log(self, x: Any) -> Any: ...

  def sqrt(self, x: Any) -> Any: ...

  def sin(self, x: Any) -> Any: ...

  def cos(self, x: Any) -> Any: ...

  def atan2(self, y: Any, x: Any) -> Any: ...

  def round_half_even(self, x: Any) -> Any: ...

  def floor(self, x: Any) -> Any: ...

  def less(self, x: Any, c: float) -> Any: ...

  def equal(self, x: Any, y: Any) -> Any: ...

  def not_equal(self, x: Any, y: Any) -> Any: ...

  def select(self, pred: Any, a: Any, b: Any) -> Any: ...


def polynomial(ops: MathOps, coefficients, x):
  """The polynomial with `coefficients` (highest degree first) at `x`, by Horner's scheme."""
  p = ops.constant(coefficients[0], x)
  for c in coefficients[1:]:
    p = ops.add(ops.mul(p, x), c)
  return p


def _odd_series(ops, coefficients, x):
  """x * p(x^2), p's coefficients lowest degree first (x's sign of zero kept)."""
  return ops.mul(x, polynomial(ops, coefficients[::-1], ops.mul(x, x)))


def _ones(ops, x):
  return ops.constant(1.0, x)


def atan(ops: MathOps, x):
  return ops.atan2(x, _ones(ops, x))


def asin(ops: MathOps, x):
  one = _ones(ops, x)
  return ops.atan2(x, ops.sqrt(ops.mul(ops.sub(one, x), ops.add(one, x))))


def acos(ops: MathOps, x):
  one = _ones(ops, x)
  return ops.atan2(ops.sqrt(ops.mul(ops.sub(one, x), ops.add(one, x))), x)


# pi/2 in three parts, the first two with trailing zero bits, so that k times
# each is exact for |k| < 2**12 (Cody and Waite's reduction).
_HALF_PI_PARTS = (
  1.5703125,
  4.837512969970703125e-4,
  np.pi / 2 - 1.5703125 - 4.837512969970703125e-4,
)


def tan(ops: MathOps, x):
  # sin(x) / cos(x) loses LiteRT's Cos's absolute accuracy near its zeros;
  # reduced to r in [-pi/4, pi/4], tan(x) is tan(r) or -1 / tan(r), within
  # a few units in the last place up to |x| of about 8192.
  k = ops.round_half_even(ops.mul(x, 2 / np.pi))
  r = x
  for part in _HALF_PI_PARTS:
    r = ops.sub(r, ops.mul(k, part))
  sin, cos = ops.sin(r), ops.cos(r)
  odd = ops.not_equal(ops.mul(ops.floor(ops.mul(k, 0.5)), 2.0), k)
  reduced = ops.select(odd, ops.div(ops.negate(cos), sin), ops.div(sin, cos))
  # r is +0.0 for x = -0.0 (-0.0 - -0.0 is +0.0): zeros are their own tangent.
  return ops.select(ops.equal(x, ops.constant(0.0, x)), x, reduced)


def exp_halved(ops: MathOps, x):
  # e^x / 2 as (e^(x/2) / 2) e^(x/2): it overflows where cosh and sinh do
  # (LiteRT's Exp overflows from 88.38, short of float32's 88.72), and no
  # rounded argument shifts it (e^(x - log 2) is 60 units off near 88).
  root = ops.exp(ops.mul(x, 0.5))
  return ops.mul(ops.mul(root, 0.5), root)


def cosh(ops: MathOps, x):
  a = ops.abs(x)
  return ops.add(exp_halved(ops, a), exp_halved(ops, ops.negate(a)))


# 1 / (2n+1)!, n = 0..6: the series' error below 1e-12 at |x| = 1.
_SINH_TAYLOR = tuple(1 / math.factorial(2 * n + 1) for n in range(7))


def sinh(ops: MathOps, x):
  large = ops.sub(exp_halved(ops, x), exp_halved(ops, ops.negate(x)))
  return ops.select(ops.less(ops.abs(x), 1.0), _odd_series(ops, _SINH_TAYLOR, x), large)


# (-1)^n (2n)! / (4^n (n!)^2 (2n+1)), n = 0..10: below 2e-9 at |x| = 0.5.
_ASINH_TAYLOR = tuple(
  (-1) ** n * math.factorial(2 * n) / (4**n * math.factorial(n) ** 2 * (2 * n + 1))
  for n in range(11)
)
_LOG_8 = float(np.log(8.0))
# Beyond it x^2 + 1 rounds to x^2 in float32, and x^2 stays far below overflow.
_HUGE = 2.0**32


def _kernel_log(ops, x):
  # The target's Log, but inf and NaN give themselves: LiteRT's vectorized
  # LOG on x86 CPUs without AVX-512 gives about 88.7 (the log of the largest
  # float) for both, where JAX gives inf and NaN.
  return ops.select(ops.less(x, math.inf), ops.log(x), x)


def _log_of_twice(ops, a):
  # log(2a) as log(a / 4) + log 8: a / 4 stays below the magnitude where
  # LiteRT's Log overflows.
  return ops.add(_kernel_log(ops, ops.mul(a, 0.25)), _LOG_8)


def asinh(ops: MathOps, x):
  a = ops.abs(x)
  middle = _kernel_log(ops, ops.add(a, ops.sqrt(ops.add(ops.mul(a, a), 1.0))))
  magnitude = ops.select(ops.less(a, _HUGE), middle, _log_of_twice(ops, a))
  small = _odd_series(ops, _ASINH_TAYLOR, x)
  signed = ops.select(ops.less(x, 0.0), ops.negate(magnitude), magnitude)
  return ops.select(ops.less(a, 0.5), small, signed)


# acosh(1 + t) / sqrt(2t) = sum (-1)^n (2n)! t^n / (8^n (n!)^2 (2n+1)), n = 0..8:
# below 1e-9 at t = 0.25.
_ACOSH_NEAR_1 = tuple(
  (-1) ** n * math.factorial(2 * n) / (8**n * math.factorial(n) ** 2 * (2 * n + 1))
  for n in range(9)
)


def acosh(ops: MathOps, x):
  t = ops.sub(x, 1.0)
  near_1 = ops.mul(ops.sqrt(ops.mul(t, 2.0)), polynomial(ops, _ACOSH_NEAR_1[::-1], t))
  middle = _kernel_log(ops, ops.add(x, ops.sqrt(ops.mul(t, ops.add(x, 1.0)))))
  # x < 1 and -inf give NaN through near_1's square root, NaN through the last branch.
  far = ops.select(ops.less(x, _HUGE), middle, _log_of_twice(ops, x))
  return ops.select(ops.less(x, 1.25), near_1, far)


# 1 / (2n+1), n = 0..6: below 5e-9 at |x| = 0.25.
_ATANH_TAYLOR = tuple(1 / (2 * n + 1) for n in range(7))


def atanh(ops: MathOps, x):
  one = _ones(ops, x)
  # (1 + x) / (1 - x) is negative beyond +-1 (NaN through Log), 0 at -1, inf at 1.
  large = ops.mul(_kernel_log(ops, ops.div(ops.add(one, x), ops.sub(one, x))), 0.5)
  return ops.select(ops.less(ops.abs(x), 0.25), _odd_series(ops, _ATANH_TAYLOR, x), large)


# 1 / (n+1)!, n = 0..10: the series' error below 1e-12 at |x| = 0.5.
_EXPM1_TAYLOR = tuple(1 / math.factorial(n + 1) for n in range(11))


def expm1(ops: MathOps, x):
  # LiteRT's EXPM1 is exp(x) - 1: +0.0 for -0.0, and 5% off at 1e-6.
  small = ops.mul(x, polynomial(ops, _EXPM1_TAYLOR[::-1], x))
  large = ops.sub(ops.mul(exp_halved(ops, x), 2.0), 1.0)
  return ops.select(ops.less(ops.abs(x), 0.5), small, large)


_LOG_OF_2_TO_THE_64 = float(64 * np.log(2.0))


def log(ops: MathOps, x):
  # LiteRT's Log is accurate only to about 1.2e-7 absolute near 1, where
  # x - 1 is exact and log1p's series takes over; and it overflows to inf
  # from about 2**127.6, so huge arguments are scaled down by 2**64 first.
  scaled = ops.add(_kernel_log(ops, ops.mul(x, 2.0**-64)), _LOG_OF_2_TO_THE_64)
  far = ops.select(ops.less(x, 2.0**100), ops.log(x), scaled)
  t = ops.sub(x, 1.0)
  return ops.select(ops.less(ops.abs(t), 0.4), _log1p_series(ops, t), far)


def _log1p_series(ops, t):
  # log1p(t) is 2 atanh(t / (2 + t)), within the series' 0.25 for |t| < 0.4.
  return ops.mul(_odd_series(ops, _ATANH_TAYLOR, ops.div(t, ops.add(t, 2.0))), 2.0)


def log1p(ops: MathOps, x):
  # The converter writes Log1p as LOG(1 + x): +0.0 for -0.0, 5% off at 1e-6.
  return ops.select(ops.less(ops.abs(x), 0.4), _log1p_series(ops, x), log(ops, ops.add(x, 1.0)))
