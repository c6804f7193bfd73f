"""`python -m jax2tf.demo` end to end: convert, save, reload without JAX, compare."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.subprocess
def test_demo_reports_pass(tmp_path):
  out = tmp_path / "cnn"
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
  proc = subprocess.run([sys.executable, "-m", "jax2tf.demo", "--out", str(out)],
                        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
  lines = proc.stdout.strip().splitlines()
  assert lines[-1] == "PASS", proc.stdout
  for step in range(1, 7):
    assert any(line.startswith(f"[{step}/6]") for line in lines), proc.stdout
  # Each export is the command line's, with the command shown.
  for target in ("saved_model --serialization native", "saved_model --serialization graph",
                 "tflite", "tfjs"):
    assert f"jax2tf export jax2tf.demo_model:cnn --target {target} --out" in proc.stdout
  assert proc.stdout.count("import jax fails; jax modules loaded: none") == 2, proc.stdout
  assert "1 XlaCallModule op; platforms CPU" in proc.stdout
  assert "0 XlaCallModule, no Xla* op" in proc.stdout      # the graph-serialized export
  assert "builtin operators only" in proc.stdout
  # Every artifact matches JAX on the example batch and two more sizes.
  for set_name in ("example", "b=9", "b=17"):
    assert sum(line.strip().startswith(set_name) and line.endswith("ok")
               for line in lines) == 4, proc.stdout
  for serialization in ("native", "graph"):
    assert (out / serialization / "saved_model.pb").is_file()
    assert any((out / serialization / "variables").iterdir())
    assert (out / f"{serialization}.report.json").is_file()
  assert (out / "cnn.tflite").stat().st_size > 100_000
  assert (out / "tfjs" / "model.json").is_file()
