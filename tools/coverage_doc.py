"""Writes docs/primitive_coverage.md and docs/cases_by_primitive.md from the case tables.

    python -m tools.coverage_doc [output path]

The first page says what tests/primitives/test_cases.py checks: in every
column (serialization x TF mode) a case matches `jax.jit`, or is refused
there, or has a known gap there. The second, written beside it, lists the
cases of each JAX primitive, and where the case tables define each case. The
cases are the source of truth, and the test suite holds them to their word (a
test fails when a page is stale).
"""

import collections
import functools
import pathlib
import sys

from jax2tf import targets
from jax2tf.graph import rules
from jax2tf.targets import kernel_lists
from tests.primitives import representatives
from tests.support import case as case_lib
from tests.support import collect

_TITLES = {s.name: s.title for s in case_lib.SERIALIZATIONS}


def _outcome(c, serialization, mode) -> str:
  if c.refusal(serialization) is not None:
    return "refused"
  return "gap" if c.gap(serialization, mode) is not None else "pass"


def _counts_table(cases, fast_pairs) -> list:
  columns = case_lib.COLUMNS
  fast_ids = {case_id for case_id, _ in fast_pairs}
  head = ["family", "cases (in the fast tier)"] + [f"{_TITLES[s]}: {m}" for s, m in columns]
  lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---|" * len(columns)]
  by_family = collections.defaultdict(list)
  for c in cases:
    by_family[c.family].append(c)
  for family in rules.FAMILIES + ("all",):
    fam_cases = cases if family == "all" else by_family[family]
    cells = []
    for s, m in columns:
      n = collections.Counter(_outcome(c, s, m) for c in fam_cases)
      cells.append(f"{n['pass']} / {n['refused']} / {n['gap']}")
    fast = sum(1 for c in fam_cases if c.id in fast_ids)
    name = f"**{family}**" if family == "all" else f"[{family}](../tests/cases/{family}.py)"
    lines.append(f"| {name} | {len(fam_cases)} ({fast}) | " + " | ".join(cells) + " |")
  return lines


def _refusals(cases) -> list:
  lines = ["| case | serialization | primitive | reason |", "|---|---|---|---|"]
  for c in cases:
    for s in case_lib.SERIALIZATION_NAMES:
      r = c.refuse.get(s)
      if r is not None:
        lines.append(f"| {c.id} | {_TITLES[s]} | `{r.primitive}` | {r.reason} |")
  return lines


def _gaps(cases) -> list:
  lines = ["| case | serialization | modes | effect | why |", "|---|---|---|---|---|"]
  for c in cases:
    grouped = collections.defaultdict(list)  # one row per serialization and gap
    for (s, m), g in c.gaps.items():
      grouped[(s, g)].append(m)
    for (s, g), modes in grouped.items():
      effect = f"tolerance {g.tol[0]:g} / {g.tol[1]:g}" if g.tol else "fails"
      modes = [m for m in case_lib.modes_of(s) if m in modes]
      lines.append(f"| {c.id} | {_TITLES[s]} | {', '.join(modes)} | {effect} | {g.why} |")
  return lines


def _kernel_lists() -> list:
  lines = [
    "",
    "## What the deployment targets lack",
    "",
    "`to_tflite` and `to_tfjs` refuse a function whose converted ops the runtime has no "
    "kernel for, one line per op, naming the JAX primitive that emitted it. A case's "
    "refusal there must name only what these lists hold (`tests/support/refusals.py`). "
    "TF.js's list is its converter's op list (`jax2tf/tfjs/ops.py`: the TF ops it maps, "
    "the dtypes it holds, the ops that take complex64). LiteRT's are the ops its "
    "converters refused for want of a kernel, with the dtypes of their operands "
    "(`jax2tf/targets/kernel_lists/`, added to by `tools/record_column.py`): TF ops for "
    "TF's TFLite converter (routes graph and native), MLIR ops for litert-converter "
    "(route litert). An empty set of dtypes: refused on any.",
    "",
    "| target | op | refused on |",
    "|---|---|---|",
  ]
  seen = set()
  for target in targets.TARGETS.values():
    name = target.kernel_list
    if name is None or name in seen:
      continue
    seen.add(name)
    for op, sets in sorted(kernel_lists.read(name).items()):
      shown = "; ".join(sorted(", ".join(sorted(on)) or "any dtype" for on in sets))
      lines.append(f"| {name} | `{op}` | {shown} |")
  return lines


BY_PRIMITIVE = "cases_by_primitive.md"


@functools.cache
def _footprints() -> dict:
  """{case id: Footprint} of every case (its jaxpr's primitives, ...)."""
  return {c.id: representatives.footprint(c) for c in collect.all_cases()}


def _link(location: str, shown: str) -> str:
  path, line = location.rsplit(":", 1)
  return f"[{shown}](../{path}#L{line})"


def _defined_at(c) -> str:
  """The case table's lines that define `c`, outermost first, as links."""
  if not c.defined_at:
    return ""
  first = c.defined_at[0]
  parts = [_link(first, first.rsplit("/", 1)[1])]
  parts += [_link(loc, loc.rsplit(":", 1)[1]) for loc in c.defined_at[1:]]
  return " > ".join(parts)


