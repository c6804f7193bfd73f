"""Indexing under graph serialization (rules/indexing.py), beyond its cases.

The family's cases are in tests/cases/indexing.py.
"""

import jax
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf


@pytest.mark.parametrize("op", ["min", "max"])
def test_scatter_min_max_complex_is_refused(op):
  # TF has no min/max scatter for complex numbers.
  fn = lambda x, i: getattr(x.at[i], op)(x[0])  # noqa: E731
  x = np.array([1 + 2j, -1j, 3], np.complex64)
  with pytest.raises(NotImplementedError, match=f"scatter-{op}"):
    jax2tf.convert(fn, native_serialization=False)(x, np.array([1], np.int32))


def _graph_op_types(fun, args, enable_xla):
  specs = [tf.TensorSpec(np.shape(a), tf.as_dtype(np.asarray(a).dtype)) for a in args]
  f_tf = jax2tf.convert(fun, native_serialization=False, enable_xla=enable_xla)
  fn = tf.function(f_tf, autograph=False)
  return {op.type for op in fn.get_concrete_function(*specs).graph.get_operations()}


def test_windowed_gather_uses_xla_gather_when_allowed():
  def vmapped_dynamic_slice(x, starts):
    return jax.vmap(lambda s: lax.dynamic_slice(x, (s, 0), (2, x.shape[1])))(starts)
  args = (np.zeros((5, 3), np.float32), np.array([0, 4, -2, 2], np.int32))
  assert "XlaGather" in _graph_op_types(vmapped_dynamic_slice, args, enable_xla=True)
  assert "GatherNd" in _graph_op_types(vmapped_dynamic_slice, args, enable_xla=False)
