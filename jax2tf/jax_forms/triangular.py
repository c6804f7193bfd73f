"""Triangular solves and Cholesky factors as loops of whole-matrix steps.

JAX lowers `triangular_solve` and `cholesky` to StableHLO's ops of those
names (or LAPACK's calls), which XLA expands and nothing else runs: LiteRT
has no kernel for either, and TF's TFLite converter has none for TF's
`MatrixTriangularSolve` and `Cholesky`. These forms compute them with what
every target runs, one `fori_loop` step per row (substitution) or per
column (Cholesky), each a matrix product of the rows already done and a
select that writes the new row or column; batch dimensions and a symbolic
matrix size are taken as they are. The sums run in another order than
LAPACK's, so results agree with JAX's to rounding.

Real matrices only: the converters take no complex linear algebra. No
TensorFlow here.
"""

import jax.numpy as jnp
import numpy as np
from jax import lax


def _swap_last(x):
  return jnp.swapaxes(x, -1, -2)


def _row(x, i):
  """x[..., i:i+1, :] for a traced `i`."""
  return lax.dynamic_index_in_dim(x, i, axis=x.ndim - 2, keepdims=True)


def _column(x, i):
  """x[..., :, i:i+1] for a traced `i`."""
  return lax.dynamic_index_in_dim(x, i, axis=x.ndim - 1, keepdims=True)


def _product(x, y):
  return jnp.matmul(x, y, precision=lax.Precision.HIGHEST)


def triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  """`lax.linalg.triangular_solve`'s result: x with op(a) x = b (left_side)
  or x op(a) = b, reading only the triangle of `a` that `lower` names (and
  not its diagonal where `unit_diagonal`)."""
  del conjugate_a  # real matrices
  m = a.shape[-1]
  rows = lax.broadcasted_iota(np.int32, (m, m), 0)
  cols = lax.broadcasted_iota(np.int32, (m, m), 1)
  strict = jnp.where(rows > cols if lower else rows < cols, a, jnp.zeros((), a.dtype))
  if not left_side:
    # x op(a) = b  <=>  op(a)^T x^T = b^T.
    b, transpose_a = _swap_last(b), not transpose_a
  if transpose_a:
    strict, lower = _swap_last(strict), not lower
  row_index = lax.broadcasted_iota(np.int32, (m, 1), 0)

  def step(s, x):
    # Forward substitution down a lower triangle, backward up an upper one:
    # the unknowns not yet solved are zeros, so the product sums the solved
    # ones alone.
    i = s if lower else m - 1 - s
    rest = _row(b, i) - _product(_row(strict, i), x)
    solved = rest if unit_diagonal else rest / _row(_column(a, i), i)
    return jnp.where(row_index == i, solved, x)

  x = lax.fori_loop(0, m, step, jnp.zeros_like(b)) if m else b
  return x if left_side else _swap_last(x)


def cholesky(a):
  """`lax.linalg.cholesky`'s result: the lower factor L of the symmetric
  matrix whose lower triangle `a` holds, zeros above the diagonal; where a
  matrix is not positive definite (a pivot not above zero, or NaN), NaN
  on and below the diagonal, as JAX gives it from LAPACK's error."""
  m = a.shape[-1]
  rows = lax.broadcasted_iota(np.int32, (m, 1), 0)
  cols = lax.broadcasted_iota(np.int32, (1, m), 1)
  zero = jnp.zeros((), a.dtype)

  def step(j, state):
    factor, positive = state
    done = _row(factor, j)  # [..., 1, m]: L[j, :j], zeros after
    pivot = _row(_column(a, j), j) - _product(done, _swap_last(done))
    # (A squeeze, not an index: at a polymorphic batch JAX writes an index
    # as a gather, which litert-converter refuses.)
    positive = positive & (lax.squeeze(pivot, (pivot.ndim - 2, pivot.ndim - 1)) > 0)
    root = jnp.sqrt(pivot)
    below = (_column(a, j) - _product(factor, _swap_last(done))) / root
    column = jnp.where(rows > j, below, jnp.where(rows == j, root, zero))
    return jnp.where(cols == j, column, factor), positive

  if not m:
    return a
  positive = jnp.ones(a.shape[:-2], bool)
  factor, positive = lax.fori_loop(0, m, step, (jnp.zeros_like(a), positive))
  failed = jnp.where(rows >= cols, jnp.full((), np.nan, a.dtype), zero)
  return jnp.where(positive[..., None, None], factor, failed)
