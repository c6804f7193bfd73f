"""Walks a closed jaxpr and emits TF ops through the registered rules.

Nothing here knows about any particular primitive: every equation goes to its
rule (jax2tf/graph/rules/), which receives a RuleContext.

The target (jax2tf/targets/) names the type legalizations applied here, around
every rule that accepts them; no rule applies one itself.

Where uint32 is carried as int32 bits (TF.js, which holds no unsigned
tensors), every uint32 value travels as int32 tensors of the same bits
(jax2tf/graph/bit_lanes.py); the rules that do not take them get real
uint32 tensors.

Where the target computes in float32 and int32 (TFLite), primitives on
float16 and bfloat16 compute in float32 lanes and round each result back
(jax2tf/graph/float_lanes.py), primitives on 8- and 16-bit integers in
int32 lanes, cast back (jax2tf/graph/int_lanes.py), and those that only
order or move uint32 values on int32 keys of the same order
(jax2tf/graph/ordered_lanes.py).
"""

import dataclasses
from collections.abc import Sequence

import jax
import numpy as np
import tensorflow as tf

from jax2tf.graph import (
  bit_lanes,
  float_lanes,
  fusions,
  implicit_broadcasts,
  int_lanes,
  ordered_lanes,
  registry,
)
from jax2tf.graph.context import LoweringEnv, RuleContext
from jax2tf.targets import Target

# The legalizations that compute a rule in wider lanes, by the name a
# target gives them, in the order they apply.
_WIDENING = (
  ("float16_in_float32", float_lanes),
  ("narrow_ints_in_int32", int_lanes),
  ("uint32_as_order_keys", ordered_lanes),
)


def constant(value, aval=None, int32_lanes: bool = False) -> tf.Tensor:
  arr = np.asarray(value)
  if arr.dtype == jax.dtypes.float0:
    # float0 (the tangent type of integers) carries no data; TF has no such
    # dtype, and the values are only ever passed along.
    return tf.zeros(arr.shape, tf.bool)
  if aval is not None and arr.dtype != np.dtype(aval.dtype):
    arr = arr.astype(aval.dtype)
  if int32_lanes:
    arr = bit_lanes.LANES.constant(arr)
  return tf.constant(arr)


def _is_literal(v) -> bool:
  return hasattr(v, "val") and not hasattr(v, "count")


