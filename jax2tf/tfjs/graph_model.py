"""The TF.js graph-model format: `model.json` (the GraphDef as JSON, the
signature, the weights manifest) beside binary weight shards.

Every Const's value moves out of the graph into the shards, as TF.js's own
converter does: the JSON keeps only each Const's dtype and shape, and TF.js
binds the value by the node's name. The bytes of all values, little-endian,
one after the other, are cut into shards of at most `SHARD_BYTES` (4 MiB, the
largest file browsers cache); a value may span two shards.
"""

import json
from collections.abc import Sequence

import numpy as np
import tensorflow as tf
from google.protobuf import json_format

from jax2tf.tfjs.freeze import Frozen
from jax2tf.tfjs.refusals import TFJSConversionError

MODEL_JSON = "model.json"
FORMAT = "graph-model"
SHARD_BYTES = 4 * 2**20
METADATA_KEY = "jax2tf"
_INT32 = np.iinfo(np.int32)


def _weight_value(node) -> np.ndarray:
  value = tf.make_ndarray(node.attr["value"].tensor)
  if value.dtype == np.int64:
    # TF.js holds int64 as int32 (shapes and indices, here).
    if value.size and (value.min() < _INT32.min or value.max() > _INT32.max):
      raise TFJSConversionError(
        f"to_tfjs: the int64 constant {node.name!r} holds values beyond int32, "
        "which TF.js reads int64 tensors as"
      )
    value = value.astype(np.int32)
  return value


def _take_weights(graph_def) -> list[tuple[str, np.ndarray]]:
  """Each Const's (name, value), leaving only its dtype and shape in the graph."""
  if len(graph_def.library.function):
    # Freezing inlines every function; TF.js would look up the constants of
    # one that remained under other names.
    names = [f.signature.name for f in graph_def.library.function]
    raise TFJSConversionError(f"to_tfjs: functions remain in the frozen graph: {names}")
  weights = []
  for node in graph_def.node:
    if node.op != "Const":
      continue
    weights.append((node.name, _weight_value(node)))
    tensor = node.attr["value"].tensor
    for field, _ in tensor.ListFields():
      if field.name not in ("dtype", "tensor_shape"):
        tensor.ClearField(field.name)
  return weights


def _value_bytes(value: np.ndarray) -> bytes:
  if value.dtype == object:
    # Strings: each one's byte length (uint32, little-endian), then its bytes.
    out = bytearray()
    for s in value.reshape(-1):
      data = s if isinstance(s, bytes) else str(s).encode()
      out += np.uint32(len(data)).astype("<u4").tobytes() + data
    return bytes(out)
  return np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<"), copy=False).tobytes()


def _manifest_dtype(value: np.ndarray) -> str:
  return "string" if value.dtype == object else value.dtype.name


def _shards(weights) -> tuple[list, dict[str, bytes]]:
  """The weights manifest (one group) and the shard files it names."""
  if not weights:
    return [], {}
  content = b"".join(_value_bytes(v) for _, v in weights)
  count = max(1, -(-len(content) // SHARD_BYTES))
  files = {
    f"group1-shard{i + 1}of{count}.bin": content[i * SHARD_BYTES : (i + 1) * SHARD_BYTES]
    for i in range(count)
  }
  entries = [
    {"name": name, "shape": list(value.shape), "dtype": _manifest_dtype(value)}
    for name, value in weights
  ]
  return [{"paths": list(files), "weights": entries}], files


def _as_json(message) -> dict:
  """A protobuf message as JSON, with the sizes of empty dimensions kept:
  protobuf's JSON leaves out fields at their default, so a dimension of size
  0 would come out as `{}`, which TF.js reads as no size at all."""
  obj = json_format.MessageToDict(message)

  def fix(value):
    if isinstance(value, dict):
      for key, item in value.items():
        if key == "dim" and isinstance(item, list):
          for dim in item:
            dim.setdefault("size", "0")
        else:
          fix(item)
    elif isinstance(value, list):
      for item in value:
        fix(item)

  fix(obj)
  return obj


def _tensor_info(tensor) -> dict:
  info = tf.compat.v1.TensorInfo(
    name=tensor.name, dtype=tensor.dtype.as_datatype_enum, tensor_shape=tensor.shape.as_proto()
  )
  return _as_json(info)


def _signature(frozen: Frozen) -> dict:
  """A SignatureDef as JSON: the graph's tensors by input and output name."""
  return {
    "inputs": {name: _tensor_info(t) for name, t in frozen.inputs.items()},
    "outputs": {name: _tensor_info(t) for name, t in frozen.outputs.items()},
  }


def model_files(
  frozen: Frozen,
  *,
  generated_by: str,
  converted_by: str,
  uint32: Sequence[str] = (),
  webgl_inexact: Sequence[str] = (),
) -> dict[str, bytes]:
  """{file name: content}: model.json and the weight shards."""
  graph_def = tf.compat.v1.GraphDef()
  graph_def.CopyFrom(frozen.graph_def)
  manifest, files = _shards(_take_weights(graph_def))
  model = {
    "format": FORMAT,
    "generatedBy": generated_by,
    "convertedBy": converted_by,
    "signature": _signature(frozen),
    "modelTopology": _as_json(graph_def),
    "weightsManifest": manifest,
    # The signature's maps carry no order; the JAX function's is kept here
    # (TF.js passes it through as the model's `metadata`), with the messages
    # of the shape checks (shape_checks.py), the inputs and outputs that are
    # uint32 in JAX (int32 of the same bits here), and the primitives that
    # the WebGL backend would compute inexactly (webgl.py).
    "userDefinedMetadata": {
      METADATA_KEY: {
        "inputs": list(frozen.inputs),
        "outputs": list(frozen.outputs),
        "shape_checks": frozen.shape_checks,
        "uint32": list(uint32),
        "webgl_inexact": list(webgl_inexact),
      }
    },
  }
  return {MODEL_JSON: json.dumps(model).encode(), **files}
