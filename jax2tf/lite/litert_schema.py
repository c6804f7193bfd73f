"""LiteRT's flatbuffer schema (`schema_py_generated`, the FlatBuffers object
API of `.tflite` files), from whichever installed package ships it: the
LiteRT interpreter (ai-edge-litert), the standalone converter
(litert-converter), or TensorFlow (`tensorflow.lite`), in that order. LiteRT's
own is the schema of the runtime that reads the models, and needs no
TensorFlow."""

import importlib
import types
from typing import Any

PROVIDERS = (
  "ai_edge_litert.schema_py_generated",
  "litert_converter.schema_py_generated",
  "tensorflow.lite.python.schema_py_generated",
)


def _load() -> types.ModuleType:
  for module in PROVIDERS:
    try:
      return importlib.import_module(module)
    except ModuleNotFoundError as e:
      # The provider (or the part of it holding the schema) is missing;
      # anything else it fails to import is its own error.
      if e.name is None or not module.startswith(e.name):
        raise
  raise ImportError(
    "reading or editing a .tflite model needs LiteRT's flatbuffer schema, which comes "
    'with LiteRT: pip install "jax2tf[litert]" (or "jax2tf[tflite]")',
    name=PROVIDERS[0].split(".")[0],
  )


# Any: generated code, whose classes the rewrites subclass and build.
schema: Any = _load()
