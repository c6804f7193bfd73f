"""Integer bit operations with XLA's semantics, one spelling per kind of target.

Rules call `ctx.bits.<op>` and never ask which target they lower for: the
target's `bit_ops` and `missing_kernels` (jax2tf/targets/target.py) decide
the ops. Three spellings, each in its own module:

* TF's bitwise kernels (`tf.bitwise`), where the target has them;
* portable_bits.py: integers of up to 32 bits as uint32 arithmetic, for a
  target that lacks BitwiseAnd, BitwiseOr, LeftShift or PopulationCount
  (64-bit integers keep TF's kernels there);
* int32_bits.py: int32 (and uint32 carried as int32 bits) in 16-bit halves,
  for TF.js (`bit_ops="int32_halves"`), which has no bitwise kernel at all
  and multiplies int32s in JavaScript numbers.

Shifts take any amount: those of the bit width or more (and negative ones,
read as unsigned) give XLA's answer, 0 or copies of the sign bit.
"""

import numpy as np
import tensorflow as tf

from jax2tf.graph import int32_bits, portable_bits
from jax2tf.graph import semantics as sem
from jax2tf.targets import Target


class BitOps:
  """The bit operations of one target."""

  def __init__(self, target: Target):
    self.target = target

  def in_halves(self, x: tf.Tensor) -> bool:
    """Whether `x` is a 32-bit integer computed in 16-bit halves (TF.js's
    int32, and uint32 carried as int32 bits)."""
    return self.target.bit_ops == "int32_halves" and x.dtype == tf.int32

  def _portable(self, kernel: str, x: tf.Tensor) -> bool:
    return self.target.lacks_kernel(kernel) and portable_bits.handles(x.dtype)

  # ------------------------------------------------------------ logic ---

  def bitwise_and(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    if self.in_halves(x):
      return int32_bits.bitwise_and(x, y)
    if self._portable("BitwiseAnd", x):
      return portable_bits.bitwise_and(x, y)
    return tf.bitwise.bitwise_and(x, y)

  def bitwise_or(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    if self.in_halves(x):
      return int32_bits.bitwise_or(x, y)
    if self._portable("BitwiseOr", x):
      return portable_bits.bitwise_or(x, y)
    return tf.bitwise.bitwise_or(x, y)

  def bitwise_xor(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    if self.in_halves(x):
      return int32_bits.bitwise_xor(x, y)
    return tf.bitwise.bitwise_xor(x, y)

  def invert(self, x: tf.Tensor) -> tf.Tensor:
    if self.in_halves(x):
      return int32_bits.invert(x)
    return portable_bits.invert(x)  # a xor with all ones: every target has it

  # ----------------------------------------------------------- shifts ---

  def _out_of_range(self, y: tf.Tensor) -> tf.Tensor:
    # Shift amounts are read as unsigned: negative ones are out of range
    # too. Where the target cannot compare every integer width, the
    # amounts are compared in int64, which holds every amount exactly.
    width, unsigned = sem.bit_width(y.dtype), sem.is_unsigned(y.dtype)
    if self.target.lacks_kernel("GreaterEqual", y.dtype):
      y = tf.cast(y, tf.int64)
    too_big = y >= width
    return too_big if unsigned else tf.logical_or(too_big, y < 0)

  @staticmethod
  def _in_halves(x, y, shift):
    # Amounts are int32 here: read as signed, those of 2**31 and more (as
    # uint32) are negative, so out of range as they should be.
    out = tf.logical_or(y < 0, y >= 32)
    res = shift(x, tf.where(out, tf.zeros_like(y), y))
    fill = tf.zeros_like(res)
    if shift is int32_bits.shift_right_arithmetic:  # only copies of the sign bit are left
      fill = tf.where(x < 0, tf.constant(-1, tf.int32), tf.constant(0, tf.int32))
    return tf.where(out, fill, res)

  def shift_left(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    if self.in_halves(x):
      return self._in_halves(x, y, int32_bits.shift_left)
    out = self._out_of_range(y)
    in_range = tf.where(out, tf.zeros_like(y), y)
    if self._portable("LeftShift", x):
      res = portable_bits.shift_left(x, in_range)
    else:
      res = tf.bitwise.left_shift(x, in_range)
    return tf.where(out, tf.zeros_like(res), res)

  def shift_right_logical(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    if self.in_halves(x):
      return self._in_halves(x, y, int32_bits.shift_right_logical)
    out = self._out_of_range(y)
    utype = sem.unsigned_int_of_width(x.dtype)
    ux, uy = tf.bitcast(x, utype), tf.bitcast(tf.where(out, tf.zeros_like(y), y), utype)
    res = tf.bitcast(tf.bitwise.right_shift(ux, uy), x.dtype)
    return tf.where(out, tf.zeros_like(res), res)

  def shift_right_arithmetic(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    if self.in_halves(x):
      return self._in_halves(x, y, int32_bits.shift_right_arithmetic)
    out = self._out_of_range(y)
    stype = sem.signed_int_of_width(x.dtype)
    sx, sy = tf.bitcast(x, stype), tf.bitcast(tf.where(out, tf.zeros_like(y), y), stype)
    res = tf.bitwise.right_shift(sx, sy)
    # Shifting by the width or more leaves only copies of the sign bit.
    fill = tf.bitwise.right_shift(sx, sem.const(sem.bit_width(x.dtype) - 1, stype))
    return tf.bitcast(tf.where(out, fill, res), x.dtype)

  # ----------------------------------------------------------- counts ---

  def population_count(self, x: tf.Tensor) -> tf.Tensor:
    if self.in_halves(x):
      return int32_bits.population_count(x)
    if self._portable("PopulationCount", x):
      return portable_bits.population_count(x)
    return tf.cast(tf.raw_ops.PopulationCount(x=x), x.dtype)  # TF's result is uint8

  def count_leading_zeros(self, x: tf.Tensor) -> tf.Tensor:
    if self.in_halves(x):
      return int32_bits.count_leading_zeros(x)
    if self._portable("PopulationCount", x):
      return portable_bits.count_leading_zeros(x)
    # Smear the highest set bit into every lower position; the leading
    # zeros are the bits left unset.
    bits = sem.bit_width(x.dtype)
    u = tf.bitcast(x, sem.unsigned_int_of_width(x.dtype))
    shift = 1
    while shift < bits:
      u = tf.bitwise.bitwise_or(u, tf.bitwise.right_shift(u, sem.const(shift, u.dtype)))
      shift *= 2
    ones = tf.cast(tf.raw_ops.PopulationCount(x=u), tf.int32)
    return tf.cast(bits - ones, x.dtype)

  # ------------------------------------------------------- arithmetic ---

  def multiply(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    """x * y, wrapping: in halves where int32 products are inexact."""
    if self.in_halves(x):
      return int32_bits.multiply(x, y)
    return tf.multiply(x, y)

  def multiply_high(self, x: tf.Tensor, y: tf.Tensor, *, signed: bool) -> tf.Tensor:
    """The high half of the double-width product of 8- to 32-bit integers."""
    if self.in_halves(x):
      return int32_bits.multiply_high(x, y, signed=signed)
    wide = tf.int64 if signed else tf.uint64
    if self.target.lacks_kernel("Mul", wide) or self.target.lacks_kernel("FloorDiv", wide):
      return portable_bits.multiply_high(x, y, signed=signed)
    product = tf.cast(x, wide) * tf.cast(y, wide)
    # A floor division by 2**width is the arithmetic shift (exact for |p| < 2**63).
    width = sem.bit_width(x.dtype)
    return tf.cast(tf.math.floordiv(product, tf.constant(1 << width, wide)), x.dtype)

  def square(self, x: tf.Tensor) -> tf.Tensor:
    """x * x, wrapping (TF.js's cpu Square rounds large int32 products)."""
    if self.in_halves(x):
      return int32_bits.multiply(x, x)
    return tf.square(x)

  def negative(self, x: tf.Tensor) -> tf.Tensor:
    """-x for any integer, wrapping: the target's Neg, where it has one."""
    if self.in_halves(x):
      return int32_bits.negate(x)
    if sem.is_unsigned(x.dtype):
      # ~x + 1 rather than 0 - x: graph optimizers rewrite 0 - x into Neg,
      # which has no unsigned kernel.
      return tf.add(portable_bits.invert(x), tf.ones_like(x))
    return tf.negative(x)

  def abs(self, x: tf.Tensor) -> tf.Tensor:
    """|x| for a signed integer (TF.js's int32 Abs computes in float32)."""
    if self.in_halves(x):
      return tf.where(x < 0, int32_bits.negate(x), x)
    return tf.abs(x)

  def negate(self, x: tf.Tensor) -> tf.Tensor:
    """-x for a signed integer, INT_MIN negating to itself as in XLA."""
    if self.in_halves(x):
      return int32_bits.negate(x)
    # Without relying on signed overflow (and without a Bitcast, which TF.js
    # lacks).
    smallest = sem.const(np.iinfo(x.dtype.as_numpy_dtype).min, x.dtype)
    is_smallest = tf.equal(x, smallest)
    return tf.where(is_smallest, smallest, tf.negative(tf.where(is_smallest, tf.zeros_like(x), x)))

  def floor_divide(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    """floor(x / y) for a nonzero divisor (INT_MIN / -1 aside)."""
    if self.in_halves(x):
      return int32_bits.floor_divide(x, y)
    return tf.math.floordiv(x, y)

  def truncate_divide(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    """x / y rounded toward zero, for a nonzero divisor (INT_MIN / -1
    aside), from FloorDiv: the two differ by one where the signs differ and
    the division is inexact."""
    q = self.floor_divide(x, y)
    inexact = tf.not_equal(tf.subtract(x, tf.multiply(q, y)), 0)
    return tf.where(tf.logical_and(inexact, tf.not_equal(x < 0, y < 0)), q + 1, q)

  def rotate_left(self, x: tf.Tensor, r: int) -> tf.Tensor:
    """The bits of a uint32 `x` (int32 bits in halves) rotated up by 0 < r < 32."""
    if self.in_halves(x):
      return int32_bits.rotate_left(x, r)
    return portable_bits.rotate_left(x, r)
