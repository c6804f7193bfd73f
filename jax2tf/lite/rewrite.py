"""Rewrites of a converted flatbuffer that let LiteRT plan and fuse it.

TF's converter, and the standalone litert-converter alike, legalize a
StableHLO module with a polymorphic batch into shape arithmetic computed at
run time (`SHAPE` -> ... -> `RESHAPE` /
`BROADCAST_TO`). LiteRT marks each such result a dynamic tensor and, from the
first one on, re-prepares every operator at each call and keeps it off
XNNPack; the same dynamic shapes stop the converter's own fusions (bias and
activation into FULLY_CONNECTED and convolutions, `reduce_window` sums into
average pools). These passes undo that on the flatbuffer, using the shape
signatures the converter wrote; they change no number the model computes
beyond the rounding of folded weights, biases and pools:

- a reshape whose target has at most one unknown dimension gets a constant
  target (`-1` there); a reshape or broadcast that keeps its operand's shape
  is dropped;
- an elementwise op reads the sources of its broadcast operands when its own
  broadcasting of them gives its result shape (SELECT of one shape becomes
  SELECT_V2, which broadcasts);
- a comparison of broadcast constants (a mask from iotas) is folded, with the
  casts and expand_dims after it, into a constant its users broadcast; a
  select whose condition is such a constant is the operand it picks;
- constants added, subtracted or multiplied per channel after a matmul or
  convolution (its bias, an inference batch norm) go into its weights and
  bias where that cannot turn a finite result infinite or lose a NaN;
  `max(x, 0)` after one becomes its fused ReLU (on the litert route, JAX's
  NaN-keeping `select(x != x, x, max(x, 0))` becomes RELU, fused where it
  can be, and ABS);
- a windowed sum without padding divided by the window's size becomes an
  average pool; on the native route, softmax, log-softmax and tanh-GELU
  become SOFTMAX, LOG_SOFTMAX and GELU (activations.py);
- operators whose results nothing reads, subgraphs nothing calls, tensors
  nothing uses and buffers no tensor holds are removed.

On both routes a scatter's sum or product is written as LiteRT's
STABLEHLO_SCATTER kernel reads it (scatter_regions.py), and three changes
make numbers JAX's: a SIN of -0.0 gives -0.0 and an EXP of NaN NaN, which
LiteRT's kernels lose (special_inputs.py), and the infinite constants that
the converter wrote as the largest finite floats are infinite again
(infinities.py).

The passes rely on what a module from JAX guarantees: operands broadcast to
one shape agree on each symbolic dimension (an unknown dimension of a
broadcast's operand is the result's, never a 1 to stretch). The passes
append tensors and never renumber them; at the end the unused ones are
dropped and the rest renumbered, in signatures too.
"""

import numpy as np

from jax2tf.lite import (
  activations,
  flatbuffer,
  infinities,
  scatter_regions,
  signed_zeros,
  special_inputs,
)
from jax2tf.lite.flatbuffer import NUMPY_TYPES, WEIGHT_CHANNEL_AXIS, Graph, fused_activation, ints
from jax2tf.lite.litert_schema import schema

Op = schema.BuiltinOperator
Options = schema.BuiltinOptions
Activation = schema.ActivationFunctionType
TensorType = schema.TensorType

# Elementwise ops whose TFLite kernels broadcast their operands (numpy rules),
# up to rank 4 in every kernel.
_BROADCASTING = frozenset(
  {
    Op.ADD,
    Op.SUB,
    Op.MUL,
    Op.DIV,
    Op.MAXIMUM,
    Op.MINIMUM,
    Op.SQUARED_DIFFERENCE,
    Op.POW,
    Op.FLOOR_DIV,
    Op.FLOOR_MOD,
    Op.LESS,
    Op.LESS_EQUAL,
    Op.GREATER,
    Op.GREATER_EQUAL,
    Op.EQUAL,
    Op.NOT_EQUAL,
    Op.LOGICAL_AND,
    Op.LOGICAL_OR,
    Op.SELECT_V2,
  }
)
_MAX_BROADCAST_RANK = 4

