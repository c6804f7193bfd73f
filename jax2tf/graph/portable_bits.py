"""Integer bit operations for the no-XLA flavour, from ops TFLite has kernels for.

TFLite's builtin kernels cover BitwiseXor, RightShift, addition and
multiplication on uint32 (wrapping modulo 2**32, as XLA does), but not
BitwiseAnd, BitwiseOr, Invert or LeftShift, nor uint32 subtraction. So
integers of up to 32 bits are carried as uint32, where

    a + b == (a ^ b) + 2 * (a & b)        (mod 2**32)

gives `and` from xor, addition and a logical shift, `or` as (a ^ b) + (a & b)
(jax2tf/targets/uint32_words.py, shared with the native routes' modules),
`not` as a xor with all ones, and a left shift as a product with a power of
two. Narrower types are widened (sign- or zero-extended: the low bits, the only
ones kept, come out the same) and truncated back. 64-bit integers keep TF's
bitwise ops: the runtimes without them have no 64-bit arithmetic to spare.
"""

import numpy as np
import tensorflow as tf

from jax2tf.graph import semantics as sem
from jax2tf.targets import uint32_words

_U32_MAX = 0xFFFFFFFF


def handles(dtype) -> bool:
  """Whether these emulations cover `dtype` (integers of at most 32 bits)."""
  return sem.is_int(dtype) and sem.bit_width(dtype) <= 32


def _u32(value: int) -> tf.Tensor:
  return tf.constant(value, tf.uint32)


def to_u32(x: tf.Tensor) -> tf.Tensor:
  """The bits of an integer of at most 32 bits as uint32 (narrower ones extended)."""
  if x.dtype == tf.uint32:
    return x
  # int32 -> uint32 wraps; narrower types go through int32 because TFLite
  # casts them to int32 but not all of them to uint32.
  if x.dtype != tf.int32:
    x = tf.cast(x, tf.int32)
  return tf.cast(x, tf.uint32)


def from_u32(u: tf.Tensor, dtype: tf.DType) -> tf.Tensor:
  """The low bits of uint32 `u` as `dtype` (the inverse of `to_u32`)."""
  if dtype == tf.uint32:
    return u
  v = tf.cast(u, tf.int32)
  return v if dtype == tf.int32 else tf.cast(v, dtype)


class _Words:
  """uint32 tensors for the formulas in uint32 words (jax2tf/targets/uint32_words.py)."""

  @staticmethod
  def add(x, y):
    return x + (_u32(y) if isinstance(y, int) else y)

  @staticmethod
  def mul(x, y):
    return x * (_u32(y) if isinstance(y, int) else y)

  @staticmethod
  def xor(x, y):
    return tf.bitwise.bitwise_xor(x, _u32(y) if isinstance(y, int) else y)

  @staticmethod
  def shr(x, n: int):
    return tf.bitwise.right_shift(x, _u32(n))


_WORDS = _Words()


