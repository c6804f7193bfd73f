"""Running a TF.js graph model on Node, with the pure JavaScript TF.js that
package.json pins: `run_model.js` in a Node process, arrays through files."""

import json
import os
import pathlib
import subprocess
import tempfile
from collections.abc import Sequence

import numpy as np

from jax2tf.deploy import node as node_process
from jax2tf.tfjs.api import TFJSModel
from jax2tf.tfjs.graph_model import METADATA_KEY, MODEL_JSON

RUNNER = pathlib.Path(__file__).with_name("run_model.js")
BACKENDS = ("cpu", "wasm")
# A node_modules folder holding @tensorflow/tfjs and @tensorflow/tfjs-backend-wasm.
NODE_MODULES_ENV = node_process.NODE_MODULES_ENV
_INSTALL = (
  "run `make install` (or `npm ci`) at the root of the jax2tf checkout, or set "
  f"{NODE_MODULES_ENV} to a node_modules folder holding @tensorflow/tfjs and "
  "@tensorflow/tfjs-backend-wasm"
)
_REPLY_PREFIX = "jax2tf.tfjs reply: "
# What the Node scripts print before an error (TF.js writes notices to stderr too).
ERROR_MARKER = "--- jax2tf.tfjs: error ---"
_DTYPES = {"DT_FLOAT": "float32", "DT_INT32": "int32", "DT_BOOL": "bool"}


class TFJSRuntimeError(RuntimeError):
  """TF.js failed to load or run the model (the message holds Node's error)."""


def node_modules() -> pathlib.Path:
  """Where TF.js is installed: $JAX2TF_NODE_MODULES, else ./node_modules, else
  the node_modules of the checkout this package runs from."""
  return node_process.node_modules("@tensorflow/tfjs", install=_INSTALL, what="TF.js")


def node() -> str:
  """The `node` on PATH."""
  return node_process.node("running a TF.js model", _INSTALL)


def _metadata(folder: str) -> tuple[dict, dict]:
  path = os.path.join(folder, MODEL_JSON)
  if not os.path.isfile(path):
    raise FileNotFoundError(
      f"model: {folder!r} holds no TF.js model (no {MODEL_JSON}); pass a TFJSModel from "
      "jax2tf.to_tfjs or the directory it was written to"
    )
  with open(path, encoding="utf-8") as f:
    model = json.load(f)
  return model, model.get("userDefinedMetadata", {}).get(METADATA_KEY, {})


def signature(folder: str) -> tuple[list, list, dict]:
  """(input names, output names, {input name: (dtype, shape)}) of a model directory."""
  model, order = _metadata(folder)
  unsigned = set(order.get("uint32", ()))
  inputs = model["signature"].get("inputs", {})
  specs = {}
  for name, info in inputs.items():
    dims = info.get("tensorShape", {}).get("dim", [])
    dtype = "uint32" if name in unsigned else _DTYPES.get(info.get("dtype"))
    specs[name] = (dtype, [int(d.get("size", 0)) for d in dims])
  return (
    order.get("inputs", sorted(inputs)),
    order.get("outputs", sorted(model["signature"].get("outputs", {}))),
    specs,
  )


def check_input(name: str, arg, spec) -> np.ndarray:
  dtype, shape = spec
  arg = np.asarray(arg)
  if arg.dtype.name != dtype:
    raise TypeError(f"input {name!r}: the model takes {dtype}, got {arg.dtype}")
  if len(arg.shape) != len(shape) or any(d not in (-1, a) for a, d in zip(arg.shape, shape)):
    wanted = ["?" if d == -1 else d for d in shape]
    raise ValueError(f"input {name!r}: the model takes shape {wanted}, got {list(arg.shape)}")
  # TF.js has no unsigned tensors: a uint32 input goes in as int32 of the same bits.
  return arg.view(np.int32) if dtype == "uint32" else arg


def webgl_inexact(folder: str) -> list[str]:
  """The JAX primitives of the model that TF.js's WebGL backend computes
  inexactly (jax2tf/tfjs/webgl.py); empty for models written before them."""
  return list(_metadata(folder)[1].get("webgl_inexact", ()))


def as_declared(folder: str, outputs: Sequence[str], arrays: list) -> list:
  """The outputs as the JAX function returns them: uint32 ones come out of
  TF.js as int32 of the same bits."""
  unsigned = set(_metadata(folder)[1].get("uint32", ()))
  return [a.view(np.uint32) if n in unsigned else a for n, a in zip(outputs, arrays)]


def _write_request(
  folder, model_dir, backend, names, outputs, specs, input_sets, timing_calls=0
) -> str:
  runs = []
  for i, args in enumerate(input_sets):
    if len(args) != len(names):
      raise TypeError(f"the model takes {len(names)} inputs ({', '.join(names)}), got {len(args)}")
    run: dict[str, dict] = {}
    for name, arg in zip(names, args):
      value = check_input(name, arg, specs[name])
      file = f"run{i}-input-{len(run)}.bin"
      value.astype(value.dtype.newbyteorder("<")).tofile(os.path.join(folder, file))
      run[name] = {"dtype": value.dtype.name, "shape": list(value.shape), "file": file}
    runs.append(run)
  request = {
    "model": model_dir,
    "backend": backend,
    "outputs": outputs,
    "runs": runs,
    "timing_calls": timing_calls,
  }
  path = os.path.join(folder, "request.json")
  with open(path, "w", encoding="utf-8") as f:
    json.dump(request, f)
  return path


