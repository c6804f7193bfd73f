"""LAPACK's Householder reductions: geqrf, orgqr, gehd2, sytd2/hetd2, geqp3.

JAX computes QR (geqrf), its Q (householder_product, LAPACK's orgqr), the
Hessenberg and tridiagonal reductions and column-pivoted QR (geqp3) on CPU
with LAPACK custom calls that only jaxlib runs; elsewhere it emits XLA's
`Qr` and `ProductOfElementaryHouseholderReflectors` custom calls, which only
XLA expands. TF has no op giving LAPACK's compact form (the reduced matrix
on and above the diagonal or subdiagonal, each reflector's vector below it
with its leading 1 implied, and the reflectors' scale factors tau), so the
graph route (jax2tf/graph/rules/linalg.py) and the native modules of every
target (jax2tf/native/portable_lowering.py, target_lowerings.py) lower these
forms: LAPACK's unblocked steps (geqr2 and larfg, org2r, gehd2, sytd2 and
hetd2, geqp3's pivot choice) as a static Python loop over the columns.

The matrix dimensions must be static (the loop runs over them); batch
dimensions may be symbolic. Each step works on whole columns under static
masks, with no slices or concatenations of batch-shaped pieces: what the
rows above a reflector hold is masked to zero, which makes each reflection
leave those rows, and the columns already reduced, exactly as they were.
"""

import jax.numpy as jnp
import numpy as np


def _abs_squared(x):
  return jnp.real(x * jnp.conj(x))


def reflector(x, row: int):
  """LAPACK's larfg on x[..., row:] of the columns `x` ([..., l]):
  (beta, tau, v) with (I - tau v v^H)^H x[row:] = beta e_1, `v` ([..., l])
  zero above `row` and 1 at it, and beta real (in x's dtype). Where the
  entries below `row` are zero and x[row] is real, no reflection is needed:
  tau = 0 and beta = x[row], as larfg skips it."""
  rows = np.arange(x.shape[-1])
  alpha = x[..., row]
  rest = jnp.where(rows > row, x, 0)
  rest_sq = jnp.sum(_abs_squared(rest), axis=-1)
  alpha_re, alpha_im = jnp.real(alpha), jnp.imag(alpha)
  norm = jnp.sqrt(alpha_re * alpha_re + alpha_im * alpha_im + rest_sq)
  # beta takes the sign opposite to Re(alpha), - where Re(alpha) is 0, so
  # alpha - beta does not cancel.
  beta = jnp.where(alpha_re >= 0, -norm, norm).astype(x.dtype)
  skip = (rest_sq == 0) & (alpha_im == 0)
  one = jnp.ones((), x.dtype)
  tau = jnp.where(skip, jnp.zeros((), x.dtype), (beta - alpha) / jnp.where(skip, one, beta))
  scaled = rest / jnp.where(skip, one, alpha - beta)[..., None]
  v = jnp.where(rows == row, one, scaled)
  return jnp.where(skip, alpha, beta), tau, v


def apply_reflector(v, tau, x):
  """(I - tau v v^H) x for columns `v` ([..., l]) and matrices `x` ([..., l, c])."""
  w = jnp.sum(jnp.conj(v)[..., :, None] * x, axis=-2)
  return x - tau[..., None, None] * v[..., :, None] * w[..., None, :]


def _apply_reflector_right(x, v, tau):
  """x (I - tau v v^H) for matrices `x` ([..., r, l]) and columns `v` ([..., l])."""
  xv = jnp.sum(x * v[..., None, :], axis=-1)
  return x - tau[..., None, None] * xv[..., :, None] * jnp.conj(v)[..., None, :]


def _set_column(x, column: int, from_row: int, values):
  """`x` ([..., m, n]) with column `column` from row `from_row` down taken
  from `values` ([..., m], the full column)."""
  m, n = x.shape[-2:]
  mask = np.zeros((m, n), bool)
  mask[from_row:, column] = True
  return jnp.where(mask, values[..., :, None], x)