def _binary(fn_u32):
  def op(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    return from_u32(fn_u32(to_u32(x), to_u32(y)), x.dtype)

  return op


bitwise_and = _binary(lambda a, b: uint32_words.bitwise_and(_WORDS, a, b))
bitwise_or = _binary(lambda a, b: uint32_words.bitwise_or(_WORDS, a, b))


def invert(x: tf.Tensor) -> tf.Tensor:
  """~x as a xor with all ones, for integers of any width (TF has no other kernel to spare)."""
  all_ones = -1 if not sem.is_unsigned(x.dtype) else np.iinfo(x.dtype.as_numpy_dtype).max
  return tf.bitwise.bitwise_xor(x, sem.const(all_ones, x.dtype))


def power_of_two(shift: tf.Tensor) -> tf.Tensor:
  """2**shift as uint32, wrapped, for shifts in [0, 32).

  Computed in int32 as two factors of at most 2**16 each, so that no product
  overflows before the last (wrapping) uint32 one.
  """
  s = tf.cast(shift, tf.int32)
  half = tf.bitwise.right_shift(s, tf.constant(1, tf.int32))
  two = tf.constant(2, tf.int32)
  return tf.cast(tf.pow(two, half), tf.uint32) * tf.cast(tf.pow(two, s - half), tf.uint32)


def shift_left(x: tf.Tensor, shift) -> tf.Tensor:
  """x << shift for shifts in [0, bit width): a product with a power of two.

  `shift` is a Python int or an integer tensor whose values the caller has
  brought into range.
  """
  if isinstance(shift, (int, np.integer)):
    factor = _u32((1 << int(shift)) & _U32_MAX)
  else:
    factor = power_of_two(shift)
  return from_u32(to_u32(x) * factor, x.dtype)


def _lowest_bit(u: tf.Tensor) -> tf.Tensor:
  """The lowest bit of uint32 `u` (0 or 1) as int32."""
  # u - 2 * (u >> 1), the subtraction as a wrapping addition.
  low = u + tf.bitwise.right_shift(u, _u32(1)) * _u32(_U32_MAX - 1)
  return tf.cast(low, tf.int32)


def bit_is_set(u: tf.Tensor, b: int) -> tf.Tensor:
  """Whether bit `b` of uint32 `u` is set, as bool."""
  return tf.not_equal(_lowest_bit(tf.bitwise.right_shift(u, _u32(b))), 0)


def _shifted_down(x: tf.Tensor) -> tf.Tensor:
  """The bits of integer `x` as uint32, shifted down by 0, 1, ..., its bit
  width - 1, along a new last axis. The bits above the width (copies of
  the sign bit, or zeros) never reach the lowest position."""
  shifts = np.arange(sem.bit_width(x.dtype), dtype=np.uint32)
  return tf.bitwise.right_shift(tf.expand_dims(to_u32(x), -1), tf.constant(shifts))


def population_count(x: tf.Tensor) -> tf.Tensor:
  """The number of set bits of each element of `x` (of at most 32 bits),
  as `x.dtype`: the lowest bits of its shifts, summed."""
  ones = tf.reduce_sum(_lowest_bit(_shifted_down(x)), axis=-1)
  return ones if x.dtype == tf.int32 else tf.cast(ones, x.dtype)


def count_leading_zeros(x: tf.Tensor) -> tf.Tensor:
  """The number of zero bits above the highest set bit of each element of
  `x` (of at most 32 bits), as `x.dtype`: the width less the number of
  shifts that leave something."""
  nonzero = tf.not_equal(tf.cast(_shifted_down(x), tf.int32), 0)
  bit_length = tf.reduce_sum(tf.cast(nonzero, tf.int32), axis=-1)
  leading = tf.constant(sem.bit_width(x.dtype), tf.int32) - bit_length
  return leading if x.dtype == tf.int32 else tf.cast(leading, x.dtype)


def rotate_left(x: tf.Tensor, r: int) -> tf.Tensor:
  """Rotation of uint32 values by a constant 0 < r < 32: the two parts share no bit."""
  return x * _u32(1 << r) + tf.bitwise.right_shift(x, _u32(32 - r))


def multiply_high(x: tf.Tensor, y: tf.Tensor, *, signed: bool) -> tf.Tensor:
  """The high half of the double-width product of integers of 8 to 32 bits,
  in uint32 arithmetic: for targets without a 64-bit product or division.

  The unsigned high word comes from the operands' 16-bit halves
  (uint32_words.multiply_high, shared with the native routes). A signed
  product then takes back what reading a negative operand as unsigned adds
  (2**32 times the other operand), modulo 2**32."""
  width = sem.bit_width(x.dtype)
  a, b = to_u32(x), to_u32(y)
  if width < 32:
    # Both fit in 16 bits (sign-extended ones wrap back): one product is exact.
    if signed:
      product = tf.math.floordiv(tf.cast(a, tf.int32) * tf.cast(b, tf.int32), 1 << width)
      return tf.cast(product, x.dtype)
    return from_u32(tf.bitwise.right_shift(a * b, _u32(width)), x.dtype)
  multiply = uint32_words.multiply_high_signed if signed else uint32_words.multiply_high
  return from_u32(multiply(_WORDS, a, b), x.dtype)
