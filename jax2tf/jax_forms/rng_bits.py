"""XLA's RngBitGenerator as a JAX function of the counter-based hashes.

`lax.rng_bit_generator` is XLA's RngBitGenerator, which XLA expands (its
rng_bit_generator expander) into a counter-based hash of a 128-bit state.
Written here in lax operations on uint32 words (wrapping additions, unsigned
comparisons, the threefry2x32 and philox4x32 primitives, iota_2x32_shape),
it lowers through the rules of those primitives, so every target that has
them (TFLite, TF.js) computes JAX's bits exactly without XlaRngBitGenerator.
What XLA does, as measured against `jax.jit` on CPU:

* The state, u64[2] (u32[4] in JAX, read as two little-endian u64s), is a
  key `s0` and a counter `s1`. The new state keeps the key and advances the
  counter by the number of hashes drawn (wrapping modulo 2**64).
* RNG_THREE_FRY hashes the 64-bit counters `s1 + i` (as two words, low
  first) under the key's two words. For 64-bit bits, hash i gives element
  i (first word low). For narrower bits, each hash gives two elements: the
  first axis of even size (else the longest, the first among equals) is
  halved (rounded up), the hashes run over that half shape in row-major
  order, and the two words of a hash are the elements 2h and 2h + 1 of that
  axis (a scalar takes the first word of one hash). Where that axis depends
  on the parity of a symbolic dimension, each element finds its hash and word
  from its coordinates at run time.
* RNG_PHILOX hashes the 128-bit counters `(s0 << 64 | s1) + i` (four words,
  low first) under the key's two words; hash i gives the row-major elements
  4i..4i+3 of 32-bit bits, or 2i, 2i+1 of 64-bit ones (words 0,1 and 2,3
  joined, low first). The new counter drops the carry into `s0`.
* RNG_DEFAULT is RNG_PHILOX: the choice of XLA's CPU backend, which the graph
  makes wherever it runs.
* 8- and 16-bit bits are the low bits of the 32-bit bits of the same shape.
"""

import math

import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import primitives as core_primitives

from jax2tf.internals import jax_private
from jax2tf.shapes import dim_eval

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_THREE_FRY, _PHILOX = 1, 2


# The halved axis of a shape whose symbolic dimensions leave it to run time.
_UNDECIDED = -1


def generator(shape, dtype, algorithm, state_dtype):
  """The JAX function `state -> (new_state, bits)` of XLA's RngBitGenerator."""
  dtype = np.dtype(dtype)
  algorithm = _PHILOX if int(algorithm) == 0 else int(algorithm)
  shape = tuple(shape)
  word_bits = _U64 if dtype.itemsize == 8 else _U32
  draw = _threefry if algorithm == _THREE_FRY else _philox
  if draw is _threefry and word_bits == _U32 and halved_axis(shape) is _UNDECIDED:
    draw = _threefry_pairs_at_run_time

  def fn(state):
    key_lo, key_hi, counter = _state_words(state, np.dtype(state_dtype))
    bits, drawn = draw((key_lo, key_hi), counter, shape, word_bits == _U64)
    new_counter = _add64(counter, _count_words(drawn))
    if bits.dtype != dtype:
      bits = lax.convert_element_type(bits, dtype)  # the low bits
    return _state_of_words(key_lo, key_hi, new_counter, np.dtype(state_dtype)), bits

  return fn


def halved_axis(shape) -> int | None:
  """The axis threefry halves for bits of `shape` (None for a scalar), or
  _UNDECIDED where it depends on the parity of a symbolic dimension."""
  if not shape:
    return None
  for axis, d in enumerate(shape):
    if not dim_eval.is_constant(d):
      if d % 2 == 0:  # provably even (2*b), the only symbolic answer there is
        return axis
      return _UNDECIDED
    if int(d) % 2 == 0:
      return axis
  return max(range(len(shape)), key=lambda a: (int(shape[a]), -a))


# -------------------------------------------------- 64-bit words in pairs ---


def _state_words(state, state_dtype):
  """(key low, key high, (counter low, counter high)) as uint32 scalars."""
  if state_dtype == _U32:
    return state[0], state[1], (state[2], state[3])
  words = []
  for i in range(2):
    s = state[i]
    words += [_low(s), lax.convert_element_type(lax.shift_right_logical(s, _U64.type(32)), _U32)]
  return words[0], words[1], (words[2], words[3])


def _state_of_words(key_lo, key_hi, counter, state_dtype):
  if state_dtype == _U32:
    return jnp.stack([key_lo, key_hi, *counter])
  return jnp.stack([_join64(key_lo, key_hi), _join64(*counter)])


def _low(x):
  return lax.convert_element_type(x, _U32)


def _join64(lo, hi):
  wide = lax.shift_left(lax.convert_element_type(hi, _U64), _U64.type(32))
  return lax.bitwise_or(lax.convert_element_type(lo, _U64), wide)


