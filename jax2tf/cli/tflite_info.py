"""What a `.tflite` file holds and needs: operators, Flex and custom ops,
signatures, weights. The reading itself is `jax2tf.lite.inspect`."""

import os

from jax2tf.cli.errors import UsageError
from jax2tf.lite import inspect as lite_inspect

SUFFIX = ".tflite"


def is_tflite(path: str) -> bool:
  """A file named *.tflite, or any file with the TFLite flatbuffer identifier."""
  if not os.path.isfile(path):
    return False
  if path.endswith(SUFFIX):
    return True
  with open(path, "rb") as f:
    return lite_inspect.is_tflite(f.read(8))


def read(path: str) -> dict:
  """The report on the .tflite file `path` (see docs/cli.md)."""
  with open(path, "rb") as f:
    model = f.read()
  if not lite_inspect.is_tflite(model):
    raise UsageError(
      f"{path} is not a TFLite model: expected a flatbuffer with the identifier "
      f"{lite_inspect.FILE_IDENTIFIER.decode()!r} at bytes 4..8, got {model[4:8]!r}"
    )
  constant_buffers, weight_bytes = lite_inspect.constants(model)
  flex = lite_inspect.flex_ops(model)
  custom = lite_inspect.custom_ops(model)
  needs = []
  if flex:
    needs.append(f"the Flex delegate (TF ops: {', '.join(flex)})")
  if custom:
    needs.append(f"custom op registrations ({', '.join(custom)})")
  counts = lite_inspect.op_counts(model)
  return {
    "kind": "tflite",
    "path": os.path.abspath(path),
    "file_bytes": len(model),
    "weight_bytes": weight_bytes,
    "constant_buffers": constant_buffers,
    "min_runtime_version": lite_inspect.min_runtime_version(model),
    "signatures": lite_inspect.signatures(model),
    "ops": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
    "flex_ops": flex,
    "custom_ops": custom,
    "needs": needs,
  }
