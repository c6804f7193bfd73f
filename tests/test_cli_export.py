"""`jax2tf export` and `jax2tf verify`: artifacts written whole, run in their
own runtime, compared with jax.jit, reported; clear errors for bad input."""

import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest
import tensorflow as tf

from jax2tf import cli
from jax2tf.cli import input_sets, model_ref, verification
from jax2tf.lite import inspect as lite_inspect
from tests import cli_models

MLP = "tests.cli_models:mlp"


@pytest.fixture(autouse=True)
def _from_the_repository_root(monkeypatch):
  # Model references import like `python -m` does: from the current folder.
  monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(capsys, *argv):
  status = cli.main(list(argv))
  out, err = capsys.readouterr()
  return status, out, err


def _report(path):
  with open(f"{path}.report.json") as f:
    return json.load(f)


@pytest.fixture(scope="module")
def native_export(tmp_path_factory):
  out = str(tmp_path_factory.mktemp("export") / "mlp")
  status = cli.main(["export", MLP, "--out", out, "--quiet"])
  return status, out


def test_export_saved_model_checks_every_input_set(native_export):
  status, out = native_export
  assert status == 0
  report = _report(out)
  checked = report["verification"]
  assert checked["ok"] and checked["jax_loaded_by_runtime"] == []
  # The example, and random inputs at two more sizes of b.
  assert list(checked["sets"]) == ["example", "b=3", "b=5"]
  for entry in checked["sets"].values():
    assert [o["shape"][0] for o in entry["outputs"]] == [entry["outputs"][0]["shape"][0]] * 2
    assert all(o["ok"] and o["max_abs_error"] <= o["tolerance"] for o in entry["outputs"])
  assert report["artifact"]["kind"] == "saved_model"
  assert os.path.exists(f"{out}.report.md")


def test_exported_saved_model_computes_the_model(native_export):
  _, out = native_export
  made = cli_models.mlp()
  x = np.random.default_rng(1).normal(size=(7, 4)).astype(np.float32)
  got = tf.saved_model.load(out).signatures["serving_default"](x=tf.constant(x))
  want = jax.tree_util.tree_leaves(jax.jit(made["fn"])(made["params"], x))
  for i, w in enumerate(want):
    np.testing.assert_allclose(got[f"output_{i}"].numpy(), w, rtol=1e-5, atol=1e-6)


def test_report_markdown_names_the_verdict_and_the_artifact(native_export, capsys):
  _, out = native_export
  with open(f"{out}.report.md") as f:
    text = f.read()
  assert "Verdict: **PASS**" in text and "| b=5 | output_1 | float32[5] |" in text
  assert "XlaCallModule" in text  # the inspect section


def test_export_no_xla_leaves_no_xla_ops(tmp_path, capsys):
  out = str(tmp_path / "mlp")
  status, _, err = _run(capsys, "export", MLP, "--out", out, "--serialization", "no-xla",
                        "--quiet", "--json")
  assert status == 0, err
  artifact = _report(out)["artifact"]
  assert not [op for op in artifact["ops"] if op.startswith("Xla")], artifact["ops"]


def test_export_tflite(tmp_path, capsys):
  out = str(tmp_path / "mlp.tflite")
  status, stdout, err = _run(capsys, "export", MLP, "--target", "tflite", "--out", out,
                             "--quiet", "--json")
  assert status == 0, err
  report = json.loads(stdout)
  assert report["verification"]["ok"] and report["serialization"] == "route 'graph'"
  with open(out, "rb") as f:
    assert lite_inspect.flex_ops(f.read()) == []


@pytest.mark.parametrize("route", ["native", "litert"])
def test_export_tflite_checks_inputs_in_the_functions_order(tmp_path, capsys, route):
  out = str(tmp_path / "shift.tflite")
  status, _, err = _run(capsys, "export", "tests.cli_models:two_inputs_out_of_name_order",
                        "--target", "tflite", "--route", route, "--out", out, "--quiet")
  assert status == 0, err
  checked = _report(out)["verification"]
  assert checked["ok"]
  assert all(o["max_abs_error"] == 0.0 for e in checked["sets"].values() for o in e["outputs"])
  # `jax2tf verify` of the written model, read back from its file.
  status, stdout, err = _run(capsys, "verify", out, "--against",
                             "tests.cli_models:two_inputs_out_of_name_order", "--quiet", "--json")
  assert status == 0, err
  checked = json.loads(stdout)["verification"]
  assert checked["ok"]
  assert all(o["max_abs_error"] == 0.0 for e in checked["sets"].values() for o in e["outputs"])


