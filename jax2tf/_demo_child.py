"""Reloads the demo SavedModel in a process where JAX cannot be imported.

Run by `jax2tf.demo` through `runpy.run_path` (never as `-m jax2tf._demo_child`,
which would import the jax2tf package and with it JAX). Arguments: a folder
holding `in_<n>.npy` inputs, then `name=SavedModel directory` pairs; it writes
`out_<name>_<n>.npy` and `child.json` (timings and what it could import) there.
"""

import sys

# Poisoning the module cache makes any `import jax` fail, so the run proves the
# SavedModel needs only TensorFlow.
for _name in ("jax", "jaxlib"):
  sys.modules[_name] = None  # type: ignore[assignment]

import json  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

STEADY_STATE_CALLS = 30


def run_model(name: str, model_dir: str, io_dir: str) -> dict:
  t0 = time.perf_counter()
  restored = tf.saved_model.load(model_dir)
  load_s = time.perf_counter() - t0

  report: dict[str, Any] = {"load_s": load_s, "calls": {}}
  inputs = sorted(
    (f for f in os.listdir(io_dir) if f.startswith("in_")), key=lambda f: int(f[3:-4])
  )
  for fname in inputs:
    batch = fname[3:-4]
    x = tf.constant(np.load(os.path.join(io_dir, fname)))
    t0 = time.perf_counter()
    out = restored.predict(x).numpy()
    first_s = time.perf_counter() - t0
    times = []
    for _ in range(STEADY_STATE_CALLS):
      t0 = time.perf_counter()
      restored.predict(x).numpy()
      times.append(time.perf_counter() - t0)
    np.save(os.path.join(io_dir, f"out_{name}_{batch}.npy"), out)
    report["calls"][batch] = {"first_s": first_s, "steady_s": float(np.median(times))}
  return report


def main(io_dir: str, models: list[str]) -> None:
  try:
    import jax  # noqa: F401

    jax_importable = True
  except ImportError:
    jax_importable = False
  report: dict[str, Any] = {"jax_importable": jax_importable, "models": {}}
  for pair in models:
    name, model_dir = pair.split("=", 1)
    report["models"][name] = run_model(name, model_dir, io_dir)

  report["jax_modules_loaded"] = sorted(
    m
    for m, v in sys.modules.items()
    if v is not None and m.split(".")[0] in ("jax", "jaxlib", "jax2tf")
  )
  with open(os.path.join(io_dir, "child.json"), "w") as f:
    json.dump(report, f)


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2:])
