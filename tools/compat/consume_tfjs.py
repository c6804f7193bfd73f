"""Run a producer's TF.js models on one TF.js release installed by npm in a
folder of its own, on the cpu and wasm backends.

Runs with this checkout's environment (jax2tf.tfjs runs the models in Node):
  python -m tools.compat.consume_tfjs PRODUCED_DIR TFJS_DIR
TFJS_DIR holds node_modules/ with @tensorflow/tfjs and
@tensorflow/tfjs-backend-wasm of one version.
"""

import json
import os
import shutil
import sys

from jax2tf.tfjs import runtime
from tools.compat.compare import check_all, consumer


def installed_version(tfjs_dir, package):
  with open(os.path.join(tfjs_dir, "node_modules", "@tensorflow", package, "package.json")) as f:
    return json.load(f)["version"]


def use_tfjs_in(tfjs_dir):
  """Node resolves `require` from the script's own folder upwards before
  NODE_PATH, so run_model.js inside this checkout would load the checkout's
  node_modules whatever JAX2TF_NODE_MODULES says: run a copy of it that sits
  beside the node_modules of the release under test."""
  script = os.path.join(tfjs_dir, os.path.basename(runtime.RUNNER))
  shutil.copyfile(runtime.RUNNER, script)
  runtime.RUNNER = script
  os.environ[runtime.NODE_MODULES_ENV] = os.path.join(tfjs_dir, "node_modules")


def main():
  produced, tfjs_dir = sys.argv[1], os.path.abspath(sys.argv[2])
  use_tfjs_in(tfjs_dir)
  version = installed_version(tfjs_dir, "tfjs")
  wasm = installed_version(tfjs_dir, "tfjs-backend-wasm")
  for backend in runtime.BACKENDS:
    print(f"consumer @tensorflow/tfjs {version} (wasm {wasm}), {backend} backend", flush=True)
    with runtime.Runner(backend) as runner:
      # TF.js loads the model on each run, so a model it cannot load fails there.
      check_all(
        produced,
        "tfjs",
        consumer(f"tfjs-{backend}", version),
        lambda path, artifact: lambda args: runner.run(path, *args),
      )


if __name__ == "__main__":
  main()
