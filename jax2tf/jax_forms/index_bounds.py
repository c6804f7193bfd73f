"""Start indices bounded as XLA bounds them, for kernels that bound them otherwise.

XLA clamps a dynamic slice's starts into the operand, comparing in the
starts' own type, and skips a scatter's update window whole when any part
of it falls outside the operand (`mode="drop"`). The TFLite converters cast
the starts to int32 before clamping (a uint32 start of 4e9 wraps to a
negative one and clamps to 0, not to the last window), and LiteRT's scatter
kernel drops the outside elements one by one, writing the inside part of a
window XLA skips. The forms below give those kernels starts on which their
way agrees with XLA's.
"""

import jax.numpy as jnp
import numpy as np
from jax import lax


def needs_narrowing(dtype) -> bool:
  """Whether starts of `dtype` lose values in an int32 cast (unsigned or
  64-bit ones)."""
  dtype = np.dtype(dtype)
  return dtype.kind == "u" or dtype.itemsize > 4


def clamped_int32_starts(starts, operand_shape, window_shape):
  """`starts` clamped into [0, operand - window] in their own type, as XLA
  clamps them, then as int32 (which then holds them)."""
  clamped = []
  for start, size, window in zip(starts, operand_shape, window_shape):
    top = np.array(int(size) - int(window)).astype(start.dtype)
    lowest = np.array(0).astype(start.dtype)
    clamped.append(lax.convert_element_type(jnp.clip(start, lowest, top), np.int32))
  return clamped


def scatter_window_shape(operand_shape, updates_shape, dimension_numbers) -> list[int]:
  """The extent of an update window along each operand dimension."""
  dn = dimension_numbers
  unwindowed = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
  window_dims = iter(dn.update_window_dims)
  return [
    1 if d in unwindowed else int(updates_shape[next(window_dims)])
    for d in range(len(operand_shape))
  ]


def has_partial_windows(operand_shape, updates_shape, dimension_numbers) -> bool:
  """Whether a window can lie partly outside the operand: it spans more
  than one position along a dimension its indices place it on."""
  window = scatter_window_shape(operand_shape, updates_shape, dimension_numbers)
  return any(window[d] > 1 for d in dimension_numbers.scatter_dims_to_operand_dims)


def drop_partial_windows(indices, operand_shape, updates_shape, dimension_numbers):
  """`indices` (index vectors along the last axis) as int32, where each
  window that XLA skips (any part outside the operand) starts past the
  operand's end along its first indexed dimension, so that every element
  of it is outside."""
  dn = dimension_numbers
  window = scatter_window_shape(operand_shape, updates_shape, dn)
  # Compared in their own type where an int32 cast could wrap them into
  # the operand, else in int32, which holds every bound.
  if not needs_narrowing(indices.dtype):
    indices = lax.convert_element_type(indices, np.int32)
  inside = jnp.ones(indices.shape[:-1], bool)
  for k, d in enumerate(dn.scatter_dims_to_operand_dims):
    top = int(operand_shape[d]) - window[d]
    if top < 0:
      return _past_end(indices, operand_shape[dn.scatter_dims_to_operand_dims[0]])
    start = indices[..., k]
    inside &= (start >= np.array(0).astype(start.dtype)) & (
      start <= np.array(top).astype(start.dtype)
    )
  indices = lax.convert_element_type(indices, np.int32)
  first = dn.scatter_dims_to_operand_dims[0]
  return jnp.where(inside[..., None], indices, _past_end(indices, operand_shape[first]))


def _past_end(indices, size):
  indices = lax.convert_element_type(indices, np.int32)
  end = jnp.full_like(indices[..., :1], int(size))
  return jnp.concatenate([end, indices[..., 1:]], axis=-1)
