"""A scan's carry-free work runs before the loop (jax2tf/graph/scan_hoisting.py):
the same results as jax.jit, fewer ops in the loop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf
from tests.support import compare, loops

RNG = np.random.default_rng(3)
W = RNG.normal(size=(5, 6)).astype(np.float32)
U = RNG.normal(size=(6, 6)).astype(np.float32)
B = RNG.normal(size=(6,)).astype(np.float32)
XS = RNG.normal(size=(7, 4, 5)).astype(np.float32)


def _recurrence(w, u, b, xs, reverse=False):
  # An RNN: each step's input projection reads no carried value.
  def step(h, x):
    h = jnp.tanh(x @ w + h @ u + b.reshape(1, -1))
    return h, h.sum(axis=1)

  return lax.scan(step, jnp.zeros((xs.shape[1], 6), xs.dtype), xs, reverse=reverse)


def _projections_as_outputs(w, u, b, xs):
  # Per-step values the body only passes out, and one it adds to the carry.
  def step(c, x):
    p = x @ w
    return c + p.sum(), (p, jnp.sin(p) * b)

  return lax.scan(step, jnp.float32(0), xs)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("enable_xla", [True, False])
def test_recurrence_with_input_projections_computed_before_the_loop_is_jaxs(reverse, enable_xla):
  loops.assert_like_jax(lambda *a: _recurrence(*a, reverse=reverse), (W, U, B, XS), enable_xla)


def test_the_loop_keeps_only_the_matmul_of_the_carry():
  counts = loops.loop_op_counts(_recurrence, (W, U, B, XS))
  assert counts["MatMul"] == 1, counts  # h @ u; x @ w ran before the loop
  assert counts["Reshape"] == 0, counts  # the bias's reshape too


def test_per_step_values_the_body_passes_out_are_jaxs():
  loops.assert_like_jax(_projections_as_outputs, (W, U, B, XS))
  assert loops.loop_op_counts(_projections_as_outputs, (W, U, B, XS))["MatMul"] == 0


def test_a_polymorphic_length_keeps_the_per_step_work_in_the_loop():
  # Computing every step at once needs the length to size the values.
  converted = jax2tf.convert(
    _recurrence, native_serialization=False, polymorphic_shapes=[None, None, None, "(t, 4, 5)"]
  )
  f = tf.function(converted, autograph=False)
  for t in (1, 7):
    got = f(W, U, B, XS[:t])
    want = jax.jit(_recurrence)(W, U, B, XS[:t])
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
      compare.assert_same(np.asarray(w), np.asarray(g), tol=(1e-6, 1e-6))


def test_stateful_draws_stay_in_the_loop():
  # lax.rng_uniform reads nothing, yet gives new values at each step.
  def draws(xs):
    def step(c, x):
      return c, x + lax.rng_uniform(0.0, 1.0, x.shape)

    return lax.scan(step, jnp.float32(0), xs)[1]

  converted = jax2tf.convert(draws, native_serialization=False, with_gradient=False)
  rows = np.asarray(tf.function(converted, autograph=False)(np.zeros((6, 50), np.float32)))
  assert np.all((rows >= 0) & (rows < 1))
  assert len({r.tobytes() for r in rows}) == len(rows), "steps drew the same values"
