"""The Keras twins of the TF.js benchmarks (benchmarks/tfjs_twin.py): the MLP
written in Keras, exported as a SavedModel and converted by TF's own
tensorflowjs_converter, computes on TF.js what jax.jit computes; and the
report's TF.js rows and goals read a run's twin numbers.

The conversion needs the converter (`make .tfjs-converter/.installed`, which
`make bench` installs); without it those tests are skipped, saying so.
"""

import jax
import numpy as np
import pytest

from benchmarks import models, report, targets, tfjs_twin
from benchmarks.suites import tfjs as tfjs_suite
from jax2tf import tfjs
from jax2tf.tfjs import browser

MISSING = tfjs_twin.missing()
needs_converter = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def _jax(m):
  return [np.asarray(x) for x in jax.tree_util.tree_leaves(jax.jit(m.fn)(m.params, *m.inputs))]


# One test, so that the twin is exported and converted once (about 10 s).
@needs_converter
def test_mlp_twin_matches_jax_jit_in_node_and_chromium(tmp_path):
  m = models.get("mlp")
  want = _jax(m)
  twin = tfjs_twin.build("mlp", str(tmp_path))
  tfjs_twin.check_signature(twin, len(m.inputs), len(want))
  # The Keras graph as TF's converter writes it: one matrix product a layer, no jax2tf metadata.
  ops = tfjs_twin.graph_ops(twin)
  assert ops["MatMul"] + ops["_FusedMatMul"] == 3
  # One input, named by Keras's counter of the tensors it made in this process.
  (name,) = tfjs.runtime.signature(twin)[0]
  assert name.startswith("keras_tensor"), name
  with tfjs.Runner("cpu") as runner:
    got, steady, first = tfjs_twin.time_node(runner, twin, m.inputs, calls=2)
  assert steady > 0 and first > 0
  assert len(got) == len(want)
  for g, w in zip(got, want):
    np.testing.assert_allclose(g, w, rtol=m.rtol, atol=m.atol)
  try:
    browser.chromium()
  except FileNotFoundError:
    return  # the Chromium half needs Chromium (test_browser.py says when it is missing)
  got, steady, first = tfjs_twin.time_chromium(twin, m.inputs, calls=3)
  assert steady >= 0 and first >= 0
  np.testing.assert_allclose(got[0], want[0], rtol=m.rtol, atol=m.atol)


def test_browser_repeats_must_be_a_count():
  with pytest.raises(ValueError, match="repeats: expected a count"):
    browser.run("nowhere", np.zeros(1, np.float32), backend="wasm", repeats=-1)


def test_missing_converter_says_how_to_install(monkeypatch, tmp_path):
  monkeypatch.setenv(tfjs_twin.CONVERTER_ENV, str(tmp_path))
  assert "make .tfjs-converter/.installed" in tfjs_twin.missing()
  with pytest.raises(FileNotFoundError, match="tensorflowjs package"):
    tfjs_twin.convert(str(tmp_path), str(tmp_path / "out"))


def test_every_keras_twin_is_a_model_of_the_set():
  from benchmarks import keras_reference

  for name in keras_reference.BUILDERS:
    assert name in models.REGISTRY and tfjs_twin.has_twin(name)


def _row():
  return {
    "model": "mlp",
    "seconds": {"jax.jit": 1e-4, "tf_noxla": 2e-4, "tfjs_cpu": 3e-3, "tfjs_wasm": 1e-3,
                "tfjs_chromium_wasm": 1e-3},
    "errors": {},
    "bytes": {"model_json": 2048, "shards": 4096, "files": 2},
    "ops": {"MatMul": 3, "AddV2": 3, "Reshape": 3, "Relu": 2},
    "twin": {
      "seconds": {"tfjs_cpu": 1e-3, "tfjs_wasm": 1e-3},
      "errors": {"chromium_wasm": "Error: Kernel 'Einsum' not registered for backend 'wasm'"},
      "bytes": {"model_json": 1024, "shards": 4096, "files": 2},
      "ops": {"MatMul": 3, "Relu": 2},
    },
  }


