"""What works without TensorFlow (`pip install "jax2tf[litert]"`): `import
jax2tf`, `to_tflite` on the litert route, `jax2tf.lite`, `jax2tf export
--target tflite`; and what needs TensorFlow says which extra brings it.

The checks run where TensorFlow cannot be imported: in `make test-litert`
(a virtualenv without it), and, in the main lane, in a subprocess that hides
it (`test_checks_pass_with_tensorflow_hidden`).
"""

import importlib
import json
import pathlib
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import cli, extras  # noqa: E402
from tests.support import no_tensorflow  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
WITHOUT_TENSORFLOW = pytest.mark.skipif(
  extras.has_tensorflow(),
  reason="TensorFlow is installed: `make test-litert` runs these without it, and "
  "test_checks_pass_with_tensorflow_hidden runs them here with it hidden",
)
EXTRAS = ('pip install "jax2tf[cpu]"', 'pip install "jax2tf[gpu]"')


def _params():
  rng = np.random.default_rng(0)
  return {"w": rng.normal(size=(4, 3)).astype(np.float32), "b": np.float32([0.5, -1, 2])}


def _dense(params, x):
  return jnp.tanh(x @ params["w"] + params["b"]), jnp.max(x, axis=1)


@WITHOUT_TENSORFLOW
def test_import_jax2tf_imports_no_tensorflow():
  assert "tensorflow" not in sys.modules
  for name in ("to_tflite", "PolyShape", "eval_polymorphic_shape", "DisabledSafetyCheck"):
    assert getattr(jax2tf, name) is not None
  assert "tensorflow" not in sys.modules


@WITHOUT_TENSORFLOW
@pytest.mark.parametrize("route", ["litert", "auto"])
def test_to_tflite_matches_jax_jit_at_two_batch_sizes(route):
  x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)
  model = jax2tf.to_tflite(_dense, x, params=_params(), polymorphic_shapes=["(b, 4)"], route=route)
  # "auto" takes the only route it has without TensorFlow.
  assert model.route == "litert" and model.input_names == ("x",)
  for batch in (1, 7):
    x = np.random.default_rng(batch).normal(size=(batch, 4)).astype(np.float32)
    got = jax2tf.lite.run(model, x)
    want = jax.jit(_dense)(_params(), x)
    assert len(got) == 2
    for g, w in zip(got, want):
      np.testing.assert_allclose(g, np.asarray(w), rtol=1e-5, atol=1e-6)
  (by_name, _) = jax2tf.lite.run(bytes(model), x=x)
  np.testing.assert_array_equal(by_name, got[0])
  lite_inspect = importlib.import_module("jax2tf.lite.inspect")
  [signature] = lite_inspect.signatures(model).values()
  assert [(t["name"], t["shape_signature"]) for t in signature["inputs"]] == [("x", [-1, 4])]
  assert not lite_inspect.custom_ops(model) and lite_inspect.constants(model)[0] >= 2


@WITHOUT_TENSORFLOW
def test_auto_says_it_tried_the_litert_route_only():
  x = np.ones((4, 8), np.float32)
  with pytest.raises(jax2tf.lite.TFLiteConversionError) as info:
    jax2tf.to_tflite(lambda x: jnp.abs(jnp.fft.fft(x)), x)  # fft: refused by litert
  message = str(info.value)
  assert "no route (litert)" in message, message
  assert "TensorFlow is not installed" in message and "not graph, native" in message, message
  assert EXTRAS[0] in message, message


@WITHOUT_TENSORFLOW
@pytest.mark.parametrize(
  "feature, call",
  [
    ("jax2tf.convert", lambda: jax2tf.convert(jnp.sin)),
    ("jax2tf.call_tf", lambda: jax2tf.call_tf(lambda x: x)),
    ("jax2tf.to_tfjs", lambda: jax2tf.to_tfjs(jnp.sin, np.ones(3, np.float32))),
    (
      "to_tflite(route='graph')",
      lambda: jax2tf.to_tflite(jnp.sin, np.ones(3, np.float32), route="graph"),
    ),
    (
      "to_tflite(route='native')",
      lambda: jax2tf.to_tflite(jnp.sin, np.ones(3, np.float32), route="native"),
    ),
  ],
)
def test_tensorflow_features_name_the_extra_to_install(feature, call):
  with pytest.raises(ImportError) as info:
    call()
  message = str(info.value)
  assert message.startswith(f"{feature} needs TensorFlow"), message
  assert all(extra in message for extra in EXTRAS), message
  assert info.value.name == "tensorflow"


@WITHOUT_TENSORFLOW
def test_cli_exports_the_demo_model_to_a_verified_tflite(tmp_path, capsys):
  pytest.importorskip("flax", reason="the demo model is a Flax CNN (the examples extra)")
  out = tmp_path / "cnn.tflite"
  argv = ["export", "jax2tf.demo_model:cnn", "--target", "tflite", "--out", str(out)]
  assert cli.main([*argv, "--json", "--quiet"]) == 0
  report = json.loads(capsys.readouterr().out)
  assert report["serialization"] == "route 'litert'"
  assert report["verification"]["ok"] and len(report["verification"]["sets"]) == 3
  assert out.stat().st_size > 100_000 and report["artifact"]["needs"] == []
  assert "tensorflow" not in report["versions"]
  # A target that needs TensorFlow: one line naming the extra, usage status.
  status = cli.main(["export", "jax2tf.demo_model:cnn", "--out", str(tmp_path / "sm")])
  assert status == 2
  error = capsys.readouterr().err
  assert error.startswith("jax2tf export: error: jax2tf export --target saved_model needs ")
  assert EXTRAS[0] in error


@pytest.mark.subprocess
@pytest.mark.skipif(not extras.has_tensorflow(), reason="TensorFlow is not installed here")
def test_checks_pass_with_tensorflow_hidden(tmp_path):
  args = [__file__, "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
  args += ["--basetemp", str(tmp_path / "hidden")]
  proc = no_tensorflow.run(
    "import pytest\nsys.exit(pytest.main(sys.argv[1:]))\n", *args, timeout=600
  )
  assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
  # Every check passed; only this test, which needs TensorFlow, was skipped.
  summary = proc.stdout.strip().splitlines()[-1]
  assert re.fullmatch(r"\d+ passed, 1 skipped in .*", summary), proc.stdout[-4000:]
