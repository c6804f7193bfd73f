"""Cases of the random family (random.py): key arrays, threefry2x32, rng_bit_generator.

Threefry keys must give JAX's bits exactly in every column; so must the
'rbg' implementations, which go through XLA's RngBitGenerator (written out in
ordinary ops with enable_xla=False), and lax.rng_bit_generator itself, for
every algorithm, bit width and state dtype.
"""

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import U32, Cases, V, case, exact_case, rand

CASES = Cases()

# ---------------------------------------------------------------------------
# A seed as the argument, so that nothing is folded at trace time.
def _rand(impl, sample):
  def f(seed):
    key = jax.random.key(seed, impl=impl)
    return sample(key)
  f.__name__ = f"random_{impl}"
  return f


for _impl in ("threefry2x32", "rbg", "unsafe_rbg"):
  CASES.add(f"random_normal_{_impl}", _rand(_impl, lambda k: jax.random.normal(k, (3, 5))),
            V(42, U32), tol=(1e-5, 1e-6))
  CASES.add(f"random_uniform_{_impl}", _rand(_impl, lambda k: jax.random.uniform(k, (7,))),
            V(7, U32), exact=True, slow=_impl != "threefry2x32")
  CASES.add(f"random_bits_{_impl}",
            _rand(_impl, lambda k: jax.random.bits(k, (4, 3), np.uint32)),
            V(3, U32), slow=_impl == "threefry2x32")
  # rbg's split is threefry on the key; unsafe_rbg's draws bits.
  CASES.add(f"random_split_{_impl}",
            _rand(_impl, lambda k: jax.random.key_data(jax.random.split(k, 3))),
            V(11, U32), slow=True)
# Key implementations whose hash JAX lowers as lax operations.
for _impl in ("philox2x32", "philox4x32", "threefry4x32"):
  CASES.add(f"random_uniform_{_impl}", _rand(_impl, lambda k: jax.random.uniform(k, (7,))),
            V(7, U32), exact=True)
  CASES.add(f"random_split_bits_{_impl}", _rand(_impl, lambda k: jax.random.bits(
      jax.random.fold_in(jax.random.split(k, 2)[1], 5), (3, 2), np.uint32)), V(9, U32))
CASES.add("random_bits_uint8", _rand("threefry2x32", lambda k: jax.random.bits(k, (9,), np.uint8)),
          V(5, U32), slow=True)
CASES.add("random_gamma", _rand("threefry2x32", lambda k: jax.random.gamma(k, 2.5, (6,))),
          V(1, U32), tol=(1e-4, 1e-5), slow=True)
CASES.add("random_categorical", _rand("threefry2x32", lambda k: jax.random.categorical(
    k, jnp.log(jnp.array([0.1, 0.2, 0.7])), shape=(10,))), V(2, U32), slow=True)
CASES.add("random_permutation", _rand("threefry2x32", lambda k: jax.random.permutation(k, 10)),
          V(2, U32), slow=True)
CASES.add("random_bits_uint64",
          _rand("threefry2x32", lambda k: jax.random.bits(k, (4,), np.uint64)),
          V(3, U32), x64=True, slow=True)
CASES.add("rng_bit_generator_philox", lambda k: lax.rng_bit_generator(
    k, (3, 4), dtype=np.uint32, algorithm=lax.RandomAlgorithm.RNG_PHILOX),
          V(np.array([1, 2, 3, 4], np.uint32), U32), slow=True)
CASES.add("rng_bit_generator_three_fry", lambda k: lax.rng_bit_generator(
    k, (5,), dtype=np.uint32, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY),
          V(np.array([1, 2, 3, 4], np.uint32), U32), slow=True)


# ---------------------------------------------------------------------------
# Raw and typed keys as arguments.
f32, u32 = np.float32, np.uint32
RAW_KEY = np.array([0, 42], u32)        # jax.random.PRNGKey(42)
OTHER_KEY = np.array([1234, 5678], u32)
RBG_KEY = np.array([1, 2, 3, 4], u32)


def _typed(seed, impl=None):
  return jax.random.key(seed, impl=impl) if impl else jax.random.key(seed)


def _in_range(low, high):
  def compare(args, expected, actual, tol):
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, (
        f"shape/dtype {actual.shape}/{actual.dtype} where JAX has "
        f"{expected.shape}/{expected.dtype}")
    assert np.all(actual >= low) and np.all(actual < high), actual
  return compare


_exact = exact_case


