"""One process's share of the harness run: the harnesses of some groups,
one JSON line per (harness, mode) appended to a file.

    python -m tools.jax_harness.child OUT.jsonl PER_GROUP GROUP [GROUP ...]
"""

import json
import os
import random
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from jax._src.internal_test_util import test_harnesses  # noqa: E402

import jax2tf  # noqa: E402
from tools.jax_harness import defined  # noqa: E402

MODES = ("eager", "graph", "compiled")
# Groups whose every harness runs; the others are sampled.
EXHAUSTIVE = frozenset({
  "conv_general_dilated", "reduce", "rng_bit_generator", "reduce_window_add",
  "reduce_window_max", "reduce_window_min", "reduce_window_mul",
})  # fmt: skip


def harnesses(groups, per_group: int) -> list:
  by_group: dict = {}
  for h in test_harnesses.all_harnesses:
    if h.filter("cpu") and h.group_name in groups:
      by_group.setdefault(h.group_name, []).append(h)
  chosen = []
  for g in sorted(by_group):
    hs = by_group[g]
    if g not in EXHAUSTIVE and len(hs) > per_group:
      hs = random.Random(g).sample(hs, per_group)  # the same sample every run
    chosen.extend(hs)
  return chosen


def _first_line(e: BaseException) -> str:
  return f"{type(e).__name__}: {e}".splitlines()[0][:400]


def run_one(h, out) -> None:
  def write(mode, status, why=None):
    row = {"group": h.group_name, "name": h.fullname, "mode": mode, "status": status, "why": why}
    out.write(json.dumps(row) + "\n")
    out.flush()

  try:
    args = h.dyn_args_maker(np.random.RandomState(0))
    expected = jax.jit(h.dyn_fun)(*args)
  except Exception as e:  # noqa: BLE001  (JAX itself fails: not this package's case)
    write("jax", "jax_error", _first_line(e))
    return
  f_tf = jax2tf.convert(h.dyn_fun, native_serialization=False, enable_xla=False)
  tf_args = [tf.constant(a) for a in args]
  for mode in MODES:
    try:
      fn = (
        f_tf
        if mode == "eager"
        else tf.function(f_tf, autograph=False, jit_compile=mode == "compiled")
      )
      actual = fn(*tf_args)
    except Exception as e:  # noqa: BLE001  (a row of the report, not a crash)
      write(mode, "error", _first_line(e))
      continue
    why = defined.exact(expected, actual)
    if why is None:
      write(mode, "pass")
      continue
    defined_why = defined.check(h, args, expected, actual)
    write(
      mode,
      "pass_defined" if defined_why is None else "mismatch",
      why if defined_why is None else f"{why}; {defined_why}",
    )


def main(argv) -> None:
  path, per_group, groups = argv[0], int(argv[1]), set(argv[2:])
  with open(path, "a") as out:
    for h in harnesses(groups, per_group):
      run_one(h, out)


if __name__ == "__main__":
  main(sys.argv[1:])
