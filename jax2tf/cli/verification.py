"""Runs an exported artifact in its own runtime on input sets and compares
each output with `jax.jit` of the model on the same inputs.

A SavedModel runs in a child process where JAX cannot be imported (so the
check also proves that the artifact needs TensorFlow only); a `.tflite` runs
on the LiteRT interpreter, a TF.js model on TF.js in Node (cpu backend). Each comparison gives the largest absolute and
relative error per output; an output passes when NaN and infinities sit where
JAX has them and |got - want| <= atol + rtol * max|want| elsewhere (exactly,
for integers and booleans).
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import jax
import numpy as np

from jax2tf.deploy import signature as lite_signature
from jax2tf.lite import runtime as lite_runtime

CALLS = 20  # timed calls per input set, after a first one
_CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_saved_model_child.py")
SIGNATURE = "serving_default"


def compare_output(want: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> dict:
  result: dict[str, Any] = {
    "shape": list(want.shape),
    "dtype": str(want.dtype),
    "max_abs_error": None,
    "max_rel_error": None,
    "ok": False,
  }
  if got.shape != want.shape or got.dtype != want.dtype:
    result["problem"] = (
      f"got {got.dtype}{list(got.shape)}, JAX gives {want.dtype}{list(want.shape)}"
    )
    return result
  if not jax.numpy.issubdtype(want.dtype, jax.numpy.inexact):  # bfloat16 too
    bad = int(np.sum(got != want))
    result.update(max_abs_error=float(np.max(np.abs(got.astype(np.float64) - want), initial=0)))
    result["ok"] = bad == 0
    if bad:
      result["problem"] = f"{bad} of {want.size} elements differ"
    return result
  w, g = (
    want.astype(np.complex128 if want.dtype.kind == "c" else np.float64),
    got.astype(np.complex128 if got.dtype.kind == "c" else np.float64),
  )
  nan, inf = np.isnan(w), np.isinf(w)
  same_special = (
    np.array_equal(nan, np.isnan(g))
    and np.array_equal(inf, np.isinf(g))
    and np.array_equal(w[inf], g[inf])
  )
  special = ~np.isfinite(w) | ~np.isfinite(g)
  finite = ~special
  err = np.abs(g - w)[finite]
  scale = float(np.max(np.abs(w[finite]), initial=0.0))
  max_abs = float(np.max(err, initial=0.0))
  result["max_abs_error"] = max_abs
  result["max_rel_error"] = max_abs / scale if scale else (0.0 if max_abs == 0 else float("inf"))
  result["tolerance"] = atol + rtol * scale
  result["ok"] = bool(same_special and max_abs <= result["tolerance"])
  if not same_special:
    result["problem"] = "NaN or infinities differ from JAX"
  elif not result["ok"]:
    result["problem"] = f"max abs error {max_abs:.3g} over the tolerance {result['tolerance']:.3g}"
  return result


def jax_reference(jax_fun, sets: dict) -> dict:
  """{set: {"outputs": [arrays] or "error", "steady_s"}} from jax.jit."""
  jitted = jax.jit(jax_fun)
  found: dict[str, dict[str, Any]] = {}
  for name, inputs in sets.items():
    try:
      result = jitted(*inputs)
    except Exception as e:  # pylint: disable=broad-except
      found[name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0]}"}
      continue
    outputs = [np.asarray(x) for x in jax.tree_util.tree_leaves(result)]
    times = []
    for _ in range(CALLS):
      t0 = time.perf_counter()
      jax.block_until_ready(jitted(*inputs))
      times.append(time.perf_counter() - t0)
    found[name] = {"outputs": outputs, "steady_s": float(np.median(times))}
  return found


def run_saved_model(path: str, input_names: list[str], sets: dict) -> dict:
  """The SavedModel's serving signature on each set, in a child without JAX."""
  with tempfile.TemporaryDirectory(prefix="jax2tf_verify_") as io_dir:
    plan_sets = []
    for i, (name, inputs) in enumerate(sets.items()):
      files = []
      for j, x in enumerate(inputs):
        files.append(f"in{i}_{j}.npy")
        np.save(os.path.join(io_dir, files[-1]), x)
      plan_sets.append([name, files])
    plan = {"signature": SIGNATURE, "input_names": input_names, "sets": plan_sets, "calls": CALLS}
    with open(os.path.join(io_dir, "plan.json"), "w") as f:
      json.dump(plan, f)
    code = (
      "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    proc = subprocess.run(
      [sys.executable, "-c", code, _CHILD, os.path.abspath(path), io_dir],
      capture_output=True,
      text=True,
      cwd=io_dir,
    )
    if proc.returncode != 0:
      raise RuntimeError(
        f"TensorFlow failed to run {path} (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
      )
    with open(os.path.join(io_dir, "child.json")) as f:
      report = json.load(f)
    for i, entry in enumerate(report["sets"].values()):
      entry["outputs"] = [
        np.load(os.path.join(io_dir, f"set{i}__{k}.npy"))
        for k in sorted(entry["outputs"], key=lite_signature.output_index)
      ]
  return report


