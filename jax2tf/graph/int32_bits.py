"""32-bit integer operations on int32 tensors, from ops that TF.js computes exactly.

TF.js holds no unsigned tensors (uint32 values travel as int32 tensors of the
same bits), has no working bitwise op (no BitwiseXor, BitwiseOr, Invert,
LeftShift, RightShift or Bitcast kernel; its BitwiseAnd always fails, see
jax2tf/tfjs/ops.py), and computes int32 arithmetic in JavaScript numbers or
in float32: its cpu backend's product of two large int32s loses low bits, its
wasm FloorDiv rounds large quotients, its cpu Cast to float32 does not round.
What stays exact on every backend: int32 addition and subtraction (wrapping
modulo 2**32), products with a power of two and products below 2**32,
comparisons, and float32 arithmetic on integers below 2**24. So a 32-bit
value is taken apart into its 16-bit halves (a float estimate of the high
half, corrected by one step), bitwise operations combine the halves' bit
planes arithmetically (and: p * q, xor: p + q - 2pq, or: p + q - pq), and

    a << s == a * 2**s            a >>> s from the halves, shifted in float32
    a * b (mod 2**32) from the halves, no partial product above 2**32
    unsigned order == signed order of a + 2**31 (the top bit flipped)
"""

import numpy as np
import tensorflow as tf

from jax2tf.graph import semantics as sem

_HALF = 1 << 16
# 2**s as int32 for s in [0, 32): 2**31 wraps to INT_MIN, which multiplies as
# 2**31 does modulo 2**32.
_POW2 = np.array([1 << s for s in range(32)], np.uint32).view(np.int32)
# The scale of a float32 with biased exponent e: 2**(e - 150) multiplies the
# integer significand (m + 2**23); e == 0 holds denormals, m * 2**-149.
_EXPONENT_SCALE = np.array(
  [2.0**-149] + [2.0 ** (e - 150) for e in range(1, 255)] + [0.0], np.float32
)
_BIT_SCALES = np.array([2.0**-k for k in range(16)], np.float32)
_BIT_VALUES = np.array([2.0**k for k in range(16)], np.float32)


def _c(value: int) -> tf.Tensor:
  """An int32 constant with the low 32 bits of `value`."""
  return tf.constant(np.array(value & 0xFFFFFFFF, np.uint32).view(np.int32))


def _static_int(s) -> int | None:
  v = sem.static_value(s) if isinstance(s, tf.Tensor) else s
  if v is None or np.ndim(v) != 0:
    return None
  return int(v)


def _to_float(small: tf.Tensor) -> tf.Tensor:
  return tf.cast(small, tf.float32)


def _floor_scaled(small: tf.Tensor, scale) -> tf.Tensor:
  """floor(small * scale) for integers 0 <= small < 2**24 (exact in float32)
  and scale a power of two <= 1."""
  return tf.cast(tf.floor(_to_float(small) * scale), tf.int32)


