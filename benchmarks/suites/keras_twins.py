"""The graph paths against the same network written in Keras: TF running op by
op, with the Keras twin as the anchor for what TF's kernels can do.

    python -m benchmarks.suites.keras_twins child MODEL DIMS SETTINGS
    python -m benchmarks.suites.keras_twins [--quick] [MODEL ...]

For each model with a Keras twin (benchmarks/keras_reference.py) among the
Transformers, ResNet-50 and the BiLSTM, at a compute-bound size (the runtime
suite's, benchmarks/workloads.py's LARGE; LARGER below for the ViT and the
BiLSTM), five ways to run it are timed round-robin in one process
(benchmarks/timing.py):
- `jax.jit` of the Flax model, compiled with XLA's defaults and again with
  matrix products on one thread (`paths.ONE_THREAD`): the faster of the two is
  the anchor (`jax_anchor`), since on a machine of few cores either may win
  by a factor of two or more from one run to the next;
- the Keras twin under `tf.function` (TensorFlow backend, no XLA), its weights
  Keras's variables;
- `jax2tf.convert(native_serialization=False)` under `tf.function`, parameters
  as `tf.Variable`s, without and with `jit_compile`.
Each TF path must agree with `jax.jit` (ten times the model's tolerance, as in
the runtime suite) before it is timed; one that does not is reported as an
error. Each model is measured in a fresh process (DIMS its input sizes as
JSON, SETTINGS the timing settings), where Keras is made to run on TensorFlow
whatever backend the calling process uses.
"""

import json
import os
import sys

from benchmarks import children, models, timing, workloads

MODELS = ("transformer_lm", "gpt_rotary", "vit", "resnet50", "bilstm")
TRANSFORMERS = ("transformer_lm", "gpt_rotary", "vit")
JAX, JAX_ONE_THREAD = "jax.jit", "jax.jit/1"
KERAS, GRAPH, GRAPH_JIT = "keras", "graph", "graph+jit"
ALTERNATIVES = (JAX, JAX_ONE_THREAD, KERAS, GRAPH, GRAPH_JIT)
LABELS = {
  JAX: "jax.jit",
  JAX_ONE_THREAD: "jax.jit, one thread",
  KERAS: "Keras twin, tf.function",
  GRAPH: "graph, tf.function",
  GRAPH_JIT: "graph, jit_compile",
}


# Compute-bound sizes for the models the runtime suite times only at their
# default (per-op dispatch) sizes.
LARGER = {"vit": dict(batch=64, size=32), "bilstm": dict(batch=64, seq=32)}


def jax_anchor(seconds: dict) -> str | None:
  """Which `jax.jit` alternative the ratios divide by: the faster measured."""
  measured = [p for p in (JAX, JAX_ONE_THREAD) if p in seconds]
  return min(measured, key=seconds.get) if measured else None


def sizes(name: str, quick: bool) -> dict:
  m = models.get(name)
  if quick:
    return dict(m.default_dims)
  return {**m.default_dims, **workloads.LARGE.get(name, {}), **LARGER.get(name, {})}


def label(row) -> str:
  """How reports name a row: the model and its sizes."""
  return f"{row['model']} ({', '.join(f'{k} {v}' for k, v in row['sizes'].items())})"


def _max_abs_error(ref, out) -> float:
  import jax  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  want, got = jax.tree_util.tree_leaves(ref), tf.nest.flatten(out)
  if len(want) != len(got) or any(np.shape(a) != np.shape(b) for a, b in zip(want, got)):
    return float("inf")
  return max(
    float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b)))) for a, b in zip(want, got)
  )


def _close(ref, out, rtol: float, atol: float) -> bool:
  import jax  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  want, got = jax.tree_util.tree_leaves(ref), tf.nest.flatten(out)
  return len(want) == len(got) and all(
    np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=rtol, atol=atol)
    for a, b in zip(want, got)
  )


