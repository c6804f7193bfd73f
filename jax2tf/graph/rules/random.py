"""Pseudo-random numbers: key arrays, threefry and philox hashes, rng_bit_generator.

A key array (a value of JAX's `key<impl>` dtype) travels through the TF graph
as its key data: a uint32 tensor whose shape is the key array's shape followed
by the implementation's key shape ((2,) for threefry, (4,) for rbg). Wrapping
and unwrapping are therefore no-ops (jax2tf/graph/key_data.py carries keys
through every other primitive).

The key-level primitives (seed, split, fold_in, bits) are defined by the key
implementation's Python functions on key data. Their rules trace those same
functions to a jaxpr and lower it, so the bits follow whatever JAX computes
(including configuration such as `jax_threefry_partitionable`) and only the
primitives underneath (threefry2x32, iota_2x32_shape, rng_bit_generator and
ordinary lax operations) need TF code of their own. rng_bit_generator, XLA's
RngBitGenerator, is XlaRngBitGenerator where XLA ops are allowed, and else
XLA's generator written out as a JAX function of those same primitives
(jax2tf/jax_forms/rng_bits.py).

Cases: tests/cases/random.py
"""

import jax
import numpy as np
import tensorflow as tf
from jax.extend.core import primitives as core_primitives

from jax2tf.graph import int32_bits, portable_bits
from jax2tf.graph.key_data import (
  bits_fn,
  fold_in_fn,
  gamma_jaxpr,
  key_data_jaxpr,
  physical_aval,
  seed_fn,
  split_fn,
)
from jax2tf.graph.registry import register, register_in_lanes
from jax2tf.internals import jax_private, tf_private
from jax2tf.jax_forms import rng_bits


def _lower_traced(ctx, fn, args, avals):
  """Lowers the JAX function `fn` of key data applied to `args` (avals `avals`)."""
  specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals]
  closed = key_data_jaxpr(jax.make_jaxpr(fn)(*specs))
  return ctx.lower_jaxpr(closed, args)


