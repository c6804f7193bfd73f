"""Post-training quantization of the litert route's float flatbuffer, without
TensorFlow.

TF's converter quantizes while it converts (lite/converter.py); the standalone
litert-converter writes float models only. `ai-edge-quantizer` (pip; no
TensorFlow: it reads and writes `.tflite` flatbuffers and calibrates on
LiteRT's interpreter) quantizes the written model instead, by a recipe: which
operators, which tensors, how many bits. Each of `to_tflite`'s modes maps on
the recipe that makes what TF's converter makes for it:

- "float16": the weights of FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D,
  TRANSPOSE_CONV and EMBEDDING_LOOKUP stored as float16 and DEQUANTIZEd to
  float32 before the operator (the quantizer's float-casting algorithm); the
  arithmetic stays float32, as with TF's `supported_types=[tf.float16]`.
- "dynamic_int8": those weights as int8, symmetric, one scale per output
  channel, with the activations quantized to int8 by the kernels at run time
  (compute precision integer, no explicit dequantize): TF's dynamic-range
  quantization (`Optimize.DEFAULT` without data).
- "int8": weights as above and activations as int8 with ranges calibrated on
  `representative_dataset` (static, asymmetric activations: LiteRT's int8
  kernels take no other), every supported operator; the model's inputs and
  outputs stay float32, the quantizer adding a QUANTIZE after each input and
  a DEQUANTIZE before each output, as TF's converter does with its default
  inference types.

Nothing here imports TensorFlow.
"""

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from jax2tf.lite import calibration, flatbuffer
from jax2tf.lite.litert_converter import SIGNATURE, LiteRTConversionError

INSTALL = 'pip install "jax2tf[litert]" (the ai-edge-quantizer package)'


def _api():
  try:
    # pylint: disable=import-outside-toplevel
    from ai_edge_quantizer import qtyping, quantizer, recipe_manager
    from ai_edge_quantizer.algorithm_manager import AlgorithmName
  except ModuleNotFoundError as e:
    raise ImportError(
      f'to_tflite(route="litert", quantize=...) needs the AI Edge Quantizer: {INSTALL}',
      name="ai_edge_quantizer",
    ) from e
  return qtyping, quantizer, recipe_manager, AlgorithmName


def require() -> None:
  """Raises the ImportError that names the extra to install where
  ai-edge-quantizer is missing."""
  _api()


def is_installed() -> bool:
  try:
    require()
  except ImportError:
    return False
  return True


def recipe(quantize: str) -> list:
  """The quantizer's recipe for `to_tflite`'s `quantize` mode."""
  qtyping, _, recipe_manager, algorithm = _api()
  every_op = qtyping.TFLOperationName.ALL_SUPPORTED
  manager = recipe_manager.RecipeManager()
  if quantize == "float16":
    # Float casting is the quantizer's only float16 algorithm, and it keeps
    # the computation in float32 (weight-only, explicit DEQUANTIZE): only
    # the weights lose precision, as with TF's float16 quantization.
    manager.add_weight_only_config(
      regex=".*", operation_name=every_op, num_bits=16, algorithm_key=algorithm.FLOAT_CASTING
    )
  elif quantize == "dynamic_int8":
    # int8 weights with integer compute and no explicit dequantize: the
    # kernels quantize the float activations on the fly, which is TF's
    # dynamic-range quantization. (Weight-only int8 would dequantize the
    # weights and compute in float: no faster than float16, four times
    # smaller.) Channelwise weights: what TF's converter writes too.
    manager.add_dynamic_config(regex=".*", operation_name=every_op, num_bits=8)
  elif quantize == "int8":
    # Static int8 activations and weights: the calibrated, full-integer model
    # that TF's converter writes with a representative dataset. 8-bit
    # activations (not 16): LiteRT's int8 kernels, as TF's TFLITE_BUILTINS_INT8.
    manager.add_static_config(
      regex=".*", operation_name=every_op, activation_num_bits=8, weight_num_bits=8
    )
    # The model's own inputs and outputs stay float32, as on the other
    # routes: the quantizer then quantizes each input after it is read and
    # dequantizes each output before it is returned.
    for boundary in (qtyping.TFLOperationName.INPUT, qtyping.TFLOperationName.OUTPUT):
      manager.add_quantization_config(".*", boundary, algorithm_key=algorithm.NO_QUANTIZE)
  else:
    raise ValueError(f"quantize: no recipe for {quantize!r}")
  return manager.get_quantization_recipe()


