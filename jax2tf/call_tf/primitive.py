"""The `call_tf` JAX primitive: abstract evaluation, effects and eager execution.

Parameters of an equation:
  fn: the `TfFunction` to call (hashable by identity, cached per call site);
  has_side_effects: keeps the call even when its results are unused;
  ordered: orders the call with other ordered effects (tokens);
  call_tf_graph: under jax2tf.convert, call the TF function as a TF graph
    function from the converted function (native: instead of inlining its XLA
    code; graph: instead of tracing its ops in place).
Transformation rules live in autodiff.py, batching.py and lowering.py.
"""

from typing import Any

import jax
from jax.extend import core as jax_core
from jax.interpreters import mlir

from jax2tf.call_tf import eager
from jax2tf.call_tf.functions import TfFunction
from jax2tf.internals import jax_private


class CallTfEffect(jax_core.Effect):
  __str__ = lambda self: "CallTfEffect"


class CallTfOrderedEffect(jax_core.Effect):
  __str__ = lambda self: "CallTfOrderedEffect"


call_tf_effect = CallTfEffect()
call_tf_ordered_effect = CallTfOrderedEffect()

_EFFECT_SETS: list[Any] = [
  mlir.lowerable_effects,
  jax_private.control_flow_allowed_effects,
  jax_private.remat_allowed_effects,
  jax_private.custom_derivatives_allowed_effects,
]
for _effect_type in (CallTfEffect, CallTfOrderedEffect):
  for _effects in _EFFECT_SETS:
    _effects.add_type(_effect_type)
_ordered_effects: Any = jax_private.ordered_effects
_ordered_effects.add_type(CallTfOrderedEffect)

CALL_TF_EFFECT_TYPES = (CallTfEffect, CallTfOrderedEffect)

call_tf_p = jax_core.Primitive("call_tf")
call_tf_p.multiple_results = True


def effects_of(has_side_effects: bool, ordered: bool) -> set:
  if ordered:
    return {call_tf_ordered_effect}
  return {call_tf_effect} if has_side_effects else set()


def bind(
  args, fn: TfFunction, *, has_side_effects=False, ordered=False, call_tf_graph=False
) -> list:
  return call_tf_p.bind(
    *args,
    fn=fn,
    has_side_effects=bool(has_side_effects),
    ordered=bool(ordered),
    call_tf_graph=bool(call_tf_graph),
  )


def _abstract_eval(*in_avals, fn: TfFunction, has_side_effects, ordered, call_tf_graph):
  del call_tf_graph
  return list(fn.out_avals(in_avals)), effects_of(has_side_effects, ordered)


call_tf_p.def_effectful_abstract_eval(_abstract_eval)


def _impl(*args, fn: TfFunction, has_side_effects, ordered, call_tf_graph):
  del has_side_effects, call_tf_graph
  if ordered:
    # JAX dispatches asynchronously: an ordered effect bound just before (an
    # io_callback, a jitted function with ordered effects) may not have run
    # yet, while the TF function runs now, synchronously.
    jax.effects_barrier()
  return eager.call(fn.call_in_place, args)


call_tf_p.def_impl(_impl)
