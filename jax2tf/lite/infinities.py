"""Infinite constants, which TF's TFLite converter writes as finite floats.

The converter (both routes) stores each +-inf element of a float constant as
that type's largest finite value: +-3.4028235e38 in float32, +-65504 in
float16, +-3.3895314e38 in bfloat16. `where(x > 0, inf, x)` gives 3.4e38 on
LiteRT, `x * inf` gives 0 at x = 0 where JAX gives NaN, and the maximum of an
empty bfloat16 slice gives -3.39e38 where JAX gives -inf. The converted
function's own constants (its literals, closed-over arrays and parameters)
tell whether it could mean that finite value: where none of them is, in that
type, its largest finite value, every constant element of that value in the
flatbuffer was an infinity, and `to_tflite` writes it back as one. Where one
is, the two cannot be told apart: that type's constants stay as the converter
wrote them, and `to_tflite` warns.

Rules that compare with an infinite constant compare with `>=` (or `<=`),
which holds both ways: for inf itself, and for the value the converter may
leave.
"""

import warnings

import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax.extend import core as jax_core

from jax2tf.deploy import provenance
from jax2tf.lite import flatbuffer

# The flatbuffer's float types, each with its largest finite value.
_LARGEST = {
  tensor_type: ml_dtypes.finfo(dtype).max for tensor_type, dtype in flatbuffer.FLOAT_TYPES.items()
}
EVERY_TYPE = frozenset(_LARGEST)


def _values(closed) -> list:
  """The constant arrays of a closed jaxpr: its consts, those of the jaxprs
  nested in its equations, and the literals the equations apply."""
  found = list(closed.consts)
  for eqn in provenance.equations(closed.jaxpr):
    found.extend(v.val for v in eqn.invars if isinstance(v, jax_core.Literal))
    for param in eqn.params.values():
      for value in param if isinstance(param, (tuple, list)) else [param]:
        found.extend(getattr(value, "consts", []))
  return found


def _is_largest(value, tensor_type) -> bool:
  # Rounded to the type first: float32 65510 is float16's 65504.
  a = np.asarray(value)
  if not jnp.issubdtype(a.dtype, np.floating):
    return False
  dtype = flatbuffer.FLOAT_TYPES[tensor_type]
  with np.errstate(over="ignore"):
    return bool((np.abs(a.astype(dtype)) == _LARGEST[tensor_type]).any())


def restorable(closed) -> frozenset:
  """The flatbuffer float types (TensorType values) whose infinite constants
  can be restored: those whose largest finite value no constant of the closed
  jaxpr `closed` holds (as any float type, rounded to that type). None for
  `closed` (a function JAX cannot trace) gives none: unknown, so the
  converter's constants stay."""
  if closed is None:
    return frozenset()
  values = _values(closed)
  return frozenset(t for t in EVERY_TYPE if not any(_is_largest(v, t) for v in values))


def _largest_constants(model, types):
  """(buffer, values, largest) for each constant buffer of one of `types`
  holding that type's +-largest finite value."""
  for tensor_type in sorted(types):
    largest = _LARGEST[tensor_type]
    for buffer, values in flatbuffer.constant_buffers(model, tensor_type):
      if (np.abs(values) == largest).any():
        yield buffer, values, largest


def restore(model, types=EVERY_TYPE) -> bool:
  """Writes each +-largest finite element of the model's constants of
  `types` back as +-inf; whether any changed."""
  changed = False
  for buffer, values, largest in _largest_constants(model, types):
    at_largest = np.abs(values) == largest
    values[at_largest] = np.copysign(np.inf, values[at_largest]).astype(values.dtype)
    buffer.data = np.frombuffer(values.tobytes(), dtype=np.uint8)
    changed = True
  return changed


def warn_unrestored(model, types) -> None:
  """Warns where the model's constants of `types` hold their type's largest
  finite value, which may stand for an infinity."""
  for _, values, largest in _largest_constants(model, types):
    warnings.warn(
      f"to_tflite: the function holds the constant +-{float(largest):.8g} (the largest "
      f"{values.dtype.name}), and TF's TFLite converter writes infinite constants "
      "as that value too; the model's constants keep it, so infinities that JAX "
      "takes from constants come out finite on LiteRT",
      stacklevel=5,
    )
    return
