"""jax.nn.softmax as TF's Softmax (jax2tf/graph/fusions.py): JAX's row of NaN
where the row holds a NaN or +inf, spread over the row only where something
reads the row's entries one by one."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf

# Rows JAX makes all NaN (a NaN, +inf, all -inf), and ordinary ones.
ROWS = np.array(
  [[np.nan, 1, 2], [np.inf, 1, 2], [-np.inf, -np.inf, -np.inf], [1, 2, 3], [-0.0, 0.0, 5]],
  np.float32,
)
VALUES = np.arange(12, dtype=np.float32).reshape(3, 4) - 5


def _attention(p, v):
  # Probabilities times values: each result sums over a whole row.
  return jnp.einsum("qk,kd->qd", jax.nn.softmax(p), v)


def _attention_transposed(p, v):
  # The same sums, the probabilities as the right operand.
  return jnp.einsum("kd,qk->dq", v, jax.nn.softmax(p))


def _scaled(p, v):
  # An elementwise reader sees every entry of the row.
  return jax.nn.softmax(p) * v[0, :3]


def _contracted_along_columns(p, v):
  # A dot over the other axis: each result reads one entry of many rows.
  return jnp.einsum("qk,qd->kd", jax.nn.softmax(p), jnp.ones((p.shape[0], 2), p.dtype))


def _also_returned(p, v):
  return _attention(p, v), jax.nn.softmax(p)


def _graph_ops(f, args, enable_xla) -> set:
  converted = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
  specs = [tf.TensorSpec(np.shape(a), tf.float32) for a in args]
  graph = tf.function(converted, autograph=False).get_concrete_function(*specs).graph
  return {op.type for op in graph.get_operations()}


def _run(f, args, mode, enable_xla):
  converted = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
  if mode == "eager":
    return converted(*args)
  return tf.function(converted, autograph=False, jit_compile=mode == "compiled")(*args)


FUNCTIONS = [_attention, _attention_transposed, _scaled, _contracted_along_columns, _also_returned]
MODES = [(m, x) for x in (True, False) for m in ("eager", "graph", "compiled")]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode,enable_xla", MODES)
def test_softmax_rows_with_nan_and_inf_give_jax_results(f, mode, enable_xla):
  want = jax.tree_util.tree_leaves(jax.jit(f)(ROWS, VALUES))
  got = tf.nest.flatten(_run(f, (ROWS, VALUES), mode, enable_xla))
  assert len(got) == len(want)
  for g, w in zip(got, want):
    np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("enable_xla", [True, False])
@pytest.mark.parametrize(
  "f,spread",
  [
    (_attention, False),
    (_attention_transposed, False),
    (_scaled, True),
    (_contracted_along_columns, True),
    (_also_returned, True),
  ],
  ids=lambda x: getattr(x, "__name__", str(x)),
)
def test_the_nan_of_a_row_is_spread_only_where_an_entry_is_read_alone(f, spread, enable_xla):
  ops = _graph_ops(f, (ROWS, VALUES), enable_xla)
  assert "Softmax" in ops
  # The spread is a Sum over the rows, added back to every entry.
  assert ("Sum" in ops) == spread
