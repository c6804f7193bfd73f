"""The rule registry: JAX primitive -> the function that emits its TF ops.

A rule is `rule(ctx, *operands, **params)` returning a TF value (or a list for
primitives with several results). `no_xla` says whether the rule can run with
`enable_xla=False`, i.e. without the Xla* TF ops: True (always), False (never)
or a predicate on (ctx, params) for rules that need XLA only for some params.
`int32_lanes` says that, for TF.js, the rule takes and returns uint32 values
as int32 tensors of the same bits; other rules see real uint32 tensors there,
which TF.js refuses at conversion, naming the primitive.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

from jax.extend import core as jax_core

from jax2tf.graph import unsupported


@dataclasses.dataclass(frozen=True)
class Rule:
  fn: Callable
  no_xla: Any = True  # bool, or callable(ctx, **params) -> bool
  module: str = ""
  int32_lanes: bool = False
  # For TFLite: whether the rule may get float16 and bfloat16 values as
  # float32 (graph/float_lanes.py); False for rules that must see the dtype
  # itself (a value's bits, dtypes JAX refuses).
  float32_lanes: bool = True
  # For TFLite: whether the rule may get 8- and 16-bit integers as int32
  # (graph/int_lanes.py), or a predicate of the equation saying so.
  narrow_int_lanes: Any = True
  # For TFLite: whether the rule may get uint32 values as int32 keys of the
  # same order (graph/ordered_lanes.py), or a predicate of the equation.
  ordered_lanes: Any = False


_RULES: dict[Any, Rule] = {}


def register(
  *primitives,
  no_xla=True,
  int32_lanes=False,
  float32_lanes=True,
  narrow_int_lanes=True,
  ordered_lanes=False,
):
  """Decorator registering `fn` as the rule of `primitives`."""

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
      _RULES[p] = Rule(
        fn, no_xla, fn.__module__, int32_lanes, float32_lanes, narrow_int_lanes, ordered_lanes
      )
    return fn

  return wrap


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
