"""Placement and sharding annotations.

TF values carry no device placement, so device transfers and layout hints are
identities. A sharding constraint becomes an XlaSharding annotation when the
graph may be compiled by XLA (enable_xla=True), where it guides SPMD partitioning.

Cases: sharding_cases.py
"""

import tensorflow as tf
from jax._src import dispatch
from jax._src import pjit

from jax2tf.graph.registry import register


@register(dispatch.device_put_p)
def _device_put(ctx, *xs, devices, srcs, copy_semantics):
  del devices, srcs, copy_semantics  # placement only; the values are unchanged
  return [tf.identity(x) for x in xs]


@register(pjit.reshard_p)
def _reshard(ctx, x, **_):
  # Only the placement of the value changes.
  return tf.identity(x)


@register(pjit.layout_constraint_p)
def _layout_constraint(ctx, x, **_):
  # Memory layouts have no TF counterpart; the value is unchanged.
  return tf.identity(x)


@register(pjit.sharding_constraint_p)
def _sharding_constraint(ctx, x, *, sharding, layout, context_mesh, unconstrained_dims):
  del layout, context_mesh
  if not ctx.enable_xla or tf.executing_eagerly():
    return tf.identity(x)
  proto = _op_sharding(sharding, len(ctx.avals_in[0].shape))
  if proto is None:
    return tf.identity(x)
  from tensorflow.python.compiler.xla.experimental import xla_sharding
  return xla_sharding.Sharding(proto=proto).apply_to_tensor(
      tf.identity(x), use_sharding_op=True,
      unspecified_dims=sorted(unconstrained_dims) or None)


def _op_sharding(sharding, ndim):
  """JAX's sharding as TF's OpSharding proto, or None when it has no HLO form."""
  to_hlo = getattr(sharding, "_to_xla_hlo_sharding", None)
  if to_hlo is None:
    return None
  from tensorflow.compiler.xla import xla_data_pb2
  return xla_data_pb2.OpSharding.FromString(to_hlo(ndim).to_proto().SerializeToString())
