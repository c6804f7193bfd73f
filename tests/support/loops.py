"""Checks of how a converted loop runs: the ops of its body, and its results
against jax.jit's."""

import collections

import jax
import numpy as np
import tensorflow as tf

import jax2tf
from tests.support import compare


def loop_op_counts(f, args, jit_compile=False) -> collections.Counter:
  """The TF ops in the while bodies of `f`'s graph serialization, traced
  for TF's XLA where `jit_compile`."""
  converted = jax2tf.convert(f, native_serialization=False, with_gradient=False)
  specs = [tf.TensorSpec(np.shape(a), tf.as_dtype(np.asarray(a).dtype)) for a in args]
  function = tf.function(converted, autograph=False, jit_compile=jit_compile)
  graph = function.get_concrete_function(*specs).graph
  counts: collections.Counter = collections.Counter()
  for fn in graph.as_graph_def().library.function:
    if "while_body" in fn.signature.name:
      counts.update(n.op for n in fn.node_def)
  return counts


def assert_like_jax(f, args, enable_xla=True, jit_compile=False, tol=(1e-6, 1e-6)):
  """`f` through graph serialization gives jax.jit's results on `args`."""
  converted = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
  got = tf.function(converted, autograph=False, jit_compile=jit_compile)(*args)
  want = jax.jit(f)(*args)
  for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    compare.assert_same(np.asarray(w), np.asarray(g), tol=tol)
