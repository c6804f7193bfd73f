"""Sibling matmuls of a scan body as one (jax2tf/graph/sibling_matmuls.py): the
same results as jax.jit, one matmul where the body wrote one per gate."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf
from jax2tf.graph import scan_hoisting, sibling_matmuls
from tests.support import compare, loops

RNG = np.random.default_rng(5)
IN, HID, BATCH, STEPS = 5, 6, 4, 7
W = RNG.normal(size=(4, IN, HID)).astype(np.float32)  # input kernels, one per gate
U = RNG.normal(size=(4, HID, HID)).astype(np.float32)  # carry kernels
B = RNG.normal(size=(4, HID)).astype(np.float32)
TOL = (1e-5, 1e-5)  # four gates through a recurrence
XS = RNG.normal(size=(STEPS, BATCH, IN)).astype(np.float32)


def _lstm(w, u, b, xs, reverse=False, pairs=(0, 1, 2, 3)):
  # Flax's LSTMCell, gate by gate: each gate multiplies the carry by its own
  # kernel and adds its own bias and input projection. `pairs[k]`: the carry
  # projection gate k adds, computed in the order of the kernels.
  def step(carry, x):
    c, h = carry
    carried = [h @ u[k] + b[k].reshape(1, -1) for k in range(4)]
    gates = [x @ w[k] + carried[j] for k, j in enumerate(pairs)]
    i, f, o = (jax.nn.sigmoid(gates[k]) for k in (0, 1, 3))
    c = f * c + i * jnp.tanh(gates[2])
    h = o * jnp.tanh(c)
    return (c, h), h

  zeros = jnp.zeros((xs.shape[1], HID), xs.dtype)
  return lax.scan(step, (zeros, zeros), xs, reverse=reverse)


def _gru(w, u, b, xs):
  # Flax's GRUCell: the candidate gate adds its input projection to the
  # reset gate times its carry projection, so only two of three gates meet
  # their carry projection pairwise.
  def step(h, x):
    r = jax.nn.sigmoid(x @ w[0] + (h @ u[0] + b[0]))
    z = jax.nn.sigmoid(x @ w[1] + (h @ u[1] + b[1]))
    n = jnp.tanh(x @ w[2] + r * (h @ u[2] + b[2]))
    h = (1.0 - z) * n + z * h
    return h, h

  return lax.scan(step, jnp.zeros((xs.shape[1], HID), xs.dtype), xs)


def _same_chain(u, b, xs):
  # Every part meets the same ops, the part second in a subtraction.
  def step(h, x):
    parts = [jnp.tanh(b[k] - h @ u[k]) for k in range(3)]
    return parts[0] * parts[1] + parts[2] + x[:, :1], h

  return lax.scan(step, jnp.ones((xs.shape[1], HID), xs.dtype), xs)[0]


def _per_step_weights(u, xs):
  # Weights the loop slices anew at each step are not concatenated.
  def step(h, x):
    return jnp.tanh(h @ (x[0, 0] * u[0]) + h @ (x[0, 1] * u[1])), h

  return lax.scan(step, jnp.ones((BATCH, HID), xs.dtype), xs)[0]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("enable_xla", [True, False])
def test_an_lstm_written_gate_by_gate_is_jaxs(reverse, enable_xla):
  loops.assert_like_jax(lambda *a: _lstm(*a, reverse=reverse), (W, U, B, XS), enable_xla, tol=TOL)


def test_an_lstm_under_jit_compile_is_jaxs():
  loops.assert_like_jax(_lstm, (W, U, B, XS), jit_compile=True, tol=TOL)


def test_the_lstm_loop_multiplies_the_carry_once():
  counts = loops.loop_op_counts(_lstm, (W, U, B, XS))
  assert counts["MatMul"] == 1, counts  # four gates' kernels side by side
  assert counts["SplitV"] == 1, counts  # the gates parted after the sums
  assert counts["ConcatV2"] == 0, counts  # the kernels joined before the loop
  # The four input projections are one scanned array, read once a step and
  # added once, as are the biases; then the cell's own sum.
  assert counts["GatherV2"] == 1, counts
  assert counts["AddV2"] <= 1 + 1 + 1 + 2, counts  # + the loop's counters


def test_for_xla_the_input_projections_stay_one_array_per_gate():
  # XLA's CPU loops read one wide scanned array several times slower.
  counts = loops.loop_op_counts(_lstm, (W, U, B, XS), jit_compile=True)
  assert counts["MatMul"] == 1 and counts["GatherV2"] == 4, counts


def test_parts_that_meet_out_of_order_are_not_joined():
  def shuffled(*args):
    return _lstm(*args, pairs=(1, 0, 2, 3))

  loops.assert_like_jax(shuffled, (W, U, B, XS), tol=TOL)
  assert loops.loop_op_counts(shuffled, (W, U, B, XS))["GatherV2"] == 4


@pytest.mark.parametrize("jit_compile", [False, True])
def test_a_gru_written_gate_by_gate_is_jaxs(jit_compile):
  loops.assert_like_jax(_gru, (W, U, B, XS), jit_compile=jit_compile, tol=TOL)
  counts = loops.loop_op_counts(_gru, (W, U, B, XS), jit_compile=jit_compile)
  assert counts["MatMul"] == 1, counts  # the carry's three kernels side by side


def test_ops_every_part_meets_are_applied_once():
  loops.assert_like_jax(_same_chain, (U, B, XS), tol=TOL)
  counts = loops.loop_op_counts(_same_chain, (U, B, XS))
  assert counts["MatMul"] == 1 and counts["Tanh"] == 1 and counts["Sub"] == 1, counts


def test_weights_computed_at_each_step_stay_apart():
  loops.assert_like_jax(_per_step_weights, (U, XS), tol=TOL)
  assert loops.loop_op_counts(_per_step_weights, (U, XS))["MatMul"] == 2


def test_a_polymorphic_batch_is_jaxs():
  converted = jax2tf.convert(
    _lstm, native_serialization=False, polymorphic_shapes=[None, None, None, "(t, b, 5)"]
  )
  f = tf.function(converted, autograph=False)
  for t, batch in ((1, 3), (7, 4)):
    xs = XS[:t, :1].repeat(batch, axis=1)
    got, want = f(W, U, B, xs), jax.jit(_lstm)(W, U, B, xs)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
      compare.assert_same(np.asarray(w), np.asarray(g), tol=TOL)


def test_a_body_without_siblings_is_left_as_it_is():
  def step(u, h, x):
    return jnp.tanh(h @ u + x[:, :HID]), h

  body = jax.make_jaxpr(step)(U[0], jnp.ones((BATCH, HID)), jnp.ones((BATCH, HID)))
  assert sibling_matmuls.fuse(body, scan_hoisting.loop_constants(body.jaxpr, 1)) is body
