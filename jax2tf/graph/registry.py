"""The rule registry: JAX primitive -> the function that emits its TF ops.

A rule is `rule(ctx, *operands, **params)` returning a TF value (or a list for
primitives with several results). Its registration says, in one `Accepts`,
what it takes: whether it runs on a target without XLA ops, and which of the
targets' type legalizations (jax2tf/targets/target.py, LEGALIZATIONS) the
interpreter may apply around it, each a bool or a predicate.

Where a legalization changes how a rule computes, not only the dtypes it
sees (uint32 carried as int32 bits, for TF.js), the rule's form in those
lanes is registered apart (`register_in_lanes`), and the interpreter picks
it: no rule asks whether it runs in them.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

from jax.extend import core as jax_core

from jax2tf.graph import unsupported


@dataclasses.dataclass(frozen=True)
class Accepts:
  """What a rule accepts. Each field is a bool or a predicate: of (ctx,
  **params) for `without_xla_ops`, of the equation for the legalizations."""

  # Whether it can run without the Xla* TF ops.
  without_xla_ops: Any = True
  # 16-bit floats as float32 (graph/float_lanes.py); False for rules that
  # must see the dtype itself (a value's bits, dtypes JAX refuses).
  float16_in_float32: Any = True
  # 8- and 16-bit integers as int32 (graph/int_lanes.py); False or a
  # predicate where the result depends on the width.
  narrow_ints_in_int32: Any = True
  # uint32 as int32 keys of the same order (graph/ordered_lanes.py), for
  # rules whose results depend only on order, equality and places.
  uint32_as_order_keys: Any = False
  # uint32 as int32 tensors of the same bits (TF.js): the rule computes on
  # those bits; other rules get real uint32 tensors there, which TF.js
  # refuses at conversion, naming the primitive.
  uint32_as_int32_bits: Any = False

  def allows(self, legalization: str, eqn) -> bool:
    """Whether `eqn` may compute in the lanes of `legalization`."""
    allowed = getattr(self, legalization)
    return bool(allowed(eqn) if callable(allowed) else allowed)


@dataclasses.dataclass(frozen=True)
class Rule:
  fn: Callable
  accepts: Accepts
  module: str = ""


_RULES: dict[Any, Rule] = {}
# (primitive, legalization) -> (rule, predicate of the equation or None).
_IN_LANES: dict[tuple[Any, str], tuple[Callable, Callable | None]] = {}


def register(*primitives, **accepts):
  """Decorator registering `fn` as the rule of `primitives`; keyword
  arguments are the fields of `Accepts`."""
  declared = Accepts(**accepts)

  def wrap(fn):
    for p in primitives:
      if p is None:
        continue
      old = _RULES.get(p)
      # Some JAX versions alias primitives (one object under two names), and a
      # module re-imported after a failed import registers its rules again:
      # both register the same source function, which is allowed. Two lambdas
      # of one module share a qualified name, hence the code location.
      if old is not None and _source(old.fn) != _source(fn):
        raise ValueError(
          f"primitive {p} already has a rule ({_describe(old.fn)}); refusing a second "
          f"one ({_describe(fn)})"
        )
      _RULES[p] = Rule(fn, declared, fn.__module__)
    return fn

  return wrap


def register_in_lanes(primitive, legalization: str, *, when: Callable | None = None):
  """Decorator registering `fn` as the rule of `primitive` where the target
  applies `legalization` (and `when(eqn)` holds, if given), in place of
  the rule `register` gave it, which must accept that legalization."""

  def wrap(fn):
    rule = _RULES.get(primitive)
    if rule is None or not getattr(rule.accepts, legalization):
      raise ValueError(f"{primitive}: register its rule, accepting {legalization}, first")
    _IN_LANES[(primitive, legalization)] = (fn, when)
    return fn

  return wrap


def rule_in_lanes(eqn, legalization: str) -> Callable | None:
  """The rule `register_in_lanes` gave `eqn`'s primitive for `legalization`,
  if any and it applies to `eqn`."""
  found = _IN_LANES.get((eqn.primitive, legalization))
  if found is None:
    return None
  fn, when = found
  return fn if when is None or when(eqn) else None


def first_operand_is_uint32(eqn) -> bool:
  dtype = getattr(eqn.invars[0].aval, "dtype", None)
  return dtype is not None and str(dtype) == "uint32"


def _source(fn) -> tuple:
  """Where `fn` was defined: the same for every import of one definition."""
  code = getattr(fn, "__code__", None)
  return (
    getattr(fn, "__module__", None),
    getattr(fn, "__qualname__", repr(fn)),
    getattr(code, "co_filename", None),
    getattr(code, "co_firstlineno", None),
  )


def _describe(fn) -> str:
  module, name, filename, line = _source(fn)
  return f"{module}.{name} at {filename}:{line}"


def rule_for(primitive) -> Rule | None:
  return _RULES.get(primitive)


def registered_primitives() -> dict:
  return dict(_RULES)


def missing_rule_error(primitive, params: dict) -> NotImplementedError:
  shown = {k: _short(v) for k, v in params.items()}
  family = unsupported.family_of(str(primitive))
  why = f": {family.why}" if family is not None else ""
  return NotImplementedError(
    f"Graph serialization has no rule for the JAX primitive '{primitive}' "
    f"(parameters {shown}){why}. Use native serialization (the default, "
    "native_serialization=True) for this function."
  )


def unsupported_params_error(primitive, params: dict, why: str) -> NotImplementedError:
  """For a primitive whose rule covers only some parameters or dtypes."""
  shown = {k: _short(v) for k, v in params.items()}
  return NotImplementedError(
    f"Graph serialization has no rule for the JAX primitive '{primitive}' "
    f"with parameters {shown}: {why}. Use native serialization (the default, "
    "native_serialization=True) where the target platform supports it."
  )


def no_xla_error(primitive, params: dict, why: str = "") -> NotImplementedError:
  shown = {k: _short(v) for k, v in params.items()}
  return NotImplementedError(
    f"The JAX primitive '{primitive}' with parameters {shown} needs XLA-only "
    f"TensorFlow ops{': ' + why if why else ''}; it cannot be converted with "
    "enable_xla=False. Use enable_xla=True."
  )


def _short(v) -> str:
  text = repr(v)
  if isinstance(v, (jax_core.ClosedJaxpr, jax_core.Jaxpr)) or type(v).__name__.endswith("Jaxpr"):
    return "<jaxpr>"
  return text if len(text) <= 80 else text[:77] + "..."
