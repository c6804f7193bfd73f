"""LU with partial pivoting (LAPACK's getrf) as a loop of whole-matrix steps.

JAX's own lowering of `lu` where it has no LAPACK call is a blocked
algorithm: an unrolled Python loop over blocks of 128 columns, each block
row of U a triangular solve, and under `vmap` (a batch) its row swaps are
scatters with batch dimensions. LiteRT has no triangular solve, its
converters take no batched scatter, and the Python loop needs static
dimensions. This form is getrf's unblocked algorithm (JAX's
`_lu_unblocked`, the steps XLA computes for a block), one `fori_loop`
step per column, which takes batch dimensions and a symbolic matrix size:
each step picks the pivot row with an argmax, swaps two rows with selects
of rows gathered along the batch, and applies the elimination to the whole
matrix under masks, leaving the rows and columns already done as they are.

The graph route's rule (jax2tf/graph/rules/linalg.py, `_lu_loop`) takes the
same steps in TF ops. No TensorFlow here.
"""

import jax.numpy as jnp
import numpy as np
from jax import lax


def _row_at(x, index):
  """x[..., index[...], :]: the row of each matrix of the batch at `index`."""
  return jnp.take_along_axis(x, index[..., None, None], axis=-2)[..., 0, :]


def _entry_at(x, index):
  """x[..., index[...]]: the entry of each vector of the batch at `index`."""
  return jnp.take_along_axis(x, index[..., None], axis=-1)[..., 0]


def _magnitude(x):
  # LAPACK's pivot choice for complex entries: |re| + |im| (its cabs1).
  if jnp.iscomplexobj(x):
    return jnp.abs(jnp.real(x)) + jnp.abs(jnp.imag(x))
  return jnp.abs(x)


def lu(a, k=None):
  """(lu, pivots, permutation) of `a` ([..., m, n]) as `lax.linalg.lu`
  gives them: L below the diagonal (its unit diagonal implied) and U on
  and above it, 0-based pivot rows (int32, [..., k]), and the row
  permutation they make (int32, [..., m]). `k`: min(m, n), which the
  caller gives where m and n are symbolic."""
  *batch, m, n = a.shape
  k = min(m, n) if k is None else k
  rows = lax.broadcasted_iota(np.int32, (m,), 0)
  cols = lax.broadcasted_iota(np.int32, (n,), 0)
  steps = lax.broadcasted_iota(np.int32, (k,), 0)
  pivots = jnp.zeros((*batch, k), np.int32)
  perm = jnp.broadcast_to(rows, (*batch, m))
  zero = jnp.zeros((), a.dtype)

  def step(j, state):
    a, pivots, perm = state
    column = lax.dynamic_index_in_dim(a, j, axis=a.ndim - 1, keepdims=False)
    # The first row of largest magnitude at or below the diagonal (a NaN
    # is the largest, as in JAX's argmax).
    candidates = jnp.where(rows >= j, _magnitude(column), -jnp.inf)
    p = jnp.argmax(candidates, axis=-1).astype(np.int32)
    row_j = lax.dynamic_index_in_dim(a, j, axis=a.ndim - 2, keepdims=False)
    row_p = _row_at(a, p)
    is_p = rows == p[..., None]
    a = jnp.where(
      (rows == j)[:, None], row_p[..., None, :], jnp.where(is_p[..., None], row_j[..., None, :], a)
    )
    perm_j = lax.dynamic_index_in_dim(perm, j, axis=perm.ndim - 1, keepdims=False)
    perm_p = _entry_at(perm, p)
    perm = jnp.where(rows == j, perm_p[..., None], jnp.where(is_p, perm_j[..., None], perm))
    pivots = jnp.where(steps == j, p[..., None], pivots)
    # The multipliers below the pivot; a zero pivot (a zero column below
    # the diagonal) leaves the column and the rest as they are.
    pivot = lax.dynamic_index_in_dim(row_p, j, axis=row_p.ndim - 1, keepdims=True)
    below = (rows > j) & (pivot != zero)
    column = lax.dynamic_index_in_dim(a, j, axis=a.ndim - 1, keepdims=False)
    multipliers = jnp.where(below, column / jnp.where(below, pivot, 1), column)
    a = jnp.where(cols == j, multipliers[..., :, None], a)
    update = jnp.where(
      below[..., :, None] & (cols > j), multipliers[..., :, None] * row_p[..., None, :], zero
    )
    return a - update, pivots, perm

  if isinstance(k, int) and k == 0:
    return a, pivots, perm  # no step, and no column to trace one on
  return lax.fori_loop(0, k, step, (a, pivots, perm))
