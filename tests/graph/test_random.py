"""Pseudo-random numbers under graph serialization (rules/random.py), beyond its cases.

The family's cases are in tests/cases/random.py.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax2tf
from tests.tf_modes import TF_MODES, in_mode

FLAVOURS = ("xla", "no_xla")


@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_default_prng_impl_rbg(mode, flavour):
  """jax_default_prng_impl='rbg' takes effect when tracing for conversion
  (without XLA ops too: XLA's bit generator written out, rng_bits.py)."""
  def f(seed):
    key = jax.random.PRNGKey(seed)
    return jax.random.split(key, 2), jax.random.bits(key, (4,))

  seed = np.int32(5)
  with jax.default_prng_impl("rbg"):
    f_tf = in_mode(jax2tf.convert(f, native_serialization=False,
                                  enable_xla=(flavour == "xla")), mode)
    expected = jax.jit(f)(seed)
    result = f_tf(seed)
  assert np.asarray(expected[0]).shape == (2, 4)
  for r, e in zip(result, expected):
    np.testing.assert_array_equal(np.asarray(r), np.asarray(e))


def _top_level_typed_keys(s):
  k1, k2 = jax.random.split(jax.random.key(s))          # slices of a key array
  keys = jnp.stack([k1, k2, jax.random.fold_in(k1, 3)])  # concatenation of keys
  picked = jnp.where(s > 0, keys[::-1], keys)            # select_n on keys
  return jax.random.key_data(picked), jax.random.normal(picked[0], (3,)), k1 == k2


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_key_data_jaxpr_top_level(mode):
  """Structural primitives on typed key arrays, lowered on their key data.

  Inside jit/cond/loops the rules rewrite bodies with key_data_jaxpr; this
  runs the same rewrite on a top-level jaxpr and lowers it directly.
  """
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  from jax2tf import targets  # pylint: disable=g-import-not-at-top
  from jax2tf.graph import (
    interpreter,  # pylint: disable=g-import-not-at-top
    key_data,  # pylint: disable=g-import-not-at-top
  )
  seed = np.int32(3)
  closed = jax.make_jaxpr(_top_level_typed_keys)(seed)
  assert key_data.mentions_keys(closed)
  physical = key_data.key_data_jaxpr(closed)
  assert not key_data.mentions_keys(physical)
  for target in (targets.TF_XLA, targets.TF_NO_XLA):
    def f_tf(x):
      return interpreter.lower_jaxpr(interpreter.make_env(target, {}), physical, [x])
    res = in_mode(f_tf, mode)(tf.constant(seed))
    for r, e in zip(res, jax.jit(_top_level_typed_keys)(seed)):
      np.testing.assert_allclose(np.asarray(r), np.asarray(e), rtol=1e-6)


def test_threefry_graph_has_no_xla_ops():
  f_tf = jax2tf.convert(lambda k: jax.random.normal(k, (3,)), native_serialization=False,
                        enable_xla=False)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  graph = tf.function(f_tf, autograph=False).get_concrete_function(
      tf.TensorSpec((2,), tf.uint32)).graph
  ops = {op.type for op in graph.get_operations()}
  assert not {o for o in ops if o.startswith("Xla")}, ops
