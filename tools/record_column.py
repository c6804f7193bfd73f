"""Records what a deployment column (TFLite, TF.js) does with each case.

Runs each selected case through the column's converter and runtime without
expectations, sorts the outcome (passes; refused for want of a kernel, naming
the JAX primitive and the op; or a gap: a converter failure, a runtime
error, or a result that differs from JAX), and writes the column's recorded
file of each family whole, `tests/cases/recorded/<column>/<family>.json`
(`tests/support/recorded.py` describes it): its `gaps`. Cases not selected
keep their entries, and so do the cases the file lists as varying by CPU. A
case that kills the runtime (or the converter, which runs in the process
too) is pinned as crashing it.

    .venv/bin/python tools/record_column.py tflite_native --family reductions -j 2
    .venv/bin/python tools/record_column.py tflite --cases 'max|min'
    .venv/bin/python tools/record_column.py tfjs -j 2
    .venv/bin/python tools/record_column.py tflite_litert -j 2

A refusal is no case's entry: the tests derive it from the target's kernel
lists. What a TFLite refusal names (the TF op LiteRT has no kernel for, or,
on the litert route, the MLIR op litert-converter cannot convert, with the
dtypes of its operands) is added to the target's list,
`jax2tf/targets/kernel_lists/<target>.json`. TF.js's list is its converter's
(jax2tf/tfjs/ops.py): a TF.js refusal it does not predict is a gap. A
converter failure that blames no primitive is a gap.

Then run the column's tests (`-k "litert"` or `-k "node"`) and `make docs`.
"""

import argparse
import collections
import concurrent.futures
import contextlib
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
_CRASH_WHY = "LiteRT's interpreter crashes running it (pinned in a child process)"
# A crash before the model exists: the converter's (litert-converter aborts
# the process on some modules, in its own LLVM).
_CONVERTER_CRASH_WHY = "the converter crashes converting it (pinned in a child process)"


# --------------------------------------------------------------------------
# Running one case (in a worker process)


_TFJS_RUNNER = None


def _convert_and_run(column: str, ser, fun, args, polymorphic_shapes):
  """(outputs, None), or (None, outcome) where conversion fails."""
  import jax2tf
  from jax2tf import lite, tfjs
  from jax2tf.lite import converter

  global _TFJS_RUNNER
  if column == "tfjs":
    try:
      model = jax2tf.to_tfjs(fun, *args, polymorphic_shapes=polymorphic_shapes)
    except tfjs.TFJSConversionError as e:
      return None, _conversion_outcome(column, str(e))
    except Exception as e:  # pylint: disable=broad-except
      return None, {
        "kind": "gap",
        "why": f"to_tfjs fails on it ({type(e).__name__})",
        "error": _pattern(str(e)),
      }
    if _TFJS_RUNNER is None:
      _TFJS_RUNNER = tfjs.Runner("cpu")
    return (lambda: _TFJS_RUNNER.run(model, *args)), None
  try:
    model = jax2tf.to_tflite(
      fun, *args, polymorphic_shapes=polymorphic_shapes, verify=False, **ser.options
    )
  except converter.TFLiteConversionError as e:
    return None, _conversion_outcome(column, str(e))
  except Exception as e:  # pylint: disable=broad-except
    # Tracing or lowering fails before the converter runs (the case's
    # native serialization fails the same way).
    return None, _runtime_outcome(column, e)
  return (lambda: lite.run(model, *args)), None