CASES += [
    # threefry, raw uint32 keys (jax.random.PRNGKey): random_wrap/unwrap
    _exact("bits_u32", lambda k: jax.random.bits(k, (7,)), RAW_KEY),
    _exact("bits_u8", lambda k: jax.random.bits(k, (3, 5), jnp.uint8), RAW_KEY),
    _exact("bits_u16", lambda k: jax.random.bits(k, (4,), jnp.uint16), OTHER_KEY, slow=True),
    _exact("split_raw_key", lambda k: jax.random.split(k), RAW_KEY),
    _exact("split_5", lambda k: jax.random.split(k, 5), OTHER_KEY),
    _exact("split_2d", lambda k: jax.random.split(k, (2, 3)), RAW_KEY, slow=True),
    _exact("fold_in", lambda k: jax.random.fold_in(k, 17), RAW_KEY, slow=True),
    _exact("fold_in_traced", lambda k, d: jax.random.fold_in(k, d), RAW_KEY,
           np.uint32(123456789)),
    _exact("uniform", lambda k: jax.random.uniform(k, (3, 4)), RAW_KEY),
    case("uniform_range", lambda k: jax.random.uniform(k, (6,), minval=-2.0, maxval=5.0),
         OTHER_KEY, tol=(1e-6, 1e-6), slow=True),
    case("normal", lambda k: jax.random.normal(k, (8,)), RAW_KEY, tol=(1e-5, 1e-6)),
    _exact("randint", lambda k: jax.random.randint(k, (10,), -5, 100), RAW_KEY),
    _exact("bernoulli", lambda k: jax.random.bernoulli(k, 0.3, (12,)), RAW_KEY, slow=True),
    _exact("categorical", lambda k, lg: jax.random.categorical(k, lg), RAW_KEY, rand((4, 6))),
    _exact("permutation", lambda k: jax.random.permutation(k, 10), RAW_KEY),
    _exact("permutation_array", lambda k, x: jax.random.permutation(k, x), OTHER_KEY,
           rand((6, 2)), slow=True),
    case("split_then_normal",
         lambda k: jax.vmap(lambda kk: jax.random.normal(kk, (3,)))(jax.random.split(k, 4)),
         RAW_KEY, tol=(1e-5, 1e-6)),
    _exact("vmap_fold_in",
           lambda k: jax.vmap(lambda d: jax.random.fold_in(k, d))(jnp.arange(4)), RAW_KEY,
           slow=True),
    _exact("key_in_fori_loop",
           lambda k: lax.fori_loop(0, 3, lambda i, c: jax.random.split(c)[0], k), RAW_KEY),
    _exact("key_in_scan",
           lambda k: lax.scan(lambda c, _: (jax.random.split(c)[0], jax.random.bits(c, (2,))),
                              k, None, length=4), RAW_KEY),
    # typed keys (jax.random.key): random_seed, random_bits on key<fry>
    _exact("typed_key_seed", lambda s: jax.random.key_data(jax.random.key(s)), np.int32(7)),
    _exact("typed_key_seed_negative", lambda s: jax.random.key_data(jax.random.key(s)),
           np.int32(-3), slow=True),
    case("typed_key_normal", lambda x: jax.random.normal(_typed(1), x.shape) * x,
         rand((2, 3)), tol=(1e-5, 1e-6)),
    _exact("typed_key_split_bits",
           lambda s: jax.vmap(lambda k: jax.random.bits(k, (2,)))(
               jax.random.split(jax.random.key(s), 3)), np.int32(5)),
    _exact("typed_key_fold_in_batch",
           lambda s: jax.random.key_data(jax.vmap(jax.random.fold_in)(
               jax.random.split(jax.random.key(s), 3), jnp.arange(3, dtype=jnp.uint32))),
           np.int32(9)),
    _exact("typed_key_vmap_seed", lambda s: jax.random.key_data(jax.vmap(jax.random.key)(s)),
           np.array([1, 2, 3], np.int32), slow=True),
    _exact("wrap_key_data", lambda k: jax.random.uniform(jax.random.wrap_key_data(k), (3,)),
           RAW_KEY),
    _exact("clone",
           lambda k: jax.random.bits(jax.random.clone(jax.random.wrap_key_data(k)), (3,)),
           RAW_KEY, slow=True),
    _exact("threefry2x32_direct", lambda k, c: jex.random.threefry_2x32(k, c),
           RAW_KEY, np.arange(10, dtype=u32)),
    case("gamma", lambda k: jax.random.gamma(k, jnp.array([0.5, 1.0, 3.0], f32)), RAW_KEY,
         tol=(1e-5, 1e-6)),
    # a typed key next to a custom_jvp function (jax.nn.relu), as in a VAE
    case("wrapped_key_with_custom_jvp",
         lambda k, x: jax.nn.relu(x) + jax.random.normal(
             jax.random.wrap_key_data(k, impl="threefry2x32"), x.shape),
         RAW_KEY, rand((3, 2)), tol=(1e-5, 1e-6)),
    # symbolic shapes
    case("normal_poly", lambda k, x: jax.random.normal(k, x.shape) + x, RAW_KEY, rand((3, 2)),
         polymorphic_shapes=[None, "(b, _)"], tol=(1e-5, 1e-6)),
    _exact("bits_poly", lambda k, x: jax.random.bits(k, (x.shape[0] * 2,)), RAW_KEY, rand((5,)),
           polymorphic_shapes=[None, "(b,)"]),
    _exact("split_poly", lambda k, x: jax.random.split(k, x.shape[0]), RAW_KEY, rand((3,)),
           polymorphic_shapes=[None, "(b,)"]),
    # rbg / unsafe_rbg key implementations
    _exact("rbg_bits", lambda s: jax.random.bits(_typed(s, "rbg"), (5,)), np.int32(3)),
    _exact("rbg_bits_u8", lambda s: jax.random.bits(_typed(s, "rbg"), (6,), jnp.uint8),
           np.int32(3), slow=True),
    _exact("rbg_bits_u16", lambda s: jax.random.bits(_typed(s, "rbg"), (6,), jnp.uint16),
           np.int32(3)),
    case("rbg_normal", lambda s: jax.random.normal(_typed(s, "rbg"), (2, 3)), np.int32(11),
         tol=(1e-5, 1e-6)),
    # rbg's seed, split and fold_in are threefry computations: no XLA needed.
    _exact("rbg_split_fold_in",
           lambda s: jax.random.key_data(jax.vmap(lambda k: jax.random.fold_in(k, 5))(
               jax.random.split(_typed(s, "rbg"), 2))), np.int32(4)),
    _exact("unsafe_rbg_bits", lambda s: jax.random.bits(_typed(s, "unsafe_rbg"), (5,)),
           np.int32(3)),
    _exact("unsafe_rbg_split",
           lambda s: jax.random.key_data(jax.random.split(_typed(s, "unsafe_rbg"))),
           np.int32(3), slow=True),
    _exact("rng_bit_generator_u32", lambda k: lax.rng_bit_generator(k, (3, 4)), RBG_KEY),
    _exact("rng_bit_generator_u8", lambda k: lax.rng_bit_generator(k, (7,), dtype=jnp.uint8),
           RBG_KEY),
    _exact("rng_bit_generator_threefry",
           lambda k: lax.rng_bit_generator(k, (5,),
                                           algorithm=lax.RandomAlgorithm.RNG_THREE_FRY),
           RBG_KEY, slow=True),
    _exact("rng_bit_generator_philox_5",
           lambda k: lax.rng_bit_generator(k, (5,), algorithm=lax.RandomAlgorithm.RNG_PHILOX),
           RBG_KEY),
    # XLA's stateful RngUniform: JAX fixes no bits, only the range.
    case("rng_uniform", lambda x: lax.rng_uniform(-1.0, 2.0, (50,)) + x * 0, rand((50,)),
         compare=_in_range(-1.0, 2.0)),
]