def _reduce_column(x, column: int, row: int):
  """One Householder step of QR on `x` ([..., m, n]): the reflector of
  column `column` from row `row` down, applied (as H^H, as geqr2 does) to
  every column, and that column left as beta e_row. Columns whose entries
  from `row` down are zero (those already reduced) are left as they are.
  Returns (x, tau, v)."""
  beta, tau, v = reflector(x[..., :, column], row)
  x = apply_reflector(v, jnp.conj(tau), x)
  beta_only = jnp.where(np.arange(x.shape[-2]) == row, beta[..., None], 0)
  return _set_column(x, column, row, beta_only), tau, v


def _store_vectors(x, vectors, offset: int):
  """`x` with the reflector vector vectors[j] ([..., m]) in column j below
  row j + offset, where its implied leading 1 sits."""
  for j, v in enumerate(vectors):
    if j + offset + 1 < x.shape[-2]:
      x = _set_column(x, j, j + offset + 1, v)
  return x


def _stacked(xs, like, dtype):
  """The scalars `xs` ([...] each) stacked on a last axis; an empty one
  with the batch dimensions of `like` ([..., m, n]) where there are none."""
  if xs:
    return jnp.stack(xs, axis=-1)
  return jnp.zeros((*like.shape[:-2], 0), dtype)


def geqrf(a):
  """LAPACK's geqrf of `a` ([..., m, n]): (R above and on the diagonal and
  the reflector vectors below it, taus [..., min(m, n)])."""
  m, n = a.shape[-2:]
  vectors, taus = [], []
  for i in range(min(m, n)):
    a, tau, v = _reduce_column(a, i, i)
    vectors.append(v)
    taus.append(tau)
  return _store_vectors(a, vectors, 0), _stacked(taus, a, a.dtype)


def householder_product(a, taus):
  """LAPACK's orgqr: the first n columns of H_0 H_1 ... H_{k-1} for `a`
  ([..., m, n]) and `taus` ([..., k]), H_j = I - tau_j v_j v_j^H with v_j
  column j of `a` below the diagonal after an implied 1."""
  m, n = a.shape[-2:]
  rows = np.arange(m)
  q = jnp.broadcast_to(jnp.eye(m, n, dtype=a.dtype), a.shape)
  for j in reversed(range(taus.shape[-1])):
    v = jnp.where(rows == j, jnp.ones((), a.dtype), jnp.where(rows > j, a[..., :, j], 0))
    q = apply_reflector(v, taus[..., j], q)
  return q


def hessenberg(a):
  """LAPACK's gehd2 of `a` ([..., n, n]): (the Hessenberg matrix on and
  above the subdiagonal, reflector i's vector below it in column i, taus
  [..., n - 1]). Reflector i, of column i below the subdiagonal, is applied
  from the right and (conjugated) from the left."""
  n = a.shape[-1]
  rows = np.arange(n)
  vectors, taus = [], []
  for i in range(n - 1):
    beta, tau, v = reflector(a[..., :, i], i + 1)
    a = _apply_reflector_right(a, v, tau)
    a = apply_reflector(v, jnp.conj(tau), a)
    a = _set_column(a, i, i + 1, jnp.where(rows == i + 1, beta[..., None], 0))
    vectors.append(v)
    taus.append(tau)
  return _store_vectors(a, vectors, 1), _stacked(taus, a, a.dtype)


def _with_diagonal(x, d):
  """`x` ([..., n, n]) with `d` ([..., n]) on its diagonal."""
  n = x.shape[-1]
  return jnp.where(np.eye(n, dtype=bool), d[..., None, :].astype(x.dtype), x)


