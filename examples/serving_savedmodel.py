"""A Flax model exported for TF Serving, checked with TensorFlow's saved_model_cli.

    python examples/serving_savedmodel.py [--out DIR] [--batch N]

`classifier()` describes the model the way `jax2tf export` takes it
(docs/cli.md): the JAX function, its parameters, an example input and a
polymorphic batch. From the shell, in this folder, the same export is

    jax2tf export serving_savedmodel:classifier --out /tmp/classifier/1

main() runs that export into DIR/classifier/1 (TF Serving reads numbered
versions under a model's base path: `--model_base_path=DIR/classifier`). The
command writes a `serving_default` signature whose input is named after the
function's parameter (`features`), with a dynamic batch and the parameters as
variables, runs it in a TensorFlow process without JAX, and compares it with
`jax.jit`. Then TensorFlow's own `saved_model_cli` shows the signature and runs
it on a batch; its printed results must match `jax.jit`, or main() raises.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax
import numpy as np
from flax import linen as nn

from jax2tf import cli

FEATURES, CLASSES = 8, 3


class MLP(nn.Module):
  @nn.compact
  def __call__(self, x):
    x = nn.relu(nn.Dense(32)(x))
    return nn.softmax(nn.Dense(CLASSES)(x))


def predict(params, features):
  # The serving signature names its input after this parameter.
  return MLP().apply(params, features)


def classifier():
  """The model for `jax2tf export`: fixed-seed parameters, so every call agrees."""
  example = np.zeros((2, FEATURES), np.float32)
  params = MLP().init(jax.random.key(0), example)
  return {
    "fn": predict,
    "params": params,
    "inputs": [example],
    "polymorphic_shapes": [f"(b, {FEATURES})"],
  }


def saved_model_cli(command: str, path: str, *options: str) -> str:
  """Runs TensorFlow's `saved_model_cli COMMAND` on the serving signature; returns its stdout."""
  # The tool is installed beside the Python that has TensorFlow.
  folder = os.path.dirname(sys.executable)
  tool = shutil.which("saved_model_cli", path=folder + os.pathsep + os.environ.get("PATH", ""))
  if tool is None:
    raise SystemExit("saved_model_cli not found: it comes with TensorFlow (pip install tensorflow)")
  signature = ["--dir", path, "--tag_set", "serve", "--signature_def", "serving_default"]
  proc = subprocess.run([tool, command, *signature, *options], capture_output=True, text=True)
  if proc.returncode != 0:
    raise RuntimeError(f"saved_model_cli {command} failed:\n{proc.stderr[-3000:]}")
  return proc.stdout


def signature_tensors(shown: str) -> dict:
  """{(kind, name): (dtype, shape)} from `saved_model_cli show --signature_def`."""
  found = re.findall(
    r"(inputs|outputs)\['(\w+)'\] tensor_info:\s+dtype: (\w+)\s+shape: \(([^)]*)\)", shown
  )
  return {
    (kind, name): (dtype, tuple(int(d) for d in shape.split(",")))
    for kind, name, dtype, shape in found
  }


def printed_results(ran: str) -> dict:
  """{output key: flat float array} from the arrays `saved_model_cli run` prints."""
  parts = re.split(r"Result for output key (\w+):\n", ran)[1:]
  number = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
  return {
    key: np.array(re.findall(number, text), np.float32)
    for key, text in zip(parts[::2], parts[1::2])
  }


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", help="where to write classifier/1 (default: a new temporary folder)")
  # saved_model_cli abbreviates a printout of more than 1000 numbers.
  parser.add_argument(
    "--batch", type=int, default=4, help="batch of the saved_model_cli run (<= 333)"
  )
  args = parser.parse_args(argv)
  path = os.path.join(args.out or tempfile.mkdtemp(prefix="jax2tf-serving-"), "classifier", "1")
  os.makedirs(os.path.dirname(path), exist_ok=True)

  print(f"jax2tf export -> {path}")
  status = cli.main(["export", f"{__name__}:classifier", "--out", path, "--overwrite", "--quiet"])
  if status != 0:
    raise SystemExit(f"jax2tf export failed with exit status {status}")

  print("\nsaved_model_cli show:")
  shown = saved_model_cli("show", path)
  print(shown)
  tensors = signature_tensors(shown)
  expected = {
    ("inputs", "features"): ("DT_FLOAT", (-1, FEATURES)),
    ("outputs", "output_0"): ("DT_FLOAT", (-1, CLASSES)),
  }
  if tensors != expected:
    raise SystemExit(f"serving_default signature: expected {expected}, got {tensors}")

  # saved_model_cli takes Python literals only: float32 values written as
  # Python floats are read back exactly.
  x = np.random.default_rng(0).normal(size=(args.batch, FEATURES)).astype(np.float32)
  print(f"saved_model_cli run on a batch of {args.batch}:")
  ran = saved_model_cli("run", path, "--input_exprs", f"features={x.tolist()}")
  print(ran)
  got = printed_results(ran)["output_0"].reshape(args.batch, CLASSES)
  made = classifier()
  want = jax.jit(predict)(made["params"], x)
  # jax2tf export's own tolerance; the printout keeps 8 significant digits.
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  print(
    f"saved_model_cli's results match jax.jit (largest difference {np.max(np.abs(got - want)):.2g})"
  )
  return {"path": path, "inputs": x, "outputs": got}


if __name__ == "__main__":
  main()
