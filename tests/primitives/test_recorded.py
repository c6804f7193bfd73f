"""The recorded expectations of the deployment columns (tests/support/recorded.py),
the kernel lists their refusals are derived from (jax2tf/targets/kernel_lists/,
tests/support/refusals.py), and their recorder's rewriting
(tools/record_column.py)."""

import re
import shutil

import pytest

from jax2tf.targets import kernel_lists
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
    gaps={
      ('why, with "quotes" and \\ escapes', "NaN\\ positions\\ differ"): ["d"],
      ("other", "error"): ["f", "e"],
    },
    varies_by_cpu={"d": {"elsewhere": "", "why": "kernels by instruction set"}},
  )
  back = recorded.from_json(recorded.to_json(r))
  assert back.gaps == {**r.gaps, ("other", "error"): ["e", "f"]}
  assert back.varies_by_cpu == r.varies_by_cpu


def test_a_case_under_two_entries_is_refused():
  text = recorded.to_json(recorded.Recorded(gaps={("a", "A"): ["x"], ("b", "B"): ["x"]}))
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


def test_recorder_rewrites_nothing_for_the_same_outcomes(recorded_copy):
  path = recorded.path("tfjs", "elementwise")
  text = path.read_text()
  before = recorded.read("tfjs", "elementwise")
  assert before is not None and before.gaps
  results = {"refused_case": {"kind": "refused", "lacks": [["Svd", []]]}}
  for (why, error), names in before.gaps.items():
    results |= {n: {"kind": "gap", "why": why, "error": error} for n in names}
  record_column.update_family("elementwise", "tfjs", results)
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
    refusals.Missing(refusals.OPERATOR, "vhlo.fft_v1", "complex64", "fft")
  ]
  outcome = record_column._conversion_outcome("tflite_litert", message)  # pylint: disable=protected-access
  assert outcome == {"kind": "refused", "lacks": [["vhlo.fft_v1", ["complex64"]]]}
  # The LITERT target's list predicts it.
  assert refusals.unexplained("litert", message) == []


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


def test_kernel_lists_are_as_their_writer_writes_them():
  for name in ("tflite", "litert"):
    text = kernel_lists.path(name).read_text()
    assert kernel_lists.to_json(kernel_lists.read(name)) == text, (
      f"{kernel_lists.path(name)} is not in its writer's form: rewrite it with "
      "jax2tf.targets.kernel_lists.write"
    )


def test_a_refusal_names_only_what_the_kernel_lists_hold():
  abs_on = sorted(on for on in kernel_lists.read("tflite")["Abs"] if on)[0]
  listed = (
    f"TF op Abs on {', '.join(sorted(abs_on))}, emitted for the JAX primitive abs (at f.py:1)"
  )
  assert refusals.unexplained("tflite", listed) == []
  # The same op on a dtype LiteRT has it for, an op it has, a line that
  # blames no primitive: none is a refusal for want of a kernel.
  for line in (
    "TF op Abs on float32, emitted for the JAX primitive abs (at f.py:1)",
    "TF op AddV2, emitted for the JAX primitive add (at f.py:1)",
    "tfl.mul on float32, emitted for the JAX primitive unknown: failed to legalize",
  ):
    [m] = refusals.unexplained("tflite", line) or [None]
    assert m is not None and not refusals.explained("tflite", m), line
  # A converter failure names nothing missing.
  assert refusals.unexplained("tflite", "TF's TFLite converter failed: boom") is None


def test_tfjs_refusals_are_predicted_by_its_converters_op_list():
  def predicted(line):
    return refusals.unexplained("tfjs", line) == []

  assert predicted("TF op Svd, emitted for the JAX primitive svd (at f.py:1)")
  assert not predicted("TF op AddV2, emitted for the JAX primitive add (at f.py:1)")
  assert predicted("TF op Sin on complex64, emitted for the JAX primitive sin (at f.py:1)")
  assert not predicted("TF op AddV2 on complex64, emitted for the JAX primitive add")
  assert predicted(
    "dtype uint8 (TF.js has no uint8 tensors), in ops emitted for the JAX primitive add"
  )
  assert not predicted(
    "dtype float32 (TF.js has no float32 tensors), in ops emitted for the JAX primitive add"
  )
  assert predicted("input 'x' is uint8; a TF.js model's signature takes and returns float32")


@pytest.fixture
def kernel_lists_copy(tmp_path, monkeypatch):
  monkeypatch.setattr(kernel_lists, "_DIR", tmp_path)
  kernel_lists.read.cache_clear()
  yield tmp_path
  kernel_lists.read.cache_clear()  # the lists of the tree, once monkeypatch restores them


def test_recorder_adds_what_a_refusal_names_to_the_kernel_list(kernel_lists_copy):
  kernel_lists.write("tflite", {"Abs": [["int64"]]})
  results = {
    "a": {"kind": "refused", "lacks": [["Abs", ["float64"]], ["Svd", []]]},
    "b": {"kind": "pass"},
  }
  record_column.update_kernel_list("tflite", results)
  assert kernel_lists.read("tflite") == {
    "Abs": frozenset({frozenset({"int64"}), frozenset({"float64"})}),
    "Svd": frozenset({frozenset()}),
  }
