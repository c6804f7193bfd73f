"""Cases of the random family (random.py): key arrays, threefry2x32, rng_bit_generator.

Threefry keys must give JAX's bits exactly in every column; the 'rbg'
implementations go through XLA's RngBitGenerator and are refused with
enable_xla=False wherever they generate bits.
"""

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import U32, Cases, V, case, exact_case, rand, refused

CASES = Cases()

_NO_XLA_RNG = refused("rng_bit_generator", "XLA's RngBitGenerator has no ordinary TF op",
                      "graph_no_xla")


# ---------------------------------------------------------------------------
# A seed as the argument, so that nothing is folded at trace time.
def _rand(impl, sample):
  def f(seed):
    key = jax.random.key(seed, impl=impl)
    return sample(key)
  f.__name__ = f"random_{impl}"
  return f


for _impl in ("threefry2x32", "rbg", "unsafe_rbg"):
  _refuse = None if _impl == "threefry2x32" else _NO_XLA_RNG
  CASES.add(f"random_normal_{_impl}", _rand(_impl, lambda k: jax.random.normal(k, (3, 5))),
            V(42, U32), tol=(1e-5, 1e-6), refuse=_refuse)
  CASES.add(f"random_uniform_{_impl}", _rand(_impl, lambda k: jax.random.uniform(k, (7,))),
            V(7, U32), exact=True, slow=_impl != "threefry2x32", refuse=_refuse)
  CASES.add(f"random_bits_{_impl}",
            _rand(_impl, lambda k: jax.random.bits(k, (4, 3), np.uint32)),
            V(3, U32), slow=_impl == "threefry2x32", refuse=_refuse)
  # rbg's split is threefry on the key; unsafe_rbg's draws bits.
  CASES.add(f"random_split_{_impl}",
            _rand(_impl, lambda k: jax.random.key_data(jax.random.split(k, 3))),
            V(11, U32), slow=True, refuse=_refuse if _impl == "unsafe_rbg" else None)
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
          V(np.array([1, 2, 3, 4], np.uint32), U32), slow=True, refuse=_NO_XLA_RNG)
CASES.add("rng_bit_generator_three_fry", lambda k: lax.rng_bit_generator(
    k, (5,), dtype=np.uint32, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY),
          V(np.array([1, 2, 3, 4], np.uint32), U32), slow=True, refuse=_NO_XLA_RNG)


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
    _exact("rbg_bits", lambda s: jax.random.bits(_typed(s, "rbg"), (5,)), np.int32(3),
           refuse=_NO_XLA_RNG),
    _exact("rbg_bits_u8", lambda s: jax.random.bits(_typed(s, "rbg"), (6,), jnp.uint8),
           np.int32(3), refuse=_NO_XLA_RNG, slow=True),
    _exact("rbg_bits_u16", lambda s: jax.random.bits(_typed(s, "rbg"), (6,), jnp.uint16),
           np.int32(3), refuse=_NO_XLA_RNG),
    case("rbg_normal", lambda s: jax.random.normal(_typed(s, "rbg"), (2, 3)), np.int32(11),
         tol=(1e-5, 1e-6), refuse=_NO_XLA_RNG),
    # rbg's seed, split and fold_in are threefry computations: no XLA needed.
    _exact("rbg_split_fold_in",
           lambda s: jax.random.key_data(jax.vmap(lambda k: jax.random.fold_in(k, 5))(
               jax.random.split(_typed(s, "rbg"), 2))), np.int32(4)),
    _exact("unsafe_rbg_bits", lambda s: jax.random.bits(_typed(s, "unsafe_rbg"), (5,)),
           np.int32(3), refuse=_NO_XLA_RNG),
    _exact("unsafe_rbg_split",
           lambda s: jax.random.key_data(jax.random.split(_typed(s, "unsafe_rbg"))),
           np.int32(3), refuse=_NO_XLA_RNG, slow=True),
    _exact("rng_bit_generator_u32", lambda k: lax.rng_bit_generator(k, (3, 4)), RBG_KEY,
           refuse=_NO_XLA_RNG),
    _exact("rng_bit_generator_u8", lambda k: lax.rng_bit_generator(k, (7,), dtype=jnp.uint8),
           RBG_KEY, refuse=_NO_XLA_RNG),
    _exact("rng_bit_generator_threefry",
           lambda k: lax.rng_bit_generator(k, (5,),
                                           algorithm=lax.RandomAlgorithm.RNG_THREE_FRY),
           RBG_KEY, refuse=_NO_XLA_RNG, slow=True),
    _exact("rng_bit_generator_philox_5",
           lambda k: lax.rng_bit_generator(k, (5,), algorithm=lax.RandomAlgorithm.RNG_PHILOX),
           RBG_KEY, refuse=_NO_XLA_RNG),
    # XLA's stateful RngUniform: JAX fixes no bits, only the range.
    case("rng_uniform", lambda x: lax.rng_uniform(-1.0, 2.0, (50,)) + x * 0, rand((50,)),
         compare=_in_range(-1.0, 2.0)),
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