def _outcome(column: str, case, ser, converted=lambda: None) -> dict:
  """What the column does with `case`: {"kind": "pass" | "refused" | "gap", ...}.
  `converted()` is called once the model exists, before it runs."""
  import jax

  from tests.support import compare

  x64 = jax.enable_x64(True) if case.x64 else contextlib.nullcontext()
  with x64:
    args = case.make_args()
    try:
      expected = jax.jit(case.fun)(*args)
    except Exception:  # pylint: disable=broad-except
      return {"kind": "jax_fails"}  # the case's own expectations say what happens
    fun = case.fun
    run, refused = _convert_and_run(
      column, ser, lambda *xs: fun(*xs), args, case.polymorphic_shapes
    )
    if refused is not None:
      return refused
    converted()
    try:
      outputs = run()
      actual = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(expected), outputs)
    except Exception as e:  # pylint: disable=broad-except
      return _runtime_outcome(column, e)
    try:
      if case.compare is not None:
        case.compare(args, expected, actual, case.tol or (1e-5, 1e-5))
      else:
        compare.assert_same(expected, actual, tol=case.tol, exact=case.exact, where=case.id)
    except AssertionError as e:
      return _compare_outcome(column, str(e))
  return {"kind": "pass"}


def _runtime_name(column: str) -> str:
  return "TF.js" if column == "tfjs" else "LiteRT"


def _conversion_outcome(column: str, message: str) -> dict:
  from tests.support import case as case_lib
  from tests.support import refusals

  found = refusals.missing(message)
  blamed = [m for m in found if m.primitive is not None or m.kind == refusals.SIGNATURE]
  target = case_lib.serialization(column).target
  if blamed and len(blamed) == len(found):
    lacks = [
      [m.name, refusals.dtypes(m.on)]
      for m in blamed
      if m.kind in (refusals.KERNEL, refusals.OPERATOR)
    ]
    if column != "tfjs" or all(refusals.explained(target, m) for m in blamed):
      return {"kind": "refused", "lacks": lacks}
  if column == "tfjs":
    return {"kind": "gap", "why": "to_tfjs refuses it", "error": _pattern(message)}
  if column == "tflite_litert":
    return _litert_failure(message)
  if "so it is not run" in message:
    return {
      "kind": "gap",
      "why": "refused before the converter, which it would crash",
      "error": "so it is not run",
    }
  legalize = re.search(r"failed to legalize operation '([\w.]+)'", message) or re.search(
    r"'([\w.]+)' op is neither a custom op nor a flex op", message
  )
  why = (
    f"the converter has no builtin lowering for {legalize.group(1)}"
    if legalize
    else "the converter fails on it"
  )
  return {"kind": "gap", "why": why, "error": "TF's TFLite converter failed"}


def _litert_failure(message: str) -> dict:
  """A gap for a refusal of the litert route that blames no primitive: the
  converter failed on an op it could not trace to one, or named no op."""
  step = re.search(r"litert-converter cannot \w+", message)
  legalize = re.search(r"failed to legalize operation '([\w.]+)'", message)
  why = (
    f"litert-converter has no lowering for {legalize.group(1)}"
    if legalize
    else "litert-converter fails on it"
  )
  return {
    "kind": "gap",
    "why": why,
    "error": re.escape(step.group(0)) if step else _pattern(message),
  }


def _runtime_outcome(column: str, error: Exception) -> dict:
  text = " ".join(str(error).split())
  if column == "tfjs":
    # The first line of Node's error, past the runner's own preamble.
    lines = str(error).splitlines()
    text = " ".join((lines[1] if len(lines) > 1 else lines[0]).split())
    error_text = text
  else:
    error_text = str(error)
  shown = re.sub(r"\d+", "#", text)[:60]
  return {
    "kind": "gap",
    "why": f"{_runtime_name(column)} fails to run it ({type(error).__name__}: {shown})",
    "error": _pattern(error_text),
  }


def _compare_outcome(column: str, message: str) -> dict:
  from tests.support import compare

  kind = next((k.strip(": ") for k in compare.MISMATCH_KINDS if k in message), None)
  runtime = _runtime_name(column)
  if kind is None:
    return {
      "kind": "gap",
      "why": f"{runtime}'s result differs from JAX's",
      "error": _pattern(message),
    }
  return {
    "kind": "gap",
    "why": f"{runtime}'s kernels differ from XLA's: {kind}",
    "error": re.escape(kind),
  }


