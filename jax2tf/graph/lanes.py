"""Narrow dtypes computed in a wide one, for graphs that TFLite runs: what
float_lanes.py (16-bit floats in float32), int_lanes.py (8- and 16-bit
integers in int32) and ordered_lanes.py (uint32 as int32 keys) share."""

import dataclasses

import numpy as np
import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class Lanes:
  narrow_dtypes: tuple[np.dtype, ...]
  wide_dtype: np.dtype

  def is_narrow(self, aval) -> bool:
    """Whether `aval` holds one of the narrow dtypes."""
    dtype = getattr(aval, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype in self.narrow_dtypes

  def opted_in(self, eqn, allowed) -> bool:
    """Whether `eqn` reads or writes a narrow dtype and `allowed` (its rule's
    flag: a bool, or a predicate of the equation) lets it compute in the lanes."""
    if not any(self.is_narrow(v.aval) for v in (*eqn.invars, *eqn.outvars)):
      return False
    return bool(allowed(eqn) if callable(allowed) else allowed)

  def widened_aval(self, aval):
    return aval.update(dtype=self.wide_dtype) if self.is_narrow(aval) else aval

  def widened_params(self, params: dict) -> dict:
    """`params` with every narrow dtype (new_dtype, preferred_element_type,
    index_dtype, ...) made the wide one, so that the rule computes in the lanes."""
    return {
      k: self.wide_dtype if isinstance(v, np.dtype) and v in self.narrow_dtypes else v
      for k, v in params.items()
    }

  def widen(self, x):
    """A narrow tensor in the wide dtype (exact); anything else as it is."""
    if isinstance(x, tf.Tensor) and np.dtype(x.dtype.as_numpy_dtype) in self.narrow_dtypes:
      return tf.cast(x, tf.as_dtype(self.wide_dtype))
    return x

  def narrow(self, x, aval):
    """A result computed in the lanes, cast to `aval`'s narrow dtype."""
    if self.is_narrow(aval) and isinstance(x, tf.Tensor) and x.dtype != aval.dtype:
      return tf.cast(x, tf.as_dtype(aval.dtype))
    return x


def gather_fills(eqn) -> bool:
  """For gathers: whether out-of-bounds windows are filled (FILL_OR_DROP),
  with the `fill_value` parameter or the dtype's default."""
  from jax import lax

  return lax.GatherScatterMode.from_any(eqn.params["mode"]) == lax.GatherScatterMode.FILL_OR_DROP