def test_report_and_goals_read_the_twin():
  row = _row()
  assert tfjs_suite.twin_ratio(row, "cpu") == pytest.approx(3.0)
  assert tfjs_suite.twin_ratio(row, "chromium_wasm") is None
  assert tfjs_suite.more_ops(row) == "AddV2 +3, Reshape +3"
  header, rows = report.tfjs_twin_table({"tfjs": [row]})
  cells = {r[1]: r for r in rows}
  assert cells["Node, cpu"][-1] == "3.00x" and cells["Node, wasm"][-1] == "1.00x"
  assert cells["Chromium, wasm"][3].startswith("error: Error: Kernel 'Einsum'")
  checks = {c.subject: c for c in targets.evaluate({"tfjs": [row]})["TF.js against Keras"]}
  assert checks["mlp, Node, cpu"].passed is False
  assert "Reshape +3" in checks["mlp, Node, cpu"].why
  assert "fused Relu" not in checks["mlp, Node, cpu"].why  # as many Relus as the twin
  row["twin"]["ops"]["Relu"] = 0
  unfused = {c.subject: c for c in targets.evaluate({"tfjs": [row]})["TF.js against Keras"]}
  assert "fused Relu" in unfused["mlp, Node, cpu"].why
  assert checks["mlp, Node, wasm"].passed is True
  # A twin that cannot run there leaves the goal unmeasured, not missed.
  assert checks["mlp, Chromium, wasm"].passed is None
  header, rows = report.tfjs_table({"tfjs": [row]})
  assert "Chromium wasm" in header and rows[0][header.index("Chromium / jax.jit")] == "10x"


def _turns_of(times: dict, rounds: int) -> tuple:
  """The turns `_Turns.take` takes where each model's calls take the times
  listed for it, in turn (the same output every time, jax.jit's)."""
  m = models.get("mlp")
  want = [np.zeros(2, np.float32)]
  turns = tfjs_suite._Turns(m, want, {who: who for who in times})
  taken = {who: iter(seconds) for who, seconds in times.items()}

  def measure(who, folder):
    assert folder == who
    return want, next(taken[who]), 0.5

  return turns.take("cpu", rounds, measure), turns


def test_turns_go_on_while_a_median_is_uncertain():
  steady = [0.100, 0.101, 0.099, 0.100] * 3
  # Times that agree to 1%: the first ROUNDS turns settle both medians.
  n, turns = _turns_of({"ours": steady, "twin": steady}, tfjs_suite.ROUNDS)
  assert n == tfjs_suite.ROUNDS and turns.turns == {"cpu": n}
  # One model spread by 25% keeps both taking turns, up to MAX_ROUNDS.
  noisy = [0.08, 0.12, 0.09, 0.13, 0.10, 0.07, 0.12, 0.09, 0.13, 0.08, 0.11, 0.10]
  n, turns = _turns_of({"ours": steady, "twin": noisy}, tfjs_suite.ROUNDS)
  assert n == tfjs_suite.MAX_ROUNDS
  assert len(turns.steady["ours"]["cpu"]) == len(turns.steady["twin"]["cpu"]) == n
  # A single slow turn (a busy moment) does not: the spread is the median
  # absolute deviation.
  n, _ = _turns_of({"ours": steady, "twin": [0.100, 0.101, 0.300, 0.100] + steady}, 4)
  assert n == tfjs_suite.ROUNDS
  # A quick run takes the one turn it asks for, however noisy.
  n, _ = _turns_of({"ours": noisy, "twin": noisy}, 1)
  assert n == 1


def test_the_twin_table_says_how_many_turns_each_backend_took():
  row = _row()
  row["turns"] = {"cpu": 9, "wasm": 1}
  _, rows = report.tfjs_twin_table({"tfjs": [row]})
  wheres = [r[1] for r in rows]
  assert "Node, cpu, 9 turns" in wheres and "Node, wasm, 1 turn" in wheres
  assert "Chromium, wasm" in wheres  # no count where none was recorded
