"""A TFLite flatbuffer as editable objects: load, edit one subgraph through
`Graph`, and write back.

The schema's object API (`ModelT`) holds the whole model; `Graph` adds the
producer/reader maps and constant values that rewrites need. Edits append
tensors and buffers and never renumber them (signatures refer to tensors by
index); `dump` drops what nothing uses and renumbers the rest.
"""

import flatbuffers
import ml_dtypes
import numpy as np

from jax2tf.lite.litert_schema import schema

TensorType = schema.TensorType

NUMPY_TYPES = {
  TensorType.FLOAT32: np.float32,
  TensorType.INT32: np.int32,
  TensorType.INT64: np.int64,
  TensorType.BOOL: np.bool_,
}

# The float types whose constants `constant_buffers` also reads, for
# infinities.py; the rewrites read only NUMPY_TYPES.
FLOAT_TYPES = {
  TensorType.FLOAT32: np.float32,
  TensorType.FLOAT16: np.float16,
  TensorType.BFLOAT16: ml_dtypes.bfloat16,
}


# The matmul and convolutions with a bias input (index 2) and a fused
# activation -> the axis of their weights that holds the output channels.
WEIGHT_CHANNEL_AXIS = {
  schema.BuiltinOperator.FULLY_CONNECTED: 0,
  schema.BuiltinOperator.CONV_2D: 0,
  schema.BuiltinOperator.DEPTHWISE_CONV_2D: 3,
}


def fused_activation(op) -> int | None:
  """The op's fused activation function, None for ops without one."""
  return getattr(op.builtinOptions, "fusedActivationFunction", None)


class _AlignedBuffer(schema.BufferT):
  """A buffer whose bytes start 16-byte aligned, as the converter writes them
  (kernels read weights in place)."""

  def Pack(self, builder):  # noqa: N802 (the schema's method name)
    data = None
    if self.data is not None:
      raw = np.asarray(self.data, dtype=np.uint8).tobytes()
      builder.StartVector(1, len(raw), 16)
      builder.head = builder.head - len(raw)
      builder.Bytes[builder.head : builder.head + len(raw)] = raw
      data = builder.EndVector()
    schema.BufferStart(builder)
    if data is not None:
      schema.BufferAddData(builder, data)
    schema.BufferAddOffset(builder, self.offset)
    schema.BufferAddSize(builder, self.size)
    return schema.BufferEnd(builder)


def ints(values) -> list[int]:
  return [] if values is None else [int(v) for v in values]


