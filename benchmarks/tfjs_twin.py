"""The Keras twins of the model set as TF.js graph models, written the way a
web developer would: TF's own converter, not jax2tf.

    twin = tfjs_twin.build("mlp", folder)       # model.json + shards, a folder
    outputs, times = tfjs_twin.time_node(twin, inputs, "wasm", calls=5)

A twin (`benchmarks/keras_reference.py`, the same network written in Keras 3
with the Flax weights copied) is exported with `model.export(format=
"tf_saved_model")` on Keras's TensorFlow backend (in a child process where this
one runs another backend), and the SavedModel converted by `tensorflowjs_converter
--input_format=tf_saved_model` (the `tensorflowjs` package, with its defaults:
float32 weights, 4 MiB shards). TF.js models of either kind, this package's
or a twin, are timed here in the same ways: in Node (`jax2tf.tfjs.Runner`) and
in headless Chromium (`jax2tf.tfjs.browser`).

The converter is installed apart from the virtualenv (`make
.tfjs-converter/.installed`): `tensorflowjs` pins old releases of what it
needs (packaging, and TensorFlow's Keras 2 as `tf-keras`), so it goes into a
folder of its own with `pip install --no-deps` and runs on this virtualenv's
TensorFlow. Three modules it imports at start-up are needed only by its other
input formats, and are given to it as empty modules (see `STUBS`).

    python -m benchmarks.tfjs_twin export NAME SAVED_MODEL_DIR
    python -m benchmarks.tfjs_twin convert SAVED_MODEL_DIR TFJS_DIR
"""

import collections
import json
import os
import pathlib
import sys
import types

from benchmarks import children

# Where `make .tfjs-converter/.installed` puts the converter; another folder
# holding the `tensorflowjs` package can be named by JAX2TF_TFJS_CONVERTER.
CONVERTER_ENV = "JAX2TF_TFJS_CONVERTER"
CONVERTER_DIR = pathlib.Path(children.ROOT) / ".tfjs-converter"
_INSTALL = "run `make .tfjs-converter/.installed` at the root of the checkout"
# Imported when the converter's modules load, used only by the input formats
# other than tf_saved_model: Keras 2 models (tf_keras), TF Hub modules
# (tensorflow_hub, whose import needs setuptools' pkg_resources, which
# setuptools 81 and later no longer have) and decision forests
# (tensorflow_decision_forests, compiled against one TensorFlow release).
STUBS = ("tf_keras", "tensorflow_hub", "tensorflow_decision_forests")


class TwinError(RuntimeError):
  """The twin could not be exported or converted (the message says which step)."""


def converter_dir() -> pathlib.Path:
  """The folder holding the `tensorflowjs` package; FileNotFoundError, saying
  how to install it, where there is none."""
  folder = pathlib.Path(os.environ.get(CONVERTER_ENV) or CONVERTER_DIR)
  if not (folder / "tensorflowjs" / "__init__.py").is_file():
    raise FileNotFoundError(
      f"TF's TF.js converter (the tensorflowjs package) is not installed in {folder}: {_INSTALL}"
      f" (or set {CONVERTER_ENV} to a folder holding it)"
    )
  return folder


def missing() -> str | None:
  """Why the twins cannot be built here, or None where they can."""
  try:
    converter_dir()
  except FileNotFoundError as e:
    return str(e)
  return None


def has_twin(name: str) -> bool:
  from benchmarks import keras_reference  # pylint: disable=import-outside-toplevel

  return name in keras_reference.BUILDERS


def _export_here(name: str, saved_model: str) -> None:
  from benchmarks import keras_reference, models  # pylint: disable=import-outside-toplevel

  m = models.get(name)
  twin = keras_reference.build(name, m.params, m.inputs, m.rtol, m.atol)
  twin.export(saved_model, format="tf_saved_model", verbose=False)


def _keras_backend() -> str:
  import keras  # pylint: disable=import-outside-toplevel

  return keras.backend.backend()


def export(name: str, saved_model: str) -> str:
  """The twin of model `name` as a SavedModel in the folder `saved_model`,
  exported on Keras's TensorFlow backend (in a child process where this one
  runs another)."""
  try:
    if _keras_backend() == "tensorflow":
      _export_here(name, saved_model)
    else:
      children.run("benchmarks.tfjs_twin", "export", name, saved_model)
  except (children.ChildFailed, AssertionError, ValueError) as e:
    raise TwinError(f"exporting the Keras twin of {name}: {e}") from e
  return saved_model


