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
  assert "import jax fails, as intended; jax modules loaded: none" in proc.stdout
  assert "one XlaCallModule op" in proc.stdout
  assert "0 XlaCallModule" in proc.stdout          # the graph-serialized export
  for batch in (1, 8, 32):
    # One line per serialization, and one for the .tflite on LiteRT.
    assert sum(line.strip().startswith(f"batch {batch:>3}") and line.endswith("ok")
               for line in lines) == 3, proc.stdout
  for serialization in ("native", "graph"):
    assert (out / serialization / "saved_model.pb").is_file()
    assert any((out / serialization / "variables").iterdir())
  assert "route 'graph' (builtin ops only)" in proc.stdout
  assert (out / "cnn.tflite").stat().st_size > 100_000
