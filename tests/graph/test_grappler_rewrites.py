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
