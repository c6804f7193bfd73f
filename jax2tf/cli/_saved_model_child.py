"""Runs a SavedModel in a process where JAX cannot be imported.

Started by `jax2tf.cli.verification` through `runpy.run_path` (importing the
jax2tf package would import JAX). Arguments: the SavedModel directory and a
folder holding `plan.json` ({"signature", "input_names", "sets": [[name, [file,
...]], ...], "calls"}) and the input `.npy` files; writes `set<i>__<output>.npy` and
`child.json` (load and call times, and whether JAX got loaded) there.
"""

import sys

for _name in ("jax", "jaxlib"):
  sys.modules[_name] = None  # type: ignore[assignment]

import json  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def main(model_dir: str, io_dir: str) -> None:
  with open(os.path.join(io_dir, "plan.json")) as f:
    plan = json.load(f)
  t0 = time.perf_counter()
  # Resolved once: a directory written by jax2tf is a link to its current
  # version, and a replacement between the loader's file reads would mix two.
  loaded = tf.saved_model.load(os.path.realpath(model_dir))
  signature = loaded.signatures[plan["signature"]]
  report: dict[str, Any] = {"load_s": time.perf_counter() - t0, "sets": {}}
  for i, (set_name, files) in enumerate(plan["sets"]):
    kwargs = {
      name: tf.constant(np.load(os.path.join(io_dir, f)))
      for name, f in zip(plan["input_names"], files)
    }
    t0 = time.perf_counter()
    outputs = {k: v.numpy() for k, v in signature(**kwargs).items()}
    first_s = time.perf_counter() - t0
    times = []
    for _ in range(plan["calls"]):
      t0 = time.perf_counter()
      for v in signature(**kwargs).values():
        v.numpy()
      times.append(time.perf_counter() - t0)
    for k, v in outputs.items():
      np.save(os.path.join(io_dir, f"set{i}__{k}.npy"), v)
    report["sets"][set_name] = {
      "outputs": sorted(outputs),
      "first_s": first_s,
      "steady_s": float(np.median(times)) if times else None,
    }
  report["jax_loaded"] = sorted(
    m for m, v in sys.modules.items() if v is not None and m.split(".")[0] in ("jax", "jaxlib")
  )
  with open(os.path.join(io_dir, "child.json"), "w") as f:
    json.dump(report, f)


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2])
