"""Graph serialization of one abstract signature: trace once, emit TF ops per call."""

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import tensorflow as tf

from jax2tf import tf_dims
from jax2tf.graph import (
  interpreter,
  key_data,
  rules,  # noqa: F401  (registers every rule family)
)
from jax2tf.shapes import dim_eval


@dataclasses.dataclass(frozen=True)
class GraphModule:
  """A traced JAX function, ready to be emitted as TF ops."""

  closed_jaxpr: Any
  in_avals: tuple
  out_avals: tuple
  in_tree: Any
  out_tree: Any
  enable_xla: bool
  consumer: str = "tf"  # options.GRAPH_CONSUMERS


def trace_graph(
  fun_jit: Any, args_avals: Sequence, kwargs_avals: dict, *, enable_xla: bool, consumer: str = "tf"
) -> GraphModule:
  traced = fun_jit.trace(*args_avals, **kwargs_avals)
  in_tree = jax.tree_util.tree_structure((tuple(args_avals), dict(kwargs_avals)))
  closed = traced.jaxpr
  if not any(key_data.is_key(v.aval) for v in (*closed.jaxpr.invars, *closed.jaxpr.outvars)):
    # Primitives applied to PRNG key arrays (slicing a split key, ...) are
    # lowered on the keys' uint32 data.
    closed = key_data.key_data_jaxpr(closed)
  return GraphModule(
    closed_jaxpr=closed,
    in_avals=tuple(v.aval for v in closed.jaxpr.invars),
    out_avals=tuple(v.aval for v in closed.jaxpr.outvars),
    in_tree=in_tree,
    out_tree=traced.out_tree,
    enable_xla=enable_xla,
    consumer=consumer,
  )


def call_graph_module(module: GraphModule, args_flat: Sequence[tf.Tensor]) -> list:
  """Emits the module's TF ops; the caller has checked the argument shapes."""
  dims = tf_dims.bind_dimension_variables(module.in_avals, module.in_tree, args_flat)
  env = interpreter.make_env(module.enable_xla, dims, module.consumer)
  outs = interpreter.lower_jaxpr(env, module.closed_jaxpr, args_flat)
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
