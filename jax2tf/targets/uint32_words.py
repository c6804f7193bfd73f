"""Unsigned arithmetic wider than 32 bits, in uint32 words, written once.

TFLite has addition, multiplication, xor and logical right shifts of uint32
(wrapping modulo 2**32, as XLA does) but no MUL on uint64, no 64-bit
division and no uint32 comparison, so wider unsigned numbers are carried
as pairs of uint32 words (high, low) built from those four operations
alone. The graph route computes the high word of a 32-bit product so
(jax2tf/graph/portable_bits.py); the native routes compute JAX's uint64
counters of threefry at polymorphic shapes so
(jax2tf/native/integer_patterns.py). Each IR hands these formulas an
adapter, `Words`, over its own values; no TensorFlow or JAX here.
"""

from typing import Any, Protocol

_HALF = 16


class Words(Protocol):
  """uint32 operations of one IR. `y` may be a Python int (a constant of
  `x`'s shape); `n` is a shift in [0, 32)."""

  def add(self, x: Any, y: Any) -> Any: ...

  def mul(self, x: Any, y: Any) -> Any: ...

  def xor(self, x: Any, y: Any) -> Any: ...

  def shr(self, x: Any, n: int) -> Any: ...


def low_half(ops: Words, u):
  """The low 16 bits of `u`: a xor clears the high ones."""
  return ops.xor(u, ops.mul(ops.shr(u, _HALF), 1 << _HALF))


def lowest_bit(ops: Words, u):
  """The lowest bit of `u` (0 or 1): a xor clears the others."""
  return ops.xor(u, ops.mul(ops.shr(u, 1), 2))


_ALL_ONES = 0xFFFFFFFF


def bitwise_and(ops: Words, a, b):
  """`a & b`. (a + b) - (a ^ b) is 2 * (a & b) modulo 2**32 (the
  subtraction as the addition of a product with 2**32 - 1), which has lost
  the top bit of a & b: that bit is set when both top bits are."""
  doubled = ops.add(ops.add(a, b), ops.mul(ops.xor(a, b), _ALL_ONES))
  top = ops.mul(ops.shr(a, 31), ops.shr(b, 31))
  return ops.add(ops.shr(doubled, 1), ops.mul(top, 1 << 31))


def bitwise_or(ops: Words, a, b):
  """`a | b`: the bits of `a ^ b` and those of `a & b` are disjoint."""
  return ops.add(ops.xor(a, b), bitwise_and(ops, a, b))


def population_count(ops: Words, u, width: int = 32):
  """The number of set bits among the low `width` bits of `u` (the others
  zero): u less the sum of u >> i for 0 < i < width, each bit b of u
  counting 2**b once and 2**b - 1 in the sum; modulo 2**32, the
  subtraction as the addition of a product with 2**32 - 1."""
  if width == 1:
    return u
  shifted = ops.shr(u, 1)
  for i in range(2, width):
    shifted = ops.add(shifted, ops.shr(u, i))
  return ops.add(u, ops.mul(shifted, _ALL_ONES))


def count_leading_zeros(ops: Words, u, width: int = 32):
  """The number of zero bits above the highest set bit among the low
  `width` bits of `u` (the others zero): the highest set bit smeared into
  every lower position (shifts and ors), the width less the bits set."""
  smeared = u
  shift = 1
  while shift < width:
    smeared = bitwise_or(ops, smeared, ops.shr(smeared, shift))
    shift *= 2
  bit_length = population_count(ops, smeared, width)
  return ops.add(ops.mul(bit_length, _ALL_ONES), width)


def multiply_high(ops: Words, a, b):
  """The high word of the 64-bit product of `a` and `b`.

  The operands' bits are split into 16-bit halves, whose four products are
  exact in uint32; the high word collects the high product, the high halves
  of the two cross products and the carry out of the low word."""
  a_high, b_high = ops.shr(a, _HALF), ops.shr(b, _HALF)
  a_low, b_low = low_half(ops, a), low_half(ops, b)
  cross_1, cross_2 = ops.mul(a_high, b_low), ops.mul(a_low, b_high)
  low_word_high = ops.shr(ops.mul(a_low, b_low), _HALF)
  carry = ops.shr(
    ops.add(ops.add(low_word_high, low_half(ops, cross_1)), low_half(ops, cross_2)), _HALF
  )
  high = ops.add(ops.mul(a_high, b_high), ops.shr(cross_1, _HALF))
  return ops.add(ops.add(high, ops.shr(cross_2, _HALF)), carry)


def multiply_high_signed(ops: Words, a, b):
  """The high word of the 64-bit product of the int32 numbers whose bits
  `a` and `b` hold: the unsigned one, less what reading a negative operand
  as unsigned adds (2**32 times the other operand), modulo 2**32 (a product
  with all ones: no uint32 subtraction)."""
  taken = ops.add(ops.mul(b, ops.shr(a, 31)), ops.mul(a, ops.shr(b, 31)))
  return ops.add(multiply_high(ops, a, b), ops.mul(taken, _ALL_ONES))


def carry(ops: Words, a, b):
  """The carry (0 or 1) out of `a + b`: the top bit of the sum of their
  halves, the lowest bits added apart."""
  halves = ops.add(ops.shr(a, 1), ops.shr(b, 1))
  return ops.shr(ops.add(halves, ops.mul(lowest_bit(ops, a), lowest_bit(ops, b))), 31)


def add(ops: Words, x: tuple, y: tuple) -> tuple:
  """(high, low) of the sum of (high, low) words `x` and `y`, modulo 2**64."""
  (x_high, x_low), (y_high, y_low) = x, y
  high = ops.add(ops.add(x_high, y_high), carry(ops, x_low, y_low))
  return high, ops.add(x_low, y_low)


def multiply(ops: Words, x: tuple, y: tuple) -> tuple:
  """(high, low) of the product of (high, low) words `x` and `y`, modulo 2**64."""
  (x_high, x_low), (y_high, y_low) = x, y
  cross = ops.add(ops.mul(x_low, y_high), ops.mul(x_high, y_low))
  return ops.add(multiply_high(ops, x_low, y_low), cross), ops.mul(x_low, y_low)


def shift_right(ops: Words, x: tuple, n: int, zeros) -> tuple:
  """(high, low) of (high, low) words `x` shifted right logically by `n`
  (`zeros`: a word of zeros of their shape)."""
  high, low = x
  if n >= 64:
    return zeros, zeros
  if n >= 32:
    return zeros, high if n == 32 else ops.shr(high, n - 32)
  if n == 0:
    return x
  # The bits that move down from the high word share none with the low
  # word's: their sum is the two together.
  moved = ops.mul(high, 1 << (32 - n))
  return ops.shr(high, n), ops.add(ops.shr(low, n), moved)
