"""Softmax, log-softmax and GELU as the single LiteRT ops TF's converter
fuses them into from TF graphs but not from a polymorphic StableHLO module.

From JAX's module with a dynamic batch the converter leaves `jax.nn.softmax`
as REDUCE_MAX -> MAXIMUM(-inf) -> SUB -> EXP -> SUM -> DIV (`log_softmax`
ends SUM -> LOG -> SUB instead) and the tanh form of `jax.nn.gelu` as nine
elementwise ops. LiteRT's SOFTMAX, LOG_SOFTMAX and GELU compute JAX's values
on these inputs, NaN and infinities included (a row holding NaN or +inf is
all NaN, as in JAX; the unfused chain's MAXIMUM and SUM drop the NaN).
On the litert route the max reduction carries the pipeline's NaN test (NaN
stand-ins before it, an IF after it), which the fused op makes redundant.
"""

import numpy as np

from jax2tf.lite.flatbuffer import Graph
from jax2tf.lite.litert_schema import schema

Op = schema.BuiltinOperator

_GELU_CUBIC = np.float32(0.044715)
_GELU_SCALE = np.float32(np.sqrt(2 / np.pi))
_LARGEST = np.finfo(np.float32).max


def _scalar(g: Graph, i: int):
  value = g.constant(i)
  if value is None or value.size != 1 or value.dtype != np.float32:
    return None
  return value.ravel()[0]


def _unary_chain(g: Graph, readers, tensor: int, code: int, constant):
  """The op that alone reads `tensor` if it is `code` with the scalar
  `constant` as its other operand, else None."""
  op = g.only_reader(readers, tensor)
  if op is None or g.code(op) != code or len(op.inputs) != 2:
    return None
  other = op.inputs[1] if op.inputs[0] == tensor else op.inputs[0]
  return op if _scalar(g, other) == constant else None


def _last_axis(g: Graph, reduce, rank: int) -> bool:
  axes = g.constant(reduce.inputs[1])
  return axes is not None and axes.size == 1 and int(axes.ravel()[0]) % rank == rank - 1


def _keep_last_axis(g: Graph, readers, reduce, rank: int, result: int | None = None):
  """The tensor holding `reduce`'s result (or `result`, the same values
  past a NaN test) with the reduced axis kept (its own, or that of the
  EXPAND_DIMS or RESHAPE alone reading it), or None."""
  result = reduce.outputs[0] if result is None else result
  if getattr(reduce.builtinOptions, "keepDims", False):
    return result
  expand = g.only_reader(readers, result)
  if expand is None:
    return None
  if g.code(expand) == Op.RESHAPE:  # with static shapes: [.., n] -> [.., n, 1]
    same = list(g.signature(expand.outputs[0])) == list(g.signature(result)) + [1]
    return expand.outputs[0] if same else None
  if g.code(expand) != Op.EXPAND_DIMS:
    return None
  axis = g.constant(expand.inputs[1])
  if axis is None or axis.size != 1 or int(axis.ravel()[0]) % rank != rank - 1:
    return None
  return expand.outputs[0]


def _shifted_rows(g: Graph, readers):
  """(x, sub, rank of x) for each `sub = x - max(x, last axis)` broadcast
  back along the axis, as jax.nn.softmax and log_softmax shift their input."""
  producers = g.producers()
  for top in list(g.ops):
    if g.code(top) == Op.REDUCE_MAX and (found := _shifted_by(g, readers, producers, top)):
      yield found


def _nan_stand_in(g: Graph, producers, tensor: int):
  """x where `tensor` is `select(x != x, largest float, x)`, the NaN
  stand-in the litert pipeline feeds a max reduction, else None."""
  select = producers.get(tensor)
  if select is None or g.code(select) != Op.SELECT_V2:
    return None
  test, stand_in, x = select.inputs
  is_nan = producers.get(test)
  if is_nan is None or g.code(is_nan) != Op.NOT_EQUAL or is_nan.inputs != [x, x]:
    return None
  value = g.constant(stand_in)
  if value is None or value.dtype != np.float32 or not (value >= _LARGEST).all():
    return None
  return x


def _nan_test(g: Graph, readers, producers, result: int):
  """The IF that gives the max reduction's `result` its NaN (the litert
  pipeline's test after the reduction: its else branch returns `result`,
  its condition is whether any element of `result` reached the stand-in),
  or None."""
  tests = [op for op in readers.get(result, []) if g.code(op) == Op.IF]
  if len(tests) != 1 or g.is_output(result):
    return None
  branch = tests[0]
  reached = producers.get(branch.inputs[0])
  compare = reached is not None and producers.get(reached.inputs[0])
  if (
    reached is None
    or g.code(reached) != Op.REDUCE_ANY
    or not compare
    or g.code(compare) != Op.GREATER_EQUAL
    or compare.inputs[0] != result
  ):
    return None
  otherwise = g.model.subgraphs[branch.builtinOptions.elseSubgraphIndex]
  inputs, outputs = list(np.atleast_1d(otherwise.inputs)), list(np.atleast_1d(otherwise.outputs))
  if otherwise.operators or len(outputs) != 1 or outputs[0] not in inputs:
    return None
  return branch if branch.inputs[1 + inputs.index(outputs[0])] == result else None


