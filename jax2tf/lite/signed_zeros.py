"""Signs of zero on LiteRT: fewer passes that turn -0.0 into +0.0 on the
graph route (LiteRT's SIN, which loses a -0.0, is in special_inputs.py).

The graph route follows each ReLU with an ABS: XLA's relu(-0.0) is +0.0,
TFLite's RELU keeps -0.0. On a ReLU's result (at least +-0, or NaN) the ABS
changes nothing but the sign of a zero, and that sign is lost anyway when:

- only matmuls and convolutions with a bias free of zeros read the value:
  their result is the bias plus the products, and adding +-0 to a nonzero
  partial sum changes nothing (an exact cancellation gives +0 either way);
- a pool reads it: the pool of the ABS is the ABS of the pool, over a window
  a quarter (or less) of the size.
"""

import numpy as np

from jax2tf.lite.flatbuffer import WEIGHT_CHANNEL_AXIS, Graph, fused_activation
from jax2tf.lite.litert_schema import schema

Op = schema.BuiltinOperator
Activation = schema.ActivationFunctionType

_RECTIFYING = frozenset({Activation.RELU, Activation.RELU6})
_POOLS = frozenset({Op.AVERAGE_POOL_2D, Op.MAX_POOL_2D})


def _rectified(g: Graph, producers, tensor: int) -> bool:
  """Whether `tensor` holds no negative number: a ReLU's result, or a pool
  of one."""
  op = producers.get(tensor)
  if op is None or g.tensor(tensor).type != schema.TensorType.FLOAT32:
    return False
  if g.code(op) in (Op.RELU, Op.RELU6) or fused_activation(op) in _RECTIFYING:
    return True
  return (
    g.code(op) in _POOLS
    and fused_activation(op) == Activation.NONE
    and _rectified(g, producers, op.inputs[0])
  )


def _reads_only_as_biased_input(g: Graph, op, tensor: int) -> bool:
  if g.code(op) not in WEIGHT_CHANNEL_AXIS or op.inputs[0] != tensor or tensor in op.inputs[1:]:
    return False
  bias = g.constant(op.inputs[2]) if len(op.inputs) > 2 else None
  return bias is not None and bool(np.all(bias != 0))


def abs_after_pools(g: Graph) -> None:
  producers = g.producers()
  readers = g.readers()
  for abs_op in list(g.ops):
    if g.code(abs_op) != Op.ABS or not _rectified(g, producers, abs_op.inputs[0]):
      continue
    pool = g.only_reader(readers, abs_op.outputs[0])
    if pool is None or g.code(pool) not in _POOLS or fused_activation(pool) != Activation.NONE:
      continue
    pooled = g.add_tensor_like(pool.outputs[0])
    pool.inputs, pool.outputs, abs_op.inputs, abs_op.outputs = (
      [abs_op.inputs[0]],
      [pooled],
      [pooled],
      list(pool.outputs),
    )
    ops = g.subgraph.operators
    i, j = ops.index(abs_op), ops.index(pool)
    ops[i], ops[j] = pool, abs_op
    producers = g.producers()
    readers = g.readers()
    g.changed = True


def drop_abs_before_biased_ops(g: Graph) -> None:
  producers = g.producers()
  readers = g.readers()
  for abs_op in list(g.ops):
    if g.code(abs_op) != Op.ABS or not _rectified(g, producers, abs_op.inputs[0]):
      continue
    result = abs_op.outputs[0]
    users = readers.get(result, [])
    if (
      users
      and not g.is_output(result)
      and all(_reads_only_as_biased_input(g, u, result) for u in users)
    ):
      g.replace_uses(result, abs_op.inputs[0])
