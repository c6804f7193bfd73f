"""Runs JAX's harnesses without XLA ops (see the package docstring)."""

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from tools.jax_harness import child

ROOT = pathlib.Path(__file__).resolve().parents[2]

# What may fail, and why (docs/primitive_coverage.md argues each): TF has no
# XLA kernel for Eig, nor for Svd on complex matrices, and XLA none of its own.
ALLOWED_ERRORS = {
  ("eig", "compiled"): "its TF op (Eig) has no XLA kernel",
  ("svd", "compiled"): "has no XLA kernel for complex matrices",
}
PASSING = ("pass", "pass_defined")


def _groups() -> list[str]:
  from jax._src.internal_test_util import test_harnesses

  return sorted({h.group_name for h in test_harnesses.all_harnesses if h.filter("cpu")})


def _allowed(row: dict) -> bool:
  reason = ALLOWED_ERRORS.get((row["group"], row["mode"]))
  return row["status"] == "error" and reason is not None and reason in (row["why"] or "")


def run(groups, per_group: int, timeout_s: int) -> list[dict]:
  env = dict(
    os.environ,
    PYTHONPATH=str(ROOT),
    OMP_NUM_THREADS="1",
    TF_NUM_INTEROP_THREADS="1",
    TF_NUM_INTRAOP_THREADS="1",
  )
  rows: list[dict] = []
  with tempfile.TemporaryDirectory() as tmp:
    for n, g in enumerate(groups, 1):
      out = os.path.join(tmp, f"{g}.jsonl")
      t0 = time.perf_counter()
      cmd = [sys.executable, "-m", "tools.jax_harness.child", out, str(per_group), g]
      try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
        failure = None if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-300:]}"
      except subprocess.TimeoutExpired:
        failure = f"timed out after {timeout_s} s"
      got = [json.loads(line) for line in open(out)] if os.path.exists(out) else []
      if failure is not None:
        got.append(
          {"group": g, "name": "<process>", "mode": "all", "status": "crash", "why": failure}
        )
      rows.extend(got)
      bad = sum(1 for r in got if r["status"] not in PASSING and not _allowed(r))
      print(
        f"[{n}/{len(groups)}] {g}: {len(got)} rows, {bad} failing "
        f"({time.perf_counter() - t0:.0f} s)",
        file=sys.stderr,
        flush=True,
      )
  return rows


def summary(rows: list[dict]) -> dict:
  by_mode: dict = collections.defaultdict(collections.Counter)
  for r in rows:
    by_mode[r["mode"]]["allowed_error" if _allowed(r) else r["status"]] += 1
  failing = [r for r in rows if r["status"] not in PASSING and not _allowed(r)]
  return {"by_mode": {m: dict(c) for m, c in sorted(by_mode.items())}, "failing": failing}


def main(argv=None) -> int:
  p = argparse.ArgumentParser(prog="python -m tools.jax_harness", description=__doc__)
  p.add_argument("--groups", nargs="*", help="harness groups (default: all)")
  p.add_argument(
    "--per-group",
    type=int,
    default=8,
    help="harnesses sampled per group, but for the exhaustive ones (default 8)",
  )
  p.add_argument("--timeout", type=int, default=1800, help="seconds per group (default 1800)")
  p.add_argument("--out", default=str(ROOT / "docs" / "jax_harness.json"))
  args = p.parse_args(argv)
  groups = args.groups or _groups()
  unknown = set(groups) - set(_groups())
  if unknown:
    p.error(f"--groups: unknown harness groups {sorted(unknown)}")
  rows = run(groups, args.per_group, args.timeout)
  result = summary(rows)
  result["settings"] = {
    "per_group": args.per_group,
    "exhaustive": sorted(child.EXHAUSTIVE),
    "groups": len(groups),
  }
  with open(args.out, "w") as f:
    json.dump(result, f, indent=1, sort_keys=True)
    f.write("\n")
  for mode, counts in result["by_mode"].items():
    print(f"{mode}: {counts}")
  for r in result["failing"]:
    print(f"FAIL {r['group']} {r['name']} [{r['mode']}] {r['status']}: {r['why']}")
  print(f"wrote {args.out}")
  return 1 if result["failing"] else 0


if __name__ == "__main__":
  sys.exit(main())