def test_export_tflite_on_the_litert_route(tmp_path, capsys):
  out = str(tmp_path / "mlp.tflite")
  status, stdout, err = _run(capsys, "export", MLP, "--target", "tflite", "--route", "litert",
                             "--out", out, "--quiet", "--json")
  assert status == 0, err
  report = json.loads(stdout)
  assert report["verification"]["ok"] and report["serialization"] == "route 'litert'"
  assert "litert-converter" in report["versions"]


def test_linen_module_with_a_flax_checkpoint(tmp_path, capsys):
  from flax import linen as nn
  from flax import serialization

  x = np.ones((2, 4), np.float32)
  trained = nn.Dense(3).init(jax.random.PRNGKey(7), x)
  checkpoint = tmp_path / "dense.msgpack"
  checkpoint.write_bytes(serialization.to_bytes(trained))
  out = str(tmp_path / "dense")
  status, _, err = _run(capsys, "export", "tests.cli_models:linen_dense", "--out", out,
                        "--checkpoint", str(checkpoint), "--quiet")
  assert status == 0, err
  got = tf.saved_model.load(out).signatures["serving_default"](x0=tf.constant(x))
  np.testing.assert_allclose(got["output_0"].numpy(), nn.Dense(3).apply(trained, x), rtol=1e-6)
  status, _, err = _run(capsys, "export", "tests.cli_models:linen_dense", "--out", out,
                        "--overwrite", "--checkpoint", str(tmp_path / "none.msgpack"), "--quiet")
  assert status == 2 and "--checkpoint: cannot read" in err, err


def test_linen_module_with_an_orbax_checkpoint(tmp_path, capsys):
  import orbax.checkpoint as ocp
  from flax import linen as nn

  x = np.ones((2, 4), np.float32)
  trained = nn.Dense(3).init(jax.random.PRNGKey(11), x)
  checkpointer = ocp.StandardCheckpointer()
  checkpointer.save(str(tmp_path / "orbax"), trained)
  checkpointer.wait_until_finished()
  out = str(tmp_path / "dense")
  status, _, err = _run(capsys, "export", "tests.cli_models:linen_dense", "--out", out,
                        "--checkpoint", str(tmp_path / "orbax"), "--quiet")
  assert status == 0, err
  got = tf.saved_model.load(out).signatures["serving_default"](x0=tf.constant(x))
  np.testing.assert_allclose(got["output_0"].numpy(), nn.Dense(3).apply(trained, x), rtol=1e-6)
  (tmp_path / "empty").mkdir()
  status, _, err = _run(capsys, "export", "tests.cli_models:linen_dense", "--out", out,
                        "--overwrite", "--checkpoint", str(tmp_path / "empty"), "--quiet")
  assert status == 2 and "is not an Orbax checkpoint" in err, err
  assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("target, out", [("saved_model", "cnn"), ("tflite", "cnn.tflite"),
                                         ("tfjs", "cnn_web")])
def test_demo_model(target, out, tmp_path, capsys):
  path = str(tmp_path / out)
  status, stdout, err = _run(capsys, "export", "jax2tf.demo_model:cnn", "--target", target,
                             "--out", path, "--quiet", "--json")
  assert status == 0, err
  checked = json.loads(stdout)["verification"]
  assert checked["ok"] and list(checked["sets"]) == ["example", "b=9", "b=17"], checked


