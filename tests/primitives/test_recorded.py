"""The recorded expectations of the deployment columns (tests/support/recorded.py)
and their recorder's rewriting (tools/record_column.py)."""

import re
import shutil

import pytest

from tests.support import case as case_lib
from tests.support import recorded, refusals
from tools import record_column


def test_recorded_files_are_as_the_recorder_writes_them():
  files = sorted(recorded.ROOT.glob("*/*.json"))
  assert files
  for p in files:
    column, family = p.parent.name, p.stem
    assert column in case_lib.SERIALIZATION_NAMES, f"{p}: no column {column!r}"
    text = p.read_text()
    assert recorded.to_json(recorded.from_json(text, str(p))) == text, (
      f"{p} is not in the recorder's form (sorted, one case a line): rewrite it with "
      "tests.support.recorded.write"
    )
    source = (recorded.ROOT.parent / f"{family}.py").read_text()
    assert f'recorded.apply(CASES, "{column}", "{family}")' in source, (
      f"{p} is applied by no line of tests/cases/{family}.py"
    )


def test_keys_round_trip_exactly():
  r = recorded.Recorded(
    no_kernel={("abs", "Abs"): ["b", "a"], ("signature", "dtype float16"): ["c"]},
    gaps={('why, with "quotes" and \\ escapes', "NaN\\ positions\\ differ"): ["d"]},
    varies_by_cpu={"d": {"elsewhere": "", "why": "kernels by instruction set"}},
  )
  back = recorded.from_json(recorded.to_json(r))
  assert back.no_kernel == {("abs", "Abs"): ["a", "b"], ("signature", "dtype float16"): ["c"]}
  assert back.gaps == r.gaps
  assert back.varies_by_cpu == r.varies_by_cpu


def test_a_case_under_two_entries_is_refused():
  text = recorded.to_json(recorded.Recorded(no_kernel={("a", "A"): ["x"], ("b", "B"): ["x"]}))
  with pytest.raises(AssertionError, match="under two entries"):
    recorded.from_json(text)


@pytest.fixture
def recorded_copy(tmp_path, monkeypatch):
  shutil.copytree(recorded.ROOT, tmp_path / "recorded")
  monkeypatch.setattr(recorded, "ROOT", tmp_path / "recorded")
  return tmp_path / "recorded"


def test_recorder_rewrites_the_run_cases_and_keeps_the_others(recorded_copy):
  before = recorded.read("tflite_native", "elementwise")
  assert before is not None
  varying = sorted(before.varies_by_cpu)[0]
  (why, error), names = sorted(before.gaps.items())[0]
  moved, kept = names[0], [n for n in names if n != names[0]]
  results = {
    moved: {"kind": "pass"},
    varying: {"kind": "pass"},  # varies by CPU: left as it is
    "new_gap_case": {"kind": "gap", "why": "why", "error": "error"},
  }
  record_column.update_family("elementwise", "tflite_native", results)
  after = recorded.read("tflite_native", "elementwise")
  assert after is not None
  assert moved not in after.names()
  assert varying in after.names() and after.varies_by_cpu == before.varies_by_cpu
  assert after.gaps[("why", "error")] == ["new_gap_case"]
  if kept:
    assert after.gaps[(why, error)] == kept
  assert after.no_kernel == before.no_kernel


def test_recorder_rewrites_nothing_for_the_same_outcomes(recorded_copy):
  path = recorded.path("tfjs", "dot")
  text = path.read_text()
  before = recorded.read("tfjs", "dot")
  assert before is not None
  results = {}
  for (primitive, op), names in before.no_kernel.items():
    results |= {n: {"kind": "no_kernel", "primitive": primitive, "op": op} for n in names}
  for (why, error), names in before.gaps.items():
    results |= {n: {"kind": "gap", "why": why, "error": error} for n in names}
  record_column.update_family("dot", "tfjs", results)
  assert path.read_text() == text


def test_recorder_refuses_a_gap_where_the_family_records_nothing(recorded_copy):
  assert recorded.read("tflite", "calls") is None
  with pytest.raises(AssertionError, match="records nothing"):
    record_column.update_family("calls", "tflite", {"x": {"kind": "gap", "why": "w", "error": "e"}})
  record_column.update_family("calls", "tflite", {"x": {"kind": "pass"}})
  assert not recorded.path("tflite", "calls").exists()


def test_litert_refusals_are_filed_by_primitive_and_mlir_op():
  pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")
  import jax.numpy as jnp
  import numpy as np

  import jax2tf

  with pytest.raises(NotImplementedError) as info:
    jax2tf.to_tflite(jnp.fft.fft, np.ones(4, np.complex64), route="litert", verify=False)
  message = str(info.value)
  assert refusals.missing(message) == [
    refusals.Missing(refusals.OPERATOR, "vhlo.fft_v1", primitive="fft")
  ]
  outcome = record_column._conversion_outcome("tflite_litert", message)  # pylint: disable=protected-access
  assert outcome == {"kind": "no_kernel", "primitive": "fft", "op": "vhlo.fft_v1"}
  [c] = case_lib.in_column(
    [case_lib.case("fft_case", jnp.fft.fft, np.ones(4, np.complex64))],
    "tflite_litert",
    no_kernel={("fft", "vhlo.fft_v1"): ["fft_case"]},
  )
  assert c.refusal("tflite_litert") == case_lib.Refusal(
    "fft", "TFLite (LiteRT), litert route cannot convert the op vhlo.fft_v1"
  )


def test_a_litert_refusal_that_blames_no_primitive_is_a_gap():
  message = (
    "to_tflite (route 'litert'): litert-converter cannot write the module:\n"
    "  ?, emitted for the JAX primitive unknown: no LiteRT operator\n"
    "Remedies: route='graph' or route='native'"
  )
  assert refusals.missing(message) == [refusals.Missing(refusals.OPERATOR, "?")]
  outcome = record_column._conversion_outcome("tflite_litert", message)  # pylint: disable=protected-access
  assert outcome["kind"] == "gap" and outcome["why"] == "litert-converter fails on it"
  assert re.search(outcome["error"], message)