# Ops whose fused activation a following MAXIMUM can move into.
_FUSES_ACTIVATION = frozenset(WEIGHT_CHANNEL_AXIS) | {Op.ADD}

# Ops that run subgraphs: they have effects where one of those has.
_CONTROL_FLOW = frozenset({Op.WHILE, Op.IF, Op.CALL, Op.STABLEHLO_WHILE, Op.STABLEHLO_CASE})
# Ops with effects beyond their outputs, kept even when nothing reads them.
_STATEFUL = frozenset(
  {
    Op.CALL_ONCE,
    Op.VAR_HANDLE,
    Op.READ_VARIABLE,
    Op.ASSIGN_VARIABLE,
    Op.CUSTOM,
    Op.WHILE,
    Op.IF,
    Op.CALL,
    Op.STABLEHLO_WHILE,
    Op.STABLEHLO_CASE,
    Op.STABLEHLO_CUSTOM_CALL,
    Op.RANDOM_STANDARD_NORMAL,
    Op.RANDOM_UNIFORM,
    Op.MULTINOMIAL,
    Op.HASHTABLE,
    Op.HASHTABLE_FIND,
    Op.HASHTABLE_IMPORT,
    Op.HASHTABLE_SIZE,
  }
)

# Ops folded on constants: exact in numpy as in LiteRT.
_FOLDABLE = {
  Op.LESS: np.less,
  Op.LESS_EQUAL: np.less_equal,
  Op.GREATER: np.greater,
  Op.GREATER_EQUAL: np.greater_equal,
  Op.EQUAL: np.equal,
  Op.NOT_EQUAL: np.not_equal,
  Op.LOGICAL_AND: np.logical_and,
  Op.LOGICAL_OR: np.logical_or,
}


def _constant_reshape_targets(g: Graph) -> None:
  producers = g.producers()
  for op in g.ops:
    if g.code(op) != Op.RESHAPE or len(op.inputs) < 2 or op.inputs[1] not in producers:
      continue
    target = g.signature(op.outputs[0])
    if not target or target.count(-1) > 1 or 0 in target:
      continue
    op.inputs[1] = g.add_constant(np.array(target, np.int32), g.tensor(op.inputs[1]).name)
    if isinstance(op.builtinOptions, schema.ReshapeOptionsT):
      op.builtinOptions.newShape = list(target)
    g.changed = True


def _drop_identities(g: Graph) -> None:
  """Reshapes and broadcasts to their operand's own shape."""
  doomed = []
  for op in g.ops:
    if g.code(op) not in (Op.RESHAPE, Op.BROADCAST_TO):
      continue
    source, result = op.inputs[0], op.outputs[0]
    shape = g.signature(source)
    if g.is_output(result) or shape != g.signature(result) or shape.count(-1) > 1 or 0 in shape:
      continue
    if g.tensor(source).type != g.tensor(result).type:
      continue
    g.replace_uses(result, source)
    doomed.append(op)
  g.remove(doomed)


def _broadcasting_selects(g: Graph) -> None:
  # SELECT of operands of one shape is SELECT_V2 (which also broadcasts);
  # SELECT's other meaning, a rank-1 condition picking rows, needs the
  # shapes to differ.
  for op in g.ops:
    if g.code(op) != Op.SELECT:
      continue
    shape = g.signature(op.outputs[0])
    if all(g.signature(i) == shape for i in op.inputs):
      op.opcodeIndex = g.opcode_index(Op.SELECT_V2)
      op.builtinOptionsType = Options.SelectV2Options
      op.builtinOptions = schema.SelectV2OptionsT()
      g.changed = True