def test_export_tfjs_then_verify_and_inspect_it(tmp_path, capsys):
  out = str(tmp_path / "web" / "mlp")
  status, stdout, err = _run(capsys, "export", MLP, "--target", "tfjs", "--out", out,
                             "--quiet", "--json")
  assert status == 0, err
  report = json.loads(stdout)
  checked = report["verification"]
  assert checked["ok"] and len(checked["sets"]) == 3, checked
  for entry in checked["sets"].values():
    assert entry["steady_s"] > 0 and entry["first_call_s"] > 0, entry
  artifact = report["artifact"]
  assert artifact["kind"] == "tfjs" and artifact["missing_ops"] == [], artifact
  assert artifact["signatures"]["default"]["inputs"][0]["shape"] == ["?", 4], artifact
  assert len(artifact["shape_checks"]) >= 1 and "MatMul" in artifact["ops"], artifact
  assert os.path.isfile(os.path.join(out, "model.json"))
  status, stdout, _ = _run(capsys, "verify", out, "--against", "tests.cli_models:mlp_drifted",
                           "--quiet")
  assert status == 1 and "Verdict: **FAIL**" in stdout
  status, stdout, _ = _run(capsys, "inspect", os.path.join(out, "model.json"))
  assert status == 0 and "TF.js graph model" in stdout and "needs" in stdout, stdout
  # --overwrite replaces it, as for the other targets (a second `make demo`).
  status, _, err = _run(capsys, "export", MLP, "--target", "tfjs", "--out", out, "--overwrite",
                        "--quiet")
  assert status == 0, err


def test_inspect_names_the_ops_tfjs_lacks(tmp_path, capsys):
  out = str(tmp_path / "mlp")
  status, _, err = _run(capsys, "export", MLP, "--target", "tfjs", "--out", out, "--quiet")
  assert status == 0, err
  model_json = os.path.join(out, "model.json")
  with open(model_json) as f:
    model = json.load(f)
  model["modelTopology"]["node"][-1]["op"] = "XlaDot"
  with open(model_json, "w") as f:
    json.dump(model, f)
  status, stdout, _ = _run(capsys, "inspect", out, "--json")
  report = json.loads(stdout)
  assert report["missing_ops"] == ["XlaDot"], report
  assert report["needs"] == ["TF.js ops it lacks (XlaDot)"], report


def test_verify_fails_on_a_model_that_drifted(native_export, capsys):
  _, out = native_export
  status, stdout, _ = _run(capsys, "verify", out, "--against", "tests.cli_models:mlp_drifted",
                           "--quiet")
  assert status == 1
  assert "Verdict: **FAIL**" in stdout and "over the tolerance" in stdout
  status, stdout, _ = _run(capsys, "verify", out, "--against", MLP, "--quiet")
  assert status == 0 and "Verdict: **PASS**" in stdout


def test_refused_conversion_names_the_primitive_and_leaves_no_file(tmp_path, capsys):
  out = tmp_path / "igamma.tflite"
  status, _, err = _run(capsys, "export", "tests.cli_models:igamma_only", "--target", "tflite",
                        "--serialization", "no-xla", "--out", str(out), "--quiet")
  assert status == 3
  assert err.startswith("jax2tf export: refused: ") and "Traceback" not in err, err
  assert "igamma" in err and "Igamma" in err and "route='native'" in err, err
  assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argv, message", [
    (["export", "no_colon", "--out", "{tmp}/m"], "expected package.module:NAME, got 'no_colon'"),
    (["export", "tests.cli_models:missing", "--out", "{tmp}/m"], "has no callable missing"),
    (["export", "tests.cli_models:not_a_model", "--out", "{tmp}/m"], "gave no callable 'fn'"),
    (["export", MLP, "--out", "{tmp}/m", "--polymorphic-shapes", "(b, 4)", "_"],
     "expected one spec per input (1), got 2"),
    (["export", MLP, "--target", "tflite", "--serialization", "graph", "--out", "{tmp}/m"],
     "TFLite takes no XLA ops"),
    (["export", MLP, "--out", "/proc/no/such/folder/m"], "--out: cannot create the folder"),
    (["export", MLP, "--out", "{tmp}"], "exists; pass --overwrite"),
    (["export", MLP, "--out", "{tmp}/m", "--polymorphic-shapes", "(b, 4, 4)"],
     "--polymorphic-shapes: ['(b, 4, 4)'] do not describe the example inputs ([2, 4])"),
    (["export", MLP, "--out", "{tmp}/m", "--polymorphic-shapes", "(b,, 4"],
     "--polymorphic-shapes: ['(b,, 4'] do not describe"),
    (["export", MLP, "--target", "onnx", "--out", "{tmp}/m"], "invalid choice: 'onnx'"),
    (["export", MLP, "--target", "tfjs", "--serialization", "native", "--out", "{tmp}/m"],
     "TF.js runs graphs of ordinary TF ops only"),
    (["export", MLP, "--target", "tfjs", "--platforms", "cuda", "--out", "{tmp}/m"],
     "--platforms: applies to native serialization"),
    (["verify", "{tmp}", "--against", MLP], "expected a SavedModel directory"),
    (["export", MLP, "--route", "litert", "--out", "{tmp}/m"],
     "--route: chooses the route of --target tflite, not of saved_model"),
    (["export", MLP, "--target", "tflite", "--route", "litert", "--serialization", "native",
      "--out", "{tmp}/m"], "both choose the route of --target tflite"),
    (["export", MLP, "--target", "tflite", "--route", "tflite", "--out", "{tmp}/m"],
     "invalid choice: 'tflite'"),
])
def test_usage_errors_name_what_was_expected(argv, message, tmp_path, capsys):
  status, _, err = _run(capsys, *[a.format(tmp=tmp_path) for a in argv], "--quiet")
  assert status == 2, err
  assert message in err, err
  assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_debug_shows_the_traceback(tmp_path):
  with pytest.raises(cli.errors.UsageError, match="expected package.module:NAME"):
    cli.main(["export", "no_colon", "--out", str(tmp_path / "m"), "--debug"])


