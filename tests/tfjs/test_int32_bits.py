"""32-bit integer semantics on TF.js (jax2tf/graph/int32_bits.py), bit for bit.

TF.js has no unsigned tensors and no working bitwise kernel, and computes
int32 products and casts in JavaScript numbers or float32. The rules' TF.js
forms must still give JAX's bits: every operation here runs on edge values
(0, +-1, the extremes, the 16-bit boundaries, the sign bit, random words) on
both Node backends and is compared exactly with `jax.jit`.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jax2tf

_EDGES = [0, 1, 2, 3, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x10001, 0x7FFFFFFF, 0x80000000,
          0x80000001, 0xFFFF0000, 0xFFFFFFFE, 0xFFFFFFFF, 0x12345678, 0x9E3779B9]


def _words(n: int, seed: int) -> np.ndarray:
  rng = np.random.default_rng(seed)
  return np.concatenate([np.array(_EDGES, np.uint32),
                         rng.integers(0, 2**32, n - len(_EDGES), dtype=np.uint64).astype(np.uint32)])


def _pairs(dtype) -> tuple[np.ndarray, np.ndarray]:
  # Every edge value against every other, then random pairs.
  a = np.repeat(np.array(_EDGES, np.uint32), len(_EDGES))
  b = np.tile(np.array(_EDGES, np.uint32), len(_EDGES))
  a = np.concatenate([a, _words(64, 1)])
  b = np.concatenate([b, _words(64, 2)])
  return a.view(dtype), b.view(dtype)


def _shift_pairs(dtype) -> tuple[np.ndarray, np.ndarray]:
  # Every amount from -2 to 33 (out of range at both ends) on the edge values.
  amounts = np.arange(-2, 34).astype(np.int64)
  x = np.repeat(np.array(_EDGES, np.uint32), len(amounts))
  s = np.tile(amounts, len(_EDGES)).astype(np.uint32)  # -2 becomes 2**32 - 2
  return x.view(dtype), s.view(dtype)


_BINARY = {
  "and": lambda a, b: a & b,
  "or": lambda a, b: a | b,
  "xor": lambda a, b: a ^ b,
  "mul": lambda a, b: a * b,
  "mulhi": lax.mulhi,
  "add": lambda a, b: a + b,
  "sub": lambda a, b: a - b,
  "lt": lambda a, b: a < b,
  "ge": lambda a, b: a >= b,
  "max": jnp.maximum,
  "min": jnp.minimum,
}
_SHIFTS = {
  "shift_left": lax.shift_left,
  "shift_right_logical": lax.shift_right_logical,
  "shift_right_arithmetic": lax.shift_right_arithmetic,
}
_UNARY = {
  "not": lambda a: ~a,
  "neg": lambda a: -a,
  "abs": jnp.abs,
  "square": jnp.square,
  "cube": lambda a: lax.integer_pow(a, 3),
  "to_float32": lambda a: a.astype(jnp.float32),
  "bits_to_float32": lambda a: lax.bitcast_convert_type(a, jnp.float32),
  "to_bool": lambda a: a.astype(jnp.bool_),
  "population_count": lax.population_count,
  "clz": lax.clz,
}


def _assert_bits_equal(fun, args, runners):
  expected = np.asarray(jax.jit(fun)(*args))
  model = jax2tf.to_tfjs(fun, *args)
  for backend, runner in runners.items():
    (actual,) = runner.run(model, *args)
    want = expected
    assert actual.dtype == want.dtype, f"{backend} backend: {actual.dtype}, not {want.dtype}"
    if want.dtype == np.float32:
      # Bits, not values: NaNs and signed zeros must match too.
      nan = np.isnan(want)
      np.testing.assert_array_equal(np.isnan(actual), nan, err_msg=f"{backend} backend")
      want, actual = want[~nan].view(np.uint32), actual[~nan].view(np.uint32)
    np.testing.assert_array_equal(actual, want, err_msg=f"{backend} backend")


@pytest.mark.parametrize("dtype", [np.uint32, np.int32])
@pytest.mark.parametrize("name", sorted(_BINARY))
def test_binary(name, dtype, runners):
  _assert_bits_equal(_BINARY[name], _pairs(dtype), runners)


@pytest.mark.parametrize("name", ["div", "rem"])
def test_integer_division(name, runners):
  # TF.js's wasm FloorDiv computes in float32: quotients near 2**31 are off
  # by tens there unless corrected. Divisors of 0 and -1 included.
  fun = {"div": lax.div, "rem": lax.rem}[name]
  _assert_bits_equal(fun, _pairs(np.int32), runners)


@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1)])
def test_integer_product(axes, runners):
  # TF.js's Prod of int32 rounds large products; odd and even axis lengths.
  x = _words(7 * 9, 4).view(np.int32).reshape(7, 9)
  _assert_bits_equal(lambda a: jnp.prod(a, axis=axes), (x,), runners)


@pytest.mark.parametrize("dtype", [np.uint32, np.int32])
@pytest.mark.parametrize("name", sorted(_SHIFTS))
def test_shift(name, dtype, runners):
  _assert_bits_equal(_SHIFTS[name], _shift_pairs(dtype), runners)


# jnp.abs of uint32 binds no primitive: abs is checked on int32 only.
@pytest.mark.parametrize("name,dtype", [(n, d) for n in sorted(_UNARY) for d in (np.uint32, np.int32)
                                        if (n, d) != ("abs", np.uint32)])
def test_unary(name, dtype, runners):
  words = _words(256, 3)
  # Denormals, infinities, NaNs and zeros of both signs for the bitcast.
  special = np.array([0x00000001, 0x007FFFFF, 0x00800000, 0x7F800000, 0xFF800000, 0x7FC00000,
                      0x80000000, 0x3F800000, 0x7F7FFFFF, 0x80000001], np.uint32)
  _assert_bits_equal(_UNARY[name], (np.concatenate([words, special]).view(dtype),), runners)


def _threefry_sample(key_data):
  key = jax.random.wrap_key_data(key_data, impl="threefry2x32")
  k1, k2 = jax.random.split(key)
  return (jax.random.bits(k1, (4, 33), jnp.uint32),
          jax.random.uniform(jax.random.fold_in(k2, 7), (50,)))


@functools.cache
def _threefry_model():
  # The key data is an argument: one model serves every key below, and
  # converting it takes most of a key's time (the keys run in a Node process
  # already up).
  return jax2tf.to_tfjs(_threefry_sample, np.zeros(2, np.uint32))


@pytest.mark.parametrize("key_data", [(0, 0), (0, 1234), (0, 2**31 - 1), (2**32 - 1, 2**32 - 1),
                                      (0x9E3779B9, 0x7F4A7C15)])
def test_threefry_bits_and_uniform_floats_match_jax(key_data, runners):
  key_data = np.array(key_data, np.uint32)
  expected = jax.jit(_threefry_sample)(key_data)
  model = _threefry_model()
  for backend, runner in runners.items():
    bits, floats = runner.run(model, key_data)
    assert bits.dtype == np.uint32
    np.testing.assert_array_equal(bits, expected[0], err_msg=backend)
    np.testing.assert_array_equal(floats, expected[1], err_msg=backend)
