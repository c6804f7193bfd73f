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
