"""to_tflite(route="litert", quantize=...): the litert-converter's float model
quantized by ai-edge-quantizer (lite/litert_quantize.py), without TensorFlow.

The model set's MLP and CNN are held to the accuracy criteria of the other
routes' quantized models (benchmarks/tflite_quantization.py, which
tests/lite/test_quantization.py applies there), against `jax.jit` on the
same fixed batch. `make test-litert` runs them where TensorFlow is not
installed; where litert-converter or ai-edge-quantizer is missing they are
skipped.
"""

import functools
import sys

import numpy as np
import pytest

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from benchmarks import models  # noqa: E402
from benchmarks import tflite_quantization as tq  # noqa: E402
from jax2tf import lite  # noqa: E402
from jax2tf.lite import api as lite_api  # noqa: E402
from jax2tf.lite import flatbuffer, litert_converter, litert_quantize  # noqa: E402
from jax2tf.lite import inspect as lite_inspect  # noqa: E402

NEEDS_QUANTIZER = pytest.mark.skipif(
  not litert_quantize.is_installed(),
  reason='quantizing on the litert route needs ai-edge-quantizer: pip install "jax2tf[litert]"',
)
MODES = ("float16", "dynamic_int8", "int8")
# Calibration: batches shaped like the model's input (static shapes), drawn
# like the inputs but from other seeds than the judged batch.
CALIBRATION_BATCHES = 4


def _batch(m, seed_shift=0):
  return tq.batch_of(m, tq.BATCH, seed_shift=seed_shift)


@pytest.fixture(scope="module", params=["mlp", "cnn"])
def float_model(request):
  m = models.get(request.param)
  return request.param, jax2tf.to_tflite(m.fn, *_batch(m), params=m.params, route="litert")


@functools.cache
def _quantized(name, quantize):
  m = models.get(name)
  calibration = [_batch(m, seed_shift=100 + i) for i in range(CALIBRATION_BATCHES)]
  return jax2tf.to_tflite(
    m.fn,
    *_batch(m),
    params=m.params,
    route="litert",
    quantize=quantize,
    representative_dataset=(lambda: calibration) if quantize == "int8" else None,
  )


def _tensor_types(model) -> set[str]:
  names = {v: k.lower() for k, v in vars(flatbuffer.TensorType).items() if not k.startswith("_")}
  return {names[t.type] for s in flatbuffer.load(bytes(model)).subgraphs for t in s.tensors}


@NEEDS_QUANTIZER
@pytest.mark.parametrize("quantize", MODES)
def test_quantized_model_meets_the_other_routes_criterion(float_model, quantize):
  name, full = float_model
  model = _quantized(name, quantize)
  assert model.route == "litert" and model.quantize == quantize
  # The verification judged shapes and dtypes only, as on the other routes.
  assert model.max_error is None
  metric, value, ok = tq.accuracy(name, model)
  assert ok, f"{name}, quantize={quantize}: {metric} {value:.4g}"
  # Inputs and outputs stay float, as on the other routes.
  [signature] = lite_inspect.signatures(model).values()
  assert {t["dtype"] for t in signature["inputs"] + signature["outputs"]} == {"float32"}
  # Weights: half the bytes in float16, a quarter in int8 (channel scales aside).
  weights, full_weights = lite_inspect.constants(model)[1], lite_inspect.constants(full)[1]
  if quantize == "float16":
    assert weights < 0.55 * full_weights, (weights, full_weights)
    assert len(model) < 0.6 * len(full), (len(model), len(full))
  else:
    assert weights < 0.27 * full_weights, (weights, full_weights)
    assert len(model) < 0.33 * len(full), (len(model), len(full))


@NEEDS_QUANTIZER
@pytest.mark.parametrize("quantize", MODES)
def test_tensor_types_are_the_modes(float_model, quantize):
  name, full = float_model
  types = _tensor_types(_quantized(name, quantize))
  assert "int8" not in _tensor_types(full) and "float16" not in _tensor_types(full)
  if quantize == "float16":
    assert "float16" in types and "int8" not in types, types
  elif quantize == "dynamic_int8":
    # int8 weights, float32 activations.
    assert {"int8", "float32"} <= types and "float16" not in types, types
  else:
    # int8 activations too: QUANTIZE after the inputs, DEQUANTIZE before the outputs.
    assert "int8" in types, types
    ops = lite_inspect.op_counts(_quantized(name, quantize))
    assert ops["QUANTIZE"] >= 1 and ops["DEQUANTIZE"] >= 1, ops


