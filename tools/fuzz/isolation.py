"""Fuzzing in child processes, so that a program that aborts the process is a finding.

A defect in TF, XLA or a runtime can end the process (a segfault, an abort
from C++), and with it an in-process run. Here the stream of programs runs in
a child process that reports each step on its stdout; when the child dies,
the last step it began says what killed it:

* JAX's own `jax.jit` of the program (the reference): an XLA defect, not
  ours. The program is run again with JAX op by op as its reference
  (`targets.OP_BY_OP`), and the run lists it.
* a column: a mismatch of that column ("the process died: ..."), minimized
  by probing smaller programs each in its own child process, explained by a
  known gap or written as a case. A native column's crash is XLA's where
  JAX's own jax.jit of the minimized program ends a process too.

A fresh child then goes on from the next column. A child that reports
nothing for `stall` seconds is killed and judged the same way. A child also
ends, and a fresh one goes on, after `child_programs` programs: a process
that has compiled a few thousand programs has been seen to run out of memory
for XLA's compiled code, a failure of the run and not of the program.

For tests of this machinery, JAX2TF_FUZZ_ABORT="<step>:<op>,..." makes a
child abort at a step ("reference", "shrunk": JAX's jit of a program the
minimizer shrank, or a column name) of any program that has an equation of
generator operation <op>.
"""

import contextlib
import dataclasses
import json
import os
import pathlib
import pickle
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable

from tools.fuzz import driver, generator, known_gaps, minimize, targets

# The repository root, where `tools` and `tests` are packages.
_ROOT = str(pathlib.Path(__file__).resolve().parents[2])

_EVENT = "@@fuzz "
# Probing a smaller program costs a process start (JAX and TF imports).
CRASH_MINIMIZE_TRIES = 30
# Programs one child runs before a fresh one takes over.
CHILD_PROGRAMS = 500


def fuzz(
  seed: int,
  *,
  programs: int | None = None,
  budget: float | None = None,
  start: int = 0,
  out: str | None = "fuzz_out",
  tflite: bool = False,
  tfjs: bool = False,
  litert: bool = False,
  progress: Callable[[str], None] | None = print,
  stall: float = 900.0,
  crash_tries: int = CRASH_MINIMIZE_TRIES,
  child_programs: int = CHILD_PROGRAMS,
) -> driver.Summary:
  """As driver.fuzz, with the programs run in child processes."""
  assert programs is not None or budget is not None, "give a program count or a time budget"
  targets.check_runtimes(tflite, tfjs, litert)
  columns = [targets.column_name(c) for c in targets.columns(tflite, tfjs, litert)]
  summary = driver.new_summary(seed, tflite, tfjs, litert)
  end = None if programs is None else start + programs
  began = time.monotonic()
  index, first_column = start, 0
  op_by_op: set[str] = set()  # programs whose jax.jit ended a child
  while (end is None or index < end) and (budget is None or time.monotonic() - began < budget):
    request = {
      "seed": seed,
      "start": index,
      "end": end,
      "budget": None if budget is None else budget - (time.monotonic() - began),
      "out": out,
      "tflite": tflite,
      "tfjs": tfjs,
      "litert": litert,
      "first_column": first_column,
      "op_by_op": sorted(op_by_op),
      "count": child_programs,
    }
    last = None  # the step the child began and has not finished
    began_at = 0  # where in the child's stderr that step began
    done = 0  # programs this child finished
    with tempfile.TemporaryFile("w+") as stderr:
      child = _start(["--stream", json.dumps(request)], stderr)
      for event in _events(child, stall):
        kind = event["event"]
        if kind in ("reference", "column"):
          last = event
          began_at = os.fstat(stderr.fileno()).st_size
        elif kind == "outcome":
          finding = event["finding"]
          summary.record(
            event["column"],
            event["status"],
            finding and driver.Finding(**finding),
            event.get("detail", ""),
          )
          last = None
        elif kind == "done":
          summary.programs += 1
          done += 1
          summary.seconds = time.monotonic() - began
          index, first_column, last = event["index"] + 1, 0, None
          if progress:
            progress(summary.line())
      code = child.wait()
      if last is None:
        if code != 0:
          raise RuntimeError(f"the fuzzing process failed ({code}): {_last_words(stderr, code)}")
        if done < child_programs:
          break  # the child ran what it was asked to
        continue  # a fresh child goes on
      why = _last_words(stderr, code, since=began_at)
    program = generator.generate(seed, last["index"], generator.Settings())
    index = last["index"]
    if last["event"] == "reference":
      if program.name in op_by_op:
        raise RuntimeError(f"JAX op by op aborted the process on {program.name}: {why}")
      op_by_op.add(program.name)
      summary.reference_crashes.append(f"{program.name}: {why}")
      first_column = 0
      continue
    column = last["column"]
    col = targets.columns(tflite, tfjs, litert)[columns.index(column)]
    if program.name not in op_by_op and not _dies(program, col):
      # The column alone ends no process: what did was JAX's jit of a program
      # the child's minimizer shrank this one to (an XLA defect). Again, with
      # JAX's values op by op for the program and every program shrunk from it.
      op_by_op.add(program.name)
      summary.reference_crashes.append(f"{program.name} (shrunk, in {column}): {why}")
      first_column = columns.index(column)
      continue
    if progress:
      progress(f"{program.name} ended the process in {column}; minimizing it in child processes")
    # Here JAX computes values for the minimizer and the case's tolerance:
    # op by op, lest an XLA defect end this process too.
    targets.OP_BY_OP.add(program.name)
    finding = _crash_finding(
      program, column, why, seed=seed, index=index, out=out, tries=crash_tries
    )
    summary.record(column, driver.KNOWN if finding.explanation else targets.MISMATCH, finding)
    first_column = columns.index(column) + 1
  summary.seconds = time.monotonic() - began
  return summary


