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

The litert route writes JAX's relu as RELU and ABS too (rewrite.py). Its
pass also drops the ABS before a bias of +0.0, before an ADD of a constant
free of -0.0 and across reshapes: a sum with a +0.0 term is never -0.0, so
whichever order a kernel adds the products and the bias in, a -0.0 product
turned +0.0 changes no partial sum that meets the bias's (x + (+-0) = x for
x != 0, +-0 + (+0) = +0). Only a -0.0 in the bias (or no bias) could carry
the sign.
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


def _reads_only_as_biased_input(g: Graph, op, tensor: int, *, positive_zeros=False) -> bool:
  if g.code(op) not in WEIGHT_CHANNEL_AXIS or op.inputs[0] != tensor or tensor in op.inputs[1:]:
    return False
  bias = g.constant(op.inputs[2]) if len(op.inputs) > 2 else None
  if bias is None:
    return False
  if positive_zeros:
    return _has_no_negative_zero(bias)
  return bool(np.all(bias != 0))


def _has_no_negative_zero(value) -> bool:
  return value is not None and not bool(np.any((value == 0) & np.signbit(value)))


def _hides_zero_signs(g: Graph, readers, op, tensor: int) -> bool:
  """Whether `op` reads `tensor` only as a term of a sum with a constant free
  of -0.0 (a matmul's or convolution's bias, an ADD's other operand: a
  layer norm's epsilon), or reshapes it for such ops."""
  code = g.code(op)
  if code in (Op.RESHAPE, Op.EXPAND_DIMS) and op.inputs[0] == tensor:
    if tensor in op.inputs[1:]:
      return False
    result = op.outputs[0]
    users = readers.get(result, [])
    return (
      bool(users)
      and not g.is_output(result)
      and all(_hides_zero_signs(g, readers, u, result) for u in users)
    )
  if code == Op.ADD and len(op.inputs) == 2 and tensor in op.inputs:
    other = op.inputs[1] if op.inputs[0] == tensor else op.inputs[0]
    return other != tensor and _has_no_negative_zero(g.constant(other))
  return _reads_only_as_biased_input(g, op, tensor, positive_zeros=True)


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


def _drop_abs_read_only_where(g: Graph, hides) -> None:
  """Drops each ABS on a ReLU's result (or a pool of one) whose every reader
  `hides(readers, reader, tensor)` the sign of a zero."""
  producers = g.producers()
  readers = g.readers()
  for abs_op in list(g.ops):
    if g.code(abs_op) != Op.ABS or not _rectified(g, producers, abs_op.inputs[0]):
      continue
    result = abs_op.outputs[0]
    users = readers.get(result, [])
    if users and not g.is_output(result) and all(hides(readers, u, result) for u in users):
      g.replace_uses(result, abs_op.inputs[0])
      readers = g.readers()


def drop_abs_before_biased_ops(g: Graph) -> None:
  _drop_abs_read_only_where(g, lambda _, op, tensor: _reads_only_as_biased_input(g, op, tensor))


def drop_abs_before_zero_hiding_ops(g: Graph) -> None:
  """The litert route's: an ABS that only matmuls and convolutions with a
  bias free of -0.0 read, directly or through reshapes."""
  _drop_abs_read_only_where(
    g, lambda readers, op, tensor: _hides_zero_signs(g, readers, op, tensor)
  )
