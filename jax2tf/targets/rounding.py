"""Rounding half away from zero from floor and ceil, written once.

TF has no op for it (its Round rounds half to even) and LiteRT's standalone
converter cannot legalize StableHLO's `round_nearest_afz`, so the graph
route's rule (jax2tf/graph/rules/elementwise.py) and the litert route's
module (jax2tf/native/kernel_forms.py) both compute it from ops every
target has, each IR through an adapter, `FloatOps`, over its own values.
No TensorFlow or JAX here.
"""

from typing import Any, Protocol


class FloatOps(Protocol):
  """Float operations of one IR. A Python float `c` is a constant of the
  other operands' shape and type."""

  def floor(self, x: Any) -> Any: ...

  def ceil(self, x: Any) -> Any: ...

  def abs(self, x: Any) -> Any: ...

  def add(self, x: Any, y: Any) -> Any: ...

  def sub(self, x: Any, y: Any) -> Any: ...

  def less(self, x: Any, c: float) -> Any: ...

  def greater_equal(self, x: Any, c: float) -> Any: ...

  def select(self, pred: Any, a: Any, b: Any) -> Any: ...


def round_half_away_from_zero(ops: FloatOps, x):
  """x rounded to the nearest integer, halves away from zero, as XLA's
  `round_nearest_afz`: -0.0 and the signs of zeros kept (round(-0.3) is
  -0.0), infinities and NaN as they are. floor(|x| + 0.5) would be wrong
  where the addition rounds (0.49999997 + 0.5 == 1.0 in float32); the
  fractional part x - trunc(x) is exact."""
  negative = ops.less(x, 0.0)
  trunc = ops.select(negative, ops.ceil(x), ops.floor(x))
  fraction = ops.abs(ops.sub(x, trunc))
  step = ops.select(negative, -1.0, 1.0)
  return ops.select(ops.greater_equal(fraction, 0.5), ops.add(trunc, step), trunc)