def render_by_primitive() -> str:
  cases = collect.all_cases()
  footprints = _footprints()
  by_primitive: dict = collections.defaultdict(lambda: collections.defaultdict(list))
  for c in cases:
    for name in representatives.primitives(footprints[c.id]):
      by_primitive[name][c.family].append(c.name)
  untraced = [c.id for c in cases if not footprints[c.id].traced]
  lines = [
    "# Cases by primitive",
    "",
    "Generated by `python -m tools.coverage_doc` from the case table of each rule "
    "family (`tests/cases/<family>.py`); do not edit by hand. "
    "[primitive_coverage.md](primitive_coverage.md) says what each case is checked for "
    "in each column.",
    "",
    f"The {len(by_primitive)} JAX primitives that the {len(cases)} cases exercise, each "
    "with the cases whose jaxpr holds it (`jax.make_jaxpr` of the case's function on its "
    "arguments, sub-jaxprs included, as `tests/primitives/representatives.py` reads it); "
    "then each case, with the lines of its case table that define it and its primitives. "
    "Where a loop or a helper builds a case's name, the lines are those on the way to its "
    "definition, outermost first (the loop or the call of the helper, then the helper's "
    "own lines).",
    "",
    "## Primitives",
    "",
    "| primitive | cases | by family |",
    "|---|---|---|",
  ]
  for name in sorted(by_primitive):
    families = by_primitive[name]
    n = sum(map(len, families.values()))
    listed = "; ".join(f"**{f}**: " + ", ".join(names) for f, names in families.items())
    lines.append(f"| `{name}` | {n} | {listed} |")
  if untraced:
    listed = ", ".join(untraced)
    lines.append(f"| (not traced: JAX rejects the function) | {len(untraced)} | {listed} |")
  lines += ["", "## Cases", "", "| case | defined at | primitives |", "|---|---|---|"]
  for c in cases:
    prims = ", ".join(f"`{p}`" for p in sorted(representatives.primitives(footprints[c.id])))
    lines.append(f"| {c.id} | {_defined_at(c)} | {prims} |")
  return "\n".join(lines) + "\n"


def render() -> str:
  cases = collect.all_cases()
  fast_pairs = representatives.fast_pairs(cases, _footprints())
  n_fast = len({case_id for case_id, _ in fast_pairs})
  inherits = [
    f"{_TITLES[s.name]} inherits those of {_TITLES[s.parent]}"
    for s in case_lib.SERIALIZATIONS
    if s.parent
  ]
  lines = [
    "# Primitive coverage",
    "",
    "Generated by `python -m tools.coverage_doc` from the case table of each rule "
    "family (`tests/cases/<family>.py`); do not edit by hand.",
    "",
    f"{len(cases)} cases (`make test-all` runs each in every column; the fast tier that "
    f"CI runs, {len(fast_pairs)} of the {len(cases) * len(case_lib.COLUMNS)} case-column "
    f"pairs from {n_fast} cases, the representatives of each column that "
    "`tests/primitives/representatives.py` chooses), each a small JAX function over one or more primitives and dtypes, "
    "with NaN, infinities and signed zeros where they matter. "
    "`tests/primitives/test_cases.py` runs every case in every column: converted with "
    "each serialization (" + ", ".join(_TITLES.values()) + ") and run in TF eager, "
    "`tf.function` and `tf.function(jit_compile=True)`, or, for TFLite, written by "
    "`jax2tf.to_tflite` (one column per route) with builtin ops only and run on the "
    "LiteRT interpreter, or, for TF.js, written by `jax2tf.to_tfjs` and run by "
    "`@tensorflow/tfjs` (cpu backend) in Node. In a column a case either matches "
    "`jax.jit` on the same inputs (same shapes and dtypes; NaN at the same places, the same "
    "infinities, the same signs of zero; bit for bit where JAX's result is exact, else "
    "within a tolerance; decompositions up to their non-uniqueness), or is refused "
    "(conversion fails with an error naming the primitive and a remedy), or has a known "
    "gap (a looser tolerance, or a failure that the tests pin so that a fix shows up). "
    "Refusals and gaps are declared per serialization; " + "; ".join(inherits) + ". "
    f"[{BY_PRIMITIVE}]({BY_PRIMITIVE}) lists the cases of each primitive, and where "
    "each case is defined.",
    "",
    "## Per family and column",
    "",
    "Each cell counts the cases that pass / are refused / have a known gap there. "
    "In the deployment columns (TFLite, TF.js) a case may also be refused for an op or a "
    "dtype its runtime lacks: the tests derive that when the case runs, from the ops the "
    "conversion emits and the target's kernel lists (see below), and count it as a pass "
    "here, as no case table records it.",
    "",
  ]
  lines += _counts_table(cases, fast_pairs)
  lines += [
    "",
    "## Refusals",
    "",
    "Native serialization raises `UnsupportedCustomCallError`, graph serialization "
    "`NotImplementedError`, `to_tflite` `TFLiteConversionError` (on the litert route "
    "`LiteRTConversionError`, naming the op that litert-converter cannot convert), "
    "`to_tfjs` `TFJSConversionError`.",
    "",
  ]
  lines += _refusals(cases)
  lines += _kernel_lists()
  lines += ["", "## Known gaps", ""]
  lines += _gaps(cases)
  return "\n".join(lines) + "\n"


if __name__ == "__main__":
  out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/primitive_coverage.md")
  for path, text in ((out, render()), (out.with_name(BY_PRIMITIVE), render_by_primitive())):
    path.write_text(text)
    print(f"wrote {path}")