def _start(args, stderr) -> subprocess.Popen:
  return subprocess.Popen(
    [sys.executable, "-m", "tools.fuzz.isolation", *args],
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    stderr=stderr,
    text=True,
    # TF's and XLA's C++ logging goes to the captured stderr, whose last line
    # says why a child died: warnings and below would bury it.
    env={
      **os.environ,
      "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"),
      # The fuzzer and the case vocabulary it reads live in the repository,
      # outside the installed package: the child finds them from any folder.
      "PYTHONPATH": os.pathsep.join([_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])]),
    },
  )


def _events(child, stall):
  """The child's events, until it exits or reports nothing for `stall` seconds."""
  lines: queue.Queue = queue.Queue()

  def read():
    for line in child.stdout:
      lines.put(line)
    lines.put(None)

  threading.Thread(target=read, daemon=True).start()
  while True:
    try:
      line = lines.get(timeout=stall)
    except queue.Empty:
      child.kill()
      return
    if line is None:
      return
    if line.startswith(_EVENT):
      yield json.loads(line[len(_EVENT) :])


# Informational and warning lines of TF's C++ logging ("W0000 00:00:...").
_ROUTINE_LOG = re.compile(r"^[IW]\d{4} ")


def _last_words(stderr, code, since: int = 0) -> str:
  """How the child ended: its signal or status and the last line it wrote
  after offset `since` that is not routine logging (a child runs many
  programs: an earlier one's line would not say why this one died)."""
  with open(stderr.fileno(), "rb", closefd=False) as raw:
    raw.seek(since)
    text = raw.read().decode("utf-8", "replace")
  lines = [line.strip() for line in text.splitlines() if line.strip()]
  lines = [line for line in lines if not _ROUTINE_LOG.match(line)] or lines
  how = (
    f"killed by {signal.Signals(-code).name}"
    if code is not None and code < 0 and -code in signal.Signals._value2member_map_
    else f"exit status {code}"
  )
  return f"the process died ({how}): {lines[-1][:240] if lines else 'no message'}"


def _crash_finding(program, column, why, *, seed, index, out, tries) -> driver.Finding:
  col = next(c for c in targets.columns(True, True, True) if targets.column_name(c) == column)
  small = minimize.minimize(program, lambda p: _dies(p, col), max_tries=tries)
  gap = known_gaps.explain(small, col, targets.Outcome(targets.MISMATCH, why))
  if gap is None and col in known_gaps.XLA_ENDS_JAX_TOO.columns and _dies(small, JAX_JIT):
    gap = known_gaps.XLA_ENDS_JAX_TOO
  finding = driver.Finding(program.name, column, why, driver.describe(gap))
  if gap is None and out:
    finding.path = driver.write(out, small, seed=seed, index=index, column=column, detail=why)
  return finding


# The column of a probe that runs JAX's own jax.jit of the program.
JAX_JIT = ("jax", "jit")


def _dies(program, column) -> bool:
  """Whether running `program` in `column` (or JAX_JIT) ends a process."""
  with tempfile.TemporaryFile("w+") as stderr:
    child = _start(["--probe"], stderr)
    child.communicate(pickle.dumps((program, column)).hex())
    return child.returncode != 0


def _emit(event: str, **data):
  print(_EVENT + json.dumps({"event": event, **data}), flush=True)


def _stream(request):
  """The child: programs from `start`, each column in turn, reported as it goes."""
  targets.OP_BY_OP.update(request["op_by_op"])
  columns = targets.columns(request["tflite"], request["tfjs"], request["litert"])
  runner = targets.Runner()
  began = time.monotonic()
  index, end, budget = request["start"], request["end"], request["budget"]
  first_column = request["first_column"]
  stop = index + request["count"]
  try:
    while (
      index < stop
      and (end is None or index < end)
      and (budget is None or time.monotonic() - began < budget)
    ):
      program = generator.generate(request["seed"], index, generator.Settings())
      todo = columns[first_column:]
      if todo:
        _emit("reference", index=index)
        if program.name not in targets.OP_BY_OP:
          targets.abort_if_asked("reference", program)
        want = targets.expected(program)
        for column in todo:
          _emit("column", index=index, column=targets.column_name(column))
          targets.abort_if_asked(targets.column_name(column), program)
          for name, status, finding, detail in driver.run_program(
            program, want, [column], runner, seed=request["seed"], index=index, out=request["out"]
          ):
            found = finding and dataclasses.asdict(finding)
            _emit("outcome", index=index, column=name, status=status, finding=found, detail=detail)
      _emit("done", index=index)
      index, first_column = index + 1, 0
  finally:
    runner.close()


def _probe():
  """The child: runs one program (pickled on stdin) in one column."""
  program, column = pickle.loads(bytes.fromhex(sys.stdin.read()))
  if column == JAX_JIT:
    targets.abort_if_asked("reference", program)
    with contextlib.suppress(Exception):  # only an ended process counts
      targets.expected(program)
    return
  targets.abort_if_asked(targets.column_name(column), program)
  runner = targets.Runner()
  try:
    runner.results(program, column)
  except Exception:  # pylint: disable=broad-except
    pass  # an error is an outcome; only an ended process counts here
  finally:
    runner.close()


if __name__ == "__main__":
  if sys.argv[1] == "--stream":
    _stream(json.loads(sys.argv[2]))
  else:
    _probe()
