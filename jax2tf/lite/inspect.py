"""What a `.tflite` flatbuffer holds, read with LiteRT's schema: its operators,
signatures and constant buffers. Nothing here builds an interpreter, so a
model whose custom ops this process cannot resolve is read all the same."""

import collections

# The flatbuffer file identifier of TFLite models, at bytes 4..8.
FILE_IDENTIFIER = b"TFL3"


def _schema():
  # Imported when first read: the ImportError of a missing schema (saying
  # what to install) comes from the function called, not from this import.
  from jax2tf.lite.litert_schema import schema  # pylint: disable=import-outside-toplevel

  return schema


def is_tflite(model: bytes) -> bool:
  """Whether the bytes carry the TFLite flatbuffer identifier."""
  return bytes(model[4:8]) == FILE_IDENTIFIER


def _root(model: bytes):
  return _schema().Model.GetRootAs(bytes(model), 0)


def _operator_codes(root) -> list[tuple[str, bool]]:
  """(name, is custom) per operator code: builtin operators by their TFLite
  name (FULLY_CONNECTED, ...), custom and Flex ones by their custom code."""
  schema = _schema()
  names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
  codes = []
  for i in range(root.OperatorCodesLength()):
    code = root.OperatorCodes(i)
    # Codes above 127 live in BuiltinCode; the deprecated byte field caps at 127.
    builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
    if builtin == schema.BuiltinOperator.CUSTOM:
      codes.append((code.CustomCode().decode(), True))
    else:
      codes.append((names.get(builtin, f"BUILTIN_{builtin}"), False))
  return codes


def op_counts(model: bytes) -> collections.Counter:
  """{operator name: count} over every subgraph: builtin operators by their
  TFLite name (FULLY_CONNECTED, CONV_2D, ...), custom and Flex operators by
  their custom code (FlexErfinv, ...)."""
  root = _root(model)
  codes = _operator_codes(root)
  counts: collections.Counter = collections.Counter()
  for s in range(root.SubgraphsLength()):
    subgraph = root.Subgraphs(s)
    for j in range(subgraph.OperatorsLength()):
      counts[codes[subgraph.Operators(j).OpcodeIndex()][0]] += 1
  return counts


def flex_ops(model: bytes) -> list[str]:
  """The TF ops the model runs through the Flex delegate."""
  return sorted(op[len("Flex") :] for op in op_counts(model) if op.startswith("Flex"))


def custom_ops(model: bytes) -> list[str]:
  """Custom operators other than Flex ones: the app must register each."""
  codes = _operator_codes(_root(model))
  return sorted({name for name, custom in codes if custom and not name.startswith("Flex")})


def _tensor_types() -> dict[int, str]:
  # FLOAT32 -> "float32", BOOL -> "bool", the names NumPy and ml_dtypes use.
  types = vars(_schema().TensorType).items()
  return {v: k.lower() for k, v in types if not k.startswith("_")}


def _tensor(subgraph, index: int, types: dict[int, str]) -> dict:
  tensor = subgraph.Tensors(index)
  shape = [int(d) for d in tensor.ShapeAsNumpy()] if tensor.ShapeLength() else []
  # The converter writes a shape signature only where a dimension is dynamic
  # (-1 there; `shape` holds 1 in its place).
  if tensor.ShapeSignatureLength():
    signature = [int(d) for d in tensor.ShapeSignatureAsNumpy()]
  else:
    signature = list(shape)
  return {
    "tensor": tensor.Name().decode(),
    "dtype": types.get(tensor.Type(), f"TYPE_{tensor.Type()}"),
    "shape": shape,
    "shape_signature": signature,
  }


def signatures(model: bytes) -> dict[str, dict[str, list[dict]]]:
  """{signature key: {"inputs": [...], "outputs": [...]}}; each tensor as
  {"name", "tensor", "dtype", "shape", "shape_signature"}, in the order the
  flatbuffer lists them (LiteRT's `get_signature_runner` details hold the
  same facts)."""
  root = _root(model)
  types = _tensor_types()
  found = {}
  for i in range(root.SignatureDefsLength()):
    sig = root.SignatureDefs(i)
    subgraph = root.Subgraphs(sig.SubgraphIndex())
    entry = {}
    for side, length, get in (
      ("inputs", sig.InputsLength(), sig.Inputs),
      ("outputs", sig.OutputsLength(), sig.Outputs),
    ):
      entry[side] = [
        {"name": get(j).Name().decode(), **_tensor(subgraph, get(j).TensorIndex(), types)}
        for j in range(length)
      ]
    found[sig.SignatureKey().decode()] = entry
  return found


def _buffer_bytes(buffer) -> int:
  # Models over 2 GiB keep buffers after the flatbuffer: offset and size then
  # locate them (an offset of 0 or 1 means none).
  if buffer.Offset() > 1:
    return int(buffer.Size())
  return int(buffer.DataLength())


def constants(model: bytes) -> tuple[int, int]:
  """(number of constant buffers, their total bytes): the weights. Counts the
  buffers that tensors point at (once each, as tensors may share one), not the
  metadata buffers beside them."""
  root = _root(model)
  buffers = set()
  for s in range(root.SubgraphsLength()):
    subgraph = root.Subgraphs(s)
    for t in range(subgraph.TensorsLength()):
      index = subgraph.Tensors(t).Buffer()
      if index and _buffer_bytes(root.Buffers(index)):
        buffers.add(index)
  return len(buffers), sum(_buffer_bytes(root.Buffers(i)) for i in buffers)


def min_runtime_version(model: bytes) -> str | None:
  """The oldest TFLite runtime that runs the model, as the converter recorded
  it in the model's metadata ("min_runtime_version"); None when absent."""
  root = _root(model)
  for i in range(root.MetadataLength()):
    metadata = root.Metadata(i)
    if metadata.Name() == b"min_runtime_version":
      buffer = root.Buffers(metadata.Buffer())
      if not buffer.DataLength():
        return None
      return bytes(buffer.DataAsNumpy()).split(b"\x00")[0].decode() or None
  return None
