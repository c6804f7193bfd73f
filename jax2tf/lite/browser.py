"""Running a `.tflite` model in a real browser on LiteRT.js (`@litertjs/core`,
XNNPack in WebAssembly, or WebGPU where the browser has it): headless
Chromium (`jax2tf.deploy.headless`) opens a page served from 127.0.0.1
(`browser_page.html`) that loads LiteRT.js, compiles the model, runs its
signature on the inputs, and hands back the outputs.

Inputs and outputs as for `jax2tf.lite.run`: inputs by the signature's
names, or positionally in the JAX function's order; outputs in the order of
JAX's flattened result. LiteRT.js 2.5 makes tensors of float32, int32 and
uint8 only, and runs models of static shapes only: a model exported with
polymorphic dimensions is refused (LiteRT.js cannot resize its inputs).

Needs Chromium (Debian's `chromium` package, or set JAX2TF_CHROMIUM to the
browser's path), Node.js and the npm packages of package.json (`make
node_modules/.installed`, or `npm ci`).
"""

import base64
import contextlib
import dataclasses
import itertools
import json
import pathlib
import shutil
import tempfile

import numpy as np

from jax2tf.deploy import headless
from jax2tf.deploy.signature import output_index
from jax2tf.lite import inspect, runtime

# Where LiteRT.js runs the model: XNNPack in WebAssembly, or the GPU through
# WebGPU (which headless Chromium without a GPU lacks).
ACCELERATORS = ("wasm", "webgpu")
# The element types LiteRT.js 2.5 makes tensors of (its DATATYPES).
DTYPES = ("float32", "int32", "uint8")
PACKAGES = ("@litertjs/core", "@litertjs/wasm-utils")
PAGE = pathlib.Path(__file__).with_name("browser_page.html")
# Chromium offers WebGPU on Linux only with this switch; without a GPU its
# adapter is SwiftShader's (on the CPU).
FLAGS = ("--enable-unsafe-webgpu",)
# What the page's error starts with where the browser has no WebGPU.
_NO_WEBGPU = "jax2tf: no WebGPU: "


class LiteRTJSError(RuntimeError):
  """LiteRT.js, or the browser running it, failed (the message holds why)."""


class WebGPUUnavailableError(LiteRTJSError):
  """accelerator="webgpu" in a browser without WebGPU, or for a model that
  LiteRT.js would run on wasm instead."""


@dataclasses.dataclass(frozen=True)
class BrowserRun:
  """What the page computed: the outputs in the order of JAX's flattened
  result, the accelerator that ran them, and the page's other details:
  `ms` (the first run, with reading the outputs back), `compile_ms`
  (loading and compiling the model), `steady_ms` (a run's steady time over
  `repeats` samples of more runs, where asked for:
  jax2tf/deploy/steady_time.js), `fully_accelerated`, and on WebGPU the
  adapter."""

  outputs: list
  accelerator: str
  details: dict


def check_accelerator(accelerator: str) -> None:
  if accelerator not in ACCELERATORS:
    raise ValueError(f"accelerator: expected one of {ACCELERATORS}, got {accelerator!r}")


def _feed(model: bytes, args, named: dict, input_names, signature: str, details: list) -> dict:
  """{input name: array}, checked as `jax2tf.lite.run` checks them."""
  named = runtime.name_inputs(
    model, args, named, input_names, signature, [d["name"] for d in details]
  )
  feed = {}
  for d in details:
    want, arg = np.dtype(d["dtype"]), np.asarray(named[d["name"]])
    if arg.dtype != want:
      raise TypeError(f"input {d['name']!r}: the model takes {want}, got {arg.dtype}")
    if list(arg.shape) != d["shape"]:
      raise ValueError(
        f"input {d['name']!r}: the model takes shape {tuple(d['shape'])}, got {tuple(arg.shape)}"
      )
    feed[d["name"]] = arg
  return feed


def _check_supported(details: dict) -> None:
  """Refuses what LiteRT.js 2.5 cannot run: a dynamic dimension (its
  tensors must match the shape signature, -1 and all) or an element type
  it makes no tensors of."""
  dynamic = [
    f"{t['name']!r} {tuple(t['shape_signature'])}"
    for t in details["inputs"]
    if -1 in t["shape_signature"]
  ]
  if dynamic:
    raise ValueError(
      "LiteRT.js runs models of static shapes only, and the model's inputs "
      f"{', '.join(dynamic)} have polymorphic dimensions (-1): export it without "
      "polymorphic_shapes, once per size to run, or run it with jax2tf.lite.run, which resizes them"
    )
  unsupported = [
    f"{side[:-1]} {t['name']!r} ({t['dtype']})"
    for side in ("inputs", "outputs")
    for t in details[side]
    if t["dtype"] not in DTYPES
  ]
  if unsupported:
    raise ValueError(
      f"LiteRT.js makes tensors of {', '.join(DTYPES)} only; the model has "
      + ", ".join(unsupported)
    )


def _decode(output: dict, dtype: str) -> np.ndarray:
  data = np.frombuffer(
    base64.b64decode(output["data"]), np.dtype(output["dtype"]).newbyteorder("<")
  )
  return data.astype(dtype).reshape(output["shape"])


