"""What a TF.js graph model directory holds and needs: its signature, the
ops of its graph and any that the pinned TF.js cannot run, its weights, and
the shape checks jax2tf wrote into it."""

import collections
import json
import os

from jax2tf import extras
from jax2tf.cli.errors import UsageError

# jax2tf.tfjs.graph_model.MODEL_JSON: that module needs TensorFlow, and telling
# a TF.js model from the other artifacts must not.
MODEL_JSON = "model.json"
_DTYPES = {"DT_FLOAT": "float32", "DT_INT32": "int32", "DT_BOOL": "bool", "DT_INT64": "int64"}
_ITEM_BYTES = {"float32": 4, "int32": 4, "bool": 1, "complex64": 8}


def is_tfjs(path: str) -> bool:
  """A directory holding model.json (or the model.json file itself)."""
  if os.path.isdir(path):
    return os.path.isfile(os.path.join(path, MODEL_JSON))
  return os.path.basename(path) == MODEL_JSON and os.path.isfile(path)


def _tensors(infos: dict) -> list[dict]:
  out = []
  for name, info in infos.items():
    shape = info.get("tensorShape", {})
    dims = (
      None if shape.get("unknownRank") else [int(d.get("size", 0)) for d in shape.get("dim", [])]
    )
    out.append(
      {
        "name": name,
        "dtype": _DTYPES.get(info.get("dtype"), info.get("dtype")),
        "shape": None if dims is None else ["?" if d == -1 else d for d in dims],
      }
    )
  return out


def read(path: str) -> dict:
  """The report on the TF.js graph model at `path` (see docs/cli.md)."""
  extras.require_tensorflow("reading a TF.js model")
  # pylint: disable=import-outside-toplevel
  from jax2tf.tfjs import ops as tfjs_ops
  from jax2tf.tfjs.graph_model import FORMAT, METADATA_KEY

  folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
  with open(os.path.join(folder, MODEL_JSON), encoding="utf-8") as f:
    try:
      model = json.load(f)
    except json.JSONDecodeError as e:
      raise UsageError(f"{path}: {MODEL_JSON} is not JSON ({e})") from e
  if model.get("format") != FORMAT or "modelTopology" not in model:
    raise UsageError(
      f"{path}: expected a TF.js graph model (format {FORMAT!r}), got format "
      f"{model.get('format')!r}"
    )
  nodes = model["modelTopology"].get("node", [])
  counts = collections.Counter(n["op"] for n in nodes if n["op"] not in ("Const", "Placeholder"))
  missing = sorted(op for op in counts if op not in tfjs_ops.RUNS)
  weights = [w for group in model.get("weightsManifest", []) for w in group["weights"]]
  shards = [p for group in model.get("weightsManifest", []) for p in group["paths"]]
  weight_bytes = sum(
    os.path.getsize(os.path.join(folder, p))
    for p in shards
    if os.path.isfile(os.path.join(folder, p))
  )
  signature = model.get("signature", {})
  metadata = model.get("userDefinedMetadata", {}).get(METADATA_KEY, {})
  needs = [f"TF.js ops it lacks ({', '.join(missing)})"] if missing else []
  return {
    "kind": "tfjs",
    "path": os.path.abspath(folder),
    "converted_by": model.get("convertedBy"),
    "generated_by": model.get("generatedBy"),
    "tfjs_checked": tfjs_ops.TFJS_VERSION,
    "signatures": {
      "default": {
        "inputs": _tensors(signature.get("inputs", {})),
        "outputs": _tensors(signature.get("outputs", {})),
      }
    },
    "weight_bytes": weight_bytes,
    "weights": len(weights),
    "shards": shards,
    "ops": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
    "missing_ops": missing,
    "shape_checks": [c["message"] for c in metadata.get("shape_checks", [])],
    "needs": needs,
  }