def _broadcast_signatures(shapes) -> list[int] | None:
  """The numpy broadcast of shape signatures, None where it is not known.

  An unknown dimension (-1) meets only 1 or another unknown one: in a module
  from JAX, operands broadcast to one shape agree on each symbolic dimension.
  """
  rank = max(len(s) for s in shapes)
  out = []
  for axis in range(rank):
    dims = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0} - {1}
    if len(dims) > 1:
      return None
    out.append(dims.pop() if dims else 1)
  return out


def _broadcast_sources(g: Graph, producers, op) -> list[int]:
  """`op`'s operands, each broadcast one replaced by the broadcast's source."""
  return [
    producers[i].inputs[0] if i in producers and g.code(producers[i]) == Op.BROADCAST_TO else i
    for i in op.inputs
  ]


def _leave_broadcasts_to_users(g: Graph) -> None:
  """An elementwise op reads the sources of its broadcast operands when the
  op's own broadcasting of them gives its result shape."""
  producers = g.producers()
  for op in g.ops:
    if g.code(op) not in _BROADCASTING:
      continue
    sources = _broadcast_sources(g, producers, op)
    shape = g.signature(op.outputs[0])
    if sources == op.inputs or len(shape) > _MAX_BROADCAST_RANK:
      continue
    if _broadcast_signatures([g.signature(i) for i in sources]) == shape:
      op.inputs = sources
      g.changed = True


def _fold_constant_broadcasts(g: Graph) -> None:
  """A comparison of broadcast constants (a mask built from iotas) is a
  constant; it and the casts and expand_dims after it are folded, each left
  at its static shape, so that the ops reading the mask broadcast it."""
  producers = g.producers()
  readers = g.readers()
  for op in g.ops:
    if g.code(op) not in _FOLDABLE or -1 not in g.signature(op.outputs[0]):
      continue
    sources = _broadcast_sources(g, producers, op)
    values = [g.constant(i) for i in sources]
    if any(v is None for v in values):
      continue
    plan: list = []
    if _plan_constant(g, readers, op.outputs[0], _FOLDABLE[g.code(op)](*values), plan):
      for reader, position, value in plan:
        reader.inputs[position] = g.add_constant(value, g.tensor(op.outputs[0]).name)
      g.changed = True


def _plan_constant(g: Graph, readers, tensor: int, value: np.ndarray, plan: list) -> bool:
  """Whether every reader of `tensor` (which holds `value` broadcast to its
  shape) can take `value` instead; the substitutions go into `plan`."""
  shape = g.signature(tensor)
  if g.is_output(tensor) or value.ndim > len(shape):
    return False
  value = value.reshape((1,) * (len(shape) - value.ndim) + value.shape)
  for reader in readers.get(tensor, []):
    code = g.code(reader)
    others = [g.constant(i) for i in reader.inputs if i != tensor]
    if code in _FOLDABLE and all(v is not None for v in others):
      operands = [value if i == tensor else g.constant(i) for i in reader.inputs]
      if not _plan_constant(g, readers, reader.outputs[0], _FOLDABLE[code](*operands), plan):
        return False
    elif code in _BROADCASTING:
      position = reader.inputs.index(tensor)
      others = [g.signature(i) for i in reader.inputs if i != tensor]
      result = g.signature(reader.outputs[0])
      if (
        _broadcast_signatures(others + [list(value.shape)]) != result
        or len(result) > _MAX_BROADCAST_RANK
      ):
        return False
      plan.append((reader, position, value))
    elif code == Op.BROADCAST_TO and reader.inputs[0] == tensor:
      if not _plan_constant(g, readers, reader.outputs[0], value, plan):
        return False
    elif code == Op.EXPAND_DIMS and g.constant(reader.inputs[1]) is not None:
      axis = int(g.constant(reader.inputs[1]).ravel()[0])
      if not _plan_constant(g, readers, reader.outputs[0], np.expand_dims(value, axis), plan):
        return False
    elif code == Op.CAST and value.dtype.kind in "bi":
      target = NUMPY_TYPES.get(g.tensor(reader.outputs[0]).type)
      if target is None or not _plan_constant(
        g, readers, reader.outputs[0], value.astype(target), plan
      ):
        return False
    else:
      return False
  return True


