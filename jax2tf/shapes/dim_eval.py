"""Evaluating symbolic dimension expressions with a pluggable arithmetic.

The graph lowering evaluates dimensions as TF scalars; this module knows the
structure of JAX's dimension expressions and nothing about TensorFlow: the
caller passes the arithmetic (a `DimArithmetic`) and the values of the
dimension variables.
"""

from collections.abc import Mapping
from typing import Any, Protocol

from jax import export as jax_export


class DimArithmetic(Protocol):
  def constant(self, c: int) -> Any: ...
  def add(self, a, b) -> Any: ...
  def mul(self, a, b) -> Any: ...
  def floordiv(self, a, b) -> Any: ...
  def mod(self, a, b) -> Any: ...
  def max(self, a, b) -> Any: ...
  def min(self, a, b) -> Any: ...


class IntArithmetic:
  """Plain Python ints: for dims whose variables all have known values."""

  constant = staticmethod(int)
  add = staticmethod(lambda a, b: a + b)
  mul = staticmethod(lambda a, b: a * b)
  floordiv = staticmethod(lambda a, b: a // b)
  mod = staticmethod(lambda a, b: a % b)
  max = staticmethod(max)
  min = staticmethod(min)


def is_constant(d) -> bool:
  return not jax_export.is_symbolic_dim(d)


def is_zero(d) -> bool:
  """Whether a dimension is statically 0 (an array with it has no elements)."""
  return is_constant(d) and int(d) == 0


def same_dims(a, b) -> bool:
  """Whether two shapes are known to be equal (False when undecidable)."""
  if len(a) != len(b):
    return False
  for x, y in zip(a, b):
    if is_constant(x) != is_constant(y):
      return False
    try:
      if not (x == y):
        return False
    except Exception:  # symbolic comparisons JAX cannot decide
      return False
  return True


def evaluate(d, env: Mapping[str, Any], arith: DimArithmetic):
  """The value of dimension `d` given values for its variables in `env`."""
  if is_constant(d):
    return arith.constant(int(d))
  total = None
  # A dimension expression is a sum of (term * coefficient); a term is a
  # product of factors raised to powers; a factor is a variable or an
  # operation (floordiv, mod, max, min) on two expressions.
  for term, coeff in d._sorted_terms:
    value = None
    for factor, power in term._factors:
      f = _factor(factor, env, arith)
      for _ in range(power):
        value = f if value is None else arith.mul(value, f)
    if value is None:
      value = arith.constant(coeff)
    elif coeff != 1:
      value = arith.mul(value, arith.constant(coeff))
    total = value if total is None else arith.add(total, value)
  return arith.constant(0) if total is None else total


def variables(d) -> set[str]:
  """The names of the dimension variables that `d` reads."""
  if is_constant(d):
    return set()
  names: set[str] = set()
  for term, _ in d._sorted_terms:
    for factor, _ in term._factors:
      if factor.var is not None:
        names.add(factor.var)
      else:
        for o in factor.operands:
          names |= variables(o)
  return names


def _factor(factor, env, arith):
  if factor.var is not None:
    if factor.var not in env:
      raise ValueError(
        f"dimension variable {factor.var!r} has no value; known variables: {sorted(env)}"
      )
    return env[factor.var]
  a, b = (evaluate(o, env, arith) for o in factor.operands)
  op = {"floordiv": arith.floordiv, "mod": arith.mod, "max": arith.max, "min": arith.min}[
    factor.operation
  ]
  return op(a, b)
