"""Linear algebra: factorizations, solves and eigendecompositions.

JAX on CPU calls LAPACK; the rules call TF's linalg ops where one has JAX's
semantics (Cholesky, Qr, Svd, SelfAdjointEigV2, Eig, MatrixTriangularSolve) and
write the computation with ordinary TF ops where none does:
  - `lu`: TF's Lu kernel rejects singular matrices, has no XLA kernel, picks
    complex pivots by modulus and is square only. The rule is a loop of
    partial-pivoting steps with LAPACK's pivot choice (largest |re| + |im|,
    first on ties), so pivots and permutation are LAPACK's.
  - `tridiagonal_solve`: TF's XLA kernel cannot pivot; the rule is LAPACK's
    gtsv elimination (partial pivoting) as two TF scans.
  - LAPACK's Householder forms (`geqrf`, `householder_product`, `hessenberg`,
    `tridiagonal`, `geqp3`): TF has no op giving the reflectors and their
    taus; the rules lower the JAX forms of jax2tf/jax_forms/householder.py
    (LAPACK's column-by-column steps), as native modules do. `ormqr` lowers
    JAX's own loop of reflector applications.
Everything here is ordinary TF ops, so every rule also runs with
enable_xla=False. Where the target has no kernel for TF's Cholesky or
MatrixTriangularSolve (TFLite, TF.js), `cholesky` and `triangular_solve` of
real matrices lower the loops of jax2tf/jax_forms/triangular.py instead, as
the native modules of those targets do.

Conventions kept from JAX's CPU lowering: a factorization that fails (LAPACK
info != 0) gives NaN for the whole batch element, as do non-finite inputs to
the eigensolvers (TF's kernels would raise instead); 16-bit floats are refused
like JAX's CPU lowering refuses them (LAPACK has no such types), except for
`triangular_solve`, which JAX computes for them and the rule computes in
float32. Decompositions that are unique only up to signs, phases or order
(`qr`, `svd`, `eigh`, `eig`) match JAX up to those. For `eig` the order is a
real difference: LAPACK's geev returns the eigenvalues in the order its QR
iteration deflates them (the diagonal of its Schur form), TF's Eig in its own
solver's order; no reordering of TF's result reproduces LAPACK's (see
docs/eig.md).

TF has no XLA kernel for Eig, for complex Svd with vectors (singular values
alone go through the real form) nor for TridiagonalSolve with perturbed
pivots. `eig` is refused while tracing under tf.function(jit_compile=True);
the other two fail in TF's XLA compilation. XLA's Svd and SelfAdjointEig are
iterative with float32-level tolerances, also for float64 (about 1e-7
relative).

Cases: tests/cases/linalg.py
"""

import functools

import numpy as np
import tensorflow as tf
from jax import lax
from jax.lax import linalg as lax_linalg

from jax2tf.graph import registry
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register
from jax2tf.internals import jax_private, tf_private
from jax2tf.jax_forms import householder, triangular
from jax2tf.shapes import dim_eval

_LAPACK_DTYPES = (tf.float32, tf.float64, tf.complex64, tf.complex128)


def _require_lapack_dtype(ctx, params, x):
  if x.dtype not in _LAPACK_DTYPES:
    raise registry.unsupported_params_error(
      ctx.primitive,
      params,
      f"JAX computes it with LAPACK on CPU, for float32/float64/complex64/"
      f"complex128 only, not {x.dtype.name}",
    )


def _batch_rank(ctx) -> int:
  return len(ctx.avals_in[0].shape) - 2


def _nan_unless(ok, x):
  """x where `ok` (a batch-shaped bool), else NaN for that batch element."""
  extra = len(x.shape) - len(ok.shape)
  ok = tf.reshape(ok, tf.concat([tf.shape(ok), tf.ones([extra], tf.int32)], 0))
  nan = tf.constant(np.nan, x.dtype.real_dtype)
  if x.dtype.is_complex:
    nan = tf.complex(nan, nan)
  return tf.where(ok, x, nan)


