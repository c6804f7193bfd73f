"""Element types of MLIR tensor types, by NumPy's names.

Both converters speak MLIR: TF's TFLite converter quotes the refused ops
with their operand types ("tf.Minimum(tensor<3xui8>, ...)"), and
litert-converter's module holds them on every op. A refusal names the dtypes
as JAX users know them ("uint8"). No TensorFlow here.
"""

import re

# "tensor<3x?xui8>" -> "ui8"; "tensor<complex<f32>>" -> "complex<f32>".
_TENSOR = re.compile(r"tensor<(?:[?\d]+x)*([^<>]+(?:<[^<>]+>)?)>")
_NAMED = {
  "i1": "bool",
  "f16": "float16",
  "bf16": "bfloat16",
  "f32": "float32",
  "f64": "float64",
  "complex<f32>": "complex64",
  "complex<f64>": "complex128",
}


def dtype_name(element: str) -> str:
  """NumPy's name of an MLIR element type ("ui8" -> "uint8"); TF's own
  types ("!tf_type.variant") without their prefix."""
  if element in _NAMED:
    return _NAMED[element]
  found = re.fullmatch(r"(u?)i(\d+)", element)
  if found:
    return f"{'uint' if found[1] else 'int'}{found[2]}"
  return element.removeprefix("!tf_type.")


def tensor_dtypes(text: str) -> list[str]:
  """The dtypes of the tensor types written in `text`, each once, in order."""
  return list(dict.fromkeys(dtype_name(t) for t in _TENSOR.findall(text)))