def run_tflite(
  path: str, sets: dict, signature: str = lite_runtime.SIGNATURE, input_names=None
) -> dict:
  """The flatbuffer's `signature` on LiteRT, inputs by name: `input_names`
  (one per input of a set; those the signature lacks, which JAX dropped,
  are left out), else the signature's order."""
  with open(path, "rb") as f:
    content = f.read()
  t0 = time.perf_counter()
  interpreter = lite_runtime.interpreter(content)
  runner = interpreter.get_signature_runner(signature)
  report: dict[str, Any] = {"load_s": time.perf_counter() - t0, "sets": {}, "jax_loaded": None}
  details = runner.get_input_details()
  names = list(details) if input_names is None else list(input_names)
  for name, inputs in sets.items():
    kwargs = {n: x for n, x in zip(names, inputs) if n in details}
    t0 = time.perf_counter()
    out = lite_runtime.invoke(runner, kwargs)
    first_s = time.perf_counter() - t0
    times = []
    for _ in range(CALLS):
      t0 = time.perf_counter()
      lite_runtime.invoke(runner, kwargs)
      times.append(time.perf_counter() - t0)
    report["sets"][name] = {
      "outputs": [np.asarray(out[k]) for k in sorted(out, key=lite_signature.output_index)],
      "first_s": first_s,
      "steady_s": float(np.median(times)),
    }
  return report


def run_tfjs(path: str, sets: dict) -> dict:
  """The TF.js graph model on TF.js's cpu backend in Node, one process for all
  sets; the times are Node's own."""
  from jax2tf import tfjs  # pylint: disable=import-outside-toplevel

  folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
  with tfjs.Runner("cpu") as runner:
    outputs, timings = runner.timed(folder, list(sets.values()), calls=CALLS)
  report: dict[str, Any] = {"load_s": timings["load_ms"] / 1e3, "sets": {}, "jax_loaded": None}
  for name, got, timing in zip(sets, outputs, timings["runs"]):
    report["sets"][name] = {
      "outputs": got,
      "first_s": timing["first_ms"] / 1e3,
      "steady_s": timing["steady_ms"] / 1e3,
    }
  return report


def check(artifact: dict, reference: dict, rtol: float, atol: float) -> dict:
  """Per set: each output's comparison, the latencies, and whether all pass."""
  sets = {}
  for name, want in reference.items():
    got = artifact["sets"].get(name)
    entry: dict = {"ok": False}
    if "error" in want:
      entry.update(skipped=f"jax.jit rejects these inputs: {want['error']}", ok=True)
    elif got is None:
      entry["problem"] = "the artifact was not run on this set"
    elif len(got["outputs"]) != len(want["outputs"]):
      entry["problem"] = f"{len(got['outputs'])} outputs, JAX gives {len(want['outputs'])}"
    else:
      entry["outputs"] = [
        compare_output(w, g, rtol, atol) for w, g in zip(want["outputs"], got["outputs"])
      ]
      entry["ok"] = all(o["ok"] for o in entry["outputs"])
      entry["first_call_s"] = got["first_s"]
      entry["steady_s"] = got["steady_s"]
      entry["jax_steady_s"] = want["steady_s"]
    sets[name] = entry
  return {"sets": sets, "ok": all(e["ok"] for e in sets.values()), "load_s": artifact["load_s"]}
