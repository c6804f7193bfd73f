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


# Rows the litert route cannot take (litert-converter 0.5.0, LiteRT 2.3),
# pinned with what stops them, as measured:
_REFUSED = litert_converter.LiteRTConversionError
LITERT_FAILS = {
  # Polymorphic gathers, slices and convolutions: the converter leaves JAX's
  # dynamic StableHLO ops as VHLO ops that LiteRT has no operator for (and
  # refuses a gather of a dynamically shaped operand outright).
  ("actor_critic", "batch"): (_REFUSED, "vhlo.dynamic_gather_v1"),
  ("gnn", "batch"): (_REFUSED, "'mhlo.gather' op Dynamic shaped operand is not supported"),
  ("nnx_cnn", "spatial"): (_REFUSED, "vhlo.dynamic_conv_v2"),
  ("bilstm", "seq"): (_REFUSED, "vhlo.dynamic_slice_v1"),
  ("seq2seq", "batch"): (_REFUSED, "vhlo.dynamic_gather_v1"),
  ("seq2seq", "seq"): (_REFUSED, "vhlo.dynamic_slice_v1"),
  ("gpt_rotary", "batch"): (_REFUSED, "vhlo.dynamic_gather_v1"),
  ("gpt_rotary", "seq"): (_REFUSED, "vhlo.dynamic_gather_v1"),
  # Loops (the scans of the recurrent models): the flatbuffer exporter fails,
  # without a reason, on the module's tfl.while.
  ("bilstm", "static"): (_REFUSED, "tfl.while"),
  ("bilstm", "batch"): (_REFUSED, "tfl.while"),
  ("seq2seq", "static"): (_REFUSED, "tfl.while"),
  # The VAE's PRNG: TFLite has no uint64 MUL for threefry's counters, and the
  # converter's own shape arithmetic of the polymorphic module is ill-typed.
  ("vae", "static"): (_REFUSED, "tfl.mul on uint64"),
  ("vae", "batch"): (_REFUSED, "'arith.index_cast' op"),
  # LiteRT's STABLEHLO_SCATTER kernel refuses the GNN's segment sum.
  ("gnn", "static"): (RuntimeError, "STABLEHLO_SCATTER"),
}

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