class Graph:
  """One subgraph with its model: who produces and who reads each tensor."""

  def __init__(self, model, index: int, *, region: bool = False):
    self.model = model
    self.subgraph = model.subgraphs[index]
    # A StableHLO op's region (a scatter's update, a reduce's body), which
    # LiteRT runs only as a single kernel: no op may be added to it.
    self.region = region
    self.changed = False
    # The schema reads index vectors as numpy arrays; lists are simpler to edit.
    s = self.subgraph
    s.inputs, s.outputs = ints(s.inputs), ints(s.outputs)
    s.operators = list(s.operators or [])
    s.tensors = list(s.tensors or [])
    for op in s.operators:
      op.inputs, op.outputs = ints(op.inputs), ints(op.outputs)
    for t in s.tensors:
      t.shape = ints(t.shape)
      t.shapeSignature = None if t.shapeSignature is None else ints(t.shapeSignature)

  @property
  def ops(self):
    return self.subgraph.operators

  def code(self, op) -> int:
    c = self.model.operatorCodes[op.opcodeIndex]
    return max(c.builtinCode, c.deprecatedBuiltinCode)

  def tensor(self, i: int):
    return self.subgraph.tensors[i]

  def signature(self, i: int) -> list[int]:
    t = self.tensor(i)
    return list(t.shapeSignature if t.shapeSignature is not None else t.shape)

  def producers(self) -> dict:
    return {t: op for op in self.ops for t in op.outputs}

  def readers(self) -> dict:
    out: dict = {}
    for op in self.ops:
      for i in op.inputs:
        if i >= 0:
          out.setdefault(i, []).append(op)
    return out

  def only_reader(self, readers, tensor: int):
    """The one op reading `tensor` (given `readers()`), or None when several
    do or the subgraph returns it."""
    users = readers.get(tensor, [])
    if len(users) != 1 or self.is_output(tensor):
      return None
    return users[0]

  def is_output(self, i: int) -> bool:
    return i in self.subgraph.outputs

  def constant(self, i: int):
    """The value of a constant tensor (of a type in NUMPY_TYPES, dense,
    unquantized), else None."""
    if i < 0:
      return None
    t = self.tensor(i)
    if not is_plain_constant(self.model, t):
      return None
    raw = np.asarray(self.model.buffers[t.buffer].data, dtype=np.uint8).tobytes()
    return np.frombuffer(raw, dtype=NUMPY_TYPES[t.type]).reshape(t.shape)

  def add_constant(self, value: np.ndarray, name: bytes | None) -> int:
    # ascontiguousarray makes a scalar an array of one element.
    value = np.ascontiguousarray(value).reshape(np.shape(value))
    kind = {np.dtype(v): k for k, v in NUMPY_TYPES.items()}[value.dtype]
    self.model.buffers.append(_AlignedBuffer())
    self.model.buffers[-1].data = np.frombuffer(value.tobytes(), dtype=np.uint8)
    t = schema.TensorT()
    t.shape = list(value.shape)
    t.type = kind
    t.buffer = len(self.model.buffers) - 1
    t.name = name
    self.subgraph.tensors.append(t)
    return len(self.subgraph.tensors) - 1

  def add_tensor_like(self, i: int) -> int:
    """A new tensor of tensor `i`'s type, shape and signature."""
    like = self.tensor(i)
    t = schema.TensorT()
    t.shape, t.type, t.name = list(like.shape), like.type, (like.name or b"") + b"/moved"
    t.shapeSignature = None if like.shapeSignature is None else list(like.shapeSignature)
    t.quantization = like.quantization
    self.subgraph.tensors.append(t)
    return len(self.subgraph.tensors) - 1

  def opcode_index(self, code: int) -> int:
    for n, c in enumerate(self.model.operatorCodes):
      if max(c.builtinCode, c.deprecatedBuiltinCode) == code:
        return n
    c = schema.OperatorCodeT()
    c.builtinCode = code
    c.deprecatedBuiltinCode = min(code, schema.BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES)
    c.version = 1
    self.model.operatorCodes.append(c)
    return len(self.model.operatorCodes) - 1

  def replace_uses(self, old: int, new: int) -> None:
    for op in self.ops:
      op.inputs = [new if i == old else i for i in op.inputs]
    self.changed = True

  def remove(self, doomed) -> None:
    if not doomed:
      return
    ids = {id(op) for op in doomed}
    self.subgraph.operators = [op for op in self.ops if id(op) not in ids]
    self.changed = True


def is_plain_constant(model, t, types=NUMPY_TYPES) -> bool:
  """Whether tensor `t` of `model` is a constant whose buffer holds its values
  as they are: a type in `types`, dense, unquantized."""
  buffer = model.buffers[t.buffer] if t.buffer else None
  if buffer is None or buffer.data is None or len(buffer.data) == 0 or t.type not in types:
    return False
  if t.isVariable or t.sparsity is not None:
    return False
  return t.quantization is None or t.quantization.scale is None


def constant_buffers(model, tensor_type: int):
  """(buffer, values) once per constant buffer that every tensor reading it,
  in every subgraph, reads as a plain constant (`is_plain_constant`) of
  `tensor_type` (in NUMPY_TYPES or FLOAT_TYPES); `values` is a writable flat
  copy. The converter shares one buffer between equal constants, of any type."""
  types = NUMPY_TYPES | FLOAT_TYPES
  readers: dict[int, list] = {}
  for subgraph in model.subgraphs or []:
    for t in subgraph.tensors or []:
      if t.buffer:
        readers.setdefault(t.buffer, []).append(t)
  for index, tensors in readers.items():
    if all(t.type == tensor_type and is_plain_constant(model, t, types) for t in tensors):
      buffer = model.buffers[index]
      raw = np.asarray(buffer.data, dtype=np.uint8).tobytes()
      yield buffer, np.frombuffer(raw, dtype=types[tensor_type]).copy()


def rewritable(model) -> bool:
  # Weights stored outside the flatbuffer (offset/size) would not survive a
  # repack; nor would anything this schema does not know.
  if any(b.offset or b.size for b in model.buffers or []):
    return False
  return not any(t.externalBuffer for s in model.subgraphs or [] for t in s.tensors or [])


def subgraph_fields(op):
  # Every options field naming a subgraph: body/cond/then/else/init/
  # comparator/decomposition/updateComputation...SubgraphIndex, branch
  # SubgraphIndices, CallOptions.subgraph.
  for options in (op.builtinOptions, op.builtinOptions2):
    for name, value in getattr(options, "__dict__", {}).items():
      if "ubgraph" in name and value is not None:
        yield options, name, value


