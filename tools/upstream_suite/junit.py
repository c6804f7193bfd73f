"""Outcomes of a run from pytest's JUnit XML (junit_family=xunit1, which keeps
the test's file)."""

import dataclasses
import xml.etree.ElementTree as ET

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
_BY_TAG = {"error": ERROR, "failure": FAILED, "skipped": SKIPPED}
_WORST = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 2}


@dataclasses.dataclass(frozen=True)
class Outcome:
  status: str
  message: str = ""

  @property
  def first_line(self) -> str:
    return next((line for line in self.message.splitlines() if line.strip()), "")


def test_id(testcase: ET.Element) -> str:
  """`file.py::Class::test`, whatever folder the suite ran from: ids must
  compare across runs and match the patterns of exceptions.py."""
  classname, name = testcase.get("classname", ""), testcase.get("name", "")
  path = testcase.get("file")
  if path:
    module = path.rsplit("/", 1)[-1].removesuffix(".py")
    klass = classname.split(f"{module}.", 1)[-1] if f"{module}." in classname else ""
    return "::".join(p for p in (f"{module}.py", klass, name) if p)
  # A collection error carries no file: its classname is the module's path.
  return f"{classname.rsplit('.', 1)[-1]}.py::{name}" if classname else name


def load(path: str) -> dict[str, Outcome]:
  outcomes: dict[str, Outcome] = {}
  for testcase in ET.parse(path).getroot().iter("testcase"):
    status, message = PASSED, ""
    for child in testcase:
      if child.tag in _BY_TAG:
        status = _BY_TAG[child.tag]
        message = (child.get("message") or child.text or "").strip()
        break
    tid = test_id(testcase)
    # An error in teardown after the test's own result is a second entry:
    # the worse of the two stands.
    previous = outcomes.get(tid)
    if previous is None or _WORST[status] > _WORST[previous.status]:
      outcomes[tid] = Outcome(status, message)
  return outcomes


def date(path: str) -> str | None:
  """The day the run started (pytest's timestamp), for results read back later."""
  suite = ET.parse(path).getroot().find("testsuite")
  stamp = suite.get("timestamp") if suite is not None else None
  return stamp[:10] if stamp else None