# ---------------------------------------------------------------------------
# lax.rng_bit_generator: XLA's generators, written out in ordinary ops without
# XLA (jax2tf/jax_forms/rng_bits.py), bit for bit with the new state. The keys'
# counters carry out of their low word, or wrap at 2**64 (philox's 128-bit
# counter then carries into the key word).
_CARRY_KEY = np.array([7, 9, 0xFFFFFFFE, 5], u32)
_WRAP_KEY = np.array([0xDEADBEEF, 9, 0xFFFFFFFD, 0xFFFFFFFF], u32)
_WRAP_KEY_U64 = np.array([0x00000009DEADBEEF, 2**64 - 3], np.uint64)
_ALGORITHMS = {"default": lax.RandomAlgorithm.RNG_DEFAULT,
               "threefry": lax.RandomAlgorithm.RNG_THREE_FRY,
               "philox": lax.RandomAlgorithm.RNG_PHILOX}


def _rbg(shape, dtype, algorithm):
  return lambda k: lax.rng_bit_generator(k, shape, dtype=dtype, algorithm=_ALGORITHMS[algorithm])


def _rbg_like(dtype, algorithm):
  """Bits of the shape of the second argument (polymorphic shapes)."""
  return lambda k, x: lax.rng_bit_generator(k, x.shape, dtype=dtype,
                                            algorithm=_ALGORITHMS[algorithm])


