"""The drop-in switch (jax2tf/dropin/): libraries that import
`jax.experimental.jax2tf` themselves, run through it against JAX.

Each test runs in a child process: the switch changes the import system of the
process, and Keras picks its backend once, at import.
"""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.subprocess


def _run(script: str, tmp_path, *, env=None, timeout=600) -> dict:
  """Runs `script` in a fresh interpreter; returns the JSON of its last line."""
  child_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  child_env.pop("JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL", None)
  child_env["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
  )
  child_env.update(env or {})
  proc = subprocess.run(
    [sys.executable, "-c", textwrap.dedent(script), str(tmp_path)],
    env=child_env,
    cwd=tmp_path,
    capture_output=True,
    text=True,
    timeout=timeout,
  )
  assert proc.returncode == 0, proc.stderr[-4000:]
  return json.loads(proc.stdout.strip().splitlines()[-1])


_SWITCH = """
import json, sys, warnings
import jax2tf

jax2tf.install()
jax2tf.install()  # idempotent
from jax.experimental import jax2tf as from_import
import jax.experimental.jax2tf
import jax.experimental.jax2tf.call_tf as call_tf_by_module
from jax.experimental.jax2tf.call_tf import call_tf
from jax.experimental.jax2tf.jax2tf import convert
out = {
  "from_import": from_import is jax2tf,
  "attribute": jax.experimental.jax2tf is jax2tf,
  "call_tf": call_tf is jax2tf.call_tf and call_tf_by_module is jax2tf.call_tf,
  "call_tf_module_once": sys.modules["jax.experimental.jax2tf.call_tf"]
                         is sys.modules["jax2tf.call_tf"],
  "convert": convert is jax2tf.convert,
  "spec_kept": jax2tf.__spec__.name == "jax2tf"
               and sys.modules["jax2tf.call_tf"].__spec__.name == "jax2tf.call_tf",
}
try:
  import jax.experimental.jax2tf.no_such_module
except ModuleNotFoundError as e:
  out["missing"] = str(e)

jax2tf.uninstall()
import jax.experimental.jax2tf as upstream
out["uninstalled"] = upstream is not jax2tf and upstream.__name__ == "jax.experimental.jax2tf"

# A library that imported JAX's module first keeps it: the warning names it.
holder = type(sys)("some_library")
holder.jax2tf = upstream
sys.modules["some_library"] = holder
with warnings.catch_warnings(record=True) as caught:
  warnings.simplefilter("always")
  jax2tf.install()
out["warnings"] = [(w.category.__name__, str(w.message)) for w in caught]
out["replaced"] = sys.modules["jax.experimental.jax2tf"] is jax2tf
jax2tf.uninstall()
out["restored"] = sys.modules["jax.experimental.jax2tf"] is upstream and jax.experimental.jax2tf is upstream
print(json.dumps(out))
"""


def test_install_uninstall_and_warning(tmp_path):
  out = _run(_SWITCH, tmp_path)
  for key in (
    "from_import",
    "attribute",
    "call_tf",
    "call_tf_module_once",
    "convert",
    "spec_kept",
    "uninstalled",
    "replaced",
    "restored",
  ):
    assert out[key] is True, (key, out)
  assert "jax2tf.uninstall()" in out["missing"], out
  [(category, message)] = out["warnings"]
  assert category == "UpstreamAlreadyImportedWarning"
  assert "some_library" in message and "before importing them" in message, message


_STARTUP = """
import json, site, sys
site.addsitedir(sys.argv[1])  # what the interpreter does with site-packages at start
loaded_at_start = sorted(m for m in ("jax", "tensorflow", "jax2tf") if m in sys.modules)
from jax.experimental import jax2tf as imported
print(json.dumps({"name": imported.__name__, "loaded_at_start": loaded_at_start,
                  "is_package": imported is sys.modules.get("jax2tf")}))
"""


