"""Graph serialization of one abstract signature: trace once, emit TF ops per call.

A `jax.jit` with `in_shardings`/`out_shardings` over several devices gets its
arguments and results wrapped in XlaSharding ops, as native serialization
wraps its XlaCallModule (jax2tf/sharding.py builds both), so that TF's SPMD
partitioner reads the same shardings from either graph. The annotations are
XLA ops that exist only in graphs: they are left out for targets without XLA
ops (the graphs TFLite and TF.js read, which run on one device) and in eager
calls.
"""

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import tensorflow as tf

from jax2tf import sharding as tf_sharding
from jax2tf import tf_dims
from jax2tf.graph import (
  interpreter,
  key_data,
  rules,  # noqa: F401  (registers every rule family)
)
from jax2tf.shapes import dim_eval
from jax2tf.targets import Target


@dataclasses.dataclass(frozen=True)
class GraphModule:
  """A traced JAX function, ready to be emitted as TF ops."""

  closed_jaxpr: Any
  in_avals: tuple
  out_avals: tuple
  in_tree: Any
  out_tree: Any
  target: Target  # who runs the graph (jax2tf/targets/)
  # Serialized xla.OpSharding per argument and result (None: unspecified),
  # and the number of devices they span.
  in_shardings: tuple = ()
  out_shardings: tuple = ()
  nr_devices: int = 1


def trace_graph(
  fun_jit: Any, args_avals: Sequence, kwargs_avals: dict, *, target: Target
) -> GraphModule:
  traced = fun_jit.trace(*args_avals, **kwargs_avals)
  in_tree = jax.tree_util.tree_structure((tuple(args_avals), dict(kwargs_avals)))
  closed = traced.jaxpr
  if not any(key_data.is_key(v.aval) for v in (*closed.jaxpr.invars, *closed.jaxpr.outvars)):
    # Primitives applied to PRNG key arrays (slicing a split key, ...) are
    # lowered on the keys' uint32 data.
    closed = key_data.key_data_jaxpr(closed)
  in_avals = tuple(v.aval for v in closed.jaxpr.invars)
  out_avals = tuple(v.aval for v in closed.jaxpr.outvars)
  in_shardings, out_shardings = _jit_shardings(traced)
  return GraphModule(
    closed_jaxpr=closed,
    in_avals=in_avals,
    out_avals=out_avals,
    in_tree=in_tree,
    out_tree=traced.out_tree,
    target=target,
    in_shardings=_serialized(in_shardings, in_avals),
    out_shardings=_serialized(out_shardings, out_avals),
    nr_devices=max(
      (s.num_devices for s in in_shardings + out_shardings if _specified(s)), default=1
    ),
  )


def _jit_shardings(traced) -> tuple[tuple, tuple]:
  # `Traced` keeps the jit's parameters; of its shardings only the results'
  # are public (`out_info`), so both are read from the same place. A jit
  # without shardings has unspecified ones, which give no annotation.
  params = getattr(traced, "_params", None) or {}
  return tuple(params.get("in_shardings", ())), tuple(params.get("out_shardings", ()))


def _specified(sharding) -> bool:
  return isinstance(sharding, jax.sharding.Sharding)


def _serialized(shardings: tuple, avals: tuple) -> tuple:
  if len(shardings) != len(avals):
    return ()
  # A PRNG key array travels as its key data, of higher rank than its aval.
  return tuple(
    tf_sharding.serialized_op_sharding(s, len(a.shape))
    if _specified(s) and not key_data.is_key(a)
    else None
    for s, a in zip(shardings, avals)
  )


def call_graph_module(module: GraphModule, args_flat: Sequence[tf.Tensor]) -> list:
  """Emits the module's TF ops; the caller has checked the argument shapes."""
  dims = tf_dims.bind_dimension_variables(module.in_avals, module.in_tree, args_flat)
  env = interpreter.make_env(module.target, dims)
  annotate = module.target.xla_ops and module.nr_devices > 1 and not tf.executing_eagerly()
  if annotate:
    args_flat = tf_sharding.annotate_each(args_flat, module.in_shardings)
  outs = interpreter.lower_jaxpr(env, module.closed_jaxpr, args_flat)
  if annotate:
    outs = tf_sharding.annotate_each(outs, module.out_shardings)
  if not tf.executing_eagerly():
    _set_static_shapes(outs, module.out_avals)
  return outs


def _set_static_shapes(outs: Sequence[tf.Tensor], out_avals: Sequence) -> None:
  # TF's shape inference loses dimensions that JAX knows statically (a slice
  # whose bounds are computed from dimension variables, a dynamic reshape),
  # so a concrete function would otherwise advertise unknown output shapes
  # where native serialization gives [16, 2].
  for out, aval in zip(outs, out_avals):
    if isinstance(out, tf.Tensor):
      out.set_shape([int(d) if dim_eval.is_constant(d) else None for d in aval.shape])
