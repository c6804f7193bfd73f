"""Reading a producer's inputs and expected outputs, and comparing what a
consumer computed with them. numpy only: every consumer environment imports it.

io.npz holds, for input set k, `in{k}_{i}` (argument i) and `out{k}_{j}`
(JAX's output j, the leaves of the result in JAX's order).
"""

import glob
import json
import os
import platform
import re

import numpy as np

RTOL, ATOL = 1e-4, 1e-5


def input_sets(npz) -> list[list[np.ndarray]]:
  return [_numbered(npz, f"in{k}_") for k in range(_count(npz, "in"))]


def expected_sets(npz) -> list[list[np.ndarray]]:
  return [_numbered(npz, f"out{k}_") for k in range(_count(npz, "out"))]


def _count(npz, prefix):
  return len({name.split("_")[0] for name in npz.files if name.startswith(prefix)})


def _numbered(npz, prefix):
  n = sum(1 for name in npz.files if name.startswith(prefix))
  return [npz[f"{prefix}{i}"] for i in range(n)]


def mismatch(got: list, want: list, rtol=RTOL, atol=ATOL) -> tuple[str | None, float]:
  """(None or what differs, the largest absolute float error). Integers and
  booleans must be equal; floats close, NaN where JAX has NaN."""
  if len(got) != len(want):
    return f"{len(got)} outputs, JAX has {len(want)}", float("nan")
  worst = 0.0
  for j, (g, w) in enumerate(zip(got, want)):
    g = np.asarray(g)
    if g.shape != w.shape:
      return f"output {j}: shape {g.shape}, JAX has {w.shape}", float("nan")
    if np.issubdtype(w.dtype, np.inexact):
      g = g.astype(w.dtype)
      err = np.abs(g - w)
      worst = max(worst, float(np.nanmax(err)) if err.size else 0.0)
      if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
        return f"output {j}: max abs error {float(np.nanmax(err)):.3g}", worst
    elif not np.array_equal(g.astype(w.dtype), w):
      return f"output {j}: integers differ ({g.ravel()[:6]} vs {w.ravel()[:6]})", worst
  return None, worst


def _lines(e: BaseException) -> list[str]:
  # TF's "Detected at node X defined at (most recent call last):" and the
  # traceback under it name no cause.
  lines = [line.strip() for line in (str(e) or "").splitlines() if line.strip()]
  return [line for line in lines if not line.startswith(("Detected at node", "File "))]


def _headline(e: BaseException) -> str:
  """The line of an error that says what went wrong: its first line (and the
  one after, for "no kernel for:" lists), or, where TF re-raised it "in user
  code", the original "SomeError: ..." line of the traceback it quotes."""
  lines = _lines(e)
  quoted = [line for line in lines if re.match(r"[A-Z]\w*(Error|Exception): ", line)]
  if quoted:
    return quoted[-1]
  head = lines[0] if lines else ""
  if head.endswith(":") and len(lines) > 1:
    head = f"{head} {lines[1]}"
  return f"{type(e).__name__}: {head}"


def first_line(e: BaseException) -> str:
  """What went wrong, in a line: the error's headline, the headline of the
  error it wraps (tf.saved_model.save's "Error when tracing gradients" says
  little by itself), and the first later line naming a cause: TF wraps kernel
  errors as "Graph execution error:" with the reason further down."""
  root = e
  while root.__cause__ is not None:
    root = root.__cause__
  text = _headline(e)
  inner = _headline(root)
  if root is not e and inner.split(": ", 1)[-1] not in text:
    text += " <- " + inner
  keys = ("Cannot deserialize", "error:", "version", "INVALID_ARGUMENT", "Op type")
  cause = next((line for line in _lines(e)[1:] if any(k in line for k in keys)), "")
  if cause and cause not in text:
    text += " " + cause
  return text[:400]


def check(run, npz_path) -> tuple[str, str, float]:
  """("pass" | "fail", reason, max error) of `run(inputs) -> outputs` on every
  input set of npz_path."""
  with np.load(npz_path) as npz:
    sets, wants = input_sets(npz), expected_sets(npz)
  worst = 0.0
  for k, (args, want) in enumerate(zip(sets, wants)):
    try:
      got = run(args)
    except Exception as e:  # noqa: BLE001 - any failure is the cell's result
      return "fail", f"input set {k}: {first_line(e)}", worst
    why, err = mismatch(got, want)
    worst = max(worst, err) if err == err else worst
    if why:
      return "fail", f"input set {k} {tuple(a.shape for a in args)}: {why}", worst
  return "pass", "", worst


def consumer(name: str, version: str) -> dict:
  """Who ran an artifact, as every result line says."""
  return {"consumer": name, "version": version, "python": platform.python_version()}


def report(consumer: dict, artifact_id: str, status: str, reason: str, max_err: float) -> None:
  """One line a driver collects (and a person reads as it goes)."""
  err = max_err if max_err == max_err else None  # JSON has no NaN
  record = {"artifact": artifact_id, "status": status, "reason": reason, "max_err": err}
  record.update(consumer)
  print("RESULT " + json.dumps(record), flush=True)


def artifacts(produced: str, kind: str) -> list[dict]:
  """The artifacts of that kind that the producers under `produced` exported."""
  found = []
  for manifest in sorted(glob.glob(os.path.join(produced, "*", "manifest.json"))):
    with open(manifest) as f:
      found += [a for a in json.load(f)["artifacts"] if a["kind"] == kind and "io" in a]
  return found


def check_all(produced: str, kind: str, consumer: dict, load) -> None:
  """Reports on every artifact of that kind; `load(path, artifact)` gives the
  function from a list of inputs to a list of outputs."""
  for a in artifacts(produced, kind):
    try:
      run = load(os.path.join(produced, a["path"]), a)
    except Exception as e:  # noqa: BLE001 - a load failure is the cell's result
      report(consumer, a["id"], "fail", "load: " + first_line(e), float("nan"))
      continue
    report(consumer, a["id"], *check(run, os.path.join(produced, a["io"])))