for _alg in _ALGORITHMS:
  for _dt in (np.uint8, np.uint16, np.uint32, np.uint64):
    _wide = _dt == np.uint64
    CASES += [_exact(f"rbg_{_alg}_{np.dtype(_dt).name}_3x5", _rbg((3, 5), _dt, _alg), _CARRY_KEY,
                     x64=_wide, slow=_dt != np.uint32)]
  CASES += [
      _exact(f"rbg_{_alg}_scalar", _rbg((), np.uint32, _alg), _WRAP_KEY, slow=True),
      _exact(f"rbg_{_alg}_empty", _rbg((0, 3), np.uint32, _alg), _CARRY_KEY, slow=True),
      _exact(f"rbg_{_alg}_wraps", _rbg((2, 7), np.uint32, _alg), _WRAP_KEY),
      _exact(f"rbg_{_alg}_u64_state", _rbg((3, 3), np.uint32, _alg), _WRAP_KEY_U64, slow=True),
      _exact(f"rbg_{_alg}_u64_state_u64", _rbg((5,), np.uint64, _alg), _WRAP_KEY_U64,
             slow=True),
  ]
# Threefry draws 32 bits or fewer in pairs along the first axis of even size,
# else along the longest (the first of equals).
for _shape in [(6, 3), (3, 1, 4), (5, 5), (7, 1, 3), (1, 9, 9, 2)]:
  CASES += [_exact(f"rbg_threefry_{'x'.join(map(str, _shape))}",
                   _rbg(_shape, np.uint32, "threefry"), _CARRY_KEY, slow=_shape != (5, 5))]
CASES += [
    _exact("rbg_threefry_u16_odd_pairs", _rbg((3, 7), np.uint16, "threefry"), _CARRY_KEY),
    _exact("rbg_philox_u8_7", _rbg((7,), np.uint8, "philox"), _WRAP_KEY, slow=True),
    _exact("rbg_default_poly", _rbg_like(np.uint32, "default"), _CARRY_KEY, rand((5, 3)),
           polymorphic_shapes=[None, "(b, 3)"]),
    _exact("rbg_philox_u64_poly", _rbg_like(np.uint64, "philox"), _CARRY_KEY, rand((3,)),
           polymorphic_shapes=[None, "(b,)"], x64=True, slow=True),
    _exact("rbg_threefry_poly_even", _rbg_like(np.uint32, "threefry"), _CARRY_KEY,
           rand((6, 3)), polymorphic_shapes=[None, "(2*b, 3)"], slow=True),
    # Whether a symbolic axis is even, and so the pairs' axis, is known only
    # at run time: each element finds its hash and word then.
    _exact("rbg_threefry_poly_parity_odd", _rbg_like(np.uint8, "threefry"), _CARRY_KEY,
           rand((5, 4)), polymorphic_shapes=[None, "(b, 4)"]),
    _exact("rbg_threefry_poly_parity_even", _rbg_like(np.uint32, "threefry"), _CARRY_KEY,
           rand((6, 4)), polymorphic_shapes=[None, "(b, 4)"], slow=True),
    _exact("rbg_threefry_poly_longest", _rbg_like(np.uint32, "threefry"), _CARRY_KEY,
           rand((3, 5)), polymorphic_shapes=[None, "(a, b)"], slow=True),
]


# Samplers by shape and seed, in the exhaustive tier.
_SAMPLERS = {
    "normal": lambda k, s: jax.random.normal(k, s),
    "uniform": lambda k, s: jax.random.uniform(k, s),
    "bits32": lambda k, s: jax.random.bits(k, s),
    "bits8": lambda k, s: jax.random.bits(k, s, jnp.uint8),
    "randint": lambda k, s: jax.random.randint(k, s, 0, 1000),
    "truncated_normal": lambda k, s: jax.random.truncated_normal(k, -1.0, 2.0, s),
    "exponential": lambda k, s: jax.random.exponential(k, s),
    "gumbel": lambda k, s: jax.random.gumbel(k, s),
    "choice": lambda k, s: jax.random.choice(k, 20, s),
    "split_fold": lambda k, s: jax.random.key_data(jax.vmap(lambda kk: jax.random.fold_in(kk, 3))(
        jax.random.split(jax.random.wrap_key_data(k), s[0]))),
}
for _name, _fn in _SAMPLERS.items():
  for _shape in [(5,), (2, 3, 4)]:
    for _seed in (0, 2**31 - 1):
      # The key data of jax.random.key(seed), written out (threefry: [0, seed]).
      CASES.add(f"{_name}_{'x'.join(map(str, _shape))}_seed{_seed}",
                (lambda fn, shape: lambda k: fn(k, shape))(_fn, _shape),
                np.array([0, _seed], u32), tol=(1e-5, 1e-6), slow=True)

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/random.json.
CASES[:] = recorded.apply(CASES, "tflite", "random")
CASES[:] = recorded.apply(CASES, "tflite_native", "random")
CASES[:] = recorded.apply(CASES, "tflite_litert", "random")
CASES[:] = recorded.apply(CASES, "tfjs", "random")
