"""The fuzzing loop: generate, run in every column, minimize and explain mismatches, count.

Outcomes per column: pass, refused (conversion refused, naming the
primitive), known (a mismatch that a known gap explains) and mismatch
(unexplained; written as a case under the output directory).
"""

import collections
import dataclasses
import time
from collections.abc import Callable

from jax2tf.testing.fuzz import generator, known_gaps, minimize, targets, writer
from jax2tf.testing.fuzz import program as program_lib

KNOWN = "known"
STATUSES = (targets.PASS, targets.REFUSED, KNOWN, targets.MISMATCH)


@dataclasses.dataclass
class Finding:
  program: str
  column: str
  detail: str
  minimized: program_lib.Program
  gap: known_gaps.KnownGap | None
  path: str = ""


@dataclasses.dataclass
class Summary:
  seed: int
  programs: int = 0
  seconds: float = 0.0
  counts: dict = dataclasses.field(
    default_factory=lambda: collections.defaultdict(collections.Counter)
  )
  findings: list = dataclasses.field(default_factory=list)

  def unexplained(self) -> list:
    return [f for f in self.findings if f.gap is None]

  def table(self) -> str:
    rows = [f"{'column':28} " + " ".join(f"{s:>9}" for s in STATUSES)]
    for column, counter in self.counts.items():
      rows.append(f"{column:28} " + " ".join(f"{counter[s]:>9}" for s in STATUSES))
    return "\n".join(rows)

  def line(self) -> str:
    totals: collections.Counter = collections.Counter()
    for counter in self.counts.values():
      totals.update(counter)
    parts = ", ".join(f"{totals[s]} {s}" for s in STATUSES)
    return f"[{self.programs} programs, {self.seconds:.0f} s] {parts}"


def fuzz(
  seed: int,
  *,
  programs: int | None = None,
  budget: float | None = None,
  start: int = 0,
  out: str | None = "fuzz_out",
  tflite: bool = False,
  tfjs: bool = False,
  settings: generator.Settings | None = None,
  progress: Callable[[str], None] | None = print,
  runner: targets.Runner | None = None,
) -> Summary:
  """Runs programs `start`, `start` + 1, ... of `seed`'s stream until
  `programs` of them ran or `budget` seconds passed."""
  assert programs is not None or budget is not None, "give a program count or a time budget"
  runner = runner or targets.Runner()
  columns = targets.columns(tflite, tfjs)
  summary = Summary(seed)
  for c in columns:
    summary.counts[targets.column_name(c)] = collections.Counter()
  began = time.monotonic()
  try:
    while (programs is None or summary.programs < programs) and (
      budget is None or time.monotonic() - began < budget
    ):
      index = start + summary.programs
      program = generator.generate(seed, index, settings or generator.Settings())
      _run_program(program, columns, runner, summary, out, index)
      summary.programs += 1
      summary.seconds = time.monotonic() - began
      if progress:
        progress(summary.line())
  finally:
    runner.close()
  return summary


def _run_program(program, columns, runner, summary, out, index):
  want = targets.expected(program)
  minimized: list = []  # programs minimized for earlier columns, reused where they fail too
  for column in columns:
    name = targets.column_name(column)
    outcome = runner.run(program, column, want)
    if outcome.status != targets.MISMATCH:
      summary.counts[name][outcome.status] += 1
      continue

    def rerun(p, column=column) -> str | None:
      """The mismatch's detail where `p` still mismatches in the column."""
      again = runner.run(p, column)
      return (again.detail or "mismatch") if again.status == targets.MISMATCH else None

    def fails(p) -> bool:
      return rerun(p) is not None

    small = next((m for m in minimized if fails(m)), None) or minimize.minimize(program, fails)
    minimized.append(small)
    detail = runner.run(small, column).detail or outcome.detail
    gap = known_gaps.explain(small, column, detail, rerun)
    finding = Finding(program.name, name, detail, small, gap)
    summary.findings.append(finding)
    summary.counts[name][KNOWN if gap else targets.MISMATCH] += 1
    if gap is None and out:
      tol = targets.tolerance(small, targets.expected(small))
      finding.path = str(
        writer.write_case(
          out, small, tol=tol, seed=summary.seed, index=index, column=name, detail=detail
        )
      )
