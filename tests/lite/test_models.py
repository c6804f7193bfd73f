"""The model set (benchmarks/models) through jax2tf.to_tflite, run on LiteRT.

Every model, static (its default input sizes) and in every shape-polymorphic
variant (written once with the polymorphic dimensions dynamic in the
flatbuffer, and run at the variant's two sizes: the interpreter resizes its
inputs), builtin TFLite ops only, on the LiteRT interpreter against `jax.jit`
on the same inputs with the model's tolerance, by each route. The fast tier
holds the small models at their batch variant; `make test-all` runs every row.
"""

import pytest

import jax2tf
from benchmarks import models
from jax2tf import lite
from tests.model_set import assert_runs_like_jax, export_inputs, variants

FAST = {("mlp", "batch", "graph"), ("cnn", "batch", "graph"), ("actor_critic", "batch", "graph"),
        ("mlp", "batch", "native")}
# Rows the native route cannot take, pinned with what stops them: TF's
# converter has no legalization of the dynamic StableHLO ops JAX emits for
# polymorphic gathers, slices and convolutions (nor of this shape arithmetic),
# and LiteRT's STABLEHLO_SCATTER kernel refuses the GNN's segment sum.
NATIVE_FAILS = {
  ("actor_critic", "batch"): (lite.TFLiteConversionError, "vhlo.dynamic_gather_v1"),
  ("gnn", "static"): (RuntimeError, "STABLEHLO_SCATTER"),
  ("gnn", "batch"): (RuntimeError, "STABLEHLO_SCATTER"),
  ("nnx_cnn", "spatial"): (lite.TFLiteConversionError, "vhlo.dynamic_conv_v2"),
  ("vae", "static"): (lite.TFLiteConversionError, "failed to legalize operation 'tfl.mul'"),
  ("vae", "batch"): (lite.TFLiteConversionError, "'arith.index_cast' op"),
  ("bilstm", "seq"): (lite.TFLiteConversionError, "vhlo.dynamic_slice_v1"),
  ("seq2seq", "batch"): (lite.TFLiteConversionError, "vhlo.dynamic_gather_v1"),
  ("seq2seq", "seq"): (lite.TFLiteConversionError, "vhlo.dynamic_gather_v1"),
  ("gpt_rotary", "batch"): (lite.TFLiteConversionError, "vhlo.dynamic_gather_v1"),
  ("gpt_rotary", "seq"): (lite.TFLiteConversionError, "vhlo.dynamic_gather_v1"),
}


def _rows():
  for route in ("graph", "native"):
    for name in models.REGISTRY:
      for variant in variants(name):
        marks = () if (name, variant, route) in FAST else (pytest.mark.slow,)
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
  fails = NATIVE_FAILS.get((name, variant)) if route == "native" else None
  if fails is None:
    _check_on_litert(name, variant, route)
    return
  error, match = fails
  with pytest.raises(error, match=match):
    _check_on_litert(name, variant, route)