def convert(saved_model: str, out: str) -> str:
  """`tensorflowjs_converter --input_format=tf_saved_model saved_model out`,
  in a child process; returns `out`, the TF.js model's folder."""
  converter_dir()  # its error says how to install the converter
  try:
    children.run("benchmarks.tfjs_twin", "convert", saved_model, out)
  except children.ChildFailed as e:
    raise TwinError(f"tensorflowjs_converter on {saved_model}: {e}") from e
  return out


def build(name: str, folder: str) -> str:
  """The twin of model `name` as a TF.js graph model, in `folder`/twin
  (its SavedModel beside it, in `folder`/twin_saved_model)."""
  saved = export(name, os.path.join(folder, "twin_saved_model"))
  return convert(saved, os.path.join(folder, "twin"))


def check_signature(model_dir: str, inputs: int, outputs: int) -> None:
  """That the model takes `inputs` inputs and gives `outputs` outputs in an
  order the runners can tell: a model.json without jax2tf's metadata is fed
  and read in the sorted order of its signature's names."""
  with open(os.path.join(model_dir, "model.json"), encoding="utf-8") as f:
    signature = json.load(f)["signature"]
  got = (len(signature.get("inputs", {})), len(signature.get("outputs", {})))
  if got != (inputs, outputs):
    raise TwinError(
      f"{model_dir}: the TF.js model takes {got[0]} inputs and gives {got[1]} outputs; "
      f"the JAX model takes {inputs} and gives {outputs}"
    )
  names = sorted(signature.get("outputs", {}))
  numbered = sorted(names, key=lambda n: (len(n), n))
  if inputs > 1 or names != numbered:
    raise TwinError(
      f"{model_dir}: the order of the signature's names ({sorted(signature['inputs'])}, "
      f"{names}) is not the model's"
    )


def graph_ops(model_dir: str) -> collections.Counter:
  """How many nodes of each op the TF.js model's graph holds (functions of
  its library included), Placeholder and Const left out."""
  with open(os.path.join(model_dir, "model.json"), encoding="utf-8") as f:
    topology = json.load(f)["modelTopology"]
  nodes = list(topology.get("node", []))
  for function in topology.get("library", {}).get("function", []):
    nodes += function.get("nodeDef", [])
  return collections.Counter(n["op"] for n in nodes if n["op"] not in ("Const", "Placeholder"))


def directory_bytes(folder: str) -> dict:
  sizes = {name: os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder)}
  return {"model_json": sizes.pop("model.json"), "shards": sum(sizes.values()),
          "files": len(sizes) + 1}


def time_node(runner, model_dir: str, inputs, calls: int) -> tuple[list, float, float]:
  """(outputs, steady seconds, first-call seconds) of the model run by a
  `jax2tf.tfjs.Runner`: Node times the calls itself, the median of `calls`
  after the first, outputs read back each time."""
  (outputs,), times = runner.timed(model_dir, [inputs], calls=calls)
  run = times["runs"][0]
  return outputs, run["steady_ms"] / 1e3, run["first_ms"] / 1e3


def time_chromium(model_dir: str, inputs, calls: int, backend: str = "wasm") -> tuple[list, float,
                                                                                     float]:
  """The same in headless Chromium (`jax2tf.tfjs.browser`) on `backend`,
  which must start there (no fallback). Chromium's clock, without
  cross-origin isolation, counts in steps of 0.1 ms."""
  from jax2tf.tfjs import browser  # pylint: disable=import-outside-toplevel

  run = browser.run(model_dir, *inputs, backend=backend, fallback=backend, repeats=calls)
  return run.outputs, run.details["steady_ms"] / 1e3, run.details["ms"] / 1e3


def _convert_here(saved_model: str, out: str) -> None:
  sys.path.insert(0, str(converter_dir()))
  for name in STUBS:
    sys.modules.setdefault(name, types.ModuleType(name))
  from tensorflowjs.converters import converter  # pylint: disable=import-outside-toplevel

  converter.convert(["--input_format=tf_saved_model", saved_model, out])


def main(argv) -> int:
  command, *args = argv
  if command == "export":
    # Before Keras is imported: the twin is a TensorFlow model.
    os.environ["KERAS_BACKEND"] = "tensorflow"
    name, saved_model = args
    _export_here(name, saved_model)
  elif command == "convert":
    saved_model, out = args
    _convert_here(saved_model, out)
  else:
    raise SystemExit(f"unknown command {command!r}; expected export or convert")
  print(json.dumps({command: args[-1]}))
  return 0


if __name__ == "__main__":
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  sys.exit(main(sys.argv[1:]))