def _all_finite(x):
  """Per batch element: does the matrix hold only finite numbers?"""
  if x.dtype.is_complex:
    fin = tf.logical_and(tf.math.is_finite(tf.math.real(x)), tf.math.is_finite(tf.math.imag(x)))
  else:
    fin = tf.math.is_finite(x)
  return tf.reduce_all(fin, axis=[-2, -1])


def _finite_or_identity(x):
  """(x with non-finite matrices replaced by I, which matrices were finite)."""
  ok = _all_finite(x)
  eye = tf.eye(tf.shape(x)[-1], dtype=x.dtype)
  return tf.where(ok[..., None, None], x, eye), ok


def _swap_last(x):
  rank = len(x.shape)
  return tf.transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2])


def _abs1(x):
  # LAPACK's pivot magnitude for complex numbers (cabs1), |x| for reals.
  if x.dtype.is_complex:
    return tf.abs(tf.math.real(x)) + tf.abs(tf.math.imag(x))
  return tf.abs(x)


# -- Cholesky


@register(lax_linalg.cholesky_p, float16_in_float32=False)
def _cholesky(ctx, x, **params):
  _require_lapack_dtype(ctx, params, x)
  loop = lambda x: ctx.lower_fun(triangular.cholesky, [x])[0]  # noqa: E731
  return ctx.kernel_or("Cholesky", _cholesky_kernel, loop, x.dtype)(x)


def _cholesky_kernel(x):
  """TF's Cholesky."""
  # Only the lower triangle is read, as by LAPACK's potrf.
  l = tf.linalg.cholesky(x)
  # TF marks a failed factorization (not positive definite, NaN) with NaNs.
  diag = tf.linalg.diag_part(l)
  ok = tf.logical_not(tf.reduce_any(tf.math.is_nan(tf.math.real(diag)), axis=-1))
  return _nan_unless(ok, l)


# lax.linalg.cholesky_update(r, w): the upper factor of r^T r + w w^T. JAX
# updates in O(n^2) with rotations; refactoring costs O(n^3) but gives the
# same (unique, positive-diagonal) factor.
@register(lax_linalg.cholesky_update_p, float16_in_float32=False)
def _cholesky_update(ctx, r, w, **params):
  _require_lapack_dtype(ctx, params, r)
  a = tf.linalg.matmul(r, r, transpose_a=True) + w[..., :, None] * w[..., None, :]
  return _swap_last(tf.linalg.cholesky(a))


# -- triangular solve


def _solve_left(a, b, lower, transpose, conjugate):
  """Solves op(a) x = b, op given by (transpose, conjugate)."""
  complex_ = a.dtype.is_complex
  if transpose:
    # TF's adjoint flag is the conjugate transpose: a^T = conj(a)^H.
    m = tf.math.conj(a) if complex_ and not conjugate else a
    return tf.linalg.triangular_solve(m, b, lower=lower, adjoint=True)
  m = tf.math.conj(a) if complex_ and conjugate else a
  return tf.linalg.triangular_solve(m, b, lower=lower, adjoint=False)


@register(lax_linalg.triangular_solve_p)
def _triangular_solve(ctx, a, b, **flags):
  wide = np.float32 if a.dtype in sem.SMALL_FLOATS else ctx.avals_in[0].dtype

  def solve(a, b):
    return triangular.triangular_solve(a.astype(wide), b.astype(wide), **flags).astype(b.dtype)

  loop = lambda a, b: ctx.lower_fun(solve, [a, b])[0]  # noqa: E731
  kernel = functools.partial(_triangular_solve_kernel, **flags)
  return ctx.kernel_or("MatrixTriangularSolve", kernel, loop, a.dtype)(a, b)


