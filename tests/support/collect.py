"""Gathers the case tables of the rule families.

The families are listed once, in `jax2tf.graph.rules.FAMILIES`; the cases of
family `f` are `tests/cases/f.py`'s `CASES`. Case names are
unique across families, so that a name says which case it is.
"""

import collections
import dataclasses
import functools
import importlib

from jax2tf.graph import rules
from tests.support import case as case_lib


def case_module(family: str):
  return importlib.import_module(f"tests.cases.{family}")


def family_cases(family: str) -> list:
  """The cases of one family, each knowing its family."""
  cases = case_module(family).CASES
  for c in cases:
    assert isinstance(c, case_lib.Case), (
      f"tests/cases/{family}.py: CASES holds {c!r}, which is no tests.support.case.Case"
    )
  return [dataclasses.replace(c, family=family) for c in cases]


@functools.cache
def all_cases() -> tuple:
  """Every family's cases, in the order of FAMILIES."""
  cases = tuple(c for family in rules.FAMILIES for c in family_cases(family))
  where = collections.defaultdict(list)
  for c in cases:
    where[c.name].append(c.family)
  duplicates = {name: families for name, families in where.items() if len(families) > 1}
  assert not duplicates, f"case names used more than once (name: families): {duplicates}"
  return cases