def halves(a: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
  """(high, low) 16-bit halves of the bits of `a`, each in [0, 2**16)."""
  # The float estimate of a / 2**16 is off by less than 2**-9, so its floor
  # is off by at most one; the remainder, exact in wrapping int32, says which.
  high = tf.cast(tf.floor(tf.cast(a, tf.float32) * (1.0 / _HALF)), tf.int32)
  low = a - high * _c(_HALF)
  under, over = low < 0, low >= _HALF
  high = high - tf.cast(under, tf.int32) + tf.cast(over, tf.int32)
  low = low + tf.cast(under, tf.int32) * _c(_HALF) - tf.cast(over, tf.int32) * _c(_HALF)
  # The high half read as signed is in [-2**15, 2**15): its bits as unsigned.
  return high + tf.cast(high < 0, tf.int32) * _c(_HALF), low


def from_halves(high: tf.Tensor, low: tf.Tensor) -> tf.Tensor:
  return high * _c(_HALF) + low


def _bit_planes(half: tf.Tensor) -> tf.Tensor:
  """The 16 bits of `half` (in [0, 2**16)) as 0.0/1.0 along a new last axis."""
  return _bit_planes_of_floats(_to_float(half))


def _from_bit_planes(planes: tf.Tensor) -> tf.Tensor:
  return tf.cast(tf.reduce_sum(planes * _BIT_VALUES, axis=-1), tf.int32)


def _bitwise(combine):
  def op(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
    a_high, a_low = halves(a)
    b_high, b_low = halves(b)
    high = _from_bit_planes(combine(_bit_planes(a_high), _bit_planes(b_high)))
    low = _from_bit_planes(combine(_bit_planes(a_low), _bit_planes(b_low)))
    return from_halves(high, low)

  return op


bitwise_and = _bitwise(lambda p, q: p * q)
bitwise_or = _bitwise(lambda p, q: p + q - p * q)
bitwise_xor = _bitwise(lambda p, q: p + q - 2.0 * p * q)


def invert(a: tf.Tensor) -> tf.Tensor:
  return _c(-1) - a


def population_count(a: tf.Tensor) -> tf.Tensor:
  """The number of set bits of `a`: the bit planes of its halves, summed."""
  high, low = halves(a)
  return tf.cast(tf.reduce_sum(_bit_planes(high) + _bit_planes(low), axis=-1), tf.int32)


def _bit_length(half: tf.Tensor) -> tf.Tensor:
  """The bits that `half` (in [0, 2**16)) needs: the powers of two it reaches."""
  reached = tf.expand_dims(_to_float(half), -1) >= _BIT_VALUES
  return tf.reduce_sum(tf.cast(reached, tf.int32), axis=-1)


def count_leading_zeros(a: tf.Tensor) -> tf.Tensor:
  """The number of zero bits of `a` above its highest set bit."""
  high, low = halves(a)
  return tf.where(high > 0, _c(16) - _bit_length(high), _c(32) - _bit_length(low))


def negate(a: tf.Tensor) -> tf.Tensor:
  """-a, wrapping: TF.js's wasm Neg of int32 computes in float32."""
  return invert(a) + _c(1)


def _pow2_int(s: tf.Tensor) -> tf.Tensor:
  return tf.gather(tf.constant(_POW2), s)


def _pow2_float(k: tf.Tensor) -> tf.Tensor:
  """2.0**-k for int32 `k` in [0, 16]."""
  return tf.gather(tf.constant([2.0**-i for i in range(17)], tf.float32), k)


def shift_left(a: tf.Tensor, s) -> tf.Tensor:
  """a << s for shift amounts in [0, 32)."""
  static = _static_int(s)
  if static is not None:
    return a * _c(1 << static)
  return a * _pow2_int(s)


def shift_right_logical(a: tf.Tensor, s) -> tf.Tensor:
  """The bits of `a` moved down by s in [0, 32), zeros shifted in."""
  high, low = halves(a)
  static = _static_int(s)
  if static is not None:
    if static >= 16:
      return _floor_scaled(high, 2.0 ** (16 - static))
    return high * _c(1 << (16 - static)) + _floor_scaled(low, 2.0**-static)
  big = s >= 16
  from_high = _floor_scaled(high, _pow2_float(tf.where(big, s - 16, tf.zeros_like(s))))
  low_shift = tf.where(big, tf.zeros_like(s), s)
  below = high * _pow2_int(16 - low_shift) + _floor_scaled(low, _pow2_float(low_shift))
  return tf.where(big, from_high, below)


def shift_right_arithmetic(a: tf.Tensor, s) -> tf.Tensor:
  """The bits of `a` moved down by s in [0, 32), copies of the sign bit shifted in."""
  negative = a < 0
  return tf.where(negative, invert(shift_right_logical(invert(a), s)), shift_right_logical(a, s))


def rotate_left(a: tf.Tensor, r: int) -> tf.Tensor:
  """The bits of `a` rotated up by the constant 0 < r < 32."""
  # The two parts hold disjoint bits: their sum is their bitwise or.
  return shift_left(a, r) + shift_right_logical(a, 32 - r)


def bilinear(op, a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
  """op(a, b) modulo 2**32 for an op bilinear in int32s (a product, a dot),
  from op on halves: no product of halves reaches 2**32, and a sum of fewer
  than 2**21 of them stays below 2**53, exact in JavaScript numbers."""
  a_high, a_low = halves(a)
  b_high, b_low = halves(b)
  cross = op(a_high, b_low) + op(a_low, b_high)  # only its low 16 bits survive
  return op(a_low, b_low) + cross * _c(1 << 16)


def multiply(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
  """a * b modulo 2**32."""
  return bilinear(tf.multiply, a, b)


def floor_divide(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
  """floor(a / b) for int32 b != 0 (INT_MIN / -1 aside): TF.js's wasm FloorDiv
  computes in float32 (off by tens for quotients near 2**31), its FloorMod is
  exact. The quotient's error e is small against a / 2**24, so e * b is a
  small integer, exact in float32, that the exact remainder reveals."""
  q = tf.math.floordiv(a, b)
  missed = tf.math.floormod(a, b) - (a - q * b)  # e * b, in wrapping int32
  e = tf.cast(tf.round(_to_float(missed) / _to_float(b)), tf.int32)
  return q - e


def multiply_high(a: tf.Tensor, b: tf.Tensor, signed: bool) -> tf.Tensor:
  """The high 32 bits of the 64-bit product of a and b (signed or unsigned)."""
  a_high, a_low = halves(a)
  b_high, b_low = halves(b)
  # Every partial product is below 2**32: its int32 bits are exact.
  cross_1, cross_2 = halves(a_high * b_low), halves(a_low * b_high)
  low_high = halves(a_low * b_low)[0]
  carry = _floor_scaled(cross_1[1] + cross_2[1] + low_high, 1.0 / _HALF)  # exact below 2**24
  high = a_high * b_high + cross_1[0] + cross_2[0] + carry
  if signed:
    # A negative operand reads 2**32 more as unsigned: take the other back.
    zero = tf.zeros_like(high)
    high = high - tf.where(a < 0, b, zero) - tf.where(b < 0, a, zero)
  return high


def _unsigned_key(a: tf.Tensor) -> tf.Tensor:
  return a + _c(1 << 31)


def unsigned_compare(compare, a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
  """`compare` (tf.less, ...) of the unsigned numbers whose bits `a` and `b` hold."""
  return compare(_unsigned_key(a), _unsigned_key(b))


def unsigned_maximum(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
  return tf.where(unsigned_compare(tf.less, a, b), b, a)


def unsigned_minimum(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
  return tf.where(unsigned_compare(tf.less, a, b), a, b)


def to_float32(a: tf.Tensor, unsigned: bool) -> tf.Tensor:
  """The number `a` holds (signed or unsigned) rounded once to float32."""
  high, low = halves(a)
  if not unsigned:
    high = high - tf.cast(high >= (1 << 15), tf.int32) * _c(_HALF)
  # The high part is exact (16 significant bits); the sum rounds once.
  return _to_float(high) * float(_HALF) + _to_float(low)


def bits_to_float32(a: tf.Tensor) -> tf.Tensor:
  """The float32 whose IEEE bits `a` holds."""
  # The high half holds the sign, the 8 exponent bits and the mantissa's
  # top 7 bits: float32 splits it exactly.
  high, low = halves(a)
  negative = high >= (1 << 15)
  rest = _to_float(high) - tf.cast(negative, tf.float32) * float(1 << 15)
  exponent = tf.floor(rest * (1.0 / 128.0))
  mantissa = (rest - exponent * 128.0) * float(_HALF) + _to_float(low)
  is_normal = exponent > 0
  significand = mantissa + tf.where(
    is_normal, tf.constant(2.0**23, tf.float32), tf.constant(0.0, tf.float32)
  )
  e = tf.cast(exponent, tf.int32)
  magnitude = significand * tf.gather(tf.constant(_EXPONENT_SCALE), e)
  special = tf.where(
    tf.equal(mantissa, 0.0), tf.constant(np.inf, tf.float32), tf.constant(np.nan, tf.float32)
  )
  magnitude = tf.where(tf.equal(e, 0xFF), special, magnitude)
  return tf.where(negative, -magnitude, magnitude)


class Halves:
  """32-bit words as their high and low 16 bits, stacked on a new first axis
  of a float32 tensor: the form in which a chain of additions, rotations and
  xors (the threefry PRNG) needs the fewest TF.js ops. No step takes a word
  apart again, both halves move in one op, and sums keep their carries until
  a bit operation needs the halves in [0, 2**16) (float32 holds the sums of
  a few words exactly)."""

  def __init__(self, stacked: tf.Tensor, reduced: bool = True):
    self.stacked, self.reduced = stacked, reduced

  @classmethod
  def of(cls, a: tf.Tensor) -> "Halves":
    return cls(_to_float(tf.stack(halves(a))))

  @classmethod
  def constant(cls, value: int, shape) -> "Halves":
    """A constant word, filled to `shape` (a list, or a 1-D int32 tensor)."""
    halves_ = tf.constant([float((value >> 16) & 0xFFFF), float(value & 0xFFFF)], tf.float32)
    return cls(tf.broadcast_to(_per_half(halves_, shape), _stacked_shape(shape)))

  def to_int32(self) -> tf.Tensor:
    high, low = tf.unstack(tf.cast(self._reduce().stacked, tf.int32))
    return from_halves(high, low)

  def _reduce(self) -> "Halves":
    if self.reduced:
      return self
    # The low half's carry moves up first; then what passes 2**16 in either
    # half leaves it (the high half's, the word).
    carries = tf.floor(self.stacked * (1.0 / _HALF))
    moved_up = tf.reverse(carries, [0]) * _per_half(tf.constant([1.0, 0.0]), self.stacked)
    word = self.stacked + moved_up
    return Halves(word - tf.floor(word * (1.0 / _HALF)) * float(_HALF))

  def __add__(self, other: "Halves") -> "Halves":
    return Halves(self.stacked + other.stacked, reduced=False)

  def __xor__(self, other: "Halves") -> "Halves":
    # a ^ b == a + b - 2 * (a & b), the `and` from one bit-plane expansion
    # of both words.
    mine, theirs = self._reduce().stacked, other._reduce().stacked
    planes = _bit_planes_of_floats(tf.concat([mine, theirs], axis=0))
    both = tf.reduce_sum(planes[:2] * planes[2:] * _BIT_VALUES, axis=-1)
    return Halves(mine + theirs - 2.0 * both)

  def rotate_left(self, r: int) -> "Halves":
    """The words rotated up by the constant 0 < r < 32."""
    word = self._reduce().stacked
    if r >= 16:
      word, r = tf.reverse(word, [0]), r - 16
    if r == 0:
      return Halves(word)
    # The bits that leave each half through the top enter the other at the bottom.
    leaving = tf.floor(word * 2.0 ** (r - 16))
    return Halves(word * float(1 << r) - leaving * float(_HALF) + tf.reverse(leaving, [0]))


def _stacked_shape(shape):
  if isinstance(shape, tf.Tensor):
    return tf.concat([tf.constant([2], shape.dtype), shape], axis=0)
  return [2, *shape]


def _per_half(pair: tf.Tensor, like) -> tf.Tensor:
  """`pair` (2 values) shaped to broadcast along the first axis of a stacked
  word of shape `like` (a tensor, a shape list or a shape tensor)."""
  if isinstance(like, tf.Tensor) and like.dtype == tf.float32:
    rank = like.shape.rank - 1
  elif isinstance(like, tf.Tensor):
    rank = int(like.shape[0])
  else:
    rank = len(like)
  return tf.reshape(pair, [2] + [1] * rank)


def _bit_planes_of_floats(x: tf.Tensor) -> tf.Tensor:
  q = tf.floor(tf.expand_dims(x, -1) * _BIT_SCALES)
  return q - 2.0 * tf.floor(q * 0.5)