def _per_channel(g: Graph, op, tensor: int, channels: int, block: list[int]):
  """The constant operand of `op` beside `tensor`, as one value per channel,
  or None. The channels are `tensor`'s trailing `block` of dimensions (the
  last one, or those a reshape split it into); the constant may vary only
  along them."""
  others = [i for i in op.inputs if i != tensor]
  value = g.constant(others[0]) if len(others) == 1 and len(op.inputs) == 2 else None
  if value is None or value.dtype != np.float32:
    return None
  if value.ndim > len(block):
    if set(value.shape[: -len(block)]) - {1}:
      return None
    value = value.reshape(value.shape[-len(block) :])
  try:
    return np.broadcast_to(value, block).reshape([channels]).astype(np.float32)
  except ValueError:
    return None


def _channel_split(g: Graph, reshape, channels: int) -> list[int] | None:
  """The dimensions a reshape splits the last (channel) dimension into,
  keeping the others, or None for any other reshape."""
  source, target = g.signature(reshape.inputs[0]), g.signature(reshape.outputs[0])
  keep = len(source) - 1
  block = target[keep:]
  if target[:keep] != source[:keep] or source[:keep].count(-1) > 1 or source[-1:] != [channels]:
    return None
  if not block or min(block) < 1 or int(np.prod(block)) != channels:
    return None
  return block


def _fold_affine(g: Graph) -> None:
  """Constants added, subtracted or multiplied per output channel after a
  matmul or convolution (its bias, an inference batch norm), also across a
  reshape that splits the channels (attention heads), go into its weights and
  bias, as TF's converter does for TF graphs."""
  for op in g.ops:
    code = g.code(op)
    if code not in WEIGHT_CHANNEL_AXIS or any(
      g.tensor(i).type != TensorType.FLOAT32 for i in op.inputs[:2]
    ):
      continue
    weights = g.constant(op.inputs[1])
    if weights is None:
      continue
    channel_axis = WEIGHT_CHANNEL_AXIS[code]
    channels = weights.shape[channel_axis]
    has_bias = len(op.inputs) > 2 and op.inputs[2] >= 0
    bias = g.constant(op.inputs[2]) if has_bias else np.zeros([channels], np.float32)
    if bias is None:
      continue
    folded = False
    while fused_activation(op) == Activation.NONE:
      readers = g.readers()
      reshape = g.only_reader(readers, op.outputs[0])
      block = [channels]
      if reshape is not None and g.code(reshape) == Op.RESHAPE:
        block = _channel_split(g, reshape, channels) or []
        tensor = reshape.outputs[0]
      else:
        reshape, tensor = None, op.outputs[0]
      affine = g.only_reader(readers, tensor) if block else None
      if affine is None or g.code(affine) not in (Op.ADD, Op.SUB, Op.MUL):
        break
      value = _per_channel(g, affine, tensor, channels, block)
      if value is None or g.signature(affine.outputs[0]) != g.signature(tensor):
        break
      if g.code(affine) == Op.SUB and affine.inputs[0] != tensor:
        break
      if g.code(affine) == Op.MUL:
        if not (np.isfinite(value).all() and value.all()):
          break  # x * 0 and x * inf keep NaN and inf that scaled weights lose
        shape = [1] * weights.ndim
        shape[channel_axis] = channels
        with np.errstate(over="ignore"):
          scaled, scaled_bias = weights * value.reshape(shape), bias * value
        if not (np.isfinite(scaled).all() and np.isfinite(scaled_bias).all()):
          break  # weights that overflow would turn finite products into inf
        weights, bias = scaled, scaled_bias
      else:
        bias = bias + value if g.code(affine) == Op.ADD else bias - value
      (reshape or op).outputs = list(affine.outputs)
      op.builtinOptions.fusedActivationFunction = fused_activation(affine) or Activation.NONE
      g.remove([affine])
      folded = True
    if folded:
      name = g.tensor(op.inputs[1]).name or b"weights"
      op.inputs = [
        op.inputs[0],
        g.add_constant(weights, name),
        g.add_constant(bias, name + b"/bias"),
      ]


