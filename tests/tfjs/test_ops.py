"""The TF.js facts jax2tf/tfjs/ops.py records agree with the TF.js that package.json pins."""

import json
import pathlib
import subprocess

from jax2tf.tfjs import ops, runtime

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_pinned_versions_are_the_recorded_one():
  package = json.loads((ROOT / "package.json").read_text())
  tfjs = {k: v for k, v in package["dependencies"].items() if k.startswith("@tensorflow/")}
  assert tfjs == {
    "@tensorflow/tfjs": ops.TFJS_VERSION,
    "@tensorflow/tfjs-backend-wasm": ops.TFJS_VERSION,
  }
  lock = json.loads((ROOT / "package-lock.json").read_text())
  for name in ("tfjs", "tfjs-backend-wasm", "tfjs-converter", "tfjs-core", "tfjs-backend-cpu"):
    assert lock["packages"][f"node_modules/@tensorflow/{name}"]["version"] == ops.TFJS_VERSION


def test_recorded_ops_are_those_the_installed_converter_maps():
  env = {"NODE_PATH": str(runtime.node_modules()), "PATH": runtime.os.environ["PATH"]}
  listed = subprocess.run(["node", str(ROOT / "tools" / "tfjs_op_names.js")], env=env,
                          capture_output=True, text=True, check=True, timeout=120).stdout.split()
  assert set(listed) == ops.OPS, (
      "jax2tf/tfjs/ops.py is stale; rewrite OPS from `node tools/tfjs_op_names.js`: "
      f"added {sorted(set(listed) - ops.OPS)}, removed {sorted(ops.OPS - set(listed))}")


def test_ops_that_take_complex64_are_ops_tfjs_runs():
  assert ops.COMPLEX64_OPS <= ops.RUNS, sorted(ops.COMPLEX64_OPS - ops.RUNS)