def child(name: str, dims: dict, cfg: timing.Settings) -> dict:
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  # Before TensorFlow, which may import Keras (and so fix its backend).
  os.environ["KERAS_BACKEND"] = "tensorflow"
  import keras  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  from benchmarks import keras_reference, paths  # pylint: disable=import-outside-toplevel
  from benchmarks.suites import sizes as graph_sizes  # pylint: disable=import-outside-toplevel

  if keras.backend.backend() != "tensorflow":
    raise RuntimeError(f"Keras runs on {keras.backend.backend()}, not TensorFlow")
  m = models.get(name)
  inputs = m.make_inputs(**dims)
  if len(inputs) != 1:
    raise ValueError(f"{name}: the Keras twins take one input, the model {len(inputs)}")
  rtol, atol = 10 * max(m.rtol, 1e-4), 10 * max(m.atol, 1e-4)
  signature = paths.signature(inputs)
  xs = [tf.constant(x) for x in inputs]
  calls, errors, max_abs, ops = {}, {}, {}, {}
  timing.progress(f"keras_twins: {name} {dims}: building and checking {len(ALTERNATIVES)} paths")
  calls[JAX], ref = paths.build_jax(m.fn, m.params, inputs)
  calls[JAX_ONE_THREAD], one_thread = paths.build_jax(m.fn, m.params, inputs, paths.ONE_THREAD)
  if not _close(ref, one_thread, rtol, atol):
    worst = _max_abs_error(ref, one_thread)
    errors[JAX_ONE_THREAD] = f"differs from jax.jit (max abs error {worst:.3g})"
    del calls[JAX_ONE_THREAD]

  def keras_function():
    twin = keras_reference.build(name, m.params, inputs, m.rtol, m.atol)
    return tf.function(
      lambda x: twin(x, training=False), jit_compile=False, input_signature=signature
    )

  def graph_function(jit_compile: bool):
    lowering = paths.LOWERING["graph"]
    return paths.tf_function(m.fn, m.params, lowering, jit_compile, signature)

  builders = {
    KERAS: keras_function,
    GRAPH: lambda: graph_function(False),
    GRAPH_JIT: lambda: graph_function(True),
  }
  for path, make in builders.items():
    try:
      f = make()
      out = timing.sync_tf(f(*xs))
    except Exception as e:  # noqa: BLE001 -- a failing path is a result, not a crash
      errors[path] = paths.error_text(e)
      continue
    max_abs[path] = _max_abs_error(ref, out)
    if not _close(ref, out, rtol, atol):  # timing a wrong answer would say nothing
      errors[path] = f"wrong result (max abs error {max_abs[path]:.3g})"
      continue
    if path != GRAPH_JIT:
      ops[path] = graph_sizes.op_counts(f.get_concrete_function(*signature), top=8)
    calls[path] = lambda f=f: timing.sync_tf(f(*xs))
  timing.progress(f"keras_twins: {name}: timing {len(calls)} alternatives round-robin")
  return {
    "model": name,
    "sizes": dims,
    "seconds": timing.round_robin(calls, cfg),
    "errors": errors,
    "max_abs_error": max_abs,
    "ops": ops,
  }


def compute_bound(name: str, quick: bool) -> bool:
  """Whether the size `sizes` gives the model is a compute-bound one."""
  if not quick and name in LARGER:
    return True
  large = not quick and name in workloads.LARGE
  return workloads.compute_bound(f"{name}@large" if large else name)


def measure_model(name: str, quick: bool) -> dict:
  cfg = timing.QUICK if quick else timing.FULL
  dims = sizes(name, quick)
  try:
    row = children.run(
      "benchmarks.suites.keras_twins", "child", name, json.dumps(dims), json.dumps(vars(cfg))
    )
  except children.ChildFailed as e:
    lines = e.stderr.strip().splitlines() or [str(e)]
    row = {
      "model": name,
      "sizes": dims,
      "seconds": {},
      "errors": {"child": lines[-1][:160]},
      "max_abs_error": {},
      "ops": {},
    }
  return {**row, "compute_bound": compute_bound(name, quick)}


def measure(names, quick: bool) -> dict:
  """The models of MODELS among `names` (None: all of them)."""
  chosen = [n for n in MODELS if names is None or n in names]
  return {"quick": quick, "results": [measure_model(n, quick) for n in chosen]}


def main(argv) -> None:
  if argv[:1] == ["child"] and len(argv) == 4:
    cfg = timing.Settings(**json.loads(argv[3]))
    print(json.dumps(child(argv[1], json.loads(argv[2]), cfg)))
    return
  quick = "--quick" in argv
  names = [a for a in argv if a != "--quick"] or None
  unknown = [n for n in names or () if n not in MODELS]
  if unknown:
    raise SystemExit(f"unknown models {unknown}; choose from {MODELS}\n\n{__doc__}")
  print(json.dumps(measure(names, quick), indent=1))


if __name__ == "__main__":
  main(sys.argv[1:])