def _pattern(message: str, length: int = 40) -> str:
  """A regex for the start of `message`, loose in numbers and whitespace."""
  parts = []
  for token in re.findall(r"\d+|\s+|[^\d\s]+", message.strip()[:length]):
    parts.append(r"\d+" if token.isdigit() else r"\s+" if token.isspace() else re.escape(token))
  return "".join(parts)


def _worker(column: str, names: list[str], progress: pathlib.Path):
  """Runs `names` one by one; each line of `progress` is a start, the end of
  a conversion or a result."""
  from tests.support import case as case_lib
  from tests.support import collect

  ser = case_lib.serialization(column)
  by_id = {c.id: c for c in collect.all_cases()}
  with progress.open("a") as out:
    for name in names:
      out.write(json.dumps({"start": name}) + "\n")
      out.flush()

      def converted(name=name):
        out.write(json.dumps({"converted": name}) + "\n")
        out.flush()

      result = _outcome(column, by_id[name], ser, converted)
      out.write(json.dumps({"case": name, **result}) + "\n")
      out.flush()


# --------------------------------------------------------------------------
# Driving the workers


def _selected(column: str, families: list[str], pattern: str | None) -> list:
  from tests.support import case as case_lib
  from tests.support import collect

  parents = case_lib.lineage(column)[1:]
  out = []
  for c in collect.all_cases():
    if families and c.family not in families:
      continue
    if pattern and not re.search(pattern, c.name):
      continue
    if any(p in c.refuse for p in parents):
      continue  # the column never sees it
    out.append(c)
  return out


def _run_part(column: str, names: list[str], progress: pathlib.Path, done_counter):
  """Runs `names` in child processes, restarting after a crash."""
  results: dict[str, dict] = {}
  converted: set[str] = set()
  remaining = list(names)
  # The converter writes pages of MLIR diagnostics to stderr for each refusal.
  log_path = progress.with_suffix(".log")
  with log_path.open("a") as log:
    while remaining:
      proc = subprocess.Popen(
        [sys.executable, __file__, "--worker", column, str(progress), *remaining],
        cwd=ROOT,
        stdout=log,
        stderr=log,
      )
      started = None
      while True:
        running = proc.poll() is None
        for line in progress.read_text().splitlines() if progress.exists() else ():
          entry = json.loads(line)
          if "start" in entry:
            started = entry["start"]
          elif "converted" in entry:
            converted.add(entry["converted"])
          elif entry["case"] not in results:
            results[entry["case"]] = entry
            done_counter(entry)
        if not running:
          break
        time.sleep(1)
      if started is not None and started not in results:
        if proc.returncode >= 0:
          raise RuntimeError(
            f"the worker failed on {started} (exit status {proc.returncode}):\n"
            + log_path.read_text()[-3000:]
          )
        results[started] = {
          "case": started,
          "kind": "gap",
          "why": _CRASH_WHY if started in converted else _CONVERTER_CRASH_WHY,
          "error": "crashes LiteRT",
        }
        done_counter(results[started])
      remaining = [n for n in names if n not in results]
  return results


def record(column: str, families: list[str], pattern: str | None, jobs: int) -> dict[str, dict]:
  cases = _selected(column, families, pattern)
  ids = [c.id for c in cases]
  parts = [ids[i::jobs] for i in range(jobs)]
  done = collections.Counter()

  def counter(entry):
    done["n"] += 1
    sys.stderr.write(
      f"[{done['n']}/{len(ids)}] {entry['case']}: {entry['kind']}"
      f"{' (' + entry['why'] + ')' if entry['kind'] == 'gap' else ''}\n"
    )

  results: dict[str, dict] = {}
  with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(jobs) as pool:
    futures = [
      pool.submit(_run_part, column, part, pathlib.Path(tmp) / f"part{i}.jsonl", counter)
      for i, part in enumerate(parts)
      if part
    ]
    for f in futures:
      results.update(f.result())
  # A gap the case table declares in code for this column is not recorded
  # as data too ("declared": a gap here, in code or in the recorded files,
  # which update_family tells apart).
  return {
    c.id: results[c.id]
    | {"family": c.family, "name": c.name, "declared": any(s == column for s, _ in c.gaps)}
    for c in cases
  }


