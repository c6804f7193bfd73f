"""The native module at run time, this package against JAX's own
`jax.experimental.jax2tf`: time per call under `tf.function(jit_compile=True)`
and a plain `tf.function`, and the first call (TF's XLA compiling the module).

    python -m benchmarks.suites.native_speed child {ours,upstream} WORKLOAD MODE DIMS SAMPLES SAMPLE_S
    python -m benchmarks.suites.native_speed [--quick]

MODE is "jit" (`jit_compile=True`) or "plain", DIMS the model's input sizes
as JSON (`{"batch": 16, "size": 64}`). Each measurement is a process
of its own (a process holds one of the two converters: this package's
drop-in switch decides which module `jax.experimental.jax2tf` is), and the
processes alternate between the converters, ours first in even repetitions,
upstream first in odd ones, so that noise on a shared machine hits both
alike; medians over the repetitions are reported, with ratios ours/upstream.

A child converts the model with native serialization (parameters as
`tf.Variable`s, static shapes), traces the `tf.function` (the export, not
timed as a call), then times its first call, which compiles the module, and
the median per-call time of the calls after a warm-up.
"""

import json
import os
import statistics
import sys
import time

from benchmarks import children
from benchmarks.suites.upstream import CONVERTERS, _select
from benchmarks.timing import progress

MODES = ("jit", "plain")
# The compute-bound sizes of the model set (benchmarks/workloads.py's LARGE
# for the Transformer; ResNet-50 at the size the speed gap was found at).
WORKLOADS = {
  "resnet50": dict(batch=16, size=64),
  "transformer_lm": dict(batch=128, seq=32),
}
QUICK_WORKLOADS = {"transformer_lm": dict(batch=8, seq=16)}


def child(
  converter: str, workload: str, mode: str, dims: dict, samples: int, sample_s: float
) -> dict:
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  _select(converter)
  import tensorflow as tf
  from jax.experimental import jax2tf

  from benchmarks import models

  which = "ours" if jax2tf.__name__ == "jax2tf" else "upstream"
  if which != converter:
    raise RuntimeError(f"asked for the {converter} converter, ran {which}")
  if mode not in MODES:
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
  m = models.get(workload)
  xs = [tf.constant(x) for x in m.make_inputs(**dims)]
  variables = tf.nest.map_structure(tf.Variable, m.params)
  f_tf = jax2tf.convert(m.fn, native_serialization=True, with_gradient=False)
  f = tf.function(lambda *a: f_tf(variables, *a), autograph=False, jit_compile=(mode == "jit"))

  def call():
    for t in tf.nest.flatten(f(*xs)):
      t.numpy()

  t0 = time.perf_counter()
  f.get_concrete_function(*xs)
  trace_s = time.perf_counter() - t0
  t0 = time.perf_counter()
  call()
  first_call_s = time.perf_counter() - t0
  for _ in range(3):
    call()
  t0 = time.perf_counter()
  call()
  loop = max(1, round(sample_s / max(time.perf_counter() - t0, 1e-6)))
  per_call, cpu_per_call = [], []
  for _ in range(samples):
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(loop):
      call()
    per_call.append((time.perf_counter() - t0) / loop)
    cpu_per_call.append((time.process_time() - c0) / loop)
  # CPU time (all threads of the process) is the steadier figure on a
  # shared machine, where other jobs stretch the wall-clock time.
  return {
    "call_s": statistics.median(per_call),
    "cpu_per_call_s": statistics.median(cpu_per_call),
    "first_call_s": first_call_s,
    "trace_s": trace_s,
  }


def measure(workloads: dict, reps: int, samples: int, sample_s: float) -> dict:
  """{workload: {mode: {converter: medians, "ratio": ours/upstream}}}."""
  out: dict = {}
  for w, dims in workloads.items():
    out[w] = {}
    for mode in MODES:

      def one(c, rep, w=w, dims=dims, mode=mode):
        progress(f"native_speed: {w} {mode} by {c} ({rep + 1}/{reps})")
        return children.run("benchmarks.suites.native_speed", "child", c, w, mode,
                            json.dumps(dims), str(samples), str(sample_s))

      row: dict = children.alternating(CONVERTERS, reps, one)
      row["ratio"] = {k: row["ours"][k] / row["upstream"][k] for k in row["ours"]}
      out[w][mode] = row
  return out


def run(quick: bool) -> dict:
  workloads = QUICK_WORKLOADS if quick else WORKLOADS
  reps, samples, sample_s = (1, 3, 0.05) if quick else (3, 7, 0.3)
  return {"reps": reps, "sizes": workloads, "results": measure(workloads, reps, samples, sample_s)}


def main(argv) -> None:
  if argv[:1] == ["child"] and len(argv) == 7:
    print(
      json.dumps(
        child(argv[1], argv[2], argv[3], json.loads(argv[4]), int(argv[5]), float(argv[6]))
      )
    )
  elif argv in ([], ["--quick"]):
    print(json.dumps(run(quick=argv == ["--quick"]), indent=1))
  else:
    raise SystemExit(__doc__)


if __name__ == "__main__":
  main(sys.argv[1:])