def _triangular_solve_kernel(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  """TF's MatrixTriangularSolve."""
  out_dtype = b.dtype
  if a.dtype in sem.SMALL_FLOATS:
    a, b = tf.cast(a, tf.float32), tf.cast(b, tf.float32)
  # The other triangle (and, with unit_diagonal, the diagonal) is never read.
  a = tf.linalg.band_part(a, -1, 0) if lower else tf.linalg.band_part(a, 0, -1)
  if unit_diagonal:
    a = tf.linalg.set_diag(a, tf.ones_like(tf.linalg.diag_part(a)))
  if left_side:
    x = _solve_left(a, b, lower, transpose_a, conjugate_a)
  else:
    # x op(a) = b  <=>  op(a)^T x^T = b^T, and transposing op flips `transpose`.
    x = _swap_last(_solve_left(a, _swap_last(b), lower, not transpose_a, conjugate_a))
  return tf.cast(x, out_dtype)


# -- LU with partial pivoting


def _lu_loop(a, m, n, k, batch_rank):
  """LAPACK getrf's result (lu, 0-based pivots, permutation) by unblocked steps."""
  rows = tf.range(m)
  cols = tf.range(n)
  batch_shape = tf.shape(a)[:-2]
  pivots = tf.zeros(tf.concat([batch_shape, [k]], 0), tf.int32)
  perm = tf.broadcast_to(rows, tf.concat([batch_shape, [m]], 0))
  zero = tf.zeros([], a.dtype)

  def gather_batched(x, idx):
    return tf.gather(x, idx, axis=batch_rank, batch_dims=batch_rank)

  def body(j, a, pivots, perm):
    mag = _abs1(tf.gather(a, j, axis=-1))
    mag = tf.where(rows >= j, mag, -tf.ones_like(mag))
    p = tf.math.argmax(mag, axis=-1, output_type=tf.int32)  # first of ties
    row_j = tf.gather(a, j, axis=-2)
    row_p = gather_batched(a, p)
    is_p = tf.equal(rows, p[..., None])
    a = tf.where(
      tf.equal(rows, j)[:, None],
      row_p[..., None, :],
      tf.where(is_p[..., :, None], row_j[..., None, :], a),
    )
    perm_j, perm_p = tf.gather(perm, j, axis=-1), gather_batched(perm, p)
    perm = tf.where(tf.equal(rows, j), perm_p[..., None], tf.where(is_p, perm_j[..., None], perm))
    pivots = tf.where(tf.equal(tf.range(k), j), p[..., None], pivots)
    # Eliminate below the pivot; a zero pivot (a zero column) skips the step.
    pivot = tf.gather(row_p, j, axis=-1)[..., None]
    below = tf.logical_and(rows > j, tf.not_equal(pivot, zero))
    col = tf.gather(a, j, axis=-1)
    l = tf.where(below, col / tf.where(below, pivot, tf.ones_like(pivot)), col)
    a = tf.where(tf.equal(cols, j)[None, :], l[..., :, None], a)
    update = tf.where(
      tf.logical_and(below[..., :, None], (cols > j)[None, :]),
      l[..., :, None] * row_p[..., None, :],
      zero,
    )
    return j + 1, a - update, pivots, perm

  if tf.executing_eagerly():
    j = 0
    state = (a, pivots, perm)
    while j < int(k):
      j, *state = body(j, *state)
    return state
  shapes = (tf.TensorShape([]), a.shape, pivots.shape, perm.shape)

  def body_keep_shapes(*args):
    return tuple(
      tf.ensure_shape(v, s) if i else v for i, (v, s) in enumerate(zip(body(*args), shapes))
    )

  _, a, pivots, perm = tf.while_loop(
    lambda j, *_: j < k,
    body_keep_shapes,
    (tf.constant(0), a, pivots, perm),
    shape_invariants=shapes,
  )
  return a, pivots, perm


_LU_BLOCK = 128


def _lu_blocked(a, m: int, n: int, batch_rank: int):
  """Right-looking blocked LU (static shapes): most of the work is MatMul.

  Each block of columns is factored by `_lu_loop`; its row interchanges are
  applied to the whole rows, then the block row of U is a unit-lower
  triangular solve and the trailing matrix gets a rank-b update. The pivots
  are the unblocked algorithm's (up to rounding in the updated entries).
  """
  k = min(m, n)
  done_rows, done_perm, pivots = [], [], []
  rest = a  # rows j0: of the matrix
  perm = tf.broadcast_to(tf.range(m), tf.concat([tf.shape(a)[:-2], [m]], 0))
  for j0 in range(0, k, _LU_BLOCK):
    b = min(_LU_BLOCK, k - j0)
    lu_p, piv_p, perm_p = _lu_loop(rest[..., :, j0 : j0 + b], m - j0, b, b, batch_rank)
    pivots.append(piv_p + j0)
    rest = tf.gather(rest, perm_p, axis=batch_rank, batch_dims=batch_rank)
    perm = tf.gather(perm, perm_p, axis=batch_rank, batch_dims=batch_rank)
    rest = tf.concat([rest[..., :, :j0], lu_p, rest[..., :, j0 + b :]], -1)
    top, rest = rest[..., :b, :], rest[..., b:, :]
    if j0 + b < n:
      l11 = tf.linalg.set_diag(
        tf.linalg.band_part(lu_p[..., :b, :], -1, 0),
        tf.ones_like(tf.linalg.diag_part(lu_p[..., :b, :])),
      )
      u12 = tf.linalg.triangular_solve(l11, top[..., :, j0 + b :], lower=True)
      top = tf.concat([top[..., :, : j0 + b], u12], -1)
      if m > j0 + b:
        trailing = rest[..., :, j0 + b :] - tf.linalg.matmul(lu_p[..., b:, :], u12)
        rest = tf.concat([rest[..., :, : j0 + b], trailing], -1)
    done_rows.append(top)
    done_perm.append(perm[..., :b])
    perm = perm[..., b:]
  lu = tf.concat(done_rows + [rest], -2)
  return lu, tf.concat(pivots, -1), tf.concat(done_perm + [perm], -1)


@register(lax_linalg.lu_p, float16_in_float32=False)
def _lu(ctx, x, **params):
  _require_lapack_dtype(ctx, params, x)
  m, n = ctx.dim(ctx.avals_in[0].shape[-2]), ctx.dim(ctx.avals_in[0].shape[-1])
  k = ctx.dim(ctx.avals_out[1].shape[-1])
  if isinstance(k, int) and k == 0:
    # XLA cannot compile the loop body's reductions over an empty axis.
    batch_shape = tf.shape(x)[:-2]
    return [
      x,
      tf.zeros(tf.concat([batch_shape, [0]], 0), tf.int32),
      tf.broadcast_to(tf.range(m), tf.concat([batch_shape, [m]], 0)),
    ]
  if isinstance(k, int) and isinstance(m, int) and isinstance(n, int) and k > _LU_BLOCK:
    return list(_lu_blocked(x, m, n, _batch_rank(ctx)))
  return list(_lu_loop(x, m, n, k, _batch_rank(ctx)))


@register(lax_linalg.lu_pivots_to_permutation_p)
def _lu_pivots_to_permutation(ctx, pivots, *, permutation_size):
  batch_rank = len(ctx.avals_in[0].shape) - 1
  k = ctx.dim(ctx.avals_in[0].shape[-1])
  m = ctx.dim(permutation_size)
  rows = tf.range(m)
  perm = tf.broadcast_to(rows, tf.concat([tf.shape(pivots)[:-1], [m]], 0))

  def body(i, perm):
    p = tf.gather(pivots, i, axis=-1)
    perm_i = tf.gather(perm, i, axis=-1)
    perm_p = tf.gather(perm, p, axis=batch_rank, batch_dims=batch_rank)
    perm = tf.where(
      tf.equal(rows, i),
      perm_p[..., None],
      tf.where(tf.equal(rows, p[..., None]), perm_i[..., None], perm),
    )
    return i + 1, perm

  _, perm = tf.while_loop(
    lambda i, _: i < k,
    body,
    (tf.constant(0), perm),
    shape_invariants=(tf.TensorShape([]), perm.shape),
  )
  return perm


# -- QR, SVD, eigendecompositions


@register(lax_linalg.qr_p, float16_in_float32=False)
def _qr(ctx, x, *, pivoting, full_matrices, **params):
  params = dict(pivoting=pivoting, full_matrices=full_matrices, **params)
  _require_lapack_dtype(ctx, params, x)
  if pivoting:
    # TF has no column-pivoted QR: JAX's own expansion (geqp3, then the
    # Householder product) is lowered, with the rules below.
    return ctx.lower_fun(lambda x: jax_private.qr_expansion(x, **params), [x])
  # Householder QR with LAPACK's sign convention for the reflectors.
  q, r = tf.linalg.qr(x, full_matrices=full_matrices)
  return [q, r]


def _complex_singular_values(x):
  """Singular values of complex matrices from a real SVD (TF's XLA Svd is real only).

  [[Re x, -Im x], [Im x, Re x]] is the real form of x acting on C^n = R^2n; its
  singular values are x's, each twice, so every other one of the descending
  list is x's.
  """
  re, im = tf.math.real(x), tf.math.imag(x)
  big = tf.concat([tf.concat([re, -im], -1), tf.concat([im, re], -1)], -2)
  return tf.linalg.svd(big, compute_uv=False)[..., ::2]


@register(lax_linalg.svd_p, float16_in_float32=False)
def _svd(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm=None, **params):
  # The algorithm (divide and conquer, QR, ...) changes speed, not the result.
  params = dict(
    full_matrices=full_matrices,
    compute_uv=compute_uv,
    subset_by_index=subset_by_index,
    algorithm=algorithm,
    **params,
  )
  _require_lapack_dtype(ctx, params, x)
  m, n = ctx.avals_in[0].shape[-2:]
  if any(dim_eval.is_zero(d) for d in (m, n)):
    # JAX's result for empty matrices (TF's XLA Svd kernel fails on them):
    # identities where full_matrices asks for square factors.
    s = tf.zeros(ctx.shape(ctx.avals_out[0].shape), ctx.tf_dtype(ctx.avals_out[0]))
    if not compute_uv:
      return [s]
    if full_matrices:
      batch = tf.shape(x)[:-2]
      u = tf.eye(ctx.dim(m), batch_shape=batch, dtype=x.dtype)
      vt = tf.eye(ctx.dim(n), batch_shape=batch, dtype=x.dtype)
    else:
      u, vt = (tf.zeros(ctx.shape(aval.shape), x.dtype) for aval in ctx.avals_out[1:])
    return [s, u, vt]
  if compute_uv:
    if x.dtype.is_complex:
      _refuse_under_jit_compile("svd", "Svd", " for complex matrices")
    s, u, v = tf.linalg.svd(x, full_matrices=full_matrices, compute_uv=True)
    vt = tf.linalg.adjoint(v)
  elif x.dtype.is_complex:
    s = _complex_singular_values(x)
  else:
    s = tf.linalg.svd(x, compute_uv=False)
  if subset_by_index is not None:
    # JAX's CPU lowering takes only the full range; a subset of the
    # (descending) singular values is a slice of the full decomposition.
    start, end = (ctx.dim(d) for d in subset_by_index)
    s = s[..., start:end]
    if compute_uv:
      u, vt = u[..., :, start:end], vt[..., start:end, :]
  return [s, u, vt] if compute_uv else [s]


def _hermitian_from_triangle(x, lower):
  """The Hermitian matrix LAPACK's he/syevd sees: one triangle, real diagonal."""
  tri = tf.linalg.band_part(x, -1, 0) if lower else tf.linalg.band_part(x, 0, -1)
  strict = tf.linalg.set_diag(tri, tf.zeros_like(tf.linalg.diag_part(tri)))
  diag = tf.linalg.diag_part(x)
  if x.dtype.is_complex:
    diag = tf.complex(tf.math.real(diag), tf.zeros_like(tf.math.real(diag)))
  return tf.linalg.set_diag(strict + tf.linalg.adjoint(strict), diag)


@register(lax_linalg.eigh_p, float16_in_float32=False)
def _eigh(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm=None, **params):
  # Eigenvalues come sorted ascending whatever `sort_eigenvalues` says, as on
  # CPU; the algorithm choice (QR, Jacobi, ...) does not change the result.
  params = dict(
    lower=lower,
    sort_eigenvalues=sort_eigenvalues,
    subset_by_index=subset_by_index,
    algorithm=algorithm,
    **params,
  )
  _require_lapack_dtype(ctx, params, x)
  h, ok = _finite_or_identity(_hermitian_from_triangle(x, lower))
  w, v = tf.linalg.eigh(h)
  w = tf.math.real(w)  # TF gives complex (real-valued) eigenvalues for complex input
  if subset_by_index is not None:
    start, end = (ctx.dim(d) for d in subset_by_index)
    w, v = w[..., start:end], v[..., :, start:end]
  return [_nan_unless(ok, v), _nan_unless(ok, w)]


def _refuse_under_jit_compile(primitive: str, tf_op: str, why: str = "") -> None:
  """Refuses, while tracing, a rule whose TF op has no XLA kernel when the
  graph is traced for XLA: TF would fail only when it compiles the graph."""
  if not tf_private.tracing_for_xla():
    return
  raise NotImplementedError(
    f"The JAX primitive '{primitive}' cannot be converted for tf.function(jit_compile=True): "
    f"its TF op ({tf_op}) has no XLA kernel{why}. Call the converted function from a "
    f"tf.function without jit_compile, or compute {primitive} outside the compiled function"
  )


@register(lax_linalg.eig_p, float16_in_float32=False)
def _eig(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors, **params):
  params = dict(
    compute_left_eigenvectors=compute_left_eigenvectors,
    compute_right_eigenvectors=compute_right_eigenvectors,
    **params,
  )
  _require_lapack_dtype(ctx, params, x)
  (aval,) = ctx.avals_in
  if ctx.is_static(aval.shape) and 0 in aval.shape:
    # Nothing to decompose, and every result is empty: no Eig op (none
    # under jit_compile either), as native serialization's module has no geev.
    return [tf.zeros(ctx.shape(a.shape), ctx.tf_dtype(a)) for a in ctx.avals_out]
  _refuse_under_jit_compile(
    "eig",
    "Eig",
    ", and XLA has no eigensolver for non-symmetric matrices (native serialization lowers "
    "eig on CPU to a LAPACK custom call, which TensorFlow cannot run either)",
  )
  x, ok = _finite_or_identity(x)
  if not (compute_left_eigenvectors or compute_right_eigenvectors):
    return [_nan_unless(ok, tf.linalg.eigvals(x))]
  w, v = tf.linalg.eig(x)
  outs = [w]
  if compute_left_eigenvectors:
    # TF's Eig computes right eigenvectors only. From A = V diag(w) V^-1,
    # V^-1 A = diag(w) V^-1: row j of V^-1 is the conjugate transpose of a
    # left eigenvector for w[j], in the same order as w.
    outs.append(_as_lapack_eigenvectors(tf.linalg.adjoint(tf.linalg.inv(v))))
  if compute_right_eigenvectors:
    outs.append(v)
  return [_nan_unless(ok, o) for o in outs]


def _as_lapack_eigenvectors(v):
  """The columns of `v` scaled as LAPACK's geev scales eigenvectors: norm 1,
  the component of largest modulus real and positive."""
  v = v / tf.cast(tf.norm(v, axis=-2, keepdims=True), v.dtype)
  largest = tf.gather(v, tf.argmax(tf.abs(v), axis=-2), axis=-2, batch_dims=len(v.shape) - 2)
  largest = tf.linalg.diag_part(largest)[..., None, :]
  return v * tf.math.conj(largest) / tf.cast(tf.abs(largest), v.dtype)


# -- tridiagonal solve


def _tridiagonal_solve_scan(dl, d, du, b):
  m_first = lambda v: tf.transpose(v, [len(v.shape) - 1] + list(range(len(v.shape) - 1)))
  b_first = tf.transpose(b, [len(b.shape) - 2] + list(range(len(b.shape) - 2)) + [len(b.shape) - 1])
  dl, d, du = m_first(dl), m_first(d), m_first(du)
  zero = tf.zeros_like(d[0])

  def step(acc, row):
    a, c, r = acc[0], acc[1], acc[2]
    l, dd, u, bb = row
    swap = _abs1(a) < _abs1(l)
    fact = tf.where(swap, a / l, l / a)
    out = (
      tf.where(swap, l, a),
      tf.where(swap, dd, c),
      tf.where(swap, u, zero),
      tf.where(swap[..., None], bb, r),
    )
    nxt = (
      tf.where(swap, c - fact * dd, dd - fact * c),
      tf.where(swap, -fact * u, u),
      tf.where(swap[..., None], r - fact[..., None] * bb, bb - fact[..., None] * r),
    )
    return nxt + out

  # LAPACK reads neither dl[0] nor du[m-1]. A decoupled identity row appended
  # to the system keeps the scan non-empty when m = 1 (XLA cannot compile a
  # scan over nothing) and is never swapped in: its dl is 0.
  one_row = lambda v, value: tf.fill(tf.shape(v[:1]), tf.constant(value, v.dtype))
  dl = tf.concat([dl, one_row(dl, 0)], 0)
  d = tf.concat([d, one_row(d, 1)], 0)
  du = tf.concat([du[:-1], one_row(du, 0), one_row(du, 0)], 0)
  b_first = tf.concat([b_first, one_row(b_first, 0)], 0)
  init = (d[0], du[0], b_first[0], zero, zero, zero, tf.zeros_like(b_first[0]))
  acc = tf.scan(step, (dl[1:], d[1:], du[1:], b_first[1:]), initializer=init)
  # Rows 0..m-1 of U and of the transformed right-hand side, then the final
  # active row: the appended one.
  u0 = tf.concat([acc[3], acc[0][-1:]], 0)
  u1 = tf.concat([acc[4], tf.zeros_like(d[:1])], 0)
  u2 = tf.concat([acc[5], tf.zeros_like(d[:1])], 0)
  y = tf.concat([acc[6], acc[2][-1:]], 0)

  def back(acc, row):
    x1, x2 = acc
    a, c, e, yy = row
    x = (yy - c[..., None] * x1 - e[..., None] * x2) / a[..., None]
    return x, x1

  zeros_b = tf.zeros_like(b_first[0])
  x, _ = tf.scan(back, (u0, u1, u2, y), initializer=(zeros_b, zeros_b), reverse=True)
  x = x[:-1]
  ok = tf.logical_not(tf.reduce_any(tf.equal(u0, tf.zeros([], u0.dtype)), axis=0))
  x = tf.transpose(x, list(range(1, len(x.shape) - 1)) + [0, len(x.shape) - 1])
  return _nan_unless(ok, x)


@register(lax_linalg.tridiagonal_solve_p, float16_in_float32=False)
def _tridiagonal_solve(ctx, dl, d, du, b, *, perturb_singular=False, **params):
  params = dict(perturb_singular=perturb_singular, **params)
  _require_lapack_dtype(ctx, params, b)
  if perturb_singular:
    # TF's kernel perturbs tiny pivots like JAX's CPU kernel.
    _refuse_under_jit_compile(
      "tridiagonal_solve", "TridiagonalSolve", " for partial pivoting (perturb_singular=True)"
    )
    return tf.linalg.tridiagonal_solve(
      tf.stack([du, d, dl], axis=-2),
      b,
      diagonals_format="compact",
      partial_pivoting=True,
      perturb_singular=True,
    )
  return _tridiagonal_solve_scan(dl, d, du, b)


# -- symmetric product


@register(lax_linalg.symmetric_product_p)
def _symmetric_product(ctx, a, c, *, alpha, beta):
  dtype = a.dtype
  # JAX's CPU lowering is this matmul, in float32 for 16-bit floats.
  wide = sem.widened(dtype)
  a, c = tf.cast(a, wide), tf.cast(c, wide)
  res = (
    tf.constant(alpha, wide) * tf.linalg.matmul(a, a, transpose_b=True)
    + tf.constant(beta, wide) * c
  )
  return tf.cast(res, dtype)


# -- custom_linear_solve: its forward computation is the `solve` function


@register(lax.linear_solve_p)
def _custom_linear_solve(ctx, *args, const_lengths, jaxprs):
  consts = list(args[: sum(const_lengths)])
  b = list(args[sum(const_lengths) :])
  start = sum(const_lengths[:2])  # matvec and vecmat constants come first
  solve_consts = consts[start : start + const_lengths.solve]
  return ctx.lower_jaxpr(jaxprs.solve, solve_consts + b)


# -- Householder form: geqrf, householder_product, ormqr, hessenberg,
# tridiagonal, geqp3
#
# TF's Qr gives Q and R, not LAPACK's compact form (R on and above the
# diagonal, the reflector vectors below it, and their scale factors tau), and
# TF has no Hessenberg, tridiagonal or pivoted QR: the rules lower the JAX
# forms of LAPACK's column-by-column steps (jax2tf/jax_forms/householder.py),
# which native modules lower too.


def _static_matrix_shape(ctx, params, aval):
  m, n = aval.shape[-2:]
  if not ctx.is_static((m, n)):
    raise registry.unsupported_params_error(
      ctx.primitive,
      params,
      f"the rule loops over the columns, so the matrix dimensions must be known, not {(m, n)}",
    )
  return int(m), int(n)


def _householder_operand(ctx, params, a):
  """Refuses what the forms do not reduce: dtypes other than LAPACK's, and
  matrix dimensions that are not static."""
  _require_lapack_dtype(ctx, params, a)
  _static_matrix_shape(ctx, params, ctx.avals_in[0])


@register(jax_private.geqrf_p, float16_in_float32=False)
def _geqrf(ctx, a, **params):
  _householder_operand(ctx, params, a)
  return ctx.lower_fun(householder.geqrf, [a])


@register(lax_linalg.householder_product_p, float16_in_float32=False)
def _householder_product(ctx, a, taus, **params):
  _householder_operand(ctx, params, a)
  return ctx.lower_fun(householder.householder_product, [a, taus])[0]


@register(lax_linalg.hessenberg_p, float16_in_float32=False)
def _hessenberg(ctx, a, **params):
  _householder_operand(ctx, params, a)
  return ctx.lower_fun(householder.hessenberg, [a])


@register(lax_linalg.tridiagonal_p, float16_in_float32=False)
def _tridiagonal(ctx, a, *, lower, **params):
  _householder_operand(ctx, dict(lower=lower, **params), a)
  return ctx.lower_fun(lambda a: householder.tridiagonal(a, lower=lower), [a])


@register(jax_private.geqp3_p, float16_in_float32=False)
def _geqp3(ctx, a, jpvt, *, use_magma=None, **params):
  # use_magma picks among GPU solvers; the result is LAPACK's either way.
  _householder_operand(ctx, dict(use_magma=use_magma, **params), a)
  return ctx.lower_fun(householder.geqp3, [a, jpvt])


@register(lax_linalg.ormqr_p)
def _ormqr(ctx, a, taus, c, *, left, transpose):
  # JAX lowers it as a JAX loop of reflector applications; that loop is lowered.
  return ctx.lower_fun(
    lambda a, taus, c: jax_private.ormqr_expansion(a, taus, c, left=left, transpose=transpose),
    (a, taus, c),
  )[0]
