"""SavedModels with a dynamic batch, this package against JAX's own
`jax.experimental.jax2tf`: graph ops, export time, load time and first call.

    python -m benchmarks.suites.upstream export {ours,upstream,ours_without_pool_nan} WORKLOAD DIR
    python -m benchmarks.suites.upstream load DIR

Both converters run the same workload, each export in a process of its own
(this package's drop-in switch decides which module `jax.experimental.jax2tf`
is, and a process holds one of them), and every SavedModel is then loaded and
called once in a fresh process that imports TensorFlow and nothing of either converter,
as a server does. Repetitions alternate the two converters so that noise on a shared
machine hits both alike; medians are reported.

For the workloads with a max pool (POOLED), a third export, this package
with the pools' NaN handling left out, measures what that handling costs:
the benchmark page gives its first call beside a miss.

Workloads: a Keras 3 model exported on the JAX backend with
`model.export(format="tf_saved_model")`, which calls `jax.experimental.jax2tf`
itself, and models of the set (benchmarks/models/) saved with native
serialization (JAX's module has no other), parameters as variables, batch
polymorphic.
"""

import dataclasses
import json
import os
import sys
import tempfile
import time

from benchmarks import children
from benchmarks.suites import sizes
from benchmarks.timing import progress

CONVERTERS = ("ours", "upstream")
# This package with its max pools' NaN handling left out, for the workloads
# with one: what that handling costs, measured in the same run. Upstream's
# module has none (a window holding a NaN gives a number there).
WITHOUT_POOL_NAN = "ours_without_pool_nan"
POOLED = ("keras_cnn",)
KERAS = ("keras_mlp", "keras_cnn")
MODEL_SET = ("mlp", "cnn", "transformer_lm", "vit")
QUICK_WORKLOADS = ("keras_mlp",)
BATCH = 3  # the batch of the first call after loading
# Each export, load and first call runs in a process of its own, whose time
# on this shared machine varies by about 20% from one process to the next.
REPS = 5


def _select(converter: str) -> None:
  if converter in ("ours", WITHOUT_POOL_NAN):
    import jax2tf

    jax2tf.install()
    if converter == WITHOUT_POOL_NAN:
      from jax2tf.native import module_patterns, module_rewrite

      # The NaN handling of reductions stays; that of windows goes.
      pipelines = module_rewrite.PIPELINES
      nan = module_patterns.NAN_AND_ZEROS_BESIDE_MIN_MAX_REDUCTIONS
      reductions_only = dataclasses.replace(nan, ops=("stablehlo.reduce",))
      pipelines["tf_xla"] = tuple(reductions_only if p is nan else p for p in pipelines["tf_xla"])
  elif converter != "upstream":
    raise ValueError(
      f"converter must be one of {(*CONVERTERS, WITHOUT_POOL_NAN)}, got {converter!r}"
    )


def _keras_model(name: str):
  import keras

  shape: tuple[int, ...]
  if name == "keras_mlp":
    layers = [keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
              keras.layers.Dense(64, activation="relu"), keras.layers.Dense(4)]
    shape = (16,)
  else:
    layers = [keras.Input((28, 28, 1)), keras.layers.Conv2D(8, 3, activation="relu"),
              keras.layers.MaxPooling2D(), keras.layers.Flatten(), keras.layers.Dense(10)]
    shape = (28, 28, 1)
  return keras.Sequential(layers), shape


def _keras_export(name: str):
  """The Keras model built and called once (its weights initialised, which
  is no export cost: JAX compiles each initializer, more than a second
  for the CNN), and a function exporting it to a path."""
  import numpy as np

  model, shape = _keras_model(name)
  model(np.zeros((1, *shape), "float32"))
  return lambda path: model.export(path, format="tf_saved_model", verbose=False)


def _model_set_export(name: str):
  """A function saving model `name` of the set (parameters initialised
  before) to a path."""
  import tensorflow as tf
  from jax.experimental import jax2tf

  from benchmarks import models

  m = models.get(name)
  batch = m.variant("batch")
  specs = [tf.TensorSpec([None, *x.shape[1:]] if spec else x.shape, tf.as_dtype(x.dtype))
           for spec, x in zip(batch.specs, m.inputs)]  # every "batch" spec is (b, ...)

  def export(path: str) -> None:
    f = jax2tf.convert(m.fn, polymorphic_shapes=[None, *batch.specs], with_gradient=False)
    module = tf.Module()
    module.params = tf.nest.flatten(tf.nest.map_structure(tf.Variable, m.params))
    tree = tf.nest.map_structure(lambda _: 0, m.params)

    def serve(*xs):
      return f(tf.nest.pack_sequence_as(tree, list(module.params)), *xs)

    module.serve = tf.function(serve, autograph=False, input_signature=specs)
    tf.saved_model.save(module, path, signatures=module.serve.get_concrete_function())

  return export