def test_environment_variable_with_the_startup_file(tmp_path):
  proc = subprocess.run(
    [sys.executable, "-m", "jax2tf.dropin", "--write-startup-file", "--site-dir", str(tmp_path)],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=120,
  )
  assert proc.returncode == 0, proc.stderr
  assert (tmp_path / "jax2tf-dropin.pth").exists()
  on = _run(_STARTUP, tmp_path, env={"JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL": "1"})
  # The start-up line imports nothing heavy: TF and JAX wait for the import.
  assert on == {"name": "jax2tf", "loaded_at_start": ["jax2tf"], "is_package": True}, on
  off = _run(_STARTUP, tmp_path, env={"JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL": "0"})
  assert off["name"] == "jax.experimental.jax2tf" and off["loaded_at_start"] == [], off
  proc = subprocess.run(
    [sys.executable, "-m", "jax2tf.dropin", "--remove-startup-file", "--site-dir", str(tmp_path)],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=120,
  )
  assert proc.returncode == 0 and not (tmp_path / "jax2tf-dropin.pth").exists(), proc.stderr


# Keras 3 on the JAX backend, with no jax2tf code at all: the environment
# variable and the startup file.
_KERAS_EXPORT = """
import json, os, site, sys
site.addsitedir(sys.argv[1])
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.BatchNormalization(), keras.layers.Dense(3)])
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(16, 6).astype("float32"), np.random.rand(16, 3).astype("float32"),
          epochs=1, verbose=0)
out = {}
model.export(os.path.join(sys.argv[1], "exported"), format="tf_saved_model", verbose=False)
archive = keras.export.ExportArchive()
archive.track(model)
archive.add_endpoint("serve", model.call,
                     input_signature=[keras.InputSpec(shape=(None, 6), dtype="float32")])
archive.write_out(os.path.join(sys.argv[1], "archive"), verbose=False)
for name, endpoint in (("export", "serve"), ("archive", "serve")):
  loaded = tf.saved_model.load(os.path.join(sys.argv[1], "exported" if name == "export" else "archive"))
  errors = []
  for batch in (2, 7):
    x = np.random.RandomState(batch).rand(batch, 6).astype("float32")
    expected = np.asarray(model(x, training=False))
    errors.append(float(np.max(np.abs(getattr(loaded, endpoint)(x).numpy() - expected))))
  out[name] = errors
import jax2tf
out["switch"] = sys.modules["jax.experimental.jax2tf"] is jax2tf
out["upstream_loaded"] = "jax.experimental.jax2tf.jax2tf" in sys.modules
out["converter_loaded"] = "jax2tf.api" in sys.modules
print(json.dumps(out))
"""


def test_keras_export_on_the_jax_backend(tmp_path):
  from jax2tf import dropin

  dropin.write_startup_file(tmp_path)
  out = _run(
    _KERAS_EXPORT, tmp_path, env={"KERAS_BACKEND": "jax", "JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL": "1"}
  )
  assert out["switch"] and out["converter_loaded"] and not out["upstream_loaded"], out
  for name in ("export", "archive"):
    assert max(out[name]) < 1e-5, out


