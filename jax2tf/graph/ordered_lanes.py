"""uint32 values as int32 keys of the same order, for graphs that TFLite runs.

TFLite's TRANSPOSE, REVERSE_V2, PAD, GATHER, scatters, LESS, GREATER,
MAXIMUM, MINIMUM and REDUCE_MAX take int32 but not uint32. Flipping the top
bit maps uint32 onto int32 keeping the order (0 to INT32_MIN, 2**32 - 1 to
INT32_MAX), with TFLite's uint32 BITWISE_XOR and its BITCAST. So a primitive
whose results depend only on the order, equality and places of its uint32
values (data movement, comparisons, max and min, their reductions, windows
and running forms, sorting) computes on those keys, and each uint32 result
is mapped back. The identities agree: uint32's for max, 0, is int32's
INT32_MIN; its for min, 2**32 - 1, is INT32_MAX.

Only rules registered with `uint32_as_order_keys` (True, or a predicate of the
equation) take keys: not arithmetic or bit operations (keys do not add),
conversions, uint32 values that index (the starts of slices, gathers and
scatters, the result of an argmax), nor a gather's fill (a parameter, not
an operand).
"""

import numpy as np
import tensorflow as tf

from jax2tf.graph import lanes

_TOP_BIT = 1 << 31


class _OrderKeys(lanes.Lanes):
  def widen(self, x):
    """A uint32 tensor as int32 keys of the same order; anything else as it is."""
    if isinstance(x, tf.Tensor) and x.dtype == tf.uint32:
      return tf.bitcast(tf.bitwise.bitwise_xor(x, tf.constant(_TOP_BIT, tf.uint32)), tf.int32)
    return x

  def narrow(self, x, aval):
    """Keys computed for a uint32 result, as that uint32 value."""
    if self.is_narrow(aval) and isinstance(x, tf.Tensor) and x.dtype == tf.int32:
      return tf.bitwise.bitwise_xor(tf.bitcast(x, tf.uint32), tf.constant(_TOP_BIT, tf.uint32))
    return x


_LANES = _OrderKeys((np.dtype(np.uint32),), np.dtype(np.int32))
is_narrow = _LANES.is_narrow
widened_aval = _LANES.widened_aval
widened_params = _LANES.widened_params
widen = _LANES.widen
narrow = _LANES.narrow


def widens(eqn, rule) -> bool:
  """Whether `eqn` computes on int32 keys with its `rule` (registry.Rule)."""
  return _LANES.opted_in(eqn, rule.accepts.uint32_as_order_keys)


# Predicates for rules that take keys only sometimes.


def _uint32_among(variables) -> bool:
  return any(is_narrow(v.aval) for v in variables)


def slice_starts_are_not_uint32(eqn) -> bool:
  """For dynamic_slice (operand, *starts)."""
  return not _uint32_among(eqn.invars[1:])


def update_starts_are_not_uint32(eqn) -> bool:
  """For dynamic_update_slice (operand, update, *starts)."""
  return not _uint32_among(eqn.invars[2:])


def scatter_indices_are_not_uint32(eqn) -> bool:
  """For scatters (operand, indices, updates)."""
  return not is_narrow(eqn.invars[1].aval)


def gather_takes_no_fill(eqn) -> bool:
  """For gathers (operand, indices): indices not uint32, and no window out
  of bounds filled (the fill is a uint32 parameter, which the keys would
  misread)."""
  return not is_narrow(eqn.invars[1].aval) and not lanes.gather_fills(eqn)


def index_is_not_uint32(eqn) -> bool:
  """For argmax and argmin: a uint32 result is an index, not a key."""
  return np.dtype(eqn.params["index_dtype"]) != np.uint32