def _as_bit(condition):
  """1 where `condition` holds, else 0, as uint32: a select, since LiteRT's
  CAST converts no bool to uint32."""
  return jnp.where(condition, _U32.type(1), _U32.type(0))


def _add64(a, b):
  """The sum of two 64-bit numbers given as (low, high) words, wrapping."""
  lo = a[0] + b[0]
  return lo, a[1] + b[1] + _as_bit(lo < b[0])


def _less64(a, b):
  return (a[1] < b[1]) | ((a[1] == b[1]) & (a[0] < b[0]))


def _count_words(n):
  """A count (an int, a symbolic dimension or an int32 value) as (low, high)
  uint32 words."""
  if isinstance(n, (int, np.integer)) or (not hasattr(n, "dtype") and dim_eval.is_constant(n)):
    n = int(n)
    return _U32.type(n & 0xFFFFFFFF), _U32.type(n >> 32)
  # Symbolic dimensions are int32 values in the TF graph: no high word.
  return lax.convert_element_type(jnp.asarray(n), _U32), _U32.type(0)


def _positions(shape):
  """The row-major position of every element of `shape`, as (low, high) words."""
  if not shape:
    zero = jnp.zeros((), _U32)
    return zero, zero
  hi, lo = jax_private.iota_2x32_shape_p.bind(shape=tuple(shape))
  return lo, hi


def _broadcast(words, shape):
  return tuple(jnp.broadcast_to(w, shape) for w in words)


# --------------------------------------------------------- the two hashes ---


def _threefry(key, counter, shape, wide):
  """Threefry-2x32 bits of `shape` and the number of hashes drawn."""
  axis = None if wide else halved_axis(shape)
  hashed = list(shape)
  if not wide:
    hashed = [1] if axis is None else _halved(shape, axis)
  counters = _add64(_broadcast(counter, hashed), _positions(hashed))
  first, second = core_primitives.threefry2x32_p.bind(*_broadcast(key, hashed), *counters)
  if wide:
    bits = _join64(first, second)
  elif axis is None:
    bits = jnp.reshape(first, ())
  else:
    bits = _interleaved(first, second, shape, axis)
  return bits, math.prod(hashed)


def _halved(shape, axis):
  out = list(shape)
  out[axis] = (shape[axis] + 1) // 2
  return out


def _interleaved(first, second, shape, axis):
  """Elements 2h and 2h + 1 along `axis` from the words of hash h."""
  pairs = jnp.stack([first, second], axis=axis + 1)
  doubled = list(shape)
  doubled[axis] = 2 * first.shape[axis]
  bits = jnp.reshape(pairs, doubled)
  return lax.slice_in_dim(bits, 0, shape[axis], axis=axis)


def _philox(key, counter, shape, wide):
  """Philox-4x32 bits of `shape` and the number of hashes drawn."""
  size = math.prod(shape)
  per_hash = 2 if wide else 4
  n = (size + per_hash - 1) // per_hash
  low = _broadcast(counter, (n,))
  low_sum = _add64(low, _positions((n,)))
  # The 128-bit counter's high half is the key word s0, plus the carry.
  carry = _as_bit(_less64(low_sum, low))
  high_sum = _add64(_broadcast(key, (n,)), (carry, jnp.zeros((n,), _U32)))
  words = jax_private.philox4x32_p.bind(*_broadcast(key, (n,)), *low_sum, *high_sum)
  if wide:
    words = [_join64(words[0], words[1]), _join64(words[2], words[3])]
  flat = jnp.reshape(jnp.stack(words, axis=1), (n * per_hash,))
  bits = jnp.reshape(lax.slice_in_dim(flat, 0, size), shape)
  return bits, n


def _threefry_pairs_at_run_time(key, counter, shape, wide):
  """_threefry's bits of under 64 bits where the halved axis is only known at
  run time: each element finds its hash and word from its coordinates (every
  hash is computed twice, once for each of its elements)."""
  del wide
  sizes = [jnp.asarray(d, np.int32) for d in shape]
  stacked = jnp.stack(sizes)
  even = stacked % 2 == 0
  axis = jnp.where(jnp.any(even), jnp.argmax(even), jnp.argmax(stacked))
  position, word, drawn = jnp.zeros(shape, np.int32), jnp.zeros(shape, np.int32), np.int32(1)
  for i, size in enumerate(sizes):
    halved = axis == i
    coordinate = lax.broadcasted_iota(np.int32, shape, i)
    half_size = jnp.where(halved, (size + 1) // 2, size)
    position = position * half_size + jnp.where(halved, coordinate // 2, coordinate)
    word = word + jnp.where(halved, coordinate % 2, 0)
    drawn = drawn * half_size
  counters = _add64(_broadcast(counter, shape), (_low(position), jnp.zeros(shape, _U32)))
  first, second = core_primitives.threefry2x32_p.bind(*_broadcast(key, shape), *counters)
  return jnp.where(word == 0, first, second), drawn