def _read_response(folder, backend) -> tuple[list[list[np.ndarray]], dict]:
  """(outputs per run, the response's timings)."""
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
  return results, {"load_ms": response.get("load_ms"), "runs": response.get("timings", [])}


def model_directory(model, folder: str) -> str:
  """The model's directory; an unsaved TFJSModel is saved under `folder`."""
  if not isinstance(model, TFJSModel):
    return os.path.abspath(os.fspath(model))
  if model.path is None:
    model = model.save(os.path.join(folder, "model"))
  return str(model.path)


class Runner:
  """A Node process running TF.js models one after another, on one backend.

  TF.js takes a second or two to start; a Runner pays it once for many
  models (`jax2tf.tfjs.run` starts one per call). Use it as a context
  manager, or call `close()`:

      with jax2tf.tfjs.Runner(backend="wasm") as runner:
        for model, inputs in cases:
          outputs = runner.run(model, *inputs)

  A model that fails raises TFJSRuntimeError and leaves the runner usable.
  """

  def __init__(self, backend: str = "cpu", *, timeout: float = 600):
    if backend not in BACKENDS:
      raise ValueError(f"backend: expected one of {BACKENDS}, got {backend!r}")
    self.backend = backend
    self.timeout = timeout
    self._node = node_process.NodeProcess(
      lambda: ([node(), str(RUNNER), "--serve"], node_modules()),
      reply_prefix=_REPLY_PREFIX,
      name="the Node process running TF.js",
      error=TFJSRuntimeError,
    )

  def __enter__(self) -> "Runner":
    return self

  def __exit__(self, *exc) -> None:
    self.close()

  @property
  def _proc(self) -> subprocess.Popen | None:
    """The Node process (None before the first run and after `close`)."""
    return self._node.process

  def close(self) -> None:
    """Stops the Node process (a later run starts a new one)."""
    self._node.close()

  def _ask(self, request_path: str) -> dict:
    return self._node.ask(request_path, timeout=self.timeout)

  def _exchange(self, model, input_sets, timing_calls: int):
    with tempfile.TemporaryDirectory(prefix="jax2tf-tfjs-") as folder:
      model_dir = model_directory(model, folder)
      names, outputs, specs = signature(model_dir)
      request = _write_request(
        folder, model_dir, self.backend, names, outputs, specs, input_sets, timing_calls
      )
      reply = self._ask(request)
      if "error" in reply:
        raise TFJSRuntimeError(
          f"TF.js ({self.backend} backend) failed on the model in {model_dir}:\n"
          + reply["error"][-4000:]
        )
      results, timings = _read_response(folder, self.backend)
      return [as_declared(model_dir, outputs, r) for r in results], timings

  def run_many(self, model: TFJSModel | str | os.PathLike, input_sets: Sequence[Sequence]):
    """The outputs of the model on each set of inputs (a list per set)."""
    return self._exchange(model, input_sets, 0)[0]

  def timed(
    self, model: TFJSModel | str | os.PathLike, input_sets: Sequence[Sequence], calls: int = 20
  ) -> tuple[list[list[np.ndarray]], dict]:
    """`run_many`, and the times Node measured: {"load_ms", "runs": [{"first_ms",
    "steady_ms"}]}, steady_ms a run's steady time per set over `calls` samples of runs
    (jax2tf/deploy/steady_time.js)."""
    return self._exchange(model, input_sets, calls)

  def run(self, model: TFJSModel | str | os.PathLike, *args) -> list[np.ndarray]:
    """The model's outputs on `args` (see `jax2tf.tfjs.run`)."""
    return self.run_many(model, [args])[0]


def run_many(
  model: TFJSModel | str | os.PathLike,
  input_sets: Sequence[Sequence],
  *,
  backend: str = "cpu",
  timeout: float = 600,
) -> list[list[np.ndarray]]:
  """`run` on several sets of inputs, loading the model once (one Node
  process): a list, per set, of the outputs."""
  with Runner(backend, timeout=timeout) as runner:
    return runner.run_many(model, input_sets)


def run(model: TFJSModel | str | os.PathLike, *args, backend: str = "cpu") -> list[np.ndarray]:
  """The model's outputs on TF.js in Node, as a list in the order of JAX's
  flattened result.

  `model` is a `TFJSModel` from `to_tfjs` or the path of a model directory;
  the inputs go positionally, in the JAX function's order, with the dtypes
  of the signature. `backend` is "cpu" (plain JavaScript) or "wasm"
  (WebAssembly). Needs Node.js and the npm packages of package.json (`make
  install`). A polymorphic model fails, naming the check, on inputs whose
  shapes do not satisfy its specs. To run many models, a `Runner` starts
  Node once.
  """
  return run_many(model, [args], backend=backend)[0]