def _fully_connected_keep_dims(g: Graph) -> None:
  """A reshape merging the leading dimensions into one before a
  FULLY_CONNECTED, whose result is only reshaped, is left to the op itself
  (keep_num_dims), as Keras's Dense layers are converted."""
  producers = g.producers()
  readers = g.readers()
  for op in g.ops:
    if g.code(op) != Op.FULLY_CONNECTED or op.builtinOptions is None:
      continue
    merge = producers.get(op.inputs[0])
    if merge is None or g.code(merge) != Op.RESHAPE:
      continue
    source, merged = g.signature(merge.inputs[0]), g.signature(op.inputs[0])
    if len(merged) != 2 or len(source) < 3 or source[-1] != merged[-1] or source.count(-1) > 1:
      continue
    result = op.outputs[0]
    users = readers.get(result, [])
    if (
      not users
      or g.is_output(result)
      or any(g.code(u) != Op.RESHAPE or u.inputs[0] != result for u in users)
    ):
      continue
    op.inputs[0] = merge.inputs[0]
    op.builtinOptions.keepNumDims = True
    out = g.tensor(result)
    out.shapeSignature = source[:-1] + [g.signature(result)[-1]]
    out.shape = [max(d, 1) for d in out.shapeSignature]
    g.changed = True


def _fuse_relu(g: Graph) -> None:
  readers = g.readers()
  producers = g.producers()
  doomed = []
  for op in g.ops:
    if g.code(op) != Op.MAXIMUM:
      continue
    for x, zero in (op.inputs, op.inputs[::-1]):
      value = g.constant(zero)
      source = producers.get(x)
      if value is None or value.dtype != np.float32 or value.size != 1 or value.any():
        continue
      if source is None or g.code(source) not in _FUSES_ACTIVATION:
        continue
      if fused_activation(source) != Activation.NONE:
        continue
      if g.only_reader(readers, x) is not op or g.signature(op.outputs[0]) != g.signature(x):
        continue
      source.builtinOptions.fusedActivationFunction = Activation.RELU
      source.outputs = list(op.outputs)
      doomed.append(op)
      break
  g.remove(doomed)


def _select_constant_conditions(g: Graph) -> None:
  """A select whose condition is a constant, all true or all false, is the
  operand it picks, where that has the select's type and shape (the NaN test
  of a constant operand of max or min, after its mask was folded)."""
  producers = g.producers()
  readers = g.readers()
  doomed = []
  for op in g.ops:
    if g.code(op) not in (Op.SELECT, Op.SELECT_V2) or len(op.inputs) != 3:
      continue
    condition = g.constant(op.inputs[0])
    if condition is None or condition.size == 0 or (condition.any() and not condition.all()):
      continue
    picked, result = op.inputs[1 if condition.all() else 2], op.outputs[0]
    shape = g.signature(result)
    if g.signature(picked) != shape or shape.count(-1) > 1:
      continue
    if g.tensor(picked).type != g.tensor(result).type:
      continue
    if not g.is_output(result):
      g.replace_uses(result, picked)
    else:
      # The model returns the select's result: the op computing the picked
      # operand writes it instead, where nothing else reads that operand.
      source = producers.get(picked)
      if source is None or g.is_output(picked) or g.only_reader(readers, picked) is not op:
        continue
      source.outputs = [result if t == picked else t for t in source.outputs]
      g.changed = True
    doomed.append(op)
  g.remove(doomed)


