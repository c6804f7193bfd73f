"""Running a TF.js graph model in a real browser: headless Chromium, driven by
puppeteer-core (`jax2tf.deploy.headless`), opens a page served from 127.0.0.1 that
loads TF.js and the model (`browser_page.html`), runs it on the inputs, and
hands back the outputs.

Needs Chromium (Debian's `chromium` package; `make install` installs it with
apt where it can, or set JAX2TF_CHROMIUM to the browser's path) and the npm
packages of package.json.
"""

import base64
import dataclasses
import json
import os
import pathlib
import tempfile
from collections.abc import Sequence

import numpy as np

from jax2tf.deploy import headless
from jax2tf.tfjs import runtime
from jax2tf.tfjs.api import TFJSModel

CHROMIUM_ENV = headless.CHROMIUM_ENV
# TF.js's backends in a browser: the GPU ones need WebGL or WebGPU, which
# headless Chromium without a GPU has only through SwiftShader (WebGL).
BACKENDS = ("webgl", "webgpu", "wasm", "cpu")
DRIVER = headless.DRIVER
PAGE = pathlib.Path(__file__).with_name("browser_page.html")
# How the page calls the model, as Node's runner does (run_model.js).
EXECUTE = pathlib.Path(__file__).with_name("execute.js")
chromium = headless.chromium
serve = headless.serve


@dataclasses.dataclass(frozen=True)
class BrowserRun:
  """What the page computed: the outputs in the order of JAX's flattened
  result, the TF.js backend that ran them, and the page's other details
  (`ms`, the first run with its outputs read back; `called`, "execute" or,
  for a model with loops or conditionals, "executeAsync", as Node's runner
  calls it (execute.js); `steady_ms`, the median of `repeats` more runs,
  where asked for; for WebGL its version and whether it
  computes in float32)."""

  outputs: list
  backend: str
  details: dict


def link_tfjs(root: str | os.PathLike) -> None:
  """Makes TF.js available under `root`: tfjs/tf.min.js and tfjs-wasm/ (the
  wasm backend and its binaries), from the pinned npm packages."""
  modules = runtime.node_modules()
  root = pathlib.Path(root)
  (root / "tfjs").symlink_to(modules / "@tensorflow" / "tfjs" / "dist")
  (root / "tfjs-wasm").symlink_to(modules / "@tensorflow" / "tfjs-backend-wasm" / "dist")


def drive(
  url: str,
  *,
  actions: Sequence[dict] = (),
  screenshot: str | os.PathLike | None = None,
  timeout: float = 300,
) -> dict:
  """Opens `url` in headless Chromium, performs `actions` (see
  jax2tf/deploy/headless.js), waits for the page to set window.jax2tfDone, and
  returns {"result", "error", "console"}; saves a screenshot when asked."""
  return headless.drive(
    url,
    actions=actions,
    screenshot=screenshot,
    timeout=timeout,
    modules=runtime.node_modules(),
    error=runtime.TFJSRuntimeError,
  )


def _decode(output: dict) -> np.ndarray:
  dtype = np.dtype(output["dtype"] if output["dtype"] != "bool" else np.bool_)
  data = np.frombuffer(base64.b64decode(output["data"]), dtype.newbyteorder("<"))
  return data.astype(dtype).reshape(output["shape"])


def run(
  model: TFJSModel | str | os.PathLike,
  *args,
  backend: str = "webgl",
  fallback: str = "cpu",
  timeout: float = 300,
  repeats: int = 0,
) -> BrowserRun:
  """The model's outputs computed by TF.js in headless Chromium.

  `backend` is the TF.js backend asked for ("webgl", "webgpu", "wasm" or
  "cpu"); where the browser cannot start it, the page runs on `fallback`,
  and `BrowserRun.backend` says which ran. Inputs as for `jax2tf.tfjs.run`.
  A model that computes on 32-bit integer bits (model.json's
  `webgl_inexact`) is refused on WebGL, which would give other numbers.
  `repeats`: samples of runs timed after the first one, each run with its
  outputs read back (`details["steady_ms"]`: the median over the samples of a
  run's mean time; jax2tf/deploy/steady_time.js says how samples are taken).
  """
  for name, value in (("backend", backend), ("fallback", fallback)):
    if value not in BACKENDS:
      raise ValueError(f"{name}: expected one of {BACKENDS}, got {value!r}")
  if repeats < 0:
    raise ValueError(f"repeats: expected a count of runs, got {repeats}")
  with tempfile.TemporaryDirectory(prefix="jax2tf-site-") as root:
    model_dir = runtime.model_directory(model, root)
    names, outputs, specs = runtime.signature(model_dir)
    inexact = runtime.webgl_inexact(model_dir)
    if inexact and "webgl" in (backend, fallback):
      raise ValueError(
        f"backend: the model computes on 32-bit integer bits ({', '.join(inexact)}), which "
        "TF.js's WebGL backend holds in float32 and computes inexactly, without an error; "
        "run it on the 'wasm' or 'cpu' backend"
      )
    if len(args) != len(names):
      raise TypeError(f"the model takes {len(names)} inputs ({', '.join(names)}), got {len(args)}")
    inputs = {}
    for i, (name, arg) in enumerate(zip(names, args)):
      array = runtime.check_input(name, arg, specs[name])
      file = f"input-{i}.bin"
      array.astype(array.dtype.newbyteorder("<")).tofile(os.path.join(root, file))
      inputs[name] = {"dtype": array.dtype.name, "shape": list(array.shape), "file": file}
    request = {
      "backend": backend,
      "fallback": fallback,
      "outputs": outputs,
      "inputs": inputs,
      "repeats": repeats,
    }
    with open(os.path.join(root, "request.json"), "w", encoding="utf-8") as f:
      json.dump(request, f)
    if os.path.abspath(model_dir) != os.path.join(os.path.abspath(root), "model"):
      os.symlink(model_dir, os.path.join(root, "model"))
    headless.copy_page(PAGE, root, scripts=(EXECUTE,))
    link_tfjs(root)
    with serve(root) as url:
      page = drive(url + "index.html", timeout=timeout)
    if page["error"] or page["result"] is None:
      log = "\n".join(page["console"][-20:])
      raise runtime.TFJSRuntimeError(f"TF.js in Chromium failed:\n{page['error']}\n{log}")
    result = page["result"]
    arrays = runtime.as_declared(model_dir, outputs, [_decode(o) for o in result["outputs"]])
  details = {k: v for k, v in result.items() if k not in ("outputs", "backend")}
  return BrowserRun(arrays, result["backend"], details)
