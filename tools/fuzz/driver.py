"""The fuzzing loop: generate, run in every column, minimize and explain mismatches, count.

Outcomes per column: pass, refused (conversion refused, naming the
primitive), known (a mismatch that a known gap explains) and mismatch
(unexplained; written as a case under the output directory).
"""

import collections
import dataclasses
import time
from collections.abc import Callable, Iterator

from tools.fuzz import generator, known_gaps, minimize, targets, writer

KNOWN = "known"
STATUSES = (targets.PASS, targets.REFUSED, KNOWN, targets.MISMATCH)


@dataclasses.dataclass
class Finding:
  """A mismatch: `explanation` names the known gap behind it ("<source>: <why>"),
  None where it is unexplained (and then written as a case to `path`)."""

  program: str
  column: str
  detail: str
  explanation: str | None
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
  # Programs whose jax.jit aborted the process: compared with JAX op by op.
  reference_crashes: list = dataclasses.field(default_factory=list)
  # Per column, how many refused programs gave each reason (targets.refusal_reasons).
  refusals: dict = dataclasses.field(
    default_factory=lambda: collections.defaultdict(collections.Counter)
  )

  def record(self, column: str, status: str, finding: Finding | None = None, detail: str = ""):
    """`detail`: a refusal's reasons, joined by "; "."""
    self.counts[column][status] += 1
    if finding is not None:
      self.findings.append(finding)
    if status == targets.REFUSED:
      self.refusals[column].update(detail.split("; ") if detail else ["refused"])

  def refusal_table(self, top: int = 8) -> str:
    """The most frequent reasons for refusing, per column that refused."""
    rows = []
    for column, reasons in self.refusals.items():
      refused = self.counts[column][targets.REFUSED]
      rows.append(f"{column}: {refused} of {sum(self.counts[column].values())} refused")
      rows += [f"  {n:>7}  {reason}" for reason, n in reasons.most_common(top)]
    return "\n".join(rows)

  def unexplained(self) -> list:
    return [f for f in self.findings if f.explanation is None]

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


def new_summary(seed: int, tflite: bool, tfjs: bool, litert: bool = False) -> Summary:
  summary = Summary(seed)
  for c in targets.columns(tflite, tfjs, litert):
    summary.counts[targets.column_name(c)] = collections.Counter()
  return summary


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
  settings: generator.Settings | None = None,
  progress: Callable[[str], None] | None = print,
  runner: targets.Runner | None = None,
) -> Summary:
  """Runs programs `start`, `start` + 1, ... of `seed`'s stream until
  `programs` of them ran or `budget` seconds passed, in this process (a
  program that aborts TF or XLA ends it; tools.fuzz.isolation runs
  the stream in child processes that survive such programs)."""
  assert programs is not None or budget is not None, "give a program count or a time budget"
  targets.check_runtimes(tflite, tfjs, litert)
  runner = runner or targets.Runner()
  columns = targets.columns(tflite, tfjs, litert)
  summary = new_summary(seed, tflite, tfjs, litert)
  began = time.monotonic()
  try:
    while (programs is None or summary.programs < programs) and (
      budget is None or time.monotonic() - began < budget
    ):
      index = start + summary.programs
      program = generator.generate(seed, index, settings or generator.Settings())
      want = targets.expected(program)
      for column, status, finding, detail in run_program(
        program, want, columns, runner, seed=seed, index=index, out=out
      ):
        summary.record(column, status, finding, detail)
      summary.programs += 1
      summary.seconds = time.monotonic() - began
      if progress:
        progress(summary.line())
  finally:
    runner.close()
  return summary


def run_program(
  program, want, columns, runner, *, seed: int, index: int, out: str | None
) -> Iterator[tuple[str, str, Finding | None, str]]:
  """(column, status, finding, refusal's reasons) for each column in turn; a
  mismatch is minimized, explained by a known gap or written as a case under
  `out`."""
  minimized: list = []  # programs minimized for earlier columns, reused where they fail too
  for column in columns:
    name = targets.column_name(column)
    outcome = runner.run(program, column, want)
    if outcome.status != targets.MISMATCH:
      yield name, outcome.status, None, outcome.detail
      continue

    def rerun(p, column=column) -> targets.Outcome | None:
      """The outcome where `p` still mismatches in the column, else None."""
      again = runner.run(p, column)
      return again if again.status == targets.MISMATCH else None

    kind = mismatch_kind(outcome)

    def fails(p, column=column, kind=kind) -> bool:
      # A shrunk program that JAX itself cannot run (a reshape to a size
      # that no longer fits) would kill a column's child process: not the
      # mismatch being minimized. Nor is a mismatch of another kind (a sign
      # of zero where NaN was inf), which a smaller program can show for
      # another reason.
      if p.name not in targets.OP_BY_OP:
        targets.abort_if_asked("shrunk", p)
      try:
        reference = targets.expected(p)
      except Exception:  # pylint: disable=broad-except
        return False
      again = runner.run(p, column, reference)
      return again.status == targets.MISMATCH and mismatch_kind(again) == kind

    small = next((m for m in minimized if fails(m)), None) or minimize.minimize(program, fails)
    minimized.append(small)
    last = runner.run(small, column)
    last = last if last.status == targets.MISMATCH else outcome
    detail = last.detail
    gap = known_gaps.explain(small, column, last, rerun)
    explanation = describe(gap)
    if gap is None and _matches_jax_op_by_op(program, column, runner):
      explanation = JIT_DIFFERS
    finding = Finding(program.name, name, detail, explanation)
    if explanation is None and out:
      finding.path = write(out, small, seed=seed, index=index, column=name, detail=detail)
    yield name, KNOWN if explanation else targets.MISMATCH, finding, ""


def mismatch_kind(outcome: targets.Outcome) -> str:
  """What differs (the comparison's kind: NaN positions, values, shapes,
  ...), or, for an error, its first words (the exception's type)."""
  return outcome.mismatch.kind if outcome.mismatch else outcome.detail.split(":")[0]


JIT_DIFFERS = (
  "JAX: jax.jit's result differs from JAX's op by op (each primitive compiled alone), "
  "which the column matches: XLA compiled the whole program to other numbers (excess "
  "precision, a rewrite, or a defect)"
)


def _matches_jax_op_by_op(program, column, runner) -> bool:
  """Whether the program passes in the column against JAX op by op, where it
  mismatched JAX's jax.jit."""
  if program.name in targets.OP_BY_OP:
    return False  # its reference is op by op already
  try:
    alone = targets.expected_op_by_op(program)
  except Exception:  # pylint: disable=broad-except
    return False
  return runner.run(program, column, alone).status == targets.PASS


def describe(gap: known_gaps.KnownGap | None) -> str | None:
  return None if gap is None else f"{gap.source}: {gap.why}"


def write(out: str, program, *, seed: int, index: int, column: str, detail: str) -> str:
  tol = targets.tolerance(program, targets.expected(program))
  return str(
    writer.write_case(out, program, tol=tol, seed=seed, index=index, column=column, detail=detail)
  )