@register(jax_private.random_wrap_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _random_wrap(ctx, base_arr, *, impl):
  del impl  # the TF value is the key data either way
  return base_arr


@register(jax_private.random_unwrap_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _random_unwrap(ctx, keys):
  return keys


@register(jax_private.random_clone_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _random_clone(ctx, keys):
  return keys


@register(core_primitives.random_seed_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _random_seed(ctx, seeds, *, impl):
  return _lower_traced(ctx, seed_fn(ctx.avals_in[0], impl), [seeds], ctx.avals_in)[0]


@register(core_primitives.random_split_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _random_split(ctx, keys, *, shape):
  (aval,) = ctx.avals_in
  return _lower_traced(ctx, split_fn(aval, shape), [keys], [physical_aval(aval)])[0]


@register(core_primitives.random_fold_in_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _random_fold_in(ctx, keys, msgs):
  keys_aval, msgs_aval = ctx.avals_in
  fn = fold_in_fn(keys_aval, ctx.aval_out.shape)
  return _lower_traced(ctx, fn, [keys, msgs], [physical_aval(keys_aval), msgs_aval])[0]


@register(core_primitives.random_bits_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _random_bits(ctx, keys, *, bit_width, shape):
  (aval,) = ctx.avals_in
  fn = bits_fn(aval, bit_width, shape)
  return _lower_traced(ctx, fn, [keys], [physical_aval(aval)])[0]


@register(core_primitives.random_gamma_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _random_gamma(ctx, keys, a, *, log_space):
  closed = gamma_jaxpr(ctx.avals_in[0], ctx.avals_in[1], log_space)
  return ctx.lower_jaxpr(closed, [keys, a])[0]


# Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as
# easy as 1, 2, 3", SC 2011): the rotation schedule and the key-schedule parity
# constant of that paper. uint32 arithmetic in TF wraps like JAX's.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KS_PARITY = 0x1BD11BDA


@register(core_primitives.threefry2x32_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _threefry2x32(ctx, k1, k2, x1, x2):
  out_shape = ctx.shape(ctx.avals_out[0].shape)
  parity = tf.constant(_KS_PARITY, tf.uint32)
  a, b = _threefry_rounds(
    k1, k2, x1, x2, parity, lambda c: tf.constant(c, tf.uint32), portable_bits.rotate_left
  )
  # The operands broadcast; a result that only saw scalars needs the full shape.
  return [tf.broadcast_to(a, out_shape), tf.broadcast_to(b, out_shape)]


@register_in_lanes(core_primitives.threefry2x32_p, "uint32_as_int32_bits")
def _threefry2x32_in_halves(ctx, k1, k2, x1, x2):
  # In 16-bit halves from start to end (jax2tf/graph/int32_bits.py): TF.js
  # has no uint32 and no bitwise kernels.
  out_shape = ctx.shape(ctx.avals_out[0].shape)
  words = [int32_bits.Halves.of(tf.broadcast_to(v, out_shape)) for v in (k1, k2, x1, x2)]
  parity = int32_bits.Halves.constant(_KS_PARITY, out_shape)
  a, b = _threefry_rounds(
    *words,
    parity,
    lambda c: int32_bits.Halves.constant(c, out_shape),
    lambda w, r: w.rotate_left(r),
  )
  return [a.to_int32(), b.to_int32()]


# The hashes of the newer key implementations are lowered by JAX as a
# function of lax operations (wrapping uint32 add and multiply, mulhi, xor,
# shifts): that same function is traced and lowered, so the bits are JAX's.
_EXPANDED_HASHES = {
  jax_private.philox2x32_p: "philox2x32_expansion",
  jax_private.philox4x32_p: "philox4x32_expansion",
  jax_private.threefry4x32_p: "threefry4x32_expansion",
}


@register(*_EXPANDED_HASHES, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _expanded_hash(ctx, *words):
  return ctx.lower_fun(getattr(jax_private, _EXPANDED_HASHES[ctx.primitive]), words)


def _threefry_rounds(k1, k2, x1, x2, parity, const, rotate_left):
  """The 20 rounds on words that add with `+` (wrapping) and xor with `^`."""
  ks = [k1, k2, k1 ^ k2 ^ parity]
  a, b = x1 + ks[0], x2 + ks[1]
  for group in range(5):
    for r in _ROTATIONS[group % 2]:
      a = a + b
      b = rotate_left(b, r) ^ a
    a = a + ks[(group + 1) % 3]
    b = b + ks[(group + 2) % 3] + const(group + 1)
  return a, b


def _split_halves(counts):
  lo = tf.bitwise.bitwise_and(counts, tf.constant(0xFFFFFFFF, tf.int64))
  return tf.bitwise.right_shift(counts, tf.constant(32, tf.int64)), lo


def _split_halves_portable(counts):
  # TFLite has no 64-bit BitwiseAnd, RightShift or FloorDiv: a float estimate
  # of the high half, corrected by one step, is exact far beyond any count a
  # tensor can hold (2**55).
  two32 = tf.constant(2**32, tf.int64)
  hi = tf.cast(tf.cast(counts, tf.float32) * (1.0 / 2**32), tf.int64)
  rest = counts - hi * two32
  hi += tf.cast(rest >= two32, tf.int64) - tf.cast(rest < 0, tf.int64)
  return hi, counts - hi * two32


@register(jax_private.iota_2x32_shape_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _iota_2x32_shape(ctx, *, shape):
  # The row-major position of each element as a 64-bit count, split in halves.
  size = 1
  for d in shape:
    size = size * ctx.dim(d)
  out_shape = ctx.shape(shape)
  counts = tf.range(tf.cast(size, tf.int64), dtype=tf.int64)
  hi, lo = ctx.kernel_or("BitwiseAnd", _split_halves, _split_halves_portable)(counts)
  return [
    tf.reshape(tf.cast(hi, tf.uint32), out_shape),
    tf.reshape(tf.cast(lo, tf.uint32), out_shape),
  ]


@register_in_lanes(jax_private.iota_2x32_shape_p, "uint32_as_int32_bits")
def _iota_2x32_shape_in_lanes(ctx, *, shape):
  # TF.js holds no more than 2**31 elements (it reads int64 as int32): the
  # high halves are 0, and the counts are int32 lanes of uint32.
  size = 1
  for d in shape:
    size = size * ctx.dim(d)
  out_shape = ctx.shape(shape)
  lo = tf.range(size, dtype=tf.int32)
  return [tf.zeros(out_shape, tf.int32), tf.reshape(lo, out_shape)]


# XLA's RandomAlgorithm (as in jax.lax.RandomAlgorithm) -> TF's Algorithm ints
# that XlaRngBitGenerator takes: PHILOX=1, THREEFRY=2, AUTO_SELECT=3.
_TF_RNG_ALGORITHM = {0: 3, 1: 2, 2: 1}


@register(
  core_primitives.rng_bit_generator_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False
)
def _rng_bit_generator(ctx, key, *, shape, dtype, algorithm, out_sharding=None):
  del out_sharding
  # Where XLA ops are allowed, XlaRngBitGenerator: one op that XLA expands
  # into the same hashes as the form in ordinary ops (some 250-370 TF ops),
  # and 3-7x faster than it outside jit_compile (a million bits, on CPU).
  generate = ctx.kernel_or("XlaRngBitGenerator", _xla_rng_bit_generator, _rng_bits_in_ops)
  return generate(ctx, key, shape, np.dtype(dtype), algorithm)


def _rng_bits_in_ops(ctx, key, shape, dtype, algorithm):
  """XLA's bit generator written out (jax2tf/jax_forms/rng_bits.py), lowered
  through the rules of the hashes and of integer arithmetic."""
  fn = rng_bits.generator(shape, dtype, algorithm, ctx.avals_in[0].dtype)
  return ctx.lower_fun(fn, [key])


def _xla_rng_bit_generator(ctx, key, shape, dtype, algorithm):
  key_aval = ctx.avals_in[0]
  # JAX keeps the state as u32[4]; the XLA op takes it as u64[2].
  as_u32 = np.dtype(key_aval.dtype) == np.uint32
  state = tf.bitcast(tf.reshape(key, [2, 2]), tf.uint64) if as_u32 else key
  # XlaRngBitGenerator has no uint16 output; JAX's uint16 bits are the low
  # halves of the uint32 bits (checked against JAX on CPU).
  gen_dtype = tf.uint32 if dtype == np.uint16 else tf.as_dtype(dtype)
  new_state, bits = tf_private.xla_rng_bit_generator(
    _TF_RNG_ALGORITHM[int(getattr(algorithm, "value", algorithm))],
    state,
    ctx.shape(shape),
    gen_dtype,
  )
  if gen_dtype != tf.as_dtype(dtype):
    bits = tf.cast(bits, tf.as_dtype(dtype))
  if as_u32:
    new_state = tf.reshape(tf.bitcast(new_state, tf.uint32), [4])
  return [new_state, bits]


@register(core_primitives.rng_uniform_p, narrow_ints_in_int32=False)
def _rng_uniform(ctx, minval, maxval, *, shape):
  # JAX gives no guarantee about these bits (XLA's stateful RngUniform); only
  # the distribution and the range [minval, maxval) carry over.
  return tf.random.uniform(ctx.shape(shape), minval, maxval, dtype=ctx.tf_dtype())
