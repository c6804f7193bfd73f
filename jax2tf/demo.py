"""End-to-end demo: a Flax CNN -> jax2tf -> SavedModel -> TensorFlow without JAX.

    python -m jax2tf.demo [--out DIR]

Builds a small CNN with fixed-seed parameters and converts it twice with a
batch-polymorphic shape: native serialization (StableHLO in one XlaCallModule
op) and graph serialization (ordinary TF ops, one or a few per JAX primitive).
Both are saved with the parameters as tf.Variables under DIR/native and
DIR/graph, reloaded in a child process where `import jax` fails, run on
batches of 1, 8 and 32 images there, and compared with the JAX model. The
same model also goes to DIR/cnn.tflite through `jax2tf.to_tflite` (builtin
TFLite ops only, dynamic batch) and runs on the LiteRT interpreter at the same
batch sizes. Exits non-zero if any result differs.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import jax2tf  # noqa: E402
from jax2tf import demo_model  # noqa: E402

DEFAULT_OUT = os.path.join("demo_output", "cnn")
SERIALIZATIONS = {"native": True, "graph": False}  # name -> native_serialization
BATCH_SIZES = (1, 8, 32)
POLY_SPEC = "(b, 28, 28, 1)"
# Both sides run the same StableHLO through XLA:CPU, but TF and jaxlib ship
# different XLA builds that may fuse and order the float32 reductions (up to
# 288 terms in a conv, 1568 in the first dense layer) differently. Reordering a
# float32 sum of n terms changes it by about sqrt(n) * 2**-24 relative to its
# magnitude, i.e. ~2e-6 for n = 1568, so 1e-5 of the logit scale leaves margin
# while any real conversion bug (a wrong layout, a dropped bias) is orders of
# magnitude larger.
RTOL = 1e-5
STEADY_STATE_CALLS = 30


def step(i: int, total: int, text: str) -> None:
  print(f"[{i}/{total}] {text}", flush=True)


def make_inputs(io_dir: str) -> dict[int, np.ndarray]:
  rng = np.random.default_rng(2024)
  inputs = {}
  for b in BATCH_SIZES:
    x = rng.uniform(0.0, 1.0, size=(b,) + demo_model.IMAGE_SHAPE).astype(np.float32)
    np.save(os.path.join(io_dir, f"in_{b}.npy"), x)
    inputs[b] = x
  return inputs


def dir_bytes(path: str) -> int:
  return sum(
    os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(path) for f in files
  )


def convert(model, params, native_serialization: bool):
  """Returns (a tf.Module with a `predict` function, seconds to convert)."""
  params_vars = tf.nest.map_structure(tf.Variable, params)
  predict_tf = jax2tf.convert(
    model.apply, polymorphic_shapes=[None, POLY_SPEC], native_serialization=native_serialization
  )

  module = tf.Module()
  # Held as variables, the parameters go to variables/ instead of being baked
  # into the graph as constants.
  module._variables = tf.nest.flatten(params_vars)
  module.predict = tf.function(
    lambda x: predict_tf(params_vars, x),
    autograph=False,
    input_signature=[tf.TensorSpec((None,) + demo_model.IMAGE_SHAPE, tf.float32)],
  )
  t0 = time.perf_counter()
  module.predict.get_concrete_function()  # JAX trace + lower + serialize
  return module, time.perf_counter() - t0


def graph_ops(concrete_fn) -> list[str]:
  """The op types of a traced function, nested function bodies included."""
  graph_def = concrete_fn.graph.as_graph_def()
  ops = [n.op for n in graph_def.node]
  for fn in graph_def.library.function:
    ops.extend(n.op for n in fn.node_def)
  return ops


def describe_graph(concrete_fn) -> dict:
  ops = graph_ops(concrete_fn)
  counts: dict[str, int] = {}
  for op in ops:
    if op not in ("Placeholder", "Identity", "NoOp", "Const", "ReadVariableOp", "EnsureShape"):
      counts[op] = counts.get(op, 0) + 1
  top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
  return {
    "nodes": len(ops),
    "xla_call_module": ops.count("XlaCallModule"),
    "top": ", ".join(f"{op} {n}" for op, n in top),
  }


def describe_module(concrete_fn) -> dict:
  """What the XlaCallModule op in the traced graph carries."""
  (node,) = [n for n in concrete_fn.graph.as_graph_def().node if n.op == "XlaCallModule"]
  # Serialized StableHLO names its version in the bytecode producer string.
  version = re.search(rb"StableHLO_v([0-9.]+)", node.attr["module"].s)
  return {
    "platforms": [p.decode() for p in node.attr["platforms"].list.s],
    "calling_convention": node.attr["version"].i,
    "stablehlo": version.group(1).decode() if version else "unknown",
    "module_bytes": len(node.attr["module"].s),
  }


def save(module, out_dir: str) -> float:
  os.makedirs(os.path.dirname(os.path.abspath(out_dir)), exist_ok=True)
  t0 = time.perf_counter()
  # Custom gradients make the save export the VJP too, so the reloaded model
  # can be differentiated.
  tf.saved_model.save(
    module, out_dir, options=tf.saved_model.SaveOptions(experimental_custom_gradients=True)
  )
  return time.perf_counter() - t0


def run_child(model_dirs: dict[str, str], io_dir: str) -> dict:
  child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_demo_child.py")
  # run_path (not -m jax2tf._demo_child): importing the package would import JAX.
  code = (
    "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
  )
  pairs = [f"{name}={os.path.abspath(path)}" for name, path in model_dirs.items()]
  proc = subprocess.run(
    [sys.executable, "-c", code, child, io_dir, *pairs], cwd=io_dir, capture_output=True, text=True
  )
  if proc.returncode != 0:
    raise RuntimeError(
      f"the reloading process failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    )
  with open(os.path.join(io_dir, "child.json")) as f:
    return json.load(f)


def jit_steady_state(fn, *args) -> tuple[float, float]:
  t0 = time.perf_counter()
  jax.block_until_ready(fn(*args))
  first = time.perf_counter() - t0
  times = []
  for _ in range(STEADY_STATE_CALLS):
    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args))
    times.append(time.perf_counter() - t0)
  return first, float(np.median(times))


def export(model, params, out_root: str, name: str, native: bool, i: int, total: int) -> dict:
  step(
    i,
    total,
    f"Converting with {name} serialization (native_serialization={native}), "
    f"polymorphic shape {POLY_SPEC}, params as tf.Variables; saving to {out_root}/{name}",
  )
  module, convert_s = convert(model, params, native)
  out_dir = os.path.join(out_root, name)
  save_s = save(module, out_dir)
  concrete = module.predict.get_concrete_function()
  return {
    "dir": out_dir,
    "convert_s": convert_s,
    "save_s": save_s,
    "graph": describe_graph(concrete),
    "module": describe_module(concrete) if native else None,
    "pb_bytes": os.path.getsize(os.path.join(out_dir, "saved_model.pb")),
    "var_bytes": dir_bytes(os.path.join(out_dir, "variables")),
  }


def export_tflite(model, params, out_root: str, inputs: dict, i: int, total: int) -> dict:
  path = os.path.join(out_root, "cnn.tflite")
  step(i, total, f"Writing {path} with jax2tf.to_tflite (builtin ops, batch dimension dynamic)")
  t0 = time.perf_counter()
  lite_model = jax2tf.to_tflite(
    model.apply, inputs[1], params=params, polymorphic_shapes=[POLY_SPEC], path=path
  )
  convert_s = time.perf_counter() - t0
  outputs, steady = {}, {}
  interpreter = jax2tf.lite.runtime.interpreter(lite_model)
  for b in BATCH_SIZES:
    outputs[b] = jax2tf.lite.run(lite_model, inputs[b])[0]
  runner = interpreter.get_signature_runner(jax2tf.lite.runtime.SIGNATURE)
  name = lite_model.input_names[0]
  for b in BATCH_SIZES:
    runner(**{name: inputs[b]})  # resizes and plans for this batch
    times = []
    for _ in range(STEADY_STATE_CALLS):
      t0 = time.perf_counter()
      runner(**{name: inputs[b]})
      times.append(time.perf_counter() - t0)
    steady[b] = float(np.median(times))
  return {
    "path": path,
    "route": lite_model.route,
    "bytes": len(lite_model),
    "input": name,
    "convert_s": convert_s,
    "outputs": outputs,
    "steady_s": steady,
  }


def compare(outputs: dict, reference: dict) -> tuple[dict, bool]:
  errors, ok = {}, True
  for b in BATCH_SIZES:
    ref = reference[b]
    err = float(np.max(np.abs(outputs[b] - ref)))
    tol = RTOL * max(1.0, float(np.max(np.abs(ref))))
    errors[b] = (err, tol, outputs[b].shape == ref.shape and err <= tol)
    ok = ok and errors[b][2]
  return errors, ok


def print_report(
  n_params: int,
  exports: dict,
  child: dict,
  errors: dict,
  jit_first: float,
  jit_steady: float,
  total_s: float,
  ok: bool,
  lite: dict,
  lite_errors: dict,
) -> None:
  big = max(BATCH_SIZES)
  print()
  print("=== jax2tf demo report ===")
  print(
    f"Model: Flax linen CNN, 28x28x1 -> {demo_model.NUM_CLASSES} classes, "
    f"{n_params:,} parameters; polymorphic spec {POLY_SPEC} "
    "(input signature [None, 28, 28, 1])"
  )
  print(
    f"Reload process: import jax "
    f"{'SUCCEEDED (unexpected)' if child['jax_importable'] else 'fails, as intended'}; "
    f"jax modules loaded: {child['jax_modules_loaded'] or 'none'}"
  )
  for name, e in exports.items():
    c = child["models"][name]
    print(f"--- {name} serialization ({e['dir']})")
    if e["module"]:
      m = e["module"]
      print(
        f"  graph                : one XlaCallModule op; platforms {', '.join(m['platforms'])}, "
        f"StableHLO {m['stablehlo']}, calling convention {m['calling_convention']}, "
        f"module {m['module_bytes']:,} bytes"
      )
    else:
      g = e["graph"]
      print(
        f"  graph                : {g['nodes']} TF nodes, {g['xla_call_module']} XlaCallModule; "
        f"most used: {g['top']}"
      )
    print(f"  saved_model.pb       : {e['pb_bytes']:,} bytes (VJP saved too, for gradients)")
    print(
      f"  variables/           : {e['var_bytes']:,} bytes  ({n_params * 4:,} bytes of float32 parameters)"
    )
    print("  max abs error vs JAX (tolerance 1e-5 x max(1, max|logit|))")
    for b, (err, tol, good) in errors[name].items():
      print(
        f"    batch {b:>3}          : {err:.3e}  (tol {tol:.1e})  {'ok' if good else 'TOO LARGE'}"
      )
    print(
      f"  convert / save / reload: {e['convert_s'] * 1e3:.1f} ms / {e['save_s'] * 1e3:.1f} ms / "
      f"{c['load_s'] * 1e3:.1f} ms"
    )
    for b in BATCH_SIZES:
      call = c["calls"][str(b)]
      print(
        f"    TF batch {b:>3}: first call {call['first_s'] * 1e3:8.2f} ms, steady {call['steady_s'] * 1e3:7.3f} ms"
      )
    ratio = c["calls"][str(big)]["steady_s"] / jit_steady
    print(f"  steady-state TF / jax.jit at batch {big}: {ratio:.2f}x")
  print(f"--- TFLite ({lite['path']}), LiteRT interpreter")
  print(
    f"  flatbuffer           : {lite['bytes']:,} bytes, route {lite['route']!r} "
    f"(builtin ops only), input {lite['input']!r} [None, 28, 28, 1]; "
    f"to_tflite {lite['convert_s']:.1f} s"
  )
  print("  max abs error vs JAX (tolerance 1e-5 x max(1, max|logit|))")
  for b, (err, tol, good) in lite_errors.items():
    print(
      f"    batch {b:>3}          : {err:.3e}  (tol {tol:.1e})  {'ok' if good else 'TOO LARGE'}"
    )
  for b in BATCH_SIZES:
    print(f"    LiteRT batch {b:>3}: steady {lite['steady_s'][b] * 1e3:7.3f} ms")
  print(
    f"  steady-state LiteRT / jax.jit at batch {big}: {lite['steady_s'][big] / jit_steady:.2f}x"
  )
  print(
    f"jax.jit batch {big}: first call {jit_first * 1e3:.2f} ms, steady {jit_steady * 1e3:.3f} ms"
  )
  print(f"total demo time: {total_s:.1f} s")
  print("PASS" if ok else "FAIL")


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument(
    "--out", default=DEFAULT_OUT, help=f"folder for the two SavedModels (default {DEFAULT_OUT})"
  )
  args = parser.parse_args(argv)
  total = 2 + len(SERIALIZATIONS) + 2
  t_start = time.perf_counter()

  step(1, total, "Building the Flax CNN (seed 0)")
  model, params = demo_model.init_cnn(seed=0)
  n_params = demo_model.count_params(params)

  exports = {
    name: export(model, params, args.out, name, native, i, total)
    for i, (name, native) in enumerate(SERIALIZATIONS.items(), start=2)
  }

  with tempfile.TemporaryDirectory(prefix="jax2tf_demo_") as io_dir:
    inputs = make_inputs(io_dir)
    step(
      total - 2, total, "Reloading and running both in a separate process where `import jax` fails"
    )
    child = run_child({name: e["dir"] for name, e in exports.items()}, io_dir)
    outputs = {
      name: {b: np.load(os.path.join(io_dir, f"out_{name}_{b}.npy")) for b in BATCH_SIZES}
      for name in exports
    }

  lite = export_tflite(model, params, args.out, inputs, total - 1, total)

  step(total, total, "Comparing with the JAX model")
  big = max(BATCH_SIZES)
  # Timed first, so that its first call includes compilation.
  apply_jit = jax.jit(model.apply)
  jit_first, jit_steady = jit_steady_state(apply_jit, params, inputs[big])
  reference = {b: np.asarray(apply_jit(params, inputs[b])) for b in BATCH_SIZES}
  errors, ok = {}, not child["jax_importable"] and not child["jax_modules_loaded"]
  for name in exports:
    errors[name], good = compare(outputs[name], reference)
    ok = ok and good
  ok = ok and exports["graph"]["graph"]["xla_call_module"] == 0
  lite_errors, lite_ok = compare(lite["outputs"], reference)
  ok = ok and lite_ok
  print_report(
    n_params,
    exports,
    child,
    errors,
    jit_first,
    jit_steady,
    time.perf_counter() - t_start,
    ok,
    lite,
    lite_errors,
  )
  return 0 if ok else 1


if __name__ == "__main__":
  sys.exit(main())
