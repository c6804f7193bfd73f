"""The model set (benchmarks/models) through jax2tf.to_tfjs, run on TF.js in Node.

Every model, static (its default input sizes) and in every shape-polymorphic
variant (written once with the polymorphic dimensions dynamic in model.json,
shape checks included, and run at the variant's two sizes), on the cpu
backend of the pure JavaScript TF.js against `jax.jit` on the same inputs
with the model's tolerance; and on the wasm backend. The fast tier holds a
few small rows; `make test-all` runs every row.
"""

import functools

import pytest

import jax2tf
from benchmarks import models
from jax2tf import tfjs
from tests.model_set import assert_runs_like_jax, export_inputs, variants

FAST = {("mlp", "batch", "cpu"), ("cnn", "batch", "wasm"), ("actor_critic", "batch", "cpu"),
        ("gnn", "batch", "cpu"), ("vae", "batch", "wasm")}


def _rows():
  # Model-major, so that a row's backends follow each other and share one
  # conversion (the cache holds one model: the whole set would not fit).
  for name in models.REGISTRY:
    for variant in variants(name):
      for backend in tfjs.runtime.BACKENDS:
        marks = () if (name, variant, backend) in FAST else (pytest.mark.slow,)
        yield pytest.param(name, variant, backend, id=f"{name}-{variant}-{backend}", marks=marks)


@functools.lru_cache(maxsize=1)
def _model(name: str, variant: str):
  m = models.get(name)
  inputs, shapes = export_inputs(m, variant)
  return jax2tf.to_tfjs(m.fn, *inputs, params=m.params, polymorphic_shapes=shapes)


def _check_on_tfjs(name: str, variant: str, runner):
  model = _model(name, variant)
  assert_runs_like_jax(models.get(name), variant, lambda *inputs: runner.run(model, *inputs),
                       where=f" ({runner.backend})")


@pytest.mark.parametrize("name,variant,backend", list(_rows()))
def test_model_on_tfjs(name, variant, backend, runners):
  _check_on_tfjs(name, variant, runners[backend])