# The StableHLO ops whose regions LiteRT runs as one kernel (a reducer or a
# comparator), unlike a while's or a case's bodies.
_KERNEL_REGION_OPTIONS = (
  schema.StablehloReduceOptionsT,
  schema.StablehloReduceWindowOptionsT,
  schema.StablehloScatterOptionsT,
  schema.StablehloSortOptionsT,
)


def stablehlo_regions(model) -> set[int]:
  """The subgraphs that are reducer or comparator regions of StableHLO ops."""
  return {
    int(n)
    for s in model.subgraphs or []
    for op in s.operators or []
    for options, _, value in subgraph_fields(op)
    if isinstance(options, _KERNEL_REGION_OPTIONS)
    for n in np.atleast_1d(value)
  }


def _drop_unreachable_subgraphs(model) -> None:
  """Removes the subgraphs no op or signature leads to (the bodies of the
  windowed sums that became average pools), renumbering the references."""
  reached = {0} | {sig.subgraphIndex for sig in model.signatureDefs or []}
  todo = list(reached)
  while todo:
    for op in model.subgraphs[todo.pop()].operators or []:
      for _, _, value in subgraph_fields(op):
        for n in np.atleast_1d(value):
          if int(n) not in reached:
            reached.add(int(n))
            todo.append(int(n))
  if len(reached) == len(model.subgraphs):
    return
  renumber = {old: new for new, old in enumerate(sorted(reached))}
  model.subgraphs = [model.subgraphs[n] for n in sorted(reached)]
  for s in model.subgraphs:
    for op in s.operators or []:
      for options, name, value in list(subgraph_fields(op)):
        if np.ndim(value):
          setattr(options, name, [renumber[int(n)] for n in value])
        else:
          setattr(options, name, renumber[int(value)])
  for sig in model.signatureDefs or []:
    sig.subgraphIndex = renumber[sig.subgraphIndex]


def _compact(model) -> None:
  """Drops the tensors no op, subgraph or signature uses (shape arithmetic,
  folded weights) and the buffers only they held, renumbering the rest."""
  signatures = model.signatureDefs or []
  for n, s in enumerate(model.subgraphs):
    maps = [
      m
      for sig in signatures
      if sig.subgraphIndex == n
      for m in (sig.inputs or []) + (sig.outputs or [])
    ]
    live = set(s.inputs) | set(s.outputs) | {m.tensorIndex for m in maps}
    for op in s.operators or []:
      live.update(op.inputs, op.outputs, ints(op.intermediates))
    live.discard(-1)
    renumber = {old: new for new, old in enumerate(sorted(live))}
    s.tensors = [s.tensors[i] for i in sorted(live)]
    s.inputs = [renumber[i] for i in s.inputs]
    s.outputs = [renumber[i] for i in s.outputs]
    for op in s.operators or []:
      op.inputs = [renumber.get(i, -1) for i in op.inputs]
      op.outputs = [renumber[i] for i in op.outputs]
      if op.intermediates is not None:
        op.intermediates = [renumber[int(i)] for i in op.intermediates]
    for m in maps:
      m.tensorIndex = renumber[m.tensorIndex]
  held = {0} | {m.buffer for m in model.metadata or []}
  held |= {t.buffer for s in model.subgraphs for t in s.tensors}
  renumber = {old: new for new, old in enumerate(sorted(held))}
  model.buffers = [model.buffers[n] for n in sorted(held)]
  for s in model.subgraphs:
    for t in s.tensors:
      t.buffer = renumber[t.buffer]
  for m in model.metadata or []:
    m.buffer = renumber[m.buffer]


def _aligned(buffer) -> _AlignedBuffer:
  if isinstance(buffer, _AlignedBuffer):
    return buffer
  out = _AlignedBuffer()
  out.data, out.offset, out.size = buffer.data, buffer.offset, buffer.size
  return out


def load(content: bytes):
  """The model of a flatbuffer, as the schema's `ModelT`."""
  return schema.ModelT.InitFromPackedBuf(bytearray(content), 0)


def dump(model, size_hint: int = 0) -> bytes:
  """The flatbuffer of an edited model, without the subgraphs, tensors and
  buffers nothing uses any more, weights 16-byte aligned."""
  _drop_unreachable_subgraphs(model)
  _compact(model)
  model.buffers = [_aligned(b) for b in model.buffers]
  builder = flatbuffers.Builder(size_hint + 1024)
  builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
  return bytes(builder.Output())
