"""What the deployment columns do otherwise than JAX, recorded as data.

`tests/cases/recorded/<column>/<family>.json` holds, for one deployment
column (`tflite`, `tflite_native`, `tflite_litert`, `tfjs`) and one rule
family, the cases that the column runs otherwise than JAX:

    {
      "gaps": [{"cases": [names], "error": regex, "why": reason}, ...],
      "varies_by_cpu": {name: {"elsewhere": regex or "", "why": reason}, ...}
    }

What a column refuses for want of a kernel is not recorded here: the runner
derives it from the ops the conversion emits and the target's kernel lists
(tests/support/refusals.py).

`gaps` are recorded from a run of the column: `tools/record_column.py`
rewrites the whole file (`write`), keeping the entries of the cases it did
not run. `varies_by_cpu` is written by hand: the
gapped cases whose outcome depends on the CPU (LiteRT picks its vectorized
kernels by instruction set), with what they do on the other CPUs
(`Gap.elsewhere`); the recorder leaves those cases as they are. Entries are
sorted by their key, names within an entry too, one name a line, so a
re-recording shows as a diff of the cases that moved.

A family without a file for a column has nothing recorded there: its cases
run in that column with the expectations of the case table alone. A family
applies its files with one line per column, `CASES[:] = recorded.apply(CASES,
column, family)`.
"""

import dataclasses
import json
import pathlib
from collections.abc import Mapping

from tests.support import case as case_lib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "cases" / "recorded"

# The fields of an entry of each list, the first ones its key, in this order.
_KEYS = {"gaps": ("why", "error")}
_CPU_FIELDS = ("elsewhere", "why")


@dataclasses.dataclass
class Recorded:
  """One column's recorded expectations for one family."""

  # {(why, error pattern): case names}
  gaps: dict[tuple[str, str], list[str]] = dataclasses.field(default_factory=dict)
  # {case name: {"elsewhere": ..., "why": ...}}
  varies_by_cpu: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)

  def names(self) -> set[str]:
    """Every case named in `gaps`."""
    return {n for names in self.gaps.values() for n in names}


def path(column: str, family: str) -> pathlib.Path:
  return ROOT / column / f"{family}.json"


def _entries(table: Mapping[tuple[str, str], list[str]], fields: tuple[str, str]) -> list[dict]:
  return [
    {fields[0]: key[0], fields[1]: key[1], "cases": sorted(set(names))}
    for key, names in sorted(table.items())
    if names
  ]


def to_json(recorded: Recorded) -> str:
  data = {
    "gaps": _entries(recorded.gaps, _KEYS["gaps"]),
    "varies_by_cpu": {
      name: {f: recorded.varies_by_cpu[name][f] for f in _CPU_FIELDS}
      for name in sorted(recorded.varies_by_cpu)
    },
  }
  return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def from_json(text: str, where: str = "recorded expectations") -> Recorded:
  data = json.loads(text)
  assert set(data) == {"gaps", "varies_by_cpu"}, (
    f"{where}: the fields are gaps and varies_by_cpu, not {sorted(data)}"
  )
  tables: dict[str, dict[tuple[str, str], list[str]]] = {}
  for field, (first, second) in _KEYS.items():
    table: dict[tuple[str, str], list[str]] = {}
    seen: set[str] = set()
    for entry in data[field]:
      assert set(entry) == {first, second, "cases"}, (
        f"{where}: an entry of {field} has the fields {first}, {second} and cases, "
        f"not {sorted(entry)}"
      )
      key = (entry[first], entry[second])
      assert key not in table, f"{where}: {field} lists {key} twice"
      twice = seen & set(entry["cases"])
      assert not twice, f"{where}: {field} names {sorted(twice)} under two entries"
      seen |= set(entry["cases"])
      table[key] = list(entry["cases"])
    tables[field] = table
  for name, entry in data["varies_by_cpu"].items():
    assert set(entry) == set(_CPU_FIELDS), (
      f"{where}: varies_by_cpu[{name!r}] has the fields {_CPU_FIELDS}, not {sorted(entry)}"
    )
  return Recorded(tables["gaps"], dict(data["varies_by_cpu"]))


def read(column: str, family: str) -> Recorded | None:
  """The family's recorded expectations in the column; None where it has no file."""
  p = path(column, family)
  if not p.exists():
    return None
  return from_json(p.read_text(), str(p.relative_to(ROOT.parents[2])))


def write(column: str, family: str, recorded: Recorded) -> pathlib.Path:
  """Writes the whole file (sorted, one case name a line)."""
  p = path(column, family)
  p.parent.mkdir(parents=True, exist_ok=True)
  p.write_text(to_json(recorded))
  return p


def apply(cases: list, column: str, family: str) -> list:
  """`cases` with the gaps recorded for them in `column`."""
  recorded = read(column, family)
  assert recorded is not None, (
    f"nothing is recorded for {family} in {column}: no {path(column, family)}"
  )
  return case_lib.in_column(
    cases,
    column,
    gaps=recorded.gaps,
    varies_by_cpu={name: v["elsewhere"] for name, v in recorded.varies_by_cpu.items()},
  )