# --------------------------------------------------------------------------
# Rewriting the recorded files


def update_family(family: str, column: str, results: dict[str, dict]) -> None:
  """Rewrites the family's file of the column whole: the entries of the cases
  in `results` from their outcomes, the others as they were."""
  from tests.support import recorded

  before = recorded.read(column, family)
  if before is None:
    # A family without a file for the column (its cases run there as they
    # are, or not at all): only passes fit it.
    left = sorted(n for n, r in results.items() if r["kind"] not in ("pass", "jax_fails"))
    assert not left, (
      f"{family} records nothing in {column} ({recorded.path(column, family)} does not "
      f"exist), yet these of its cases do not pass there: {left}"
    )
    return
  # Their gaps hold on other CPUs than this one: a run here must not rewrite
  # them; and gaps declared in the case table (a gap in the column that
  # this file does not record) stay there.
  recorded_here = {n for names in before.gaps.values() for n in names}
  results = {
    n: r
    for n, r in results.items()
    if n not in before.varies_by_cpu and (n in recorded_here or not r.get("declared"))
  }
  rerun = {n for n, r in results.items() if r["kind"] != "jax_fails"}
  after = recorded.Recorded(varies_by_cpu=before.varies_by_cpu)
  for key, names in before.gaps.items():
    after.gaps[key] = [n for n in names if n not in rerun]
  for name, r in results.items():
    if r["kind"] == "gap":
      after.gaps.setdefault((r["why"], r["error"]), []).append(name)
  recorded.write(column, family, after)


def update_kernel_list(column: str, results: dict[str, dict]) -> None:
  """Adds what the column's refusals name to its target's kernel list
  (TFLite's and LiteRT's; TF.js's is its converter's, jax2tf/tfjs/ops.py)."""
  from jax2tf import targets
  from jax2tf.targets import kernel_lists
  from tests.support import case as case_lib

  name = targets.TARGETS[case_lib.serialization(column).target].kernel_list
  if name is None:
    return
  listed = {op: {tuple(sorted(on)) for on in sets} for op, sets in kernel_lists.read(name).items()}
  for r in results.values():
    for op, on in r.get("lacks", ()):
      listed.setdefault(op, set()).add(tuple(sorted(on)))
  kernel_lists.write(name, listed)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument(
    "column", help="the deployment column: tflite, tflite_native, tflite_litert or tfjs"
  )
  parser.add_argument("--family", action="append", default=[], help="only this rule family")
  parser.add_argument("--cases", help="only cases whose name matches this regex")
  parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
  parser.add_argument("--json", help="also write the outcomes to this file")
  if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--worker":
    _worker(sys.argv[2], sys.argv[4:], pathlib.Path(sys.argv[3]))
    return
  options = parser.parse_args(argv)
  results = record(options.column, options.family, options.cases, max(1, options.jobs))
  if options.json:
    pathlib.Path(options.json).write_text(json.dumps(results, indent=1))
  by_family = collections.defaultdict(dict)
  for r in results.values():
    by_family[r["family"]][r["name"]] = r
  for family, family_results in sorted(by_family.items()):
    update_family(family, options.column, family_results)
  update_kernel_list(options.column, results)
  kinds = collections.Counter(r["kind"] for r in results.values())
  print(
    f"{options.column}: {len(results)} cases recorded: "
    + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
  )


if __name__ == "__main__":
  sys.path.insert(0, str(ROOT))
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  main()
