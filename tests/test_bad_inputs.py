"""Every entry of the bad-input catalogue (tests/support/bad_inputs.py) raises
the error it promises, with the words it promises, and leaves no file behind."""

import os
import pathlib

import pytest

from tests.support import bad_inputs
from tools import errors_doc

CASES = bad_inputs.entries_and_serializations()


def _files(folder):
  return sorted(os.path.relpath(os.path.join(d, f), folder)
                for d, _, files in os.walk(folder) for f in files)


@pytest.mark.parametrize("entry, serialization", CASES,
                         ids=[f"{e.name}-{s}" if s else e.name for e, s in CASES])
def test_bad_input(entry, serialization, tmp_path):
  if entry.prepare is not None:
    entry.prepare(tmp_path, serialization == "native" if serialization else None)
  before = _files(tmp_path)
  error = bad_inputs.run(entry, tmp_path, serialization, prepared=True)
  message = str(error)
  missing = [w for w in entry.says if w not in message]
  assert not missing, f"{entry.name}: the message lacks {missing}:\n{message}"
  assert _files(tmp_path) == before, f"{entry.name} left files behind"


def test_catalogue_size_and_names():
  names = [e.name for e in bad_inputs.CATALOGUE]
  assert len(names) == len(set(names))
  assert len(names) >= 60
  assert {e.entry for e in bad_inputs.CATALOGUE} == {
      "convert", "call_tf", "SavedModel", "to_tflite", "to_tfjs", "CLI"}
  assert {e.when for e in bad_inputs.CATALOGUE} <= set(bad_inputs.WHEN)


def test_errors_page_is_current():
  path = pathlib.Path(__file__).parent.parent / "docs" / "errors.md"
  assert path.read_text() == errors_doc.render(), (
      "docs/errors.md is stale: run python -m tools.errors_doc")
