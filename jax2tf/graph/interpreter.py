"""Walks a closed jaxpr and emits TF ops through the registered rules.

Nothing here knows about any particular primitive: every equation goes to its
rule (jax2tf/graph/rules/), which receives a RuleContext.
"""

from collections.abc import Sequence

import jax
import numpy as np
import tensorflow as tf

from jax2tf.graph import registry
from jax2tf.graph.context import LoweringEnv, RuleContext


def constant(value, aval=None) -> tf.Tensor:
  arr = np.asarray(value)
  if arr.dtype == jax.dtypes.float0:
    # float0 (the tangent type of integers) carries no data; TF has no such
    # dtype, and the values are only ever passed along.
    return tf.zeros(arr.shape, tf.bool)
  if aval is not None and arr.dtype != np.dtype(aval.dtype):
    arr = arr.astype(aval.dtype)
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

  def read(v):
    if _is_literal(v):
      return constant(v.val, v.aval)
    return values[v]

  for v, c in zip(jaxpr.constvars, consts):
    values[v] = c if isinstance(c, tf.Tensor) else constant(c, v.aval)
  if len(args) != len(jaxpr.invars):
    raise ValueError(f"jaxpr expects {len(jaxpr.invars)} arguments, got {len(args)}")
  for v, a in zip(jaxpr.invars, args):
    values[v] = a
  for eqn in jaxpr.eqns:
    rule = registry.rule_for(eqn.primitive)
    if rule is None:
      raise registry.missing_rule_error(eqn.primitive, eqn.params)
    ctx = RuleContext(
      eqn.primitive, [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars], env
    )
    if not env.enable_xla and not _allows_no_xla(rule, ctx, eqn.params):
      raise registry.no_xla_error(eqn.primitive, eqn.params)
    with tf.name_scope(str(eqn.primitive)):
      outs = rule.fn(ctx, *[read(v) for v in eqn.invars], **eqn.params)
    if not eqn.primitive.multiple_results:
      outs = [outs]
    for v, o in zip(eqn.outvars, outs):
      if type(v).__name__ != "DropVar":
        values[v] = o
  return [read(v) for v in jaxpr.outvars]


def _allows_no_xla(rule: registry.Rule, ctx: RuleContext, params) -> bool:
  return rule.no_xla(ctx, **params) if callable(rule.no_xla) else bool(rule.no_xla)


def make_env(enable_xla: bool, dim_values: dict) -> LoweringEnv:
  def lower_sub(closed_jaxpr, args) -> list:
    return lower_jaxpr(env, closed_jaxpr, args)

  env = LoweringEnv(enable_xla, dim_values, lower_sub)
  return env


def trace(fun_jit, args_avals, kwargs_avals):
  """The closed jaxpr of `fun_jit` for (symbolic) avals, with its pytrees."""
  traced = fun_jit.trace(*args_avals, **kwargs_avals)
  closed = traced.jaxpr
  in_tree = jax.tree_util.tree_structure((args_avals, kwargs_avals))
  return closed, in_tree, traced.out_tree if hasattr(traced, "out_tree") else None