# Keras's JaxLayer and FlaxLayer on the TensorFlow backend (jax2tf.convert on
# each build), trained a few steps, then compared with the JAX functions on the
# trained weights.
_KERAS_LAYERS = """
import json, sys
import jax2tf
jax2tf.install()
import flax.linen as nn
import jax
import jax.numpy as jnp
import keras
import numpy as np

keras.utils.set_random_seed(0)

def init_fn(rng, inputs):
  k1, k2 = jax.random.split(rng)
  return {"w": jax.random.normal(k1, (inputs.shape[-1], 4)) * 0.3,
          "b": jax.random.normal(k2, (4,)) * 0.1}

def call_fn(params, inputs):
  return jnp.tanh(inputs @ params["w"] + params["b"])

class Mlp(nn.Module):
  @nn.compact
  def __call__(self, x):
    return nn.Dense(2)(nn.relu(nn.Dense(5)(x)))

x = np.random.RandomState(0).rand(32, 3).astype("float32")
y = np.random.RandomState(1).rand(32, 2).astype("float32")
out = {}
for name, layer in (("jax_layer", keras.layers.JaxLayer(call_fn, init_fn)),
                    ("flax_layer", keras.layers.FlaxLayer(Mlp()))):
  model = keras.Sequential([keras.Input((3,)), layer, keras.layers.Dense(2)])
  model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
  before = [np.array(w) for w in layer.get_weights()]
  history = model.fit(x, y, batch_size=8, epochs=2, verbose=0)
  after = layer.get_weights()
  params = jax.tree_util.tree_map(lambda v: np.asarray(v.numpy()), layer.params)
  if name == "jax_layer":
    jax_fn = jax.jit(call_fn)
  else:
    jax_fn = jax.jit(lambda p, v: Mlp().apply(p, v))
  errors = []
  for batch in (3, 10):
    v = np.random.RandomState(batch).rand(batch, 3).astype("float32")
    errors.append(float(np.max(np.abs(np.asarray(layer(v)) - np.asarray(jax_fn(params, v))))))
  out[name] = {"errors": errors, "trained": any(not np.allclose(a, b) for a, b in zip(before, after)),
               "finite": bool(np.isfinite(history.history["loss"]).all())}
out["switch"] = sys.modules["jax.experimental.jax2tf"] is jax2tf
out["upstream_loaded"] = "jax.experimental.jax2tf.jax2tf" in sys.modules
print(json.dumps(out))
"""


def test_keras_jax_and_flax_layers_on_the_tensorflow_backend(tmp_path):
  out = _run(_KERAS_LAYERS, tmp_path, env={"KERAS_BACKEND": "tensorflow"})
  assert out["switch"] and not out["upstream_loaded"], out
  for name in ("jax_layer", "flax_layer"):
    assert out[name]["trained"] and out[name]["finite"], out
    assert max(out[name]["errors"]) < 1e-5, out


# orbax-export's JaxModule, which imports jax.experimental.jax2tf when
# orbax.export is imported: the environment variable, honoured at `import
# jax2tf` before it.
_ORBAX = """
import json, os, sys
import jax2tf
import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter
from orbax.export import ExportManager, JaxModule, ServingConfig

params = {"w": np.random.RandomState(0).randn(4, 3).astype("float32"),
          "b": np.arange(3, dtype="float32")}

def apply_fn(p, x):
  return jnp.tanh(x @ p["w"] + p["b"])

module = JaxModule(params, apply_fn, input_polymorphic_shape="b, ...")
path = os.path.join(sys.argv[1], "saved_model")
ExportManager(module, [ServingConfig(
    "serving_default", input_signature=[tf.TensorSpec([None, 4], tf.float32)])]).save(path)
serving = tf.saved_model.load(path).signatures["serving_default"]
interpreter = Interpreter(model_content=tf.lite.TFLiteConverter.from_saved_model(path).convert())
out = {"saved_model": [], "tflite": []}
for batch in (2, 5):
  x = np.random.RandomState(batch).randn(batch, 4).astype("float32")
  expected = np.asarray(jax.jit(apply_fn)(params, x))
  [y] = serving(tf.constant(x)).values()
  out["saved_model"].append(float(np.max(np.abs(y.numpy() - expected))))
  index = interpreter.get_input_details()[0]["index"]
  interpreter.resize_tensor_input(index, [batch, 4])
  interpreter.allocate_tensors()
  interpreter.set_tensor(index, x)
  interpreter.invoke()
  y = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
  out["tflite"].append(float(np.max(np.abs(y - expected))))
out["switch"] = sys.modules["jax.experimental.jax2tf"] is jax2tf
out["upstream_loaded"] = "jax.experimental.jax2tf.jax2tf" in sys.modules
print(json.dumps(out))
"""


def test_orbax_export_jax_module_to_saved_model_and_tflite(tmp_path):
  out = _run(_ORBAX, tmp_path, env={"JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL": "1"})
  assert out["switch"] and not out["upstream_loaded"], out
  assert max(out["saved_model"]) < 1e-5, out
  assert max(out["tflite"]) < 1e-5, out
