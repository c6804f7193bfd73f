"""8- and 16-bit integers in int32 lanes, for graphs that TFLite runs.

TFLite's builtin kernels take int8 and int16 in most arithmetic (ADD, MUL,
MAXIMUM, NEG, ...) only quantized, and uint8 and uint16 in few; its CAST
converts int32 to each of them and back, keeping the low bits. So where
TFLite runs the graph, a primitive on these integers computes on int32
copies of its operands (sign- or zero-extended: exact), and each of its
narrow results is cast back. Integer arithmetic modulo 2**bits commutes with
taking the low bits, so sums, differences, products and powers wrap as in
JAX; negation, absolute value, max/min, comparisons, selections, bitwise
operations, shifts left and data movement see the same values; a division
or remainder of the extended values is the narrow one (x / 0 gives -1, all
bits set in every width; INT_MIN / -1 gives -INT_MIN, whose low bits are
INT_MIN's).

Not widened: rules registered with `narrow_ints_in_int32=False` (those that read
the width: population_count, clz, mulhi, bitcasts, random bits), and, per
equation, where a rule's `narrow_ints_in_int32` predicate says its result
depends on the width: a logical shift right of signed or an arithmetic one
of unsigned integers (the sign bit is the narrow type's), a conversion from
floats (it saturates at the narrow type's bounds), and whatever surfaces the
narrow type's extremes as an identity or a fill (a max or min over an axis
that may be empty, windows that may hold only padding, a gather's default
fill).
"""

import numpy as np

from jax2tf.graph import lanes

NARROW = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16))
_LANES = lanes.Lanes(NARROW, np.dtype(np.int32))
is_narrow = _LANES.is_narrow
widened_aval = _LANES.widened_aval
widened_params = _LANES.widened_params
widen = _LANES.widen
narrow = _LANES.narrow  # casts back to the narrow type: its low bits


def widens(eqn, rule) -> bool:
  """Whether `eqn` computes in int32 lanes with its `rule` (registry.Rule)."""
  return _LANES.opted_in(eqn, rule.accepts.narrow_ints_in_int32)


# Predicates for rules whose result depends on the width only sometimes.


def operand_is_signed(eqn) -> bool:
  return np.dtype(eqn.invars[0].aval.dtype).kind == "i"


def operand_is_unsigned(eqn) -> bool:
  return np.dtype(eqn.invars[0].aval.dtype).kind == "u"


def operand_is_integral(eqn) -> bool:
  """For conversions: from integers or booleans (exact), not from floats."""
  return np.dtype(eqn.invars[0].aval.dtype).kind in "iub"


def reduces_no_empty_axis(eqn) -> bool:
  """For max and min reductions: every reduced axis is static and nonempty,
  so the identity (the narrow type's extreme) never surfaces."""
  shape = eqn.invars[0].aval.shape
  return all(isinstance(shape[a], int) and shape[a] > 0 for a in eqn.params["axes"])


def windows_hold_operand_values(eqn) -> bool:
  """For max and min windows: no padding and no base dilation, so every
  window holds operand values and the identity never surfaces."""
  p = eqn.params
  return all(lo == 0 and hi == 0 for lo, hi in p["padding"]) and all(
    d == 1 for d in p.get("base_dilation", ())
  )


def gather_fill_is_given(eqn) -> bool:
  """For gathers: out-of-bounds windows, if any, take a fill value given as
  a parameter, not the narrow type's extreme (FILL_OR_DROP's default)."""
  return not lanes.gather_fills(eqn) or eqn.params.get("fill_value") is not None
