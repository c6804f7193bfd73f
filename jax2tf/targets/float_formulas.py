"""Float functions a target computes from ops it has, written once.

TF has no cube root and no truncated remainder that TFLite or TF.js run,
and litert-converter writes StableHLO's `cbrt` as a power of 1/3 (NaN below
zero) and its float `remainder` from a floored modulo (wrong signs and
infinities); TF's and LiteRT's signs of -0.0 and NaN are +0.0 and 0,
where XLA's are -0.0 and NaN; TF's and LiteRT's casts of floats to integers leave NaN and
values out of range undefined, where XLA's saturate. The graph route's rules (jax2tf/graph/rules/elementwise.py)
and the native module's forms (jax2tf/native/kernel_forms.py) compute both
with these formulas, each IR through an adapter, `FormulaOps`, over its own
values. No TensorFlow or JAX here.
"""

from typing import Any, Protocol

import numpy as np


class FormulaOps(Protocol):
  """Float operations of one IR. A Python float `c` is a constant of the
  other operands' shape and type."""

  def abs(self, x: Any) -> Any: ...

  def add(self, x: Any, y: Any) -> Any: ...

  def sub(self, x: Any, y: Any) -> Any: ...

  def mul(self, x: Any, y: Any) -> Any: ...

  def div(self, x: Any, y: Any) -> Any: ...

  def reciprocal(self, x: Any) -> Any:
    """1 / x, correctly rounded (a division, not a reciprocal estimate)."""
    ...

  def sqrt(self, x: Any) -> Any: ...

  def pow(self, x: Any, c: float) -> Any: ...

  def negate(self, x: Any) -> Any:
    """-x, the signs of zeros kept."""
    ...

  def equal(self, x: Any, y: Any) -> Any: ...

  def less(self, x: Any, c: float) -> Any: ...

  def is_regular(self, x: Any) -> Any:
    """Whether `x` is finite and not zero."""
    ...

  def is_negative(self, x: Any) -> Any:
    """Whether `x` is below zero or is -0.0."""
    ...

  def remainder_of_magnitudes(self, a: Any, b: Any) -> Any:
    """fmod(a, b) for a, b >= 0 (any modulo: on magnitudes they agree)."""
    ...

  def select(self, pred: Any, a: Any, b: Any) -> Any: ...

  def greater_equal(self, x: Any, c: float) -> Any: ...

  def less_equal(self, x: Any, c: float) -> Any: ...

  def is_nan(self, x: Any) -> Any: ...

  def logical_or(self, a: Any, b: Any) -> Any: ...

  def truncate(self, x: Any) -> Any:
    """`x`, finite and in range, cast to the integer type of the result."""
    ...

  def int_select(self, pred: Any, value: int, res: Any) -> Any:
    """`value` (of the integer type of the result) where `pred`, else `res`."""
    ...

  def sign(self, x: Any) -> Any:
    """The IR's own sign (-1, 0 or 1; any zero, NaN as it comes)."""
    ...


def cbrt(ops: FormulaOps, x):
  """XLA's cube root: odd (cbrt(-8) is -2), the signs of zeros, infinities
  and NaN kept. pow with a rounded exponent 1/3 loses accuracy for large
  |log |x||; one Newton step, written so that nothing overflows, restores it."""
  a = ops.abs(x)
  y = ops.pow(a, 1.0 / 3.0)
  refined = ops.add(y, ops.div(ops.sub(ops.div(a, ops.mul(y, y)), y), 3.0))
  y = ops.select(ops.is_regular(a), refined, y)
  # Selecting on x == 0 keeps the sign of -0.0.
  return ops.select(ops.equal(x, 0.0), x, ops.select(ops.less(x, 0.0), ops.negate(y), y))


def root_power(ops: FormulaOps, x, exponent: float):
  """x ** 0.5 or x ** -0.5 as XLA gives them: from a correctly rounded
  square root, +0.0 at -0.0 (a root keeps the sign of -0.0, pow does not)
  and +inf (0.5) or 0 (-0.5) at -inf (a root's NaN). Graph optimizers and
  the TFLite converters take these exponents for Sqrt and Rsqrt, which
  differ there."""
  root = ops.abs(ops.sqrt(x))
  # At most -inf, not equal to it: TF's TFLite converter may leave an
  # infinite constant as the lowest float (jax2tf/lite/infinities.py).
  minus_inf = ops.less_equal(x, -np.inf)
  if exponent == 0.5:
    return ops.select(minus_inf, ops.negate(x), root)
  assert exponent == -0.5, exponent
  return ops.select(minus_inf, 0.0, ops.reciprocal(root))


def fmod(ops: FormulaOps, x, y):
  """XLA's float remainder, truncated: the sign of x (of -0.0 too), exact.
  On |x| and |y| a floored modulo agrees with it, and exactly."""
  r = ops.remainder_of_magnitudes(ops.abs(x), ops.abs(y))
  return ops.select(ops.is_negative(x), ops.negate(r), r)


def float_to_int(ops: FormulaOps, x, low: int, high: int):
  """XLA's conversion of float `x` to an integer type of range [low, high]:
  truncation, saturating at the bounds, NaN -> 0. high + 1 and low are 0 or
  powers of two: exact in any float type whose range holds them, +-inf
  otherwise, so the comparisons are exact."""
  with np.errstate(over="ignore"):
    above = ops.greater_equal(x, float(high) + 1.0)
    below = ops.less_equal(x, float(low))
  bad = ops.logical_or(ops.logical_or(above, below), ops.is_nan(x))
  res = ops.truncate(ops.select(bad, 0.0, x))
  return ops.int_select(above, high, ops.int_select(below, low, res))


def sign(ops: FormulaOps, x):
  """XLA's sign of a float: -1, 1, and the zeros and NaN as they are."""
  keep = ops.logical_or(ops.equal(x, 0.0), ops.is_nan(x))
  return ops.select(keep, x, ops.sign(x))
