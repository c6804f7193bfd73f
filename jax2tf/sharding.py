"""Sharding annotations on TF values: the one place that builds xla.OpSharding
protos from JAX shardings and wraps tensors in XlaSharding ops.

Four users: the public `split_to_logical_devices`; native serialization,
which annotates the arguments and results of XlaCallModule with the shardings
the exported module declares (jax2tf/native/shardings.py reads them); graph
serialization, which annotates the arguments and results of a sharded
`jax.jit` the same way (jax2tf/graph/lowering.py); and graph serialization's
rule for sharding constraints (jax2tf/graph/rules/sharding.py).
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from jax2tf.internals import tf_private


def op_sharding(sharding: Any, ndim: int) -> Any:
  """A JAX sharding, or an HloSharding, as an `xla.OpSharding` for an array of
  rank `ndim`; None for None and for shardings without an HLO form."""
  serialized = serialized_op_sharding(sharding, ndim)
  return None if serialized is None else tf_private.OpSharding.FromString(serialized)


def serialized_op_sharding(sharding: Any, ndim: int) -> bytes | None:
  """`op_sharding`, serialized."""
  if sharding is None:
    return None
  to_hlo = getattr(sharding, "_to_xla_hlo_sharding", None)
  if to_hlo is not None:  # a JAX Sharding
    sharding = to_hlo(ndim)
  elif not hasattr(sharding, "to_proto"):  # neither a Sharding nor an HloSharding
    return None
  return sharding.to_proto().SerializeToString()


def annotate(
  tensor: tf.Tensor, sharding: Any, *, unspecified_dims: Sequence[int] | None = None
) -> tf.Tensor:
  """Wraps `tensor` in an XlaSharding op carrying `sharding` (an OpSharding or
  its serialization); `unspecified_dims` are left to the partitioner.

  Graph-only, like every XlaSharding op; None (unspecified) leaves the tensor
  as it is.
  """
  if sharding is None:
    return tensor
  if isinstance(sharding, bytes):
    sharding = tf_private.OpSharding.FromString(sharding)
  return tf_private.XlaSharding(proto=sharding).apply_to_tensor(
    tensor, use_sharding_op=True, unspecified_dims=list(unspecified_dims or []) or None
  )


def annotate_each(tensors: Sequence[tf.Tensor], shardings: Sequence[Any]) -> list[tf.Tensor]:
  """`annotate` for each tensor with its sharding (an OpSharding, its
  serialization, or None); no shardings at all leaves every tensor as it is."""
  if not shardings:
    return list(tensors)
  return [annotate(t, s) for t, s in zip(tensors, shardings, strict=True)]


def split_to_logical_devices(tensor: tf.Tensor, partition_dimensions: list[int]) -> tf.Tensor:
  """Annotates `tensor` to be tiled over logical devices, `partition_dimensions[i]`
  pieces along axis i (their product is the number of devices).

  The annotation is an XlaSharding op, read by XLA's SPMD partitioner, so it
  exists only in graphs: call this inside a `tf.function`. The values pass
  through unchanged; where nothing partitions the graph (TF on CPU and GPU)
  the annotation has no effect.
  """
  partition_dimensions = [int(d) for d in partition_dimensions]
  rank = tensor.shape.rank
  if rank is not None and len(partition_dimensions) != rank:
    raise ValueError(
      f"split_to_logical_devices: partition_dimensions has {len(partition_dimensions)} "
      f"entries but the tensor has rank {rank}"
    )
  if any(d < 1 for d in partition_dimensions):
    raise ValueError(
      f"split_to_logical_devices: partition_dimensions must be >= 1, got {partition_dimensions}"
    )
  if tf.executing_eagerly():
    # TF's own helper fails here with "Tensor.op is undefined when eager
    # execution is enabled", which does not say what to do.
    raise RuntimeError(
      "split_to_logical_devices adds an XlaSharding annotation, which exists only "
      "in TF graphs; call it inside a tf.function (sharding annotations cannot be "
      "used in TensorFlow eager mode)"
    )
  num_devices = int(np.prod(partition_dimensions))
  tile_assignment = np.arange(num_devices).reshape(partition_dimensions)
  return tf_private.xla_sharding_tile(tensor, tile_assignment, use_sharding_op=True)