def _tridiagonal_lower(a):
  """LAPACK's sytd2/hetd2 with uplo='L' on `a` ([..., n, n]): (a, d, e, taus)."""
  n = a.shape[-1]
  rows = np.arange(n)
  strict = jnp.tril(a, -1)
  # The Hermitian matrix of the lower triangle; the diagonal's imaginary
  # part is not read.
  hermitian = strict + jnp.conj(jnp.swapaxes(strict, -1, -2))
  work = _with_diagonal(hermitian, jnp.real(jnp.diagonal(a, axis1=-2, axis2=-1)))
  out = a
  es, taus = [], []
  for i in range(n - 1):
    beta, tau, v = reflector(work[..., :, i], i + 1)
    # x = tau A22 v, w = x - tau/2 (x^H v) v, then A22 -= v w^H + w v^H.
    x = tau[..., None] * jnp.sum(work * v[..., None, :], axis=-1)
    x = jnp.where(rows > i, x, 0)
    w = x + (-0.5 * tau * jnp.sum(jnp.conj(x) * v, axis=-1))[..., None] * v
    work = work - _outer(v, w) - _outer(w, v)
    # Column i keeps beta on the subdiagonal and the vector below it.
    out = _set_column(out, i, i + 1, jnp.where(rows == i + 1, beta[..., None], v))
    es.append(jnp.real(beta))
    taus.append(tau)
  d = jnp.real(jnp.diagonal(work, axis1=-2, axis2=-1))
  return _with_diagonal(out, d), d, _stacked(es, a, d.dtype), _stacked(taus, a, a.dtype)


def _outer(x, y):
  return x[..., :, None] * jnp.conj(y)[..., None, :]


def tridiagonal(a, *, lower: bool):
  """LAPACK's sytrd/hetrd (its unblocked form) of the Hermitian matrix read
  from one triangle of `a` ([..., n, n]): (a with the tridiagonal form and
  the reflectors, the diagonal d, the off-diagonal e, taus)."""
  if lower:
    return _tridiagonal_lower(a)
  # The upper form runs from the last column back: it is the lower form of
  # the matrix with its rows and columns reversed.
  out, d, e, taus = _tridiagonal_lower(jnp.flip(a, (-2, -1)))
  return jnp.flip(out, (-2, -1)), jnp.flip(d, -1), jnp.flip(e, -1), jnp.flip(taus, -1)


def _swap_columns(x, i: int, j):
  """`x` ([..., n] or [..., m, n]) with columns i and j (an int array per
  batch element) swapped."""
  cols = np.arange(x.shape[-1])
  j = j[..., None]
  index = jnp.where(cols == i, j, jnp.where(cols == j, i, cols))
  if x.ndim == j.ndim:
    return jnp.take_along_axis(x, index, axis=-1)
  index = jnp.broadcast_to(index[..., None, :], x.shape)
  return jnp.take_along_axis(x, index, axis=-1)


def geqp3(a, jpvt):
  """LAPACK's geqp3 of `a` ([..., m, n]) with the columns marked (nonzero) in
  `jpvt` ([..., n]) first: (R and the reflector vectors as geqrf, the 1-based
  original index of each column, taus [..., min(m, n)]).

  The marked columns are swapped to the front in order and reduced without
  pivoting; then each step swaps in the remaining column of largest norm
  below the rows already reduced (the first on ties) before its Householder
  step."""
  m, n = a.shape[-2:]
  perm = jnp.broadcast_to(jnp.arange(n, dtype=np.int32), jpvt.shape)
  fixed = jnp.zeros(jpvt.shape[:-1], np.int32)  # how many marked columns lead
  for j in range(n):
    marked = jpvt[..., j] != 0
    target = jnp.where(marked, fixed, j)
    a = _swap_columns(a, j, target)
    perm = _swap_columns(perm, j, target)
    fixed = fixed + marked.astype(np.int32)
  rows = np.arange(m)[:, None]
  vectors, taus = [], []
  for i in range(min(m, n)):
    norms = jnp.sum(jnp.where(rows >= i, _abs_squared(a), 0), axis=-2)
    norms = jnp.where(np.arange(n) >= i, norms, -1)  # only columns not yet reduced
    biggest = jnp.max(norms, axis=-1, keepdims=True)
    first = jnp.min(jnp.where(norms >= biggest, np.arange(n, dtype=np.int32), n), axis=-1)
    # The column stays where no norm is the largest (NaNs).
    pivot = jnp.where((i < fixed) | (first == n), i, first)
    a = _swap_columns(a, i, pivot)
    perm = _swap_columns(perm, i, pivot)
    a, tau, v = _reduce_column(a, i, i)
    vectors.append(v)
    taus.append(tau)
  return _store_vectors(a, vectors, 0), (perm + 1).astype(jpvt.dtype), _stacked(taus, a, a.dtype)