def _shifted_by(g: Graph, readers, producers, top):
  x = top.inputs[0]
  peak = top.outputs[0]
  # The litert pipeline writes JAX's NaN-propagating max as a reduction of
  # NaN stand-ins and an IF that puts NaN back where a row held one. SOFTMAX
  # and LOG_SOFTMAX give such a row all NaN, as JAX does: the test goes
  # with the rest of the chain.
  unguarded = _nan_stand_in(g, producers, x)
  if unguarded is not None:
    test = _nan_test(g, readers, producers, peak)
    if test is None:
      return None
    x, peak = unguarded, test.outputs[0]
  rank = len(g.signature(x))
  if rank == 0 or g.tensor(x).type != schema.TensorType.FLOAT32 or not _last_axis(g, top, rank):
    return None
  # JAX's max starts from -inf: a MAXIMUM with it may follow (-inf, or
  # the lowest float32, as the converter writes infinite constants); either
  # leaves a row of -inf all NaN, as SOFTMAX and LOG_SOFTMAX do.
  floor = _unary_chain(g, readers, peak, Op.MAXIMUM, -np.inf) or _unary_chain(
    g, readers, peak, Op.MAXIMUM, np.finfo(np.float32).min
  )
  kept = _keep_last_axis(g, readers, top, rank, floor.outputs[0] if floor else peak)
  sub = next((u for u in readers.get(kept, [])), None) if kept is not None else None
  if sub is None or len(readers[kept]) != 1 or g.code(sub) != Op.SUB or sub.inputs != [x, kept]:
    return None
  return x, sub, rank


def _become(g: Graph, op, code: int, x: int, options_type: int, options) -> None:
  """Turns `op` into the single op `code` on `x` (the chain before it is
  left to the removal of unread ops)."""
  op.opcodeIndex = g.opcode_index(code)
  op.inputs = [x]
  op.builtinOptionsType = options_type
  op.builtinOptions = options
  g.changed = True


def fuse_softmax(g: Graph) -> None:
  readers = g.readers()
  for x, sub, rank in _shifted_rows(g, readers):
    exp = g.only_reader(readers, sub.outputs[0])
    if exp is None or g.code(exp) != Op.EXP:
      continue
    users = readers.get(exp.outputs[0], [])
    total = next((u for u in users if g.code(u) == Op.SUM), None)
    div = next((u for u in users if g.code(u) == Op.DIV), None)
    if len(users) != 2 or total is None or div is None or not _last_axis(g, total, rank):
      continue
    if div.inputs != [exp.outputs[0], _keep_last_axis(g, readers, total, rank)]:
      continue
    _become(
      g, div, Op.SOFTMAX, x, schema.BuiltinOptions.SoftmaxOptions, schema.SoftmaxOptionsT(beta=1.0)
    )


def fuse_log_softmax(g: Graph) -> None:
  """x - max - log(sum(exp(x - max))) over the last axis is LOG_SOFTMAX."""
  readers = g.readers()
  for x, sub, rank in _shifted_rows(g, readers):
    users = readers.get(sub.outputs[0], [])
    exp = next((u for u in users if g.code(u) == Op.EXP), None)
    final = next((u for u in users if g.code(u) == Op.SUB), None)
    if len(users) != 2 or exp is None or final is None:
      continue
    total = g.only_reader(readers, exp.outputs[0])
    if total is None or g.code(total) != Op.SUM or not _last_axis(g, total, rank):
      continue
    kept = _keep_last_axis(g, readers, total, rank)
    log = g.only_reader(readers, kept) if kept is not None else None
    if log is None or g.code(log) != Op.LOG or final.inputs != [sub.outputs[0], log.outputs[0]]:
      continue
    _become(
      g,
      final,
      Op.LOG_SOFTMAX,
      x,
      schema.BuiltinOptions.LogSoftmaxOptions,
      schema.LogSoftmaxOptionsT(),
    )


def fuse_gelu(g: Graph) -> None:
  """x * (0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x*x*x)))), in any
  operand order, is GELU(approximate=True)."""
  readers = g.readers()
  producers = g.producers()

  def made_by(tensor: int, code: int, *operands):
    op = producers.get(tensor)
    if op is None or g.code(op) != code or g.only_reader(readers, tensor) is None:
      return None
    return op if sorted(op.inputs) == sorted(operands) or not operands else None

  for tanh in list(g.ops):
    if g.code(tanh) != Op.TANH or g.tensor(tanh.inputs[0]).type != schema.TensorType.FLOAT32:
      continue
    scaled = made_by(tanh.inputs[0], Op.MUL)
    if scaled is None or _GELU_SCALE not in [_scalar(g, i) for i in scaled.inputs]:
      continue
    inner = made_by(next((i for i in scaled.inputs if _scalar(g, i) != _GELU_SCALE), -1), Op.ADD)
    if inner is None:
      continue
    matched = None
    for x, cubic in (inner.inputs, inner.inputs[::-1]):
      times = made_by(cubic, Op.MUL)
      if times is None or _GELU_CUBIC not in [_scalar(g, i) for i in times.inputs]:
        continue
      cube = made_by(next((i for i in times.inputs if _scalar(g, i) != _GELU_CUBIC), -1), Op.MUL)
      square = cube and next((i for i in cube.inputs if i != x), None)
      if (
        cube is not None
        and square is not None
        and made_by(square, Op.MUL, x, x)
        and x in cube.inputs
      ):
        matched = x
    if matched is None:
      continue
    plus_one = _unary_chain(g, readers, tanh.outputs[0], Op.ADD, 1.0)
    half = plus_one and _unary_chain(g, readers, plus_one.outputs[0], Op.MUL, 0.5)
    final = half and g.only_reader(readers, half.outputs[0])
    if (
      not final
      or g.code(final) != Op.MUL
      or sorted(final.inputs) != sorted([matched, half.outputs[0]])
    ):
      continue
    _become(
      g,
      final,
      Op.GELU,
      matched,
      schema.BuiltinOptions.GeluOptions,
      schema.GeluOptionsT(approximate=True),
    )