def _constant_branch_operands(g: Graph) -> None:
  """A constant that an IF passes to a branch (of that IF alone) is a
  constant in the branch: LiteRT sizes a branch's results when the IF is
  prepared only where what their shapes depend on (a reduction's axes) is
  constant there, else the IF's results are dynamic tensors (the litert
  pipeline's NaN test after a max or min reduction is such an IF)."""
  callers: dict = {}
  for subgraph in g.model.subgraphs:
    for op in subgraph.operators or []:
      for _, _, value in flatbuffer.subgraph_fields(op):
        for n in np.atleast_1d(value):
          callers[int(n)] = callers.get(int(n), 0) + 1
  for op in g.ops:
    if g.code(op) != Op.IF or not isinstance(op.builtinOptions, schema.IfOptionsT):
      continue
    options = op.builtinOptions
    for index in (options.thenSubgraphIndex, options.elseSubgraphIndex):
      if callers.get(index) != 1:
        continue
      branch = Graph(g.model, index)
      readers = branch.readers()
      for inner, operand in zip(branch.subgraph.inputs, op.inputs[1:]):
        value = g.constant(operand)
        if value is None or inner not in readers:
          continue
        branch.replace_uses(inner, branch.add_constant(value, g.tensor(operand).name))
        g.changed = True


def _is_positive_zero(value) -> bool:
  return (
    value is not None
    and value.dtype == np.float32
    and value.size == 1
    and not value.any()
    and not np.signbit(value).any()
  )


def _nan_propagating_relus(g: Graph) -> None:
  """JAX's relu as the litert pipeline writes it, `select(x != x, x, max(x,
  0.0))` (LiteRT's MAXIMUM drops a NaN), is a RELU, which keeps NaN and
  infinities, then an ABS: XLA's relu(-0.0) is +0.0, RELU keeps -0.0
  (signed_zeros.py drops the ABS where no reader can tell). The RELU is
  fused into the matmul, convolution or addition that computes x where x
  has no other reader: their kernels clamp the result to the finite floats
  with or without a fused activation (LiteRT's own kernels; XNNPack's keep
  infinities either way), so fusing changes no result."""
  producers = g.producers()
  readers = g.readers()
  for select in list(g.ops):
    if g.code(select) != Op.SELECT_V2 or g.region:
      continue
    mask, x, rectified = select.inputs
    test, maximum = producers.get(mask), producers.get(rectified)
    if test is None or maximum is None or g.tensor(x).type != TensorType.FLOAT32:
      continue
    if g.code(test) != Op.NOT_EQUAL or test.inputs != [x, x]:
      continue
    if g.code(maximum) == Op.RELU and maximum.inputs == [x]:
      # litert-converter writes max(x, 0.0) as RELU itself.
      if g.signature(x) == g.signature(select.outputs[0]) == g.signature(rectified):
        select.opcodeIndex = g.opcode_index(Op.ABS)
        select.inputs = [rectified]
        select.builtinOptionsType, select.builtinOptions = 0, None
        if g.only_reader(readers, mask) is select:
          g.remove([test])
      continue
    if g.code(maximum) != Op.MAXIMUM or x not in maximum.inputs or len(maximum.inputs) != 2:
      continue
    zero = maximum.inputs[1] if maximum.inputs[0] == x else maximum.inputs[0]
    if not _is_positive_zero(g.constant(zero)):
      continue
    shape = g.signature(select.outputs[0])
    if g.signature(x) != shape or g.signature(rectified) != shape:
      continue
    source = producers.get(x)
    alone = g.only_reader(readers, mask) is select and g.only_reader(readers, rectified) is select
    if (
      alone
      and source is not None
      and g.code(source) in _FUSES_ACTIVATION
      and fused_activation(source) == Activation.NONE
      and not g.is_output(x)
      and {id(r) for r in readers[x]} == {id(test), id(maximum), id(select)}
    ):
      source.builtinOptions.fusedActivationFunction = Activation.RELU
      rectified = x
      g.remove([maximum])
    elif alone:
      maximum.opcodeIndex = g.opcode_index(Op.RELU)
      maximum.inputs = [x]
      maximum.builtinOptionsType, maximum.builtinOptions = 0, None
    else:
      # The mask or the maximum has other readers (the converter shares
      # them between equal selects): a RELU of its own; what nothing reads
      # any more is removed later.
      relu = schema.OperatorT()
      relu.opcodeIndex, relu.inputs = g.opcode_index(Op.RELU), [x]
      relu.outputs = [g.add_tensor_like(rectified)]
      rectified = relu.outputs[0]
      g.ops.insert(g.ops.index(select), relu)
    select.opcodeIndex = g.opcode_index(Op.ABS)
    select.inputs = [rectified]
    select.builtinOptionsType, select.builtinOptions = 0, None
    if alone:
      g.remove([test])
    g.changed = True
    producers = g.producers()
    readers = g.readers()


