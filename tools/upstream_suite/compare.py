"""The two runs side by side: every test that passes with JAX's module and not
with this package is either a known exception (exceptions.py) or a regression."""

import collections
import dataclasses
import re

from tools.upstream_suite import exceptions
from tools.upstream_suite.junit import ERROR, FAILED, PASSED, SKIPPED, Outcome

MISSING = "missing"
_MESSAGE_CHARS = 300


def counts(outcomes: dict[str, Outcome]) -> dict[str, int]:
  by_status = collections.Counter(o.status for o in outcomes.values())
  return {
    "collected": len(outcomes),
    "passed": by_status[PASSED],
    "failed": by_status[FAILED],
    "errored": by_status[ERROR],
    "skipped": by_status[SKIPPED],
  }


def _failure(test: str, outcome: Outcome | None) -> dict:
  outcome = outcome or Outcome(MISSING, "not run")
  # The folder a run used says nothing to a reader: files keep their names only.
  message = re.sub(r"(?:/[^/\s:'\"]+)+/([^/\s:'\"]+\.py)", r"\1", outcome.first_line)
  return {"test": test, "outcome": outcome.status, "message": message[:_MESSAGE_CHARS]}


@dataclasses.dataclass
class Comparison:
  counts: dict[str, dict[str, int]]
  exceptions: list[dict]
  regressions: list[dict]
  only_ours: list[dict]
  # Fail (or error) with both: upstream's own failures on this machine.
  fail_both: list[str]
  # Known exceptions that explained no failure: candidates for removal.
  unused: list[str]


def compare(upstream: dict[str, Outcome], ours: dict[str, Outcome]) -> Comparison:
  seen, known, regressions = set(), [], []
  for test in sorted(upstream):
    if upstream[test].status != PASSED:
      continue
    outcome = ours.get(test)
    if outcome is not None and outcome.status == PASSED:
      continue
    entry = exceptions.find(test)
    if entry and outcome is not None and entry.explains(outcome.message):
      seen.add(entry.pattern)
      known.append(
        {
          "test": test,
          "category": entry.category,
          "reason": entry.describe(),
          "pattern": entry.pattern,
        }
      )
      continue
    failure = _failure(test, outcome)
    if entry:
      failure["note"] = f"listed as a known exception ({entry.pattern}), but fails another way"
    regressions.append(failure)
  only_ours = [
    _failure(test, upstream.get(test))
    for test in sorted(ours)
    if ours[test].status == PASSED and upstream.get(test, Outcome(MISSING)).status != PASSED
  ]
  bad = (FAILED, ERROR)
  fail_both = [
    t for t in sorted(upstream) if upstream[t].status in bad and t in ours and ours[t].status in bad
  ]
  return Comparison(
    counts={"upstream": counts(upstream), "ours": counts(ours)},
    exceptions=known,
    regressions=regressions,
    only_ours=only_ours,
    fail_both=fail_both,
    unused=[k.pattern for k in exceptions.KNOWN if k.pattern not in seen],
  )
