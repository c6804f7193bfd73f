"""Every case of the case tables (tests/cases/), in every column (serialization x TF mode).

See runner.py for what a case checks; docs/primitive_coverage.md (written by
`python -m tools.coverage_doc`) lists the cases, refusals and gaps. The fast
tier runs each column's representatives (representatives.py); `make test-all`
runs every case in every column.
"""

import ast
import pathlib

import jax
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from jax2tf.graph import rules
from tests import tf_modes
from tests.primitives import representatives, runner
from tests.support import case as case_lib
from tests.support import collect
from tools import coverage_doc

CASES = collect.all_cases()
_ROOT = pathlib.Path(__file__).parents[2]


def _params(cases):
  # One test per case and column, case by case (the runner shares a case's
  # arguments and JAX's result between its columns). The fast tier runs each
  # column's representatives (representatives.py); the rest is marked slow.
  fast = representatives.fast_pairs(cases)
  return [
    pytest.param(c, column, id=f"{c.id}-{column}",
                 marks=[] if (c.id, column) in fast else [pytest.mark.slow])
    for c in cases
    for column in (f"{s}-{m}" for s, m in case_lib.COLUMNS)
  ]


@pytest.mark.parametrize(("case", "column"), _params(CASES))
def test_case(case, column):
  serialization, mode = column.split("-")
  runner.run(case, serialization, mode)


def test_coverage_page_is_current():
  for name, render in (("primitive_coverage.md", coverage_doc.render),
                       (coverage_doc.BY_PRIMITIVE, coverage_doc.render_by_primitive)):
    path = _ROOT / "docs" / name
    assert path.exists() and path.read_text() == render(), (
        f"docs/{name} is out of date: run `make docs` (`python -m tools.coverage_doc`)")


def test_case_table_is_consistent():
  for c in CASES:
    assert callable(c.fun), c.id
    for refusal in c.refuse.values():
      assert refusal.reason and refusal.primitive, c.id
    for (s, _mode), gap in c.gaps.items():
      assert gap.why, c.id
      assert c.refusal(s) is None, f"{c.id}: a gap in {s}, where the case is refused"


def test_every_rule_module_is_a_family_with_cases():
  rules_dir = pathlib.Path(rules.__file__).parent
  families = {p.stem for p in rules_dir.glob("*.py")} - {"__init__"}
  assert families == set(rules.FAMILIES), (
      "jax2tf/graph/rules/__init__.py's FAMILIES must list every rule module: "
      f"missing {sorted(families - set(rules.FAMILIES))}, "
      f"extra {sorted(set(rules.FAMILIES) - families)}")
  tables = {p.stem for p in (_ROOT / "tests" / "cases").glob("*.py")} - {"__init__"}
  assert tables == families, (
      "tests/cases/ must hold one case table per rule family: "
      f"missing {sorted(families - tables)}, without a family {sorted(tables - families)}")


@pytest.mark.parametrize("family", rules.FAMILIES)
def test_family_points_at_its_cases_and_never_imports_them(family):
  source = (pathlib.Path(rules.__file__).parent / f"{family}.py").read_text()
  tree = ast.parse(source)
  assert f"Cases: tests/cases/{family}.py" in (ast.get_docstring(tree) or ""), (
      f"the docstring of rules/{family}.py should say 'Cases: tests/cases/{family}.py'")
  imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
  imported |= {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
               for a in n.names}
  # The cases stay out of the wheel, so a rule that imported them would fail
  # once installed.
  assert not any(name.split(".")[0] in ("tests", "tools") for name in imported), (
      f"rules/{family}.py imports test machinery: {sorted(imported)}")


@pytest.mark.parametrize("mode", case_lib.TF_MODES)
@pytest.mark.parametrize("serialization", [s.name for s in case_lib.SERIALIZATIONS if not s.modes])
def test_clamp_nan_with_polymorphic_shape(serialization, mode):
  # NaN-propagating clamp must also hold for dynamic shapes.
  f = lambda lo, x, hi: jax.lax.clamp(lo, x, hi)  # noqa: E731
  f_tf = jax2tf.convert(f, polymorphic_shapes=[None, "(b,)", None],
                        **case_lib.serialization(serialization).options)
  for x in (np.array([np.nan, 0.5, 3.0, -3.0], np.float32), np.array([2.0], np.float32)):
    for lo, hi in ((-1.0, 1.0), (np.nan, 1.0), (-1.0, np.nan)):
      args = (np.float32(lo), x, np.float32(hi))
      want = np.asarray(jax.jit(f)(*args))
      got = tf_modes.to_numpy(tf_modes.run_in_mode(f_tf, mode, *map(tf.constant, args)))
      np.testing.assert_array_equal(got, want)
