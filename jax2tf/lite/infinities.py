"""Infinite constants, which TF's TFLite converter writes as finite floats.

The converter (both routes) stores each +-inf element of a float32 constant
as +-3.4028235e38, the largest finite float32: `where(x > 0, inf, x)` gives
3.4e38 on LiteRT, `x * inf` gives 0 at x = 0 where JAX gives NaN. The
converted function's own constants (its literals, closed-over arrays and
parameters) tell whether it could mean that finite value: where none of them
is +-3.4028235e38, every constant element of that value in the flatbuffer
was an infinity, and `to_tflite` writes it back as one. Where one is, the two
cannot be told apart: the constants stay as the converter wrote them, and
`to_tflite` warns.

Rules that compare with an infinite constant compare with `>=` (or `<=`),
which holds both ways: for inf itself, and for the value the converter may
leave.
"""

import warnings

import jax.numpy as jnp
import numpy as np
from jax.extend import core as jax_core

from jax2tf import provenance
from jax2tf.lite import flatbuffer
from jax2tf.lite.flatbuffer import TensorType

_LARGEST = np.float32(np.finfo(np.float32).max)


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


def _is_largest(value) -> bool:
  a = np.asarray(value)
  if not jnp.issubdtype(a.dtype, np.floating):
    return False
  with np.errstate(over="ignore"):
    return bool((np.abs(a.astype(np.float32)) == _LARGEST).any())


def held_by(closed) -> bool:
  """Whether the closed jaxpr `closed` holds a constant of +-3.4028235e38 (the
  largest finite float32, as any float type): then its infinities cannot be
  restored. True for None (a function JAX cannot trace): unknown, so the
  converter's constants stay."""
  if closed is None:
    return True
  return any(_is_largest(v) for v in _values(closed))


def _largest_constants(model):
  """(buffer, values) for each float32 constant buffer holding +-3.4028235e38."""
  for buffer, values in flatbuffer.constant_buffers(model, TensorType.FLOAT32):
    if (np.abs(values) == _LARGEST).any():
      yield buffer, values


def restore(model) -> bool:
  """Writes each +-3.4028235e38 element of the model's float32 constants back
  as +-inf; whether any changed."""
  changed = False
  for buffer, values in _largest_constants(model):
    largest = np.abs(values) == _LARGEST
    values[largest] = np.copysign(np.inf, values[largest])
    buffer.data = np.frombuffer(values.tobytes(), dtype=np.uint8)
    changed = True
  return changed


def warn_unrestored(model) -> None:
  """Warns where the model holds +-3.4028235e38 that may stand for +-inf."""
  for _ in _largest_constants(model):
    warnings.warn(
      "to_tflite: the function holds the constant +-3.4028235e38 (the largest "
      "float32), and TF's TFLite converter writes infinite constants as that value "
      "too; the model's constants keep it, so infinities that JAX takes from "
      "constants come out finite on LiteRT",
      stacklevel=5,
    )
    return
