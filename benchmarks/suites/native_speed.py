"""The native module at run time, this package against JAX's own
`jax.experimental.jax2tf`: time per call under `tf.function(jit_compile=True)`
and a plain `tf.function`, and the first call (TF's XLA compiling the module).

    python -m benchmarks.suites.native_speed child WORKLOAD DIMS FIRST SAMPLES SAMPLE_S
    python -m benchmarks.suites.native_speed [--quick]

DIMS is the model's input sizes as JSON (`{"batch": 16, "size": 64}`),
FIRST the converter whose functions go first ("ours" or "upstream").

A child holds both converters: this package imported as `jax2tf`, JAX's
own as `jax.experimental.jax2tf` (the drop-in switch is not installed; the
modules upstream writes are the same bytes as in a process without this
package). It converts the model with each (native serialization,
parameters as `tf.Variable`s, static shapes) into a `tf.function` of each
mode, traces them, times each first call (which compiles the module) after
a warm-up compilation of a trivial function, then times the four functions
round-robin, a batch of calls each per round. Timing both converters in
one process, interleaved, pairs their samples in time: on a shared
2-core machine, separate processes met different load and gave ratios
that drifted by 10-15% from one run to the next. Repetitions are separate
children, the converters taking turns to go first; medians over them are
reported, with ratios ours/upstream.
"""

import json
import os
import statistics
import sys
import time

from benchmarks import children
from benchmarks.timing import progress

CONVERTERS = ("ours", "upstream")
MODES = ("jit", "plain")
# The compute-bound sizes of the model set (benchmarks/workloads.py's LARGE
# for the transformers; ResNet-50 at the size the speed gap was found at).
WORKLOADS = {
  "resnet50": dict(batch=16, size=64),
  "transformer_lm": dict(batch=128, seq=32),
  "gpt_rotary": dict(batch=32, seq=64),
}
QUICK_WORKLOADS = {"transformer_lm": dict(batch=8, seq=16)}


def _converters() -> dict:
  """{"ours": this package, "upstream": JAX's jax2tf}, both in this process."""
  from jax.experimental import jax2tf as upstream

  import jax2tf

  if upstream is jax2tf or upstream.__name__ == jax2tf.__name__:
    raise RuntimeError("jax.experimental.jax2tf is this package here: unset its drop-in switch")
  return {"ours": jax2tf, "upstream": upstream}


def _warm_up_xla() -> None:
  # A process's first XLA compilation also sets XLA itself up; without this
  # the converter whose first call comes first would pay for it.
  import tensorflow as tf

  tf.function(lambda x: x * 2.0 + 1.0, jit_compile=True)(tf.ones((4,))).numpy()


def child(workload: str, dims: dict, first: str, samples: int, sample_s: float) -> dict:
  """{mode: {converter: {"call_s", "cpu_per_call_s", "first_call_s",
  "trace_s"}}} for one workload, both converters in this process."""
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  if first not in CONVERTERS:
    raise ValueError(f"first must be one of {CONVERTERS}, got {first!r}")
  import tensorflow as tf

  from benchmarks import models

  converters = _converters()
  order = [first, *(c for c in CONVERTERS if c != first)]
  m = models.get(workload)
  xs = [tf.constant(x) for x in m.make_inputs(**dims)]
  variables = tf.nest.map_structure(tf.Variable, m.params)

  def function(converter: str, mode: str):
    f_tf = converters[converter].convert(m.fn, native_serialization=True, with_gradient=False)
    return tf.function(lambda *a: f_tf(variables, *a), autograph=False, jit_compile=(mode == "jit"))

  def call(f):
    for t in tf.nest.flatten(f(*xs)):
      t.numpy()

  out: dict = {mode: {c: {} for c in order} for mode in MODES}
  fns = {}
  _warm_up_xla()
  for mode in MODES:
    for c in order:
      f = function(c, mode)
      t0 = time.perf_counter()
      f.get_concrete_function(*xs)
      out[mode][c]["trace_s"] = time.perf_counter() - t0
      t0 = time.perf_counter()
      call(f)
      out[mode][c]["first_call_s"] = time.perf_counter() - t0
      for _ in range(3):
        call(f)
      fns[mode, c] = f
  # One loop length for all four, from the slowest, so that each sample of
  # a round spans about `sample_s`.
  longest = 0.0
  for f in fns.values():
    t0 = time.perf_counter()
    call(f)
    longest = max(longest, time.perf_counter() - t0)
  loop = max(1, round(sample_s / max(longest, 1e-6)))
  per_call: dict = {key: [] for key in fns}
  cpu_per_call: dict = {key: [] for key in fns}
  for _ in range(samples):
    for key, f in fns.items():
      t0, c0 = time.perf_counter(), time.process_time()
      for _ in range(loop):
        call(f)
      per_call[key].append((time.perf_counter() - t0) / loop)
      cpu_per_call[key].append((time.process_time() - c0) / loop)
  # CPU time (all threads of the process) is the steadier figure on a
  # shared machine, where other jobs stretch the wall-clock time.
  for mode, c in fns:
    out[mode][c]["call_s"] = statistics.median(per_call[mode, c])
    out[mode][c]["cpu_per_call_s"] = statistics.median(cpu_per_call[mode, c])
  return out


def measure(workloads: dict, reps: int, samples: int, sample_s: float) -> dict:
  """{workload: {mode: {converter: medians, "ratio": ours/upstream}}}."""
  out: dict = {}
  for w, dims in workloads.items():
    runs = []
    for rep in range(reps):
      first = CONVERTERS[rep % 2]
      progress(f"native_speed: {w}, both converters, {first} first ({rep + 1}/{reps})")
      runs.append(
        children.run(
          "benchmarks.suites.native_speed",
          "child",
          w,
          json.dumps(dims),
          first,
          str(samples),
          str(sample_s),
        )
      )
    out[w] = {}
    for mode in MODES:
      row: dict = {
        c: {k: statistics.median(r[mode][c][k] for r in runs) for k in runs[0][mode][c]}
        for c in CONVERTERS
      }
      row["ratio"] = {k: row["ours"][k] / row["upstream"][k] for k in row["ours"]}
      out[w][mode] = row
  return out


def run(quick: bool) -> dict:
  workloads = QUICK_WORKLOADS if quick else WORKLOADS
  # An even count of repetitions: each converter is compiled first in half
  # of them (the first in a process still runs a few % slower).
  reps, samples, sample_s = (1, 3, 0.05) if quick else (4, 7, 0.3)
  return {"reps": reps, "sizes": workloads, "results": measure(workloads, reps, samples, sample_s)}


def main(argv) -> None:
  if argv[:1] == ["child"] and len(argv) == 6:
    print(json.dumps(child(argv[1], json.loads(argv[2]), argv[3], int(argv[4]), float(argv[5]))))
  elif argv in ([], ["--quick"]):
    print(json.dumps(run(quick=argv == ["--quick"]), indent=1))
  else:
    raise SystemExit(__doc__)


if __name__ == "__main__":
  main(sys.argv[1:])
