"""The model set (benchmarks/models) through jax2tf.to_tflite, run on LiteRT.

Every model, static (its default input sizes) and in every shape-polymorphic
variant (written once with the polymorphic dimensions dynamic in the
flatbuffer, and run at the variant's two sizes: the interpreter resizes its
inputs), builtin TFLite ops only, on the LiteRT interpreter against `jax.jit`
on the same inputs with the model's tolerance, by each route: "graph" and
"native" (TF's converter) and "litert" (JAX's StableHLO through the
standalone litert-converter; its rows skip where that is not installed).
The fast tier holds the small models at their batch variant; `make test-all`
runs every row.
"""

import pytest

import jax2tf
from benchmarks import models
from jax2tf import lite
from jax2tf.lite import litert_converter
from tests.model_set import assert_runs_like_jax, export_inputs, variants

ROUTES = ("graph", "native", "litert")
FAST = {("mlp", "batch", "graph"), ("cnn", "batch", "graph"), ("actor_critic", "batch", "graph"),
        ("mlp", "batch", "native"), ("mlp", "batch", "litert")}
# Rows a route cannot take, pinned with the error that stops each: none
# now, on the native route (TF 2.21's converter) nor on the litert route
# (litert-converter 0.5.0, LiteRT 2.3). The module rewrites that made the
# last ones pass are jax2tf/native/integer_patterns.py (threefry's uint64
# counters and rotations) and jax2tf/native/dynamic_ops.py (polymorphic
# gathers, slices, convolutions and iotas); on the flatbuffer,
# jax2tf/lite/scatter_regions.py (a segment sum's region) and, on the
# litert route, jax2tf/lite/litert_loops.py (loops).
NATIVE_FAILS: dict = {}
LITERT_FAILS: dict = {}

_NEEDS_LITERT = pytest.mark.skipif(
  not litert_converter.is_installed(), reason="the litert route needs litert-converter"
)
FAILS = {"native": NATIVE_FAILS, "litert": LITERT_FAILS}


def _rows():
  for route in ROUTES:
    for name in models.REGISTRY:
      for variant in variants(name):
        marks = [] if (name, variant, route) in FAST else [pytest.mark.slow]
        if route == "litert":
          marks.append(_NEEDS_LITERT)
        yield pytest.param(name, variant, route, id=f"{name}-{variant}-{route}", marks=marks)


def _model(name: str, variant: str, route: str):
  m = models.get(name)
  inputs, shapes = export_inputs(m, variant)
  return jax2tf.to_tflite(m.fn, *inputs, params=m.params, polymorphic_shapes=shapes,
                          route=route, verify=False)


def _check_on_litert(name: str, variant: str, route: str):
  model = _model(name, variant, route)
  assert model.route == route
  assert_runs_like_jax(models.get(name), variant, lambda *inputs: lite.run(model, *inputs))


@pytest.mark.parametrize("name,variant,route", list(_rows()))
def test_model_on_litert(name, variant, route):
  fails = FAILS.get(route, {}).get((name, variant))
  if fails is None:
    _check_on_litert(name, variant, route)
    return
  error, match = fails
  with pytest.raises(error, match=match):
    _check_on_litert(name, variant, route)