def lower_jaxpr(env: LoweringEnv, closed_jaxpr, args: Sequence[tf.Tensor]) -> list:
  # Sub-computations come as ClosedJaxpr or, in newer JAX, as open Jaxpr.
  if hasattr(closed_jaxpr, "consts"):
    jaxpr, consts = closed_jaxpr.jaxpr, closed_jaxpr.consts
  else:
    jaxpr, consts = closed_jaxpr, ()
  values: dict = {}
  lanes = env.target.uint32_as_int32_bits
  widening = [m for name, m in _WIDENING if env.target.legalizes(name)]

  def read(v):
    if _is_literal(v):
      return constant(v.val, v.aval, lanes)
    return values[v]

  for v, c in zip(jaxpr.constvars, consts):
    values[v] = c if isinstance(c, tf.Tensor) else constant(c, v.aval, lanes)
  if len(args) != len(jaxpr.invars):
    raise ValueError(f"jaxpr expects {len(jaxpr.invars)} arguments, got {len(args)}")
  for v, a in zip(jaxpr.invars, args):
    values[v] = a
  groups = fusions.plan(jaxpr, env.hide_from_grappler)
  skipped = {i for i, f in groups.items() for i in f.members}
  dead = _dead_equations(jaxpr)
  by_users = implicit_broadcasts.plan(jaxpr, skipped)
  for i, eqn in enumerate(jaxpr.eqns):
    if i in dead:
      continue
    if i in groups:
      fused = groups[i]
      with tf.name_scope(fused.name):
        values[eqn.outvars[0]] = fused.lower(*[read(v) for v in fused.inputs])
      continue
    if i in skipped:  # the rest of a fused group, used only inside it
      continue
    rule = registry.rule_for(eqn.primitive)
    if rule is None:
      raise registry.missing_rule_error(eqn.primitive, eqn.params)
    convert_lanes = lanes and bit_lanes.takes_real_uint32(eqn, rule)
    rule_fn = rule.fn
    if lanes and not convert_lanes:
      rule_fn = registry.rule_in_lanes(eqn, "uint32_as_int32_bits") or rule_fn
    lanes_of = [m for m in widening if m.widens(eqn, rule)]
    avals_in, avals_out = [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars]
    params = eqn.params
    for m in lanes_of:
      avals_in = [m.widened_aval(a) for a in avals_in]
      avals_out = [m.widened_aval(a) for a in avals_out]
      params = m.widened_params(params)
    rule_env = env
    if convert_lanes:
      rule_env = bit_lanes.env_taking_real_uint32(env)
    elif lanes_of:
      rule_env = _env_in_wide_lanes(env, lanes_of)
    ctx = RuleContext(
      eqn.primitive, avals_in, avals_out, rule_env, broadcast_by_users=i in by_users
    )
    if not env.target.xla_ops and not _allows_no_xla(rule, ctx, params):
      raise registry.no_xla_error(eqn.primitive, params)
    with tf.name_scope(str(eqn.primitive)):
      operands = [read(v) for v in eqn.invars]
      if convert_lanes:
        operands = [bit_lanes.LANES.narrow(x, v.aval) for x, v in zip(operands, eqn.invars)]
      for m in lanes_of:
        operands = [m.widen(x) for x in operands]
      outs = rule_fn(ctx, *operands, **params)
      if not eqn.primitive.multiple_results:
        outs = [outs]
      if convert_lanes:
        outs = [bit_lanes.LANES.widen(o) for o in outs]
      for m in lanes_of:
        outs = [m.narrow(o, v.aval) for o, v in zip(outs, eqn.outvars)]
    for v, o in zip(eqn.outvars, outs):
      if type(v).__name__ != "DropVar":
        values[v] = o
  return [read(v) for v in jaxpr.outvars]


def _dead_equations(jaxpr) -> set[int]:
  """The equations whose results nothing reads, and which have no effect:
  JAX traces some (Flax's RNN splits a PRNG key for a zeros initializer), and
  their ops would only weigh on the graph and on what converters read."""
  live = {v for v in jaxpr.outvars if not _is_literal(v)}
  dead = set()
  for i in reversed(range(len(jaxpr.eqns))):
    eqn = jaxpr.eqns[i]
    if eqn.effects or any(v in live for v in eqn.outvars):
      live.update(v for v in eqn.invars if not _is_literal(v))
    else:
      dead.add(i)
  return dead


def _env_in_wide_lanes(env: LoweringEnv, lanes_of) -> LoweringEnv:
  """`env` for a rule computing in the lanes of `lanes_of` (float_lanes,
  int_lanes): its sub-computations take their narrow operands cast back,
  and give wide results."""

  def lower_sub(closed_jaxpr, args) -> list:
    jaxpr = getattr(closed_jaxpr, "jaxpr", closed_jaxpr)
    for m in lanes_of:
      args = [m.narrow(a, v.aval) for a, v in zip(args, jaxpr.invars)]
    outs = env.lower_jaxpr(closed_jaxpr, args)
    for m in lanes_of:
      outs = [m.widen(o) for o in outs]
    return outs

  return dataclasses.replace(env, lower_jaxpr=lower_sub, in_wide_lanes=True)


def _allows_no_xla(rule: registry.Rule, ctx: RuleContext, params) -> bool:
  allowed = rule.accepts.without_xla_ops
  return allowed(ctx, **params) if callable(allowed) else bool(allowed)


def make_env(target: Target, dim_values: dict) -> LoweringEnv:
  def lower_sub(closed_jaxpr, args) -> list:
    return lower_jaxpr(env, closed_jaxpr, args)

  env = LoweringEnv(target, dim_values, lower_sub)
  return env
