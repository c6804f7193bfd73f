"""The Keras twins of the model set (benchmarks/keras_reference.py) compute what
the Flax models compute under `jax.jit`, at the sizes they are built for and
at another batch (the twins' batch is dynamic), on Keras's TensorFlow and JAX
backends;
and the keras_twins suite's paths agree with `jax.jit` before it times them."""

import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from benchmarks import keras_reference, models
from benchmarks.suites import keras_twins

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NEW_TWINS = ("gpt_rotary", "vit", "bilstm")


# Sizes other than the defaults: the twin fixes all but the batch from the inputs it is built for.
SIZES = {"gpt_rotary": {"seq": 12}, "vit": {"size": 20}, "bilstm": {"seq": 9}}


@pytest.mark.parametrize("name", NEW_TWINS)
def test_twin_matches_flax(name):
  m = models.get(name)
  dims = {**m.default_dims, **SIZES[name]}
  twin = keras_reference.build(name, m.params, m.make_inputs(**dims), m.rtol, m.atol)
  (x,) = m.make_inputs(**{**dims, "batch": 3})
  np.testing.assert_allclose(
    np.asarray(twin(x)), np.asarray(jax.jit(m.fn)(m.params, x)), rtol=m.rtol, atol=m.atol
  )


_ON_JAX = """
import json, sys
import numpy as np
import keras
from benchmarks import keras_reference, models
errors = {}
for name in sys.argv[1:]:
  m = models.get(name)
  twin = keras_reference.build(name, m.params, m.inputs, m.rtol, m.atol)
  errors[name] = float(np.max(np.abs(np.asarray(twin(*m.inputs)) - m.fn(m.params, *m.inputs))))
print(json.dumps({"backend": keras.backend.backend(), "errors": errors}))
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_twins_build_on_the_jax_backend():
  env = {**os.environ, "KERAS_BACKEND": "jax", "TF_CPP_MIN_LOG_LEVEL": "3"}
  done = subprocess.run(
    [sys.executable, "-c", _ON_JAX, *NEW_TWINS],
    capture_output=True,
    text=True,
    cwd=ROOT,
    env=env,
    check=False,
  )
  assert done.returncode == 0, done.stderr[-3000:]
  out = json.loads(done.stdout.strip().splitlines()[-1])
  assert out["backend"] == "jax"
  assert set(out["errors"]) == set(NEW_TWINS)


@pytest.mark.subprocess
def test_suite_checks_every_path_against_jax():
  # A child process of the suite, as benchmarks.run starts it, at the default sizes.
  from benchmarks import children, timing

  m = models.get("bilstm")
  cfg = timing.Settings(samples=1, sample_s=0.0, warmup=0, conversions=1)
  row = children.run(
    "benchmarks.suites.keras_twins",
    "child",
    "bilstm",
    json.dumps(m.default_dims),
    json.dumps(vars(cfg)),
  )
  assert row["errors"] == {}
  assert set(row["seconds"]) == set(keras_twins.ALTERNATIVES)
  assert max(row["max_abs_error"].values()) <= m.atol


def test_jax_anchor_is_the_faster_threading():
  faster_on_one = {keras_twins.JAX: 2.0, keras_twins.JAX_ONE_THREAD: 1.0, keras_twins.GRAPH: 0.5}
  assert keras_twins.jax_anchor(faster_on_one) == keras_twins.JAX_ONE_THREAD
  assert keras_twins.jax_anchor({keras_twins.JAX: 1.0, keras_twins.JAX_ONE_THREAD: 3.0}) == (
    keras_twins.JAX
  )
  assert keras_twins.jax_anchor({keras_twins.GRAPH: 1.0}) is None


def test_runtime_goals_without_xla_divide_by_the_faster_jax_jit():
  # The graph path's goal divides by the faster threading, as the twins'
  # does; the XLA paths by XLA's defaults. A run without the one-thread
  # timing (or at a size where it is not taken) divides by jax.jit alone.
  from benchmarks import report, targets

  seconds = {"jax.jit": 2.0, keras_twins.JAX_ONE_THREAD: 1.0, "native+jit": 2.0,
             "native": 2.0, "graph+jit": 2.0, "graph": 1.6}  # fmt: skip
  row = {"workload": "transformer_lm@large", "label": "lm", "errors": {}, "seconds": seconds}
  checks = {c.goal.split(" within")[0]: c for c in targets._compute_bound({"runtime": [row]})}
  assert (checks["graph"].value, checks["graph"].passed) == ("1.60x", False)
  assert "over jax.jit, one thread" in checks["graph"].why
  assert (checks["native+jit"].value, checks["native+jit"].passed) == ("1.00x", True)
  header, rows = report.runtime_table({"runtime": [row]})
  assert rows[0][header.index("jax.jit, one thread")] == "0.50x"

  del seconds[keras_twins.JAX_ONE_THREAD]
  checks = {c.goal.split(" within")[0]: c for c in targets._compute_bound({"runtime": [row]})}
  assert (checks["graph"].value, checks["graph"].passed) == ("0.80x", True)
  header, rows = report.runtime_table({"runtime": [row]})
  assert rows[0][header.index("jax.jit, one thread")] == "-"
