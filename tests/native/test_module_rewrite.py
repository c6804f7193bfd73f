"""Rewrites of the exported module that keep TF's XLA from failing where JAX's does not.

Programs here crash `jax.jit` itself (XLA's simplifier, in JAX's build as in
TF's), so the reference is JAX op by op (`jax.disable_jit`), where each
primitive compiles alone.
"""

import jax
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf
from jax2tf.testing import compare


def _slice_after_empty_operand(x, empty):
  # The slice starts where the empty operand sits: XLA's slice-of-concatenate
  # simplification sized a vector -1 and aborted the process.
  joined = lax.concatenate([x, empty], 0)
  return lax.slice_in_dim(joined, 1, 1, 1, 0), lax.slice_in_dim(joined, 0, 1, 1, 0)


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_concatenate_with_an_empty_operand_then_sliced(dtype, jit_compile):
  x = np.array([[254, 7, 0, 5]], dtype)
  empty = np.zeros((0, 4), dtype)
  with jax.disable_jit():
    want = _slice_after_empty_operand(x, empty)
  f_tf = tf.function(
    jax2tf.convert(_slice_after_empty_operand), autograph=False, jit_compile=jit_compile
  )
  got = f_tf(tf.constant(x), tf.constant(empty))
  for w, g in zip(want, got):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


def test_concatenate_of_only_empty_operands_keeps_its_shape():
  def f(a, b):
    return lax.concatenate([a, b], 1)

  a, b = np.zeros((2, 0), np.float32), np.zeros((2, 0), np.float32)
  got = jax2tf.convert(f)(a, b)
  assert got.shape == (2, 0) and got.dtype == tf.float32
