"""Export the cases of cases.py for the consumers of the version matrix.

Run with a producer environment (jax, TensorFlow, jax2tf importable):
  python produce.py OUT_DIR LANE [--deploy]

Writes under OUT_DIR/LANE/, for every case:
  native-<release>/<case>/   SavedModel, native serialization with
                             target_tf_version=<release> (2.17 ... 2.21)
  graph-xla/<case>/, graph-no_xla/<case>/   SavedModels, graph serialization
and, with --deploy, tflite-<route>/<case>.tflite and tfjs/<case>/ (to_tflite
with route "graph" and "native", to_tfjs). Each artifact has io.npz beside it
(compare.py: the inputs and JAX's outputs) and OUT_DIR/LANE/manifest.json
lists them, with the reason where the export itself failed.
"""

import json
import os
import platform
import sys
import traceback

import jax
import jaxlib
import numpy as np
import tensorflow as tf

import jax2tf
from tools.compat.cases import CASES
from tools.compat.compare import first_line

TARGETS = ("2.17", "2.18", "2.19", "2.20", "2.21")
GRAPH_FLAVOURS = {"graph-xla": True, "graph-no_xla": False}
TFLITE_ROUTES = ("graph", "native")


def write_io(path, case):
  arrays = {}
  for k, args in enumerate(case.input_sets):
    outs = jax.tree_util.tree_leaves(jax.jit(case.fun)(*args))
    arrays.update({f"in{k}_{i}": np.asarray(a) for i, a in enumerate(args)})
    arrays.update({f"out{k}_{j}": np.asarray(o) for j, o in enumerate(outs)})
  np.savez(path, **arrays)


def signature(case):
  """The SavedModel's input signature: a dimension named in the polymorphic
  spec is unknown."""
  specs = []
  for i, arg in enumerate(case.input_sets[0]):
    spec = case.polymorphic_shapes[i] if case.polymorphic_shapes else None
    dims = list(arg.shape)
    if spec:
      tokens = [t.strip() for t in spec.strip("()").split(",")]
      dims = [d if t == "_" or t.isdigit() else None for d, t in zip(dims, tokens)]
    specs.append(tf.TensorSpec(dims, tf.as_dtype(arg.dtype)))
  return specs


def save_model(path, case, **options):
  f_tf = jax2tf.convert(
    case.fun,
    polymorphic_shapes=case.polymorphic_shapes,
    with_gradient=case.with_gradient,
    **options,
  )
  module = tf.Module()
  module.f = tf.function(f_tf, autograph=False, input_signature=signature(case))
  tf.saved_model.save(module, path)


def save_tflite(path, case, route):
  # Verified as a user gets it: a model that the producer's own LiteRT cannot
  # run is refused here (an export failure) rather than shipped.
  model = jax2tf.to_tflite(
    case.fun, *case.input_sets[0], polymorphic_shapes=case.polymorphic_shapes, route=route
  )
  with open(path, "wb") as f:
    f.write(bytes(model))
  return {"input_names": list(model.input_names)}


def save_tfjs(path, case):
  jax2tf.to_tfjs(
    case.fun, *case.input_sets[0], polymorphic_shapes=case.polymorphic_shapes, path=path
  )


def jobs(deploy):
  """(kind, flavour, file name of the case, exporter) of every artifact."""
  for target in TARGETS:
    yield (
      "savedmodel",
      f"native-{target}",
      "{}",
      lambda p, c, t=target: save_model(p, c, target_tf_version=t),
    )
  for flavour, enable_xla in GRAPH_FLAVOURS.items():
    yield (
      "savedmodel",
      flavour,
      "{}",
      lambda p, c, x=enable_xla: save_model(p, c, native_serialization=False, enable_xla=x),
    )
  if deploy:
    for route in TFLITE_ROUTES:
      yield "tflite", f"tflite-{route}", "{}.tflite", lambda p, c, r=route: save_tflite(p, c, r)
    yield "tfjs", "tfjs", "{}", save_tfjs


def main():
  out, lane = os.path.abspath(sys.argv[1]), sys.argv[2]
  deploy = "--deploy" in sys.argv[3:]
  versions = {
    "python": platform.python_version(),
    "jax": jax.__version__,
    "jaxlib": jaxlib.__version__,
    "tensorflow": tf.__version__,
  }
  print(f"producer {lane}: " + ", ".join(f"{k} {v}" for k, v in versions.items()), flush=True)
  artifacts = []
  for kind, flavour, file_name, export in jobs(deploy):
    for case in CASES:
      if kind != "savedmodel" and not case.deploy:
        continue
      rel = os.path.join(lane, flavour, file_name.format(case.name))
      path = os.path.join(out, rel)
      os.makedirs(os.path.dirname(path), exist_ok=True)
      entry = {"id": f"{lane}/{flavour}/{case.name}", "lane": lane, "kind": kind}
      entry.update({"flavour": flavour, "case": case.name, "path": rel})
      try:
        entry.update(export(path, case) or {})
        io = (
          path[: -len(".tflite")] + ".io.npz" if kind == "tflite" else os.path.join(path, "io.npz")
        )
        write_io(io, case)
        entry["io"] = os.path.relpath(io, out)
        print(f"  exported {entry['id']}", flush=True)
      except Exception as e:  # noqa: BLE001 - an export failure is a cell of the matrix
        entry["export_error"] = first_line(e)
        print(f"  NOT EXPORTED {entry['id']}: {entry['export_error']}", flush=True)
        traceback.print_exc(limit=3)
      artifacts.append(entry)
  with open(os.path.join(out, lane, "manifest.json"), "w") as f:
    json.dump({"lane": lane, "versions": versions, "artifacts": artifacts}, f, indent=1)


if __name__ == "__main__":
  main()