def _is_sum_body(model, index: int) -> bool:
  body = Graph(model, index)
  return len(body.ops) == 1 and body.code(body.ops[0]) == Op.ADD


def _average_pools(g: Graph) -> None:
  readers = g.readers()
  doomed = []
  for op in g.ops:
    if g.code(op) != Op.STABLEHLO_REDUCE_WINDOW:
      continue
    w = op.builtinOptions2
    if not isinstance(w, schema.StablehloReduceWindowOptionsT):
      continue
    window = ints(w.windowDimensions)
    ones = [1] * len(window)
    strides = ints(w.windowStrides) or ones
    if len(window) != 4 or window[0] != 1 or window[3] != 1 or strides[0] != 1 or strides[3] != 1:
      continue
    if (ints(w.baseDilations) or ones) != ones or (ints(w.windowDilations) or ones) != ones:
      continue
    if any(ints(w.padding)):
      continue
    x, init = op.inputs[:2]
    if g.tensor(x).type != TensorType.FLOAT32 or len(op.inputs) != 2:
      continue
    init_value = g.constant(init)
    if init_value is None or init_value.size != 1 or init_value.any():
      continue
    if not _is_sum_body(g.model, w.bodySubgraphIndex):
      continue
    div = g.only_reader(readers, op.outputs[0])
    if div is None or g.code(div) != Op.DIV or div.inputs[0] != op.outputs[0]:
      continue
    count = g.constant(div.inputs[1])
    if count is None or count.size != 1 or float(count.ravel()[0]) != window[1] * window[2]:
      continue
    if fused_activation(div) not in (None, Activation.NONE):
      continue
    op.opcodeIndex = g.opcode_index(Op.AVERAGE_POOL_2D)
    op.inputs = [x]
    op.outputs = list(div.outputs)
    op.builtinOptions2Type, op.builtinOptions2 = 0, None
    op.builtinOptionsType = Options.Pool2DOptions
    op.builtinOptions = schema.Pool2DOptionsT(
      padding=schema.Padding.VALID,
      strideW=strides[2],
      strideH=strides[1],
      filterWidth=window[2],
      filterHeight=window[1],
      fusedActivationFunction=Activation.NONE,
    )
    doomed.append(div)
    g.changed = True
  g.remove(doomed)


def _has_effects(g: Graph, op, seen: set | None = None) -> bool:
  """Whether `op` does more than compute its outputs: a stateful op, or
  control flow with one in a subgraph it runs (the NaN test of a max
  reduction that a fused SOFTMAX no longer reads has none)."""
  code = g.code(op)
  if code not in _STATEFUL:
    return False
  if code not in _CONTROL_FLOW:
    return True
  seen = set() if seen is None else seen
  for _, _, value in flatbuffer.subgraph_fields(op):
    for n in map(int, np.atleast_1d(value)):
      if n not in seen:
        seen.add(n)
        if any(_has_effects(g, inner, seen) for inner in g.model.subgraphs[n].operators or []):
          return True
  return False


def _remove_unread(g: Graph) -> None:
  while True:
    readers = g.readers()
    doomed = [
      op
      for op in g.ops
      if not any(i in readers or g.is_output(i) for i in op.outputs) and not _has_effects(g, op)
    ]
    if not doomed:
      return
    g.remove(doomed)