@NEEDS_QUANTIZER
def test_tensors_sharing_a_name_are_renamed_before_quantizing():
  # litert-converter names constants after their MLIR op, at times twice
  # (ResNet-50's 'arith.constant1'); the quantizer refuses such a model.
  m = models.get("mlp")
  inputs = _batch(m)
  model = flatbuffer.load(bytes(jax2tf.to_tflite(m.fn, *inputs, params=m.params, route="litert")))
  [graph] = model.subgraphs
  ends = {*flatbuffer.ints(graph.inputs), *flatbuffer.ints(graph.outputs)}
  inner = [t for i, t in enumerate(graph.tensors) if i not in ends]
  for t in inner:
    t.name = b"arith.constant1"
  shared = flatbuffer.dump(model)
  unique = litert_quantize.with_unique_tensor_names(shared)
  names = [t.name for t in flatbuffer.load(unique).subgraphs[0].tensors]
  assert len(set(names)) == len(names), names
  # Only the names change: the same numbers, the same signature.
  assert lite_inspect.signatures(unique) == lite_inspect.signatures(shared)
  np.testing.assert_array_equal(lite.run(unique, *inputs), lite.run(shared, *inputs))
  quantized = litert_quantize.quantize(shared, "float16", input_names=["x0"])
  assert "float16" in _tensor_types(quantized)


@NEEDS_QUANTIZER
def test_calibration_samples_must_fit_the_models_inputs():
  m = models.get("mlp")
  one = tq.batch_of(m, 1)
  with pytest.raises(
    ValueError,
    match=r"sample 0, input 'x0': got float32\[1, 64\], but the "
    r"model takes float32\[16, 64\]",
  ):
    jax2tf.to_tflite(
      m.fn,
      *_batch(m),
      params=m.params,
      route="litert",
      quantize="int8",
      representative_dataset=lambda: [one],
    )
  with pytest.raises(ValueError, match="sample 0 has 2 array"):
    jax2tf.to_tflite(
      m.fn,
      *_batch(m),
      params=m.params,
      route="litert",
      quantize="int8",
      representative_dataset=lambda: [(one[0], one[0])],
    )


def test_missing_quantizer_names_the_extra(monkeypatch):
  # As if not installed: an import of a module mapped to None fails.
  monkeypatch.setitem(sys.modules, "ai_edge_quantizer", None)
  converted = []
  monkeypatch.setattr(litert_converter, "convert", lambda *a, **k: converted.append(1))
  x = np.ones((2, 3), np.float32)
  with pytest.raises(ImportError, match=r'pip install "jax2tf\[litert\]" \(the ai-edge-quantizer'):
    jax2tf.to_tflite(lambda x: x * 2, x, route="litert", quantize="dynamic_int8")
  assert not converted, "the conversion ran before the missing quantizer was named"
  # Unquantized, the route needs no quantizer.
  monkeypatch.undo()
  assert jax2tf.to_tflite(lambda x: x * 2, x, route="litert").quantize is None


def test_parameters_beyond_one_flatbuffer_fail_before_any_work_on_the_litert_route(monkeypatch):
  # A broadcast view reports 2 GiB without holding it.
  huge = {"w": np.broadcast_to(np.float32(0), (2**29 + 1,))}
  monkeypatch.setattr(lite_api, "_litert_module", lambda *a: pytest.fail("converted"))
  for quantize in (None, "dynamic_int8"):
    with pytest.raises(ValueError, match=r"params: 2.00 GiB .* at most 2 GiB"):
      jax2tf.to_tflite(
        lambda p, x: x + p["w"][0],
        np.ones((2,), np.float32),
        params=huge,
        route="litert",
        quantize=quantize,
      )
