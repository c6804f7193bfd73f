"""Patterns TF's graph optimizer (grappler) rewrites in a `tf.function` into
ops that compute other numbers than JAX: the graph serialization keeps its
results JAX's."""

import jax
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf


@pytest.mark.parametrize("enable_xla", [True, False])
def test_an_argmin_of_a_monotonic_op_keeps_the_first_of_its_ties(enable_xla):
  # Grappler would take argmin(sign(x)) for argmin(x): sign ties 5 and 4,
  # and JAX picks the first (fuzz p52893 of seed 14).
  def f(x):
    return lax.argmin(lax.sign(x), 1, np.int32)

  x = np.array([[5, 4, 7], [-1, -3, 0]], np.int32)
  converted = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
  got = tf.function(converted, autograph=False)(tf.constant(x))
  np.testing.assert_array_equal(got.numpy(), np.asarray(jax.jit(f)(x)))


@pytest.mark.parametrize("enable_xla", [True, False])
@pytest.mark.parametrize(
  "f",
  [lambda x: lax.add(x, x), lambda x: lax.sub(x, lax.neg(x))],
  ids=["x_plus_x", "x_minus_neg_x"],
)
def test_a_complex_value_doubled_keeps_its_infinite_parts(f, enable_xla):
  # Grappler would compute x + x (and x - (-x)) as 2 * x, a complex product:
  # its real part is 2 * 0.5 - 0 * -inf, NaN, where JAX adds (fuzz p57708).
  x = np.array([complex(0.5, -np.inf), complex(np.inf, 2.0), complex(-1.5, 3.0)], np.complex64)
  converted = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
  got = tf.function(converted, autograph=False)(tf.constant(x)).numpy()
  np.testing.assert_array_equal(got, np.asarray(jax.jit(f)(x)))


_RNG = np.random.default_rng(0)
_X = (_RNG.standard_normal((64, 32)) * 100).astype(np.float32)
_ROW = (_RNG.standard_normal((1, 32)) * 3).astype(np.float32)
_Z = (_RNG.standard_normal((64, 32)) * 0.01).astype(np.float32)


@pytest.mark.parametrize("enable_xla", [True, False])
@pytest.mark.parametrize(
  "f,args",
  [
    (lambda x, s, z: (x + s) + z, (_X, _ROW, _Z)),
    (lambda x, s, z: (x * s) * z, (_X, _ROW, _Z)),
    (lambda x, s, z: z + (s + x), (_X, _ROW, _Z)),
    # Equal shapes: grappler would make one AddN of the three.
    (
      lambda x, y, z: (x + y) + z,
      (
        np.full((2, 3), 1e8, np.float32),
        np.full((2, 3), -1e8, np.float32),
        np.ones((2, 3), np.float32),
      ),
    ),
  ],
  ids=["sum_broadcast_first", "product_broadcast_first", "sum_broadcast_inside", "sum_addn"],
)
def test_a_sum_of_sums_or_a_product_of_products_rounds_as_in_jax(f, args, enable_xla):
  # Grappler regroups such a chain (the broadcast operand last, to broadcast
  # once; or one AddN), which rounds otherwise than XLA's order as written.
  converted = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
  got = tf.function(converted, autograph=False)(*[tf.constant(a) for a in args]).numpy()
  np.testing.assert_array_equal(got, np.asarray(jax.jit(f)(*args)))