def _graph_ops(path: str) -> int:
  """Nodes of the SavedModel's graph and of every function in its library."""
  from tensorflow.core.protobuf import saved_model_pb2

  sm = saved_model_pb2.SavedModel()
  with open(os.path.join(path, "saved_model.pb"), "rb") as f:
    sm.ParseFromString(f.read())
  return sizes.graph_def_op_counts(sm.meta_graphs[0].graph_def)["total"]


def export_child(converter: str, workload: str, path: str) -> dict:
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  # Before TensorFlow, which may import Keras (and so fix its backend).
  os.environ["KERAS_BACKEND"] = "jax"
  _select(converter)
  # Imports are no export cost (Keras imports TensorFlow at its first export,
  # and this package imports its converter at the first use of `convert`,
  # 0.3-0.5 s that upstream's pays at import): each converter converts and
  # runs a trivial function first.
  import tensorflow as tf
  from jax.experimental import jax2tf

  tf.function(jax2tf.convert(lambda x: x + 1), autograph=False)(tf.constant(1.0))

  if workload in KERAS:
    import keras

    if keras.backend.backend() != "jax":
      raise RuntimeError(f"Keras runs on {keras.backend.backend()}, not JAX")

    export = _keras_export(workload)
  else:
    export = _model_set_export(workload)
  t0 = time.perf_counter()
  export(path)
  seconds = time.perf_counter() - t0
  which = "ours" if jax2tf.__name__ == "jax2tf" else "upstream"
  if which != converter.removesuffix("_without_pool_nan"):
    raise RuntimeError(f"asked for the {converter} converter, ran {which}")
  return {"export_s": seconds, "ops": _graph_ops(path)}


def load_child(path: str) -> dict:
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  import numpy as np
  import tensorflow as tf

  t0 = time.perf_counter()
  loaded = tf.saved_model.load(path)
  load_s = time.perf_counter() - t0
  serve = loaded.signatures["serving_default"]
  kwargs = {}
  for name, spec in serve.structured_input_signature[1].items():
    shape = [BATCH if d is None else d for d in spec.shape]
    kwargs[name] = tf.constant(np.ones(shape, spec.dtype.as_numpy_dtype))
  t0 = time.perf_counter()
  out = serve(**kwargs)
  for t in tf.nest.flatten(out):
    t.numpy()
  return {"load_s": load_s, "first_call_s": time.perf_counter() - t0}


def _child(*args: str) -> dict:
  return children.run("benchmarks.suites.upstream", *args)


def _export_and_load(workload: str, converter: str, rep: int, reps: int) -> dict:
  with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "sm")
    progress(f"upstream: {workload} exported by {converter} ({rep + 1}/{reps})")
    r = _child("export", converter, workload, path)
    r.update(_child("load", path))
  return r


def measure(workloads, reps: int) -> dict:
  """{workload: {converter: medians}} with ratios ours/upstream."""
  out = {}
  for w in workloads:
    alternatives = (*CONVERTERS, WITHOUT_POOL_NAN) if w in POOLED else CONVERTERS
    row: dict = children.alternating(
      alternatives, reps, lambda c, rep, w=w: _export_and_load(w, c, rep, reps))
    row["ratio"] = {k: row["ours"][k] / row["upstream"][k] for k in row["ours"]}
    if WITHOUT_POOL_NAN in row:
      row["ratio_" + WITHOUT_POOL_NAN] = {
        k: row[WITHOUT_POOL_NAN][k] / row["upstream"][k] for k in row["ours"]}
    out[w] = row
  return out


def run(quick: bool) -> dict:
  workloads = QUICK_WORKLOADS if quick else KERAS + MODEL_SET
  reps = 1 if quick else REPS
  return {"reps": reps, "batch": BATCH, "results": measure(workloads, reps)}


def main(argv) -> None:
  if argv[:1] == ["export"] and len(argv) == 4:
    print(json.dumps(export_child(argv[1], argv[2], argv[3])))
  elif argv[:1] == ["load"] and len(argv) == 2:
    print(json.dumps(load_child(argv[1])))
  else:
    raise SystemExit(__doc__)


if __name__ == "__main__":
  main(sys.argv[1:])
