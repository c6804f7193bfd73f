"""Running a TF.js graph model on Node, with the pure JavaScript TF.js that
package.json pins: `run_model.js` in a subprocess, arrays through files."""

import json
import os
import pathlib
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

import numpy as np

from jax2tf.tfjs.api import TFJSModel
from jax2tf.tfjs.graph_model import METADATA_KEY, MODEL_JSON

RUNNER = pathlib.Path(__file__).with_name("run_model.js")
BACKENDS = ("cpu", "wasm")
# A node_modules folder holding @tensorflow/tfjs and @tensorflow/tfjs-backend-wasm.
NODE_MODULES_ENV = "JAX2TF_NODE_MODULES"
_CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
_INSTALL = (
  "run `make install` (or `npm ci`) at the root of the jax2tf checkout, or set "
  f"{NODE_MODULES_ENV} to a node_modules folder holding @tensorflow/tfjs and "
  "@tensorflow/tfjs-backend-wasm"
)
_ERROR_MARKER = "--- jax2tf.tfjs: error ---"
_DTYPES = {"DT_FLOAT": "float32", "DT_INT32": "int32", "DT_BOOL": "bool"}


class TFJSRuntimeError(RuntimeError):
  """TF.js failed to load or run the model (the message holds Node's error)."""


def node_modules() -> pathlib.Path:
  """Where TF.js is installed: $JAX2TF_NODE_MODULES, else ./node_modules, else
  the node_modules of the checkout this package runs from."""
  env = os.environ.get(NODE_MODULES_ENV)
  candidates = [pathlib.Path(env)] if env else [pathlib.Path.cwd(), _CHECKOUT]
  candidates = [c if c.name == "node_modules" else c / "node_modules" for c in candidates]
  for folder in candidates:
    if (folder / "@tensorflow" / "tfjs" / "package.json").is_file():
      return folder
  raise FileNotFoundError(
    f"TF.js is not installed: no @tensorflow/tfjs under {', '.join(map(str, candidates))}; "
    + _INSTALL
  )


def _node() -> str:
  node = shutil.which("node")
  if node is None:
    raise FileNotFoundError(
      "running a TF.js model needs Node.js, and `node` is not on PATH; install it, then " + _INSTALL
    )
  return node


def _signature(folder: str) -> tuple[list, list, dict]:
  """(input names, output names, {input name: (dtype, shape)}) of a model directory."""
  with open(os.path.join(folder, MODEL_JSON), encoding="utf-8") as f:
    model = json.load(f)
  order = model.get("userDefinedMetadata", {}).get(METADATA_KEY, {})
  inputs = model["signature"].get("inputs", {})
  specs = {}
  for name, info in inputs.items():
    dims = info.get("tensorShape", {}).get("dim", [])
    specs[name] = (_DTYPES.get(info.get("dtype")), [int(d.get("size", 0)) for d in dims])
  return (
    order.get("inputs", sorted(inputs)),
    order.get("outputs", sorted(model["signature"].get("outputs", {}))),
    specs,
  )


def _input(name: str, arg, spec) -> np.ndarray:
  dtype, shape = spec
  arg = np.asarray(arg)
  if arg.dtype.name != dtype:
    raise TypeError(f"input {name!r}: the model takes {dtype}, got {arg.dtype}")
  if len(arg.shape) != len(shape) or any(d not in (-1, a) for a, d in zip(arg.shape, shape)):
    wanted = ["?" if d == -1 else d for d in shape]
    raise ValueError(f"input {name!r}: the model takes shape {wanted}, got {list(arg.shape)}")
  return arg


def _write_request(folder, model_dir, backend, names, outputs, specs, input_sets) -> str:
  runs = []
  for i, args in enumerate(input_sets):
    if len(args) != len(names):
      raise TypeError(f"the model takes {len(names)} inputs ({', '.join(names)}), got {len(args)}")
    run: dict[str, dict] = {}
    for name, arg in zip(names, args):
      value = _input(name, arg, specs[name])
      file = f"run{i}-input-{len(run)}.bin"
      value.astype(value.dtype.newbyteorder("<")).tofile(os.path.join(folder, file))
      run[name] = {"dtype": value.dtype.name, "shape": list(value.shape), "file": file}
    runs.append(run)
  request = {"model": model_dir, "backend": backend, "outputs": outputs, "runs": runs}
  path = os.path.join(folder, "request.json")
  with open(path, "w", encoding="utf-8") as f:
    json.dump(request, f)
  return path


def _read_response(folder, backend) -> list[list[np.ndarray]]:
  with open(os.path.join(folder, "response.json"), encoding="utf-8") as f:
    response = json.load(f)
  if response["backend"] != backend:
    raise TFJSRuntimeError(f"TF.js ran on the {response['backend']} backend, not {backend}")
  results = []
  for run in response["runs"]:
    arrays = []
    for out in run:
      data = np.fromfile(
        os.path.join(folder, out["file"]), np.dtype(out["dtype"]).newbyteorder("<")
      )
      arrays.append(data.astype(out["dtype"]).reshape(out["shape"]))
    results.append(arrays)
  return results


def _directory(model, folder: str) -> str:
  """The model's directory; an unsaved TFJSModel is saved under `folder`."""
  if not isinstance(model, TFJSModel):
    return os.path.abspath(os.fspath(model))
  if model.path is None:
    model = model.save(os.path.join(folder, "model"))
  return str(model.path)


def run_many(
  model: TFJSModel | str | os.PathLike,
  input_sets: Sequence[Sequence],
  *,
  backend: str = "cpu",
  timeout: float = 600,
) -> list[list[np.ndarray]]:
  """`run` on several sets of inputs, loading the model once (one Node
  process): a list, per set, of the outputs."""
  if backend not in BACKENDS:
    raise ValueError(f"backend: expected one of {BACKENDS}, got {backend!r}")
  node, modules = _node(), node_modules()
  with tempfile.TemporaryDirectory(prefix="jax2tf-tfjs-") as folder:
    model_dir = _directory(model, folder)
    names, outputs, specs = _signature(model_dir)
    request = _write_request(folder, model_dir, backend, names, outputs, specs, input_sets)
    env = dict(os.environ, NODE_PATH=str(modules))
    proc = subprocess.run(
      [node, str(RUNNER), request],
      cwd=folder,
      env=env,
      capture_output=True,
      text=True,
      timeout=timeout,
      check=False,
    )
    if proc.returncode != 0:
      # What run_model.js reports follows its marker; TF.js's notices precede it.
      error = proc.stderr.rpartition(_ERROR_MARKER)[2].strip()
      raise TFJSRuntimeError(
        f"TF.js ({backend} backend) failed on the model in {model_dir}:\n{error[-4000:]}"
      )
    return _read_response(folder, backend)


def run(model: TFJSModel | str | os.PathLike, *args, backend: str = "cpu") -> list[np.ndarray]:
  """The model's outputs on TF.js in Node, as a list in the order of JAX's
  flattened result.

  `model` is a `TFJSModel` from `to_tfjs` or the path of a model directory;
  the inputs go positionally, in the JAX function's order, with the dtypes
  of the signature. `backend` is "cpu" (plain JavaScript) or "wasm"
  (WebAssembly). Needs Node.js and the npm packages of package.json (`make
  install`).
  """
  return run_many(model, [args], backend=backend)[0]
