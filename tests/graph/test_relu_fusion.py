"""jax.nn.relu of a sum with a broadcast term is TF's Relu alone
(jax2tf/graph/fusions.py), with JAX's +0.0 for every zero."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf

# -0.0 + -0.0 is the one sum that is -0.0; the rest try +0.0, NaN and inf.
X = np.array(
  [[-0.0, -0.0, 0.0, np.nan, -1.0, 2.0, np.inf], [-0.0, 0.5, -0.0, 1.0, -np.inf, 0.0, -0.0]],
  np.float32,
)
BIAS = np.array([-0.0, -0.0, -0.0, 1.0, np.nan, -2.0, -0.0], np.float32)


def _dense_relu(w, b, x):
  return jax.nn.relu(x @ w + b)


def _biased_relu(x, b):
  return jax.nn.relu(x + b)


def _plain_relu(x, y):
  return jax.nn.relu(x + y)


def _same_bits(got, want):
  np.testing.assert_array_equal(got, want)  # NaN where JAX has NaN
  zeros = want == 0
  np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


def _run(f, args, mode, enable_xla):
  converted = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
  if mode == "eager":
    return converted(*args).numpy()
  return tf.function(converted, autograph=False, jit_compile=mode == "compiled")(*args).numpy()


def _graph(f, args, enable_xla=True):
  converted = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
  specs = [tf.TensorSpec(np.shape(a), tf.float32) for a in args]
  return tf.function(converted, autograph=False).get_concrete_function(*specs).graph


_MODES = [(m, x) for x in (True, False) for m in ("eager", "graph", "compiled")]


@pytest.mark.parametrize("mode,enable_xla", _MODES)
def test_relu_of_a_biased_sum_gives_jax_zeros(mode, enable_xla):
  y = BIAS[None]
  _same_bits(_run(_biased_relu, (X, y), mode, enable_xla), np.asarray(jax.jit(_biased_relu)(X, y)))


# Without XLA ops, under jit_compile, XLA drops the Abs that gives a relu of
# -0.0 JAX's +0.0: case elementwise.relu_like records that gap.
@pytest.mark.parametrize("mode,enable_xla", [m for m in _MODES if m != ("compiled", False)])
def test_relu_of_an_unbiased_sum_gives_jax_zeros(mode, enable_xla):
  y = -X[::-1]
  _same_bits(_run(_plain_relu, (X, y), mode, enable_xla), np.asarray(jax.jit(_plain_relu)(X, y)))


@pytest.mark.parametrize("enable_xla", [True, False])
def test_relu_of_a_dense_layer_tests_only_the_bias_and_keeps_nan(enable_xla):
  # NaN and inf in a row make the whole row of x @ eye NaN; a Relu fused into
  # oneDNN's matmul kernel would give 0 there.
  w = np.eye(7, dtype=np.float32)
  graph = _graph(_dense_relu, (w, BIAS, X), enable_xla)
  checks = [op for op in graph.get_operations() if op.type in ("SelectV2", "Equal", "Abs")]
  assert checks, "the bias's zeros are not made +0.0"
  # Only ops on the bias's 7 values: none over the [2, 7] activation.
  assert all(op.outputs[0].shape.num_elements() == 7 for op in checks), [
    (op.type, op.outputs[0].shape) for op in checks
  ]
  assert [op.type for op in graph.get_operations()].count("Relu") == 1
  _same_bits(
    _run(_dense_relu, (w, BIAS, X), "graph", enable_xla),
    np.asarray(jax.jit(_dense_relu)(w, BIAS, X)),
  )


def test_relu_of_a_sum_read_elsewhere_is_not_fused():
  # The sum is an output too, so it is computed as JAX does, and relu tests it.
  def f(x, b):
    s = x + b
    return s, jax.nn.relu(s)

  graph = _graph(f, (X, BIAS[None]))
  assert not any(op.name.startswith("relu/") for op in graph.get_operations())
  converted = tf.function(jax2tf.convert(f, native_serialization=False), autograph=False)
  for got, want in zip(converted(X, BIAS[None]), jax.jit(f)(X, BIAS[None])):
    _same_bits(got.numpy(), np.asarray(want))


def test_relu_of_a_residual_sum_is_one_relu():
  def f(x, b, r):
    return jax.nn.relu(jnp.add(x + b, r))

  r = np.where(X == 0, np.float32(-0.0), np.float32(1.5))
  graph = _graph(f, (X, BIAS[None], r))
  assert {
    op.outputs[0].shape.num_elements() for op in graph.get_operations() if op.type == "SelectV2"
  } == {7}
  _same_bits(_run(f, (X, BIAS[None], r), "graph", True), np.asarray(jax.jit(f)(X, BIAS[None], r)))