class Browser:
  """A headless Chromium that runs `.tflite` models on LiteRT.js one after
  another: Chromium starts once, at the first `run` (seconds), and each run
  opens the page in a new tab. Use it as a context manager, or call
  `close()`:

      with jax2tf.lite.browser.Browser() as browser:
        for model, inputs in cases:
          outputs = browser.run(model, *inputs).outputs
  """

  def __init__(self, *, timeout: float = 300):
    self.timeout = timeout
    self._session: headless.Session | None = None
    self._site: contextlib.ExitStack | None = None
    self._root = ""
    self._url = ""
    self._runs = itertools.count()

  def __enter__(self) -> "Browser":
    return self

  def __exit__(self, *exc) -> None:
    self.close()

  def close(self) -> None:
    """Closes Chromium and stops serving the page."""
    session, self._session = self._session, None
    site, self._site = self._site, None
    try:
      if session is not None:
        session.close()
    finally:
      if site is not None:
        site.close()

  def _start(self) -> tuple[headless.Session, str]:
    if self._session is None or self._site is None:
      modules = headless.node_modules(*PACKAGES)
      headless.chromium()  # says how to install it before anything starts
      site = contextlib.ExitStack()
      try:
        self._root = site.enter_context(tempfile.TemporaryDirectory(prefix="jax2tf-litertjs-"))
        litert = pathlib.Path(self._root, "litert")
        litert.mkdir()
        (litert / "core").symlink_to(modules / "@litertjs" / "core")
        (litert / "wasm-utils").symlink_to(modules / "@litertjs" / "wasm-utils")
        headless.copy_page(PAGE, self._root)
        self._url = site.enter_context(headless.serve(self._root))
      except BaseException:
        site.close()
        raise
      self._site = site
      self._session = headless.Session(
        modules=modules, timeout=self.timeout, error=LiteRTJSError, flags=FLAGS
      )
    return self._session, self._url

  def run(
    self,
    model: bytes,
    *args,
    accelerator: str = "wasm",
    input_names=None,
    signature: str = runtime.SIGNATURE,
    repeats: int = 0,
    **named,
  ) -> BrowserRun:
    """The model's outputs computed by LiteRT.js in headless Chromium.

    `model`: the flatbuffer (a `LiteModel` from `jax2tf.to_tflite`, or bytes
    read from a `.tflite` file). Inputs, `input_names` and `signature` as for
    `jax2tf.lite.run`. `accelerator`: "wasm" (XNNPack in WebAssembly) or
    "webgpu"; where the browser has no WebGPU, or LiteRT.js cannot run the
    whole model on it, "webgpu" raises WebGPUUnavailableError rather than
    running on wasm. `repeats`: samples of runs timed after the
    first one (`details["steady_ms"]`: the median over the samples of a run's
    mean time; jax2tf/deploy/steady_time.js).
    """
    check_accelerator(accelerator)
    if not inspect.is_tflite(model):
      raise TypeError(
        "model: expected the bytes of a .tflite flatbuffer (jax2tf.to_tflite's result)"
      )
    signatures = inspect.signatures(model)
    if signature not in signatures:
      raise ValueError(f"signature: the model has {sorted(signatures)}, not {signature!r}")
    details = signatures[signature]
    _check_supported(details)
    feed = _feed(model, args, named, input_names, signature, details["inputs"])
    session, url = self._start()
    folder = pathlib.Path(self._root, "runs", str(next(self._runs)))
    folder.mkdir(parents=True)
    try:
      (folder / "model.tflite").write_bytes(bytes(model))
      inputs = {}
      for i, (name, array) in enumerate(feed.items()):
        file = f"input-{i}.bin"
        np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tofile(folder / file)
        inputs[name] = {"dtype": array.dtype.name, "shape": list(array.shape), "file": file}
      request = {
        "accelerator": accelerator,
        "signature": signature,
        "inputs": inputs,
        "repeats": int(repeats),
      }
      (folder / "request.json").write_text(json.dumps(request), encoding="utf-8")
      page = session.open(f"{url}index.html?run=runs/{folder.name}/")
    finally:
      shutil.rmtree(folder, ignore_errors=True)
    if page["error"] or page["result"] is None:
      error = page["error"] or "the page set no result"
      log = "\n".join(page["console"][-20:])
      if _NO_WEBGPU in error:
        why = error.partition(_NO_WEBGPU)[2].splitlines()[0]
        raise WebGPUUnavailableError(
          f"accelerator='webgpu': {why}; run on accelerator='wasm', or in a browser with WebGPU"
        )
      raise LiteRTJSError(f"LiteRT.js in Chromium failed:\n{error}\n{log}")
    result = page["result"]
    declared = {t["name"]: t["dtype"] for t in details["outputs"]}
    names = sorted(result["outputs"], key=output_index)
    outputs = [_decode(result["outputs"][n], declared[n]) for n in names]
    extra = {k: v for k, v in result.items() if k not in ("outputs", "accelerator")}
    return BrowserRun(outputs, result["accelerator"], extra)


def run(
  model: bytes,
  *args,
  accelerator: str = "wasm",
  input_names=None,
  signature: str = runtime.SIGNATURE,
  repeats: int = 0,
  timeout: float = 300,
  **named,
) -> BrowserRun:
  """`Browser.run` in a headless Chromium of its own (started and closed
  here; a `Browser` starts one for many models)."""
  check_accelerator(accelerator)
  with Browser(timeout=timeout) as browser:
    return browser.run(
      model,
      *args,
      accelerator=accelerator,
      input_names=input_names,
      signature=signature,
      repeats=repeats,
      **named,
    )