def test_installed_entry_point(tmp_path):
  script = os.path.join(os.path.dirname(sys.executable), "jax2tf")
  # The entry point of the environment, on this checkout's package.
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": root}
  for command in ("export", "verify", "inspect"):
    proc = subprocess.run([script, command, "--help"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"example:\n  jax2tf {command} " in proc.stdout and "3 conversion refused" in proc.stdout
  proc = subprocess.run([sys.executable, "-m", "jax2tf", "export", "tests.cli_models:missing",
                         "--out", str(tmp_path / "m")], capture_output=True, text=True, env=env)
  assert proc.returncode == 2
  errors = [line for line in proc.stderr.splitlines() if line.startswith("jax2tf")]
  assert errors == ["jax2tf export: error: model tests.cli_models:missing: tests.cli_models has "
                    "no callable missing; expected " + model_ref.PROTOCOL], proc.stderr


def test_random_inputs_stay_in_the_example_range():
  tokens = np.array([[0, 5, 9]], np.int32)
  sets, notes = input_sets.input_sets((tokens,), ["(b, t)"])
  assert notes == [] and list(sets) == ["example", "b=2, t=4", "b=3, t=7"]
  for (x,) in list(sets.values())[1:]:
    assert x.dtype == np.int32 and x.min() >= 0 and x.max() <= 9


def test_random_bfloat16_inputs_stay_in_the_finite_example_range():
  example = np.array([[-2.0, np.inf, 3.0]], jax.numpy.bfloat16)
  sets, _ = input_sets.input_sets((example,), ["(b, t)"])
  for (x,) in list(sets.values())[1:]:
    assert x.dtype == example.dtype and np.isfinite(x).all() and x.min() >= -2 and x.max() <= 3


def test_compare_output_sees_nan_and_dtype():
  want = np.array([1.0, np.nan], np.float32)
  assert verification.compare_output(want, want.copy(), 1e-5, 0)["ok"]
  moved = verification.compare_output(want, np.array([np.nan, 1.0], np.float32), 1e-5, 0)
  assert not moved["ok"] and "NaN" in moved["problem"]
  wrong = verification.compare_output(want, want.astype(np.float64), 1e-5, 0)
  assert not wrong["ok"] and "float64" in wrong["problem"]
  # bfloat16, which NumPy does not see as a float kind: NaN is NaN there too.
  half = want.astype(jax.numpy.bfloat16)
  assert verification.compare_output(half, half.copy(), 1e-2, 0)["ok"]
  assert not verification.compare_output(half, half[::-1].copy(), 1e-2, 0)["ok"]