# What lets LiteRT plan a polymorphic model and fuse it, on both routes that
# read a StableHLO module; between the two halves, the litert route drops
# the selects its pipeline leaves on folded constants.
_SHAPES_AS_CONSTANTS = (
  _constant_reshape_targets,
  _drop_identities,
  _broadcasting_selects,
  _leave_broadcasts_to_users,
  _fold_constant_broadcasts,
  _leave_broadcasts_to_users,
)
_FUSIONS = (
  _remove_unread,
  _drop_identities,
  _average_pools,
  _fully_connected_keep_dims,
  _drop_identities,
  _fold_affine,
)

_PASSES = (
  *_SHAPES_AS_CONSTANTS,
  *_FUSIONS,
  _fuse_relu,
  activations.fuse_softmax,
  activations.fuse_log_softmax,
  activations.fuse_gelu,
  special_inputs.sin_keeps_zero_sign,
  special_inputs.exp_keeps_nan,
  scatter_regions.scatter_regions_as_stablehlo,
  _remove_unread,
)


# The graph route's flatbuffers come from TF ops written for LiteRT: only
# the passes that keep its semantics bit for bit (and the special inputs'
# fixes) apply.
_GRAPH_PASSES = (
  special_inputs.sin_keeps_zero_sign,
  special_inputs.exp_keeps_nan,
  signed_zeros.abs_after_pools,
  signed_zeros.drop_abs_before_biased_ops,
  _remove_unread,
)
# The standalone litert-converter writes a polymorphic batch as the same
# shape arithmetic (with UNSORTED_SEGMENT_PROD for the products of
# dimensions), keeps JAX's infinities (it is configured to) and, from the
# litert pipeline, NaN through max and min: the native route's passes, with
# that NaN-keeping relu as RELU and ABS instead of `max(x, 0)` as a fused
# ReLU (which LiteRT's MAXIMUM would have run without the NaN), and the
# ABS dropped where a bias of +0.0 reads it too.
_LITERT_PASSES = (
  _constant_branch_operands,
  *_SHAPES_AS_CONSTANTS,
  _select_constant_conditions,
  *_FUSIONS,
  _nan_propagating_relus,
  activations.fuse_softmax,
  activations.fuse_log_softmax,
  activations.fuse_gelu,
  signed_zeros.abs_after_pools,
  signed_zeros.drop_abs_before_zero_hiding_ops,
  special_inputs.sin_keeps_zero_sign,
  special_inputs.exp_keeps_nan,
  scatter_regions.scatter_regions_as_stablehlo,
  _remove_unread,
)
PASSES = {"native": _PASSES, "graph": _GRAPH_PASSES, "litert": _LITERT_PASSES}
# The routes whose converter writes infinite constants as finite floats.
_FINITE_INFINITIES = frozenset({"native", "graph"})


def simplify(
  content: bytes, route: str = "native", *, restore_infinities=infinities.EVERY_TYPE
) -> bytes:
  """The flatbuffer `to_tflite` converted on `route`, with that route's
  rewrites applied (the same bytes when none applies), and its infinite
  constants written back in the float types `restore_infinities` names
  (infinities.py)."""
  model = flatbuffer.load(content)
  if not flatbuffer.rewritable(model):
    return content
  # First: the passes below read constants (a MAXIMUM with -inf, a bias
  # that could turn a result infinite).
  restored = False
  if route in _FINITE_INFINITIES:
    restored = infinities.restore(model, restore_infinities)
    infinities.warn_unrestored(model, infinities.EVERY_TYPE - restore_infinities)
  regions = flatbuffer.stablehlo_regions(model)
  graphs = [Graph(model, n, region=n in regions) for n in range(len(model.subgraphs))]
  for g in graphs:
    for rewrite in PASSES[route]:
      rewrite(g)
  if not restored and not any(g.changed for g in graphs):
    return content
  return flatbuffer.dump(model, len(content))
