"""Peak memory of converting the largest model, each way in its own process.

    python -m benchmarks.suites.memory {jax,native,graph} MODEL

A child process builds the model and its inputs, then does the work
(jax.jit's first call, or convert + get_concrete_function + SavedModel save).
We report the peak RSS during the work minus the RSS just before it. The
peak of `resource.getrusage` cannot be reset, and building the model (Flax
initialises it with a jit-compiled function) can raise it above what the
work needs, hiding the work; so the kernel's high-water mark is reset first
(`/proc/self/clear_refs`) and read back from `/proc/self/status`. The
getrusage peaks are kept in the results for comparison.
"""

import gc
import json
import os
import resource
import sys
import tempfile

from benchmarks import children
from benchmarks.timing import progress

MODEL = "resnet50"
WHAT = ("jax", "native", "graph")


def _rusage_peak_mib() -> float:
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _status_mib(field: str) -> float:
  with open("/proc/self/status") as f:
    for line in f:
      if line.startswith(field + ":"):
        return int(line.split()[1]) / 1024
  raise KeyError(field)


def _reset_peak() -> None:
  with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # resets VmHWM to the current RSS


def child(what: str, model: str) -> dict:
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  import jax
  import tensorflow as tf

  from benchmarks import models, paths
  m = models.get(model)
  inputs = m.inputs
  gc.collect()
  rusage_before = _rusage_peak_mib()
  _reset_peak()
  before = _status_mib("VmRSS")
  if what == "jax":
    jax.block_until_ready(jax.jit(m.fn)(m.params, *inputs))
  else:
    f = paths.tf_function(m.fn, m.params, paths.LOWERING[what], False, paths.signature(inputs))
    f.get_concrete_function()
    module = tf.Module()
    module.f, module.variables_ = f, list(f.variables_)
    with tempfile.TemporaryDirectory() as d:
      tf.saved_model.save(module, d)
  after = _status_mib("VmHWM")
  return {"before_mib": before, "after_mib": after, "delta_mib": after - before,
          "rusage_before_mib": rusage_before, "rusage_after_mib": _rusage_peak_mib()}


def measure(model: str = MODEL) -> dict:
  out = {"model": model}
  for what in WHAT:
    progress(f"memory: {model}: {what} in a child process")
    try:
      out[what] = children.run("benchmarks.suites.memory", what, model)
    except children.ChildFailed as e:
      tail = (e.stderr.strip().splitlines() or ["?"])[-1]
      out[what] = {"error": f"child exited {e.returncode}: {tail[:160]}"}
  return out


if __name__ == "__main__":
  print(json.dumps(child(sys.argv[1], sys.argv[2])))
