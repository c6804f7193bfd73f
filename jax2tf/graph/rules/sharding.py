"""Placement and sharding annotations.

TF values carry no device placement, so device transfers, layout hints and
XLA metadata are identities. A sharding constraint becomes an XlaSharding annotation when the
graph may be compiled by XLA (enable_xla=True), where it guides SPMD partitioning.

Cases: tests/cases/sharding.py
"""

import tensorflow as tf
from jax.extend.core import primitives as core_primitives

from jax2tf import sharding as tf_sharding
from jax2tf.graph.registry import register
from jax2tf.internals import jax_private


@register(core_primitives.device_put_p)
def _device_put(ctx, *xs, devices, srcs, copy_semantics):
  del devices, srcs, copy_semantics  # placement only; the values are unchanged
  return [tf.identity(x) for x in xs]


@register(jax_private.reshard_p)
def _reshard(ctx, x, **_):
  # Only the placement of the value changes.
  return tf.identity(x)


@register(jax_private.layout_constraint_p)
def _layout_constraint(ctx, x, **_):
  # Memory layouts have no TF counterpart; the value is unchanged.
  return tf.identity(x)


@register(jax_private.xla_metadata_value_p, uint32_as_int32_bits=True)
def _xla_metadata_value(ctx, x, **_):
  # Attributes for XLA's compiler (set_xla_metadata); the value is unchanged.
  return tf.identity(x)


@register(core_primitives.sharding_constraint_p)
def _sharding_constraint(ctx, x, *, sharding, layout, context_mesh, unconstrained_dims):
  del layout, context_mesh
  if tf.executing_eagerly():
    return tf.identity(x)

  def annotated(x):
    proto = tf_sharding.op_sharding(sharding, len(ctx.avals_in[0].shape))
    return tf_sharding.annotate(tf.identity(x), proto, unspecified_dims=sorted(unconstrained_dims))

  return ctx.kernel_or("XlaSharding", annotated, tf.identity)(x)


@register(jax_private.relayout_p, uint32_as_int32_bits=True)
def _relayout(ctx, x, *, dst_layout):
  # jax.experimental.layout.explicit_layout: a change of memory layout, which
  # TF tensors do not have; the value is unchanged.
  del dst_layout
  return tf.identity(x)
