"""Sharding annotations under graph serialization (rules/sharding.py).

The sharding family's cases (tests/cases/sharding.py) check values;
this checks where the annotation appears.
"""

import jax
import tensorflow as tf
from jax import lax

import jax2tf


def test_sharding_constraint_is_annotated_only_with_xla():
  single = jax.sharding.SingleDeviceSharding(jax.devices()[0])
  fun = lambda x: lax.with_sharding_constraint(x, single) * 2  # noqa: E731
  ops = {}
  for enable_xla in (True, False):
    f_tf = jax2tf.convert(fun, native_serialization=False, enable_xla=enable_xla)
    graph = tf.function(f_tf, autograph=False).get_concrete_function(
        tf.TensorSpec((2, 3), tf.float32)).graph
    ops[enable_xla] = {op.type for op in graph.get_operations()}
  assert "XlaSharding" in ops[True]
  assert "XlaSharding" not in ops[False]
