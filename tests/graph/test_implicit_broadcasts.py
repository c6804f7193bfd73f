"""Broadcasts left to TF's elementwise ops (jax2tf/graph/implicit_broadcasts.py):
gone from the graph where a user of full shape broadcasts for them, kept
where nothing else fixes the result's shape, and the values are JAX's."""

import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf


def _op_counts(f_tf, *specs) -> collections.Counter:
  graph = tf.function(f_tf, autograph=False).get_concrete_function(*specs).graph
  return collections.Counter(op.type for op in graph.get_operations())


def _broadcasts_in_jaxpr(f, *args) -> int:
  # Sub-jaxprs included (jnp.where is a nested jit).
  return str(jax.make_jaxpr(f)(*args)).count("broadcast_in_dim")


def _check(f, args, polymorphic_shapes=None, specs=None):
  """Graph serialization of `f` as TF ops; its values against jax.jit's."""
  f_tf = jax2tf.convert(f, native_serialization=False, polymorphic_shapes=polymorphic_shapes)
  want = jax.jit(f)(*args)
  got = tf.function(f_tf, autograph=False)(*args)
  # XLA may fuse a product and a sum into one rounding.
  np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
  specs = specs or [tf.TensorSpec(np.shape(a), np.asarray(a).dtype) for a in args]
  return _op_counts(f_tf, *specs)


RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 1, 5)).astype(np.float32)
Y = RNG.normal(size=(2, 3, 5)).astype(np.float32)


def test_a_broadcast_whose_users_broadcast_is_a_reshape_only():
  def f(x, y):
    return jnp.where(x > 0, y, 0.0) + x * y

  assert _broadcasts_in_jaxpr(f, X, Y) >= 2  # x to (2, 3, 5), 0.0 to (2, 3, 5)
  ops = _check(f, (X, Y))
  assert "BroadcastTo" not in ops, ops


def test_with_a_polymorphic_batch_no_shape_is_computed():
  def f(x, y):
    return jnp.maximum(x, y) - jnp.where(y > 0, x, -1.0)

  specs = [tf.TensorSpec([None, 1, 5], tf.float32), tf.TensorSpec([None, 3, 5], tf.float32)]
  ops = _check(f, (X, Y), polymorphic_shapes=["(b, 1, 5)", "(b, 3, 5)"], specs=specs)
  assert "BroadcastTo" not in ops, ops


def test_one_of_the_broadcast_operands_stays_whole():
  def f(p, a):  # (3, 1), (1, 4) -> (3, 4): no operand has the result's shape
    return jnp.where(p, a, 0.0)

  p = RNG.normal(size=(3, 1)) > 0
  a = RNG.normal(size=(1, 4)).astype(np.float32)
  assert _broadcasts_in_jaxpr(f, p, a) == 3
  ops = _check(f, (p, a))
  assert ops["BroadcastTo"] == 1, ops


def test_a_broadcast_read_by_a_reduction_stays_whole():
  def f(x):
    return jnp.sum(jnp.broadcast_to(x, (2, 3, 5)), axis=1)

  ops = _check(f, (X,))
  assert ops["BroadcastTo"] == 1, ops


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
def test_integer_and_boolean_users(dtype):
  x = RNG.integers(0, 2, size=(2, 1, 5)).astype(dtype)
  y = RNG.integers(0, 2, size=(2, 3, 5)).astype(dtype)

  def f(x, y):
    return jnp.where(y, x, False) if dtype is np.bool_ else jnp.where(y > 0, x, y), x == y

  f_tf = jax2tf.convert(f, native_serialization=False)
  for got, want in zip(tf.function(f_tf, autograph=False)(x, y), jax.jit(f)(x, y)):
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert got.shape == want.shape