def quantize(
  content: bytes,
  quantize: str,
  *,
  input_names: Sequence[str],
  representative_dataset: Callable | None = None,
  signature: str = SIGNATURE,
) -> bytes:
  """The float flatbuffer `content` quantized by `quantize`'s recipe; for
  "int8", calibrated on `representative_dataset()` (samples of one array per
  input, in `input_names`' order, or dicts by input name).

  Raises:
    ValueError: a sample does not fit the model's inputs.
    LiteRTConversionError: the quantizer refused the model.
    ImportError: ai-edge-quantizer is not installed.
  """
  _, quantizer, _, _ = _api()
  content = with_unique_tensor_names(content)
  q = quantizer.Quantizer(bytearray(content), recipe(quantize))
  calibration = None
  samples = None
  if q.need_calibration:
    if representative_dataset is None:
      raise ValueError(f"quantize={quantize!r} needs representative_dataset")
    samples = list(_samples(content, representative_dataset, input_names, signature))
  with warnings.catch_warnings():
    # The calibrator keeps every intermediate tensor, and LiteRT's
    # interpreter warns that this is for debugging.
    warnings.filterwarnings("ignore", message=".*experimental_preserve_all_tensors")
    if samples is not None:
      try:
        calibration = q.calibrate({signature: samples})
      except Exception as e:  # the quantizer raises plain ValueErrors and RuntimeErrors
        raise _refusal(quantize, "cannot calibrate", e) from e
    try:
      result = q.quantize(calibration, enable_progress_report=False)
    except Exception as e:  # the quantizer raises plain ValueErrors and RuntimeErrors
      raise _refusal(quantize, "cannot quantize", e) from e
  return bytes(result.quantized_model)


def with_unique_tensor_names(content: bytes) -> bytes:
  """`content` with no two tensors of one name. The quantizer finds tensors
  by name and refuses a model where two share one ("Tensor name ... is not
  unique"), and litert-converter names constants after their MLIR op, twice
  at times (ResNet-50: two `arith.constant1`). The later ones get a suffix;
  the subgraphs' inputs and outputs keep their names."""
  model = flatbuffer.load(content)
  if not flatbuffer.rewritable(model):
    return content
  subgraphs = model.subgraphs or []
  kept = {
    (k, i)
    for k, s in enumerate(subgraphs)
    for i in [*flatbuffer.ints(s.inputs), *flatbuffer.ints(s.outputs)]
  }
  taken = {subgraphs[k].tensors[i].name for k, i in kept}
  renamed = 0
  for k, s in enumerate(subgraphs):
    for i, t in enumerate(s.tensors or []):
      if (k, i) in kept or t.name is None:
        continue
      if t.name in taken:
        n = 1
        while t.name + b"_%d" % n in taken:
          n += 1
        t.name += b"_%d" % n
        renamed += 1
      taken.add(t.name)
  return flatbuffer.dump(model, len(content)) if renamed else content


def _refusal(quantize: str, what: str, error: Exception) -> LiteRTConversionError:
  detail = str(error).strip().splitlines()
  return LiteRTConversionError(
    f"to_tflite (route 'litert'): ai-edge-quantizer {what} the model for "
    f"quantize={quantize!r}: {detail[-1] if detail else type(error).__name__}\n"
    "Remedies: route='graph' or route='native' (TF's converter quantizes, with TensorFlow "
    "installed); static input shapes (no polymorphic_shapes); another quantize mode."
  )


def _samples(content: bytes, dataset: Callable, names: Sequence[str], signature: str):
  """{input name: array} per sample, each checked against the model's input:
  the calibrator would otherwise resize the model to whatever comes, and fail
  in LiteRT's delegate with a message that names neither sample nor input."""
  from jax2tf.lite import inspect as lite_inspect  # pylint: disable=import-outside-toplevel

  inputs = {t["name"]: t for t in lite_inspect.signatures(content)[signature]["inputs"]}
  shapes = {n: [None if d == -1 else d for d in inputs[n]["shape_signature"]] for n in names}
  dtypes = {n: np.dtype(inputs[n]["dtype"]) for n in names}
  return calibration.samples(dataset, names, shapes, dtypes)
