"""Converter and runtime quirks, each one predicate, written once.

Every route that meets a quirk asks the same predicate, through a thin
adapter for its IR: the graph route on a TF constant
(`tf.get_static_value`) or a TF op's inputs, the native route on a
StableHLO constant (jax2tf/native/stablehlo_values.py) or an op's operands.
No TensorFlow or JAX here.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ml_dtypes
import numpy as np


def tflite_drops_min_max_with(values: np.ndarray) -> bool:
  """Whether TF's TFLite converter drops a maximum or minimum that has the
  constant `values` as one operand.

  The converter (TF 2.21, from TF graphs and from StableHLO alike) treats
  a `Maximum`/`Minimum` whose other operand is a constant of infinities or
  of the largest finite floats as the identity of its varying operand,
  whatever the constant's signs: `min(x, -inf)` became `x`. This holds for
  every element of `values` an infinity or the largest finite float of its
  type (either sign); the routes then write the op as one comparison and a
  select, which the converter keeps. False for an empty array, for
  integers and booleans, and for any other float constant.
  """
  values = np.asarray(values)
  if values.size == 0:
    return False
  try:
    largest = float(ml_dtypes.finfo(values.dtype).max)
  except ValueError:  # not a float type: nothing to drop
    return False
  return bool((np.abs(values.astype(np.float64)) >= largest).all())


def reverse_runs(axes: Iterable[int]) -> list[list[int]]:
  """`axes` of one reverse as runs of adjacent axes, in increasing order:
  LiteRT's REVERSE_V2 fails at run time on axes that are not adjacent
  ("Non-contiguous `axes` not supported"), so each run is one reverse."""
  runs: list[list[int]] = []
  for axis in sorted(axes):
    if runs and runs[-1][-1] == axis - 1:
      runs[-1].append(axis)
    else:
      runs.append([axis])
  return runs


# How far a transpose may be from the op it moves to.
_TRANSPOSE_REACH = 16


def transpose_moves_below(
  value: Any,
  *,
  is_transpose: Callable[[Any], bool],
  varying_operands: Callable[[Any], Sequence[Any]],
) -> bool:
  """Whether TF's TFLite converter moves a transpose down to `value`, the
  second operand of a subtract or divide whose first is a constant, and then
  rebuilds the op with its operands swapped (3 - transpose(a) became a - 3,
  TF 2.21's push-transpose-through-ewise; the routes hide the transpose).

  The converter moves a transpose below every op whose other operands are
  constants: it reaches `value` where a transpose produces it through a
  chain of such ops. The IR's adapters say whether a value is a transpose's
  result, and which operands of the op producing it are not constants
  (none for an argument).
  """
  for _ in range(_TRANSPOSE_REACH):
    if is_transpose(value):
      return True
    varying = varying_operands(value)
    if len(varying) != 1:
      return False
    value = varying[0]
  return False
