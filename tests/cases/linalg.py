"""Cases of the linear-algebra family (linalg.py): factorizations, solves, eigendecompositions.

Factorizations unique only up to signs, phases or order (qr, svd, eigh, eig)
are checked through what they determine: either a `compare` that checks
reconstructions, orthogonality and sorted values, or a function that returns
those invariants, computed by JAX for the expected result and by the converted
function for the actual one.
"""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import (
  BF16,
  C64,
  C128,
  F16,
  F32,
  F64,
  I32,
  A,
  Cases,
  V,
  case,
  fast_representatives,
  gaps,
  rand,
  refused,
)

CASES = Cases()

# Graph serialization under jit_compile=True: TF's XLA kernels for these
# decompositions iterate to a float32-level tolerance, also in float64.
_XLA_F64_DECOMPOSITION = gaps(
    "TF's XLA kernels for SelfAdjointEigV2 and Svd stop at a float32-level tolerance, also "
    "for float64", ["graph"], ["compiled"], tol=(1e-6, 1e-6))
# ... and TF has no XLA kernel for Eig at all: refused while tracing.
_NO_XLA_KERNEL_FOR_EIG = gaps(
    "refused while tracing under jit_compile=True: TF's Eig has no XLA kernel and XLA no "
    "non-symmetric eigensolver; run the graph without jit_compile", ["graph"], ["compiled"],
    error=r"'eig' cannot be converted for tf\.function\(jit_compile=True\)")
# LAPACK's geev orders eigenvalues as its QR iteration deflates them, TF's Eig
# as its own solver does; no reordering of TF's result gives LAPACK's order
# (docs/eig.md). Cases compare eigenvalues in any order, but for this one.
_EIG_ORDER = gaps(
    "TF's Eig returns the eigenvalues in another order than LAPACK's geev (JAX on CPU); no "
    "reordering of TF's result reproduces LAPACK's order", ["graph"], ["eager", "graph"],
    error="values differ")
_EIG_LAPACK_ONLY = refused("eig", "CPU eig is only a LAPACK (geev) custom call; XLA has no "
                           "expansion", "native")


# ---------------------------------------------------------------------------
# Random operands, compared up to the non-uniqueness of decompositions.
def _spd(n, dtype=F32):
  rng = np.random.default_rng(n)
  m = rng.normal(size=(n, n))
  return V((m @ m.T + n * np.eye(n)).astype(dtype), dtype)


def _close(a, b, tol, what):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol[0], atol=tol[1],
                             err_msg=what)


def _cmp_qr(args, jout, tout, tol):
  (x,) = args
  q, r = tout
  jq, jr = jout
  _close(q @ r, x, tol, "Q R reconstructs the input")
  _close(q.T @ q, np.eye(q.shape[1]), tol, "Q has orthonormal columns")
  _close(np.triu(r), r, tol, "R is upper triangular")
  _close(np.abs(q), np.abs(jq), tol, "|Q| matches JAX (columns up to sign)")
  _close(np.abs(r), np.abs(jr), tol, "|R| matches JAX (rows up to sign)")


def _cmp_svd(args, jout, tout, tol):
  (x,) = args
  u, s, vh = tout
  _close(np.sort(s), np.sort(jout[1]), tol, "singular values")
  _close((u * s) @ vh, x, tol, "U S Vh reconstructs the input")
  _close(u.T @ u, np.eye(u.shape[1]), tol, "U orthonormal")


def _cmp_svd_values(args, jout, tout, tol):
  _close(np.sort(tout), np.sort(jout), tol, "singular values")


def _cmp_eigh(args, jout, tout, tol):
  (x,) = args
  w, v = tout
  _close(np.sort(w), np.sort(jout[0]), tol, "eigenvalues")
  _close((v * w) @ v.T, (x + x.T) / 2, tol, "V diag(w) V^T reconstructs the input")
  _close(v.T @ v, np.eye(v.shape[1]), tol, "V orthonormal")


def _cmp_eigvals_any_order(args, jout, tout, tol):
  """Eigenvalues as a multiset: each of JAX's paired with the nearest of TF's."""
  left = list(np.asarray(tout).reshape(-1))
  paired = []
  for w in np.asarray(jout).reshape(-1):
    paired.append(left.pop(int(np.argmin(np.abs(np.asarray(left) - w)))))
  _close(np.array(paired), np.asarray(jout).reshape(-1), tol, "eigenvalues (in any order)")


def _cmp_eig_left_and_right(args, jout, tout, tol):
  """Eigenvalues in any order, and each eigenvector paired with its own:
  left ones u (u^H A = w u^H) and right ones v (A v = w v), of unit norm."""
  (x,) = args
  w, vl, vr = tout
  _cmp_eigvals_any_order(args, jout[0], w, tol)
  uh = np.conj(vl).T
  _close(uh @ x, w[:, None] * uh, tol, "left eigenvectors: U^H A = diag(w) U^H")
  _close(x @ vr, vr * w, tol, "right eigenvectors: A V = V diag(w)")
  _close(np.linalg.norm(vl, axis=0), np.ones(len(w)), tol, "left eigenvectors of unit norm")


def _cmp_lu(args, jout, tout, tol):
  (x,) = args
  lu, _, perm = tout
  n = x.shape[0]
  l = np.tril(lu, -1) + np.eye(n, dtype=lu.dtype)
  u = np.triu(lu)
  _close(l @ u, x[perm], tol, "L U reconstructs the permuted input")
  assert sorted(perm.tolist()) == list(range(n)), perm
  _close(np.abs(np.diag(u)).prod(), np.abs(np.diag(np.triu(jout[0]))).prod(), tol, "|det|")


def _cmp_eigh_batched_upper(args, j, t, tol):
  _close(np.sort(t[0], -1), np.sort(j[0], -1), tol, "eigenvalues")
  _close(t[1] @ (t[0][..., None] * np.swapaxes(t[1], -1, -2)),
         np.triu(args[0]) + np.swapaxes(np.triu(args[0], 1), -1, -2), tol,
         "V diag(w) V^T reconstructs the upper triangle's matrix")


_LA_TOL = (1e-4, 1e-4)
_Q = np.linalg.qr(np.random.default_rng(4).normal(size=(6, 6)))[0]
CASES += [
    case("cholesky", jnp.linalg.cholesky, _spd(5), tol=_LA_TOL),
    case("cholesky_float64", jnp.linalg.cholesky, _spd(5, F64), tol=(1e-10, 1e-10), slow=True),
    case("cholesky_update", lax.linalg.cholesky_update,
         V(np.linalg.cholesky(_spd(4).value).T, F32), A(4, lo=-1, hi=1), tol=_LA_TOL),
    case("triangular_solve", lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=True, lower=True, transpose_a=False),
         V(np.tril(np.random.default_rng(1).normal(size=(4, 4))) + 4 * np.eye(4), F32), A(4, 3),
         tol=_LA_TOL),
    case("triangular_solve_right_upper_transpose", lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=False, lower=False, transpose_a=True, unit_diagonal=True),
         V(np.triu(np.random.default_rng(2).normal(size=(4, 4))), F32), A(3, 4), tol=_LA_TOL),
    case("lu", lax.linalg.lu, A(5, 5), tol=_LA_TOL, compare=_cmp_lu),
    case("qr", jnp.linalg.qr, A(5, 4), tol=_LA_TOL, compare=_cmp_qr),
    case("qr_wide_batched", lambda x: jnp.linalg.qr(x)[1], A(2, 3, 5), tol=_LA_TOL,
         compare=lambda args, j, t, tol: _close(np.abs(t), np.abs(j), tol, "|R|"), slow=True),
    case("svd", lambda x: jnp.linalg.svd(x, full_matrices=False), A(5, 4), tol=_LA_TOL,
         compare=_cmp_svd),
    case("svd_float64", lambda x: jnp.linalg.svd(x, full_matrices=False), A(5, 4, dtype=F64),
         tol=(1e-10, 1e-10), compare=_cmp_svd, slow=True, gaps=_XLA_F64_DECOMPOSITION),
    case("svd_values", lambda x: jnp.linalg.svd(x, compute_uv=False), A(6, 3), tol=_LA_TOL,
         compare=_cmp_svd_values),
    case("eigh", jnp.linalg.eigh, _spd(4), tol=_LA_TOL, compare=_cmp_eigh),
    case("eigh_float64", jnp.linalg.eigh, _spd(6, F64), tol=(1e-10, 1e-10), compare=_cmp_eigh,
         gaps=_XLA_F64_DECOMPOSITION),
    case("eigh_float64_repeated_eigenvalues", jnp.linalg.eigh,
         V(_Q @ np.diag([1., 1., 2., 3., 3., 3.]) @ _Q.T, F64), tol=(1e-10, 1e-10),
         compare=_cmp_eigh, slow=True, gaps=_XLA_F64_DECOMPOSITION),
    case("eigh_float64_batched_upper",
         lambda x: lax.linalg.eigh(x, lower=False, symmetrize_input=False)[::-1],
         A(3, 5, 5, dtype=F64), tol=(1e-10, 1e-10), compare=_cmp_eigh_batched_upper, slow=True,
         gaps=_XLA_F64_DECOMPOSITION),
    case("inv", jnp.linalg.inv, _spd(4), tol=_LA_TOL),
    case("det", jnp.linalg.det, A(4, 4), tol=_LA_TOL),
    case("slogdet", jnp.linalg.slogdet, A(4, 4), tol=_LA_TOL),
    case("solve", jnp.linalg.solve, _spd(4), A(4, 2), tol=_LA_TOL),
    case("pinv", jnp.linalg.pinv, A(4, 3), tol=_LA_TOL, slow=True),
    case("lstsq", lambda a, b: jnp.linalg.lstsq(a, b)[0], A(5, 3), A(5, 2), tol=_LA_TOL,
         slow=True),
    case("tridiagonal_solve", lax.linalg.tridiagonal_solve,
         V(np.array([0., 1., 1., 1.]), F32), V(np.array([4., 5., 6., 7.]), F32),
         V(np.array([1., 1., 1., 0.]), F32), A(4, 2), tol=_LA_TOL),
    case("eig", lambda x: jnp.linalg.eig(x)[0], A(4, 4), refuse=_EIG_LAPACK_ONLY,
         compare=_cmp_eigvals_any_order, gaps=_NO_XLA_KERNEL_FOR_EIG),
    # lax.linalg.eig's default: left eigenvectors too, which TF's Eig does
    # not compute; the rule takes them from the inverse of the right ones.
    case("eig_left_and_right_eigenvectors", lambda x: lax.linalg.eig(x), A(3, 3),
         refuse=_EIG_LAPACK_ONLY, compare=_cmp_eig_left_and_right, gaps=_NO_XLA_KERNEL_FOR_EIG),
    case("eigvals", jnp.linalg.eigvals, A(3, 3), refuse=_EIG_LAPACK_ONLY, slow=True,
         compare=_cmp_eigvals_any_order, gaps=_NO_XLA_KERNEL_FOR_EIG),
    # Real, well separated eigenvalues that LAPACK and TF list in other orders.
    case("eigvals_lapack_order", jnp.linalg.eigvals,
         V(np.array([[0., -3., 3.], [2., 3., -3.], [2., -1., 0.]]), F32),
         refuse=_EIG_LAPACK_ONLY, gaps={**_EIG_ORDER, **_NO_XLA_KERNEL_FOR_EIG}),
    # A statically empty operand leaves nothing to decompose: no geev custom
    # call in the module, no Eig op in the graph, so every column converts it
    # (as JAX's own jax2tf does).
    case("eig_empty", lambda x: lax.linalg.eig(
             x, compute_left_eigenvectors=False, compute_right_eigenvectors=False),
         A(0, 0, dtype=C64)),
    case("eig_empty_matrices_left_and_right", lax.linalg.eig, A(3, 0, 0)),
    case("eig_empty_batch_left_and_right", lax.linalg.eig, A(0, 2, 2, dtype=C64)),
    case("schur", lambda x: lax.linalg.schur(x)[0], A(4, 4),
         refuse={**refused("schur", "CPU schur is only a LAPACK (gees) custom call", "native"),
                 **refused("schur", "TensorFlow has no Schur decomposition op", "graph")}),
    case("hessenberg", lambda x: lax.linalg.hessenberg(x)[0], A(4, 4),
         tol=_LA_TOL),
    case("tridiagonal_reduction", lambda x: lax.linalg.tridiagonal(x)[0], _spd(4),
         tol=_LA_TOL, slow=True),
    case("qr_pivoting", lambda x: jax.scipy.linalg.qr(x, pivoting=True), A(4, 4),
         tol=_LA_TOL),
]


def _hpd(n, dtype=C64):
  rng = np.random.default_rng(n + 100)
  m = rng.normal(size=(n, n)) + 1j * rng.normal(size=(n, n))
  return V((m @ m.conj().T + n * np.eye(n)).astype(dtype), dtype)


def _cmp_eigh_complex(args, jout, tout, tol):
  (x,) = args
  w, v = tout
  _close(np.sort(w), np.sort(jout[0]), tol, "eigenvalues")
  _close((v * w) @ v.conj().T, x, tol, "V diag(w) V^H reconstructs the input")


def _cmp_qr_complex(args, jout, tout, tol):
  (x,) = args
  q, r = tout
  _close(q @ r, x, tol, "Q R reconstructs the input")
  _close(np.abs(r), np.abs(jout[1]), tol, "|R| matches JAX (rows up to phase)")


def _cmp_batched_svd_values(args, jout, tout, tol):
  _close(np.sort(tout, axis=-1), np.sort(jout, axis=-1), tol, "singular values")


def _cmp_abs_det(args, j, t, tol):
  _close(np.abs(np.diag(t)).prod(), np.abs(np.diag(j)).prod(), tol, "|det|")


CASES += [
    case("cholesky_complex64", jnp.linalg.cholesky, _hpd(4), tol=_LA_TOL, slow=True),
    case("eigh_complex64", jnp.linalg.eigh, _hpd(4), tol=_LA_TOL, compare=_cmp_eigh_complex,
         slow=True),
    case("eigh_complex128", jnp.linalg.eigh, _hpd(5, C128), tol=(1e-10, 1e-10),
         compare=_cmp_eigh_complex, slow=True, gaps=_XLA_F64_DECOMPOSITION),
    case("qr_complex64", jnp.linalg.qr, A(4, 3, dtype=C64), tol=_LA_TOL,
         compare=_cmp_qr_complex, slow=True),
    case("svd_values_complex64", lambda x: jnp.linalg.svd(x, compute_uv=False),
         A(4, 3, dtype=C64), tol=_LA_TOL, compare=_cmp_svd_values, slow=True),
    case("lu_complex64", lambda x: lax.linalg.lu(x)[0], A(4, 4, dtype=C64), tol=_LA_TOL,
         compare=_cmp_abs_det, slow=True),
    case("solve_complex64", jnp.linalg.solve, _hpd(3), A(3, 2, dtype=C64), tol=_LA_TOL,
         slow=True),
    case("svd_values_batched", lambda x: jnp.linalg.svd(x, compute_uv=False), A(3, 4, 4),
         tol=_LA_TOL, compare=_cmp_batched_svd_values, slow=True),
    case("eigvalsh_batched", jnp.linalg.eigvalsh, A(3, 4, 4), tol=_LA_TOL,
         compare=_cmp_batched_svd_values, slow=True),
    case("det_batched_float64", jnp.linalg.det, A(2, 5, 5, dtype=F64), tol=(1e-10, 1e-10),
         slow=True),
    case("symmetric_product", lambda a, c: lax.linalg.symmetric_product(a, c), A(3, 4), _spd(3),
         tol=_LA_TOL, slow=True),
    case("expm", jax.scipy.linalg.expm, A(4, 4, lo=-1, hi=1), tol=_LA_TOL, slow=True),
    case("solve_triangular_scipy",
         lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True),
         V(np.tril(np.random.default_rng(3).normal(size=(3, 3))) + 3 * np.eye(3), F32), A(3),
         tol=_LA_TOL, slow=True),
    case("sqrtm", jax.scipy.linalg.sqrtm, _spd(3),
         refuse={**refused("schur", "sqrtm goes through schur, a LAPACK-only custom call on CPU",
                           "native"),
                 **refused("schur", "sqrtm goes through schur; TensorFlow has no Schur "
                           "decomposition op", "graph")},
         slow=True),
    case("roots", lambda p: jnp.roots(p, strip_zeros=False), A(4),
         refuse=refused("eig", "roots uses eig of the companion matrix", "native"), slow=True,
         gaps=_NO_XLA_KERNEL_FOR_EIG),
]
CASES[:] = fast_representatives(CASES, ["cholesky_float64"])


# ---------------------------------------------------------------------------
# Fixed operands; functions return the invariants of non-unique decompositions.

def spd(n, dtype=np.float32, batch=(), seed=0):
  """A well-conditioned Hermitian positive definite matrix (batch)."""
  def make(_):
    x = rand(batch + (n, n), dtype, seed=seed)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)
  return make


def tri(n, dtype, lower, batch=(), seed=0):
  x = rand(batch + (n, n), dtype, seed=seed)
  x = np.tril(x) if lower else np.triu(x)
  return (x + 4 * np.eye(n)).astype(dtype)


def _h(x):
  return jnp.conj(jnp.swapaxes(x, -1, -2))


def qr_invariants(mode):
  def f(x):
    q, r = jnp.linalg.qr(x, mode=mode)
    return q @ r, _h(q) @ q, jnp.abs(r)
  return f


def svd_invariants(full_matrices):
  def f(x):
    u, s, vt = jnp.linalg.svd(x, full_matrices=full_matrices)
    k = s.shape[-1]
    recon = (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :]
    return recon, s, _h(u) @ u, vt @ _h(vt)
  return f


def eigh_invariants(lower=True, symmetrize_input=True):
  def f(x):
    v, w = lax.linalg.eigh(x, lower=lower, symmetrize_input=symmetrize_input)
    return (v * w[..., None, :]) @ _h(v), w, _h(v) @ v
  return f


def eig_invariants(x):
  w, v = jnp.linalg.eig(x)
  residual = x.astype(v.dtype) @ v - v * w[..., None, :]
  return residual, jnp.sort(w), jnp.linalg.norm(v, axis=-2)


def all_triangular_solves(a_lower, a_upper, b_left, b_right):
  outs = []
  for left_side in (True, False):
    for lower in (True, False):
      for transpose_a in (False, True):
        for conjugate_a in (False, True):
          for unit_diagonal in (False, True):
            outs.append(lax.linalg.triangular_solve(
                a_lower if lower else a_upper, b_left if left_side else b_right,
                left_side=left_side, lower=lower, transpose_a=transpose_a,
                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal))
  return outs


def lu_shapes(square, tall, wide, batched):
  return [lax.linalg.lu(x) for x in (square, tall, wide, batched)]


def solvers(a, b):
  return (jnp.linalg.solve(a, b), jnp.linalg.inv(a), jnp.linalg.det(a),
          jnp.linalg.slogdet(a), jnp.linalg.det(a[:3, :3]))


def tridiagonal(m, dtype=np.float32, batch=(), seed=0):
  """dl, d, du, b where |dl| > |d| in places, so that gtsv swaps rows."""
  def make(i):
    rng = np.random.default_rng(seed + i)
    shape = batch + (m,)
    if i == 3:
      return rand(batch + (m, 2), dtype, seed=seed + 3)
    v = rng.uniform(-2, 2, shape) if i != 1 else rng.uniform(-0.5, 0.5, shape)
    if np.issubdtype(dtype, np.complexfloating):
      v = v + 1j * rng.uniform(-1, 1, shape)
    return v.astype(dtype)
  return [make(i) for i in range(4)]


def _all_nan(args, expected, actual, tol):
  for a in jax.tree_util.tree_leaves(actual):
    assert np.isnan(a).all(), f"expected NaN everywhere, got {a}"


LA_TOL = (2e-4, 2e-4)

CASES += [
    case("cholesky_batched", jnp.linalg.cholesky, spd(5, batch=(2,)), tol=LA_TOL,
         graph_ops=["Cholesky"]),
    case("triangular_solve_all_flags_c64", all_triangular_solves,
         tri(4, C64, True), tri(4, C64, False, seed=1), rand((4, 3), C64, seed=2),
         rand((3, 4), C64, seed=3), tol=LA_TOL, graph_ops=["MatrixTriangularSolve"]),
    case("lu_square_tall_wide_batched", lu_shapes,
         rand((5, 5)), rand((6, 4), seed=1), rand((3, 5), seed=2), rand((2, 4, 4), seed=3),
         tol=LA_TOL),
    case("solve_inv_det_slogdet", solvers, spd(5), rand((5, 2), seed=1), tol=LA_TOL),
    case("qr_reduced_tall", qr_invariants("reduced"), rand((2, 5, 3)), tol=LA_TOL,
         graph_ops=["Qr"]),
    case("svd_thin_wide", svd_invariants(False), rand((2, 3, 5)), tol=LA_TOL,
         graph_ops=["Svd"]),
    case("eigh_batched", eigh_invariants(), spd(4, batch=(2,)), tol=LA_TOL,
         graph_ops=["SelfAdjointEigV2"]),
    case("tridiagonal_solve_pivoting", lax.linalg.tridiagonal_solve,
         *tridiagonal(7, batch=(2,)), tol=LA_TOL),
    # exhaustive tier
    case("cholesky_c64", jnp.linalg.cholesky, spd(4, C64), tol=LA_TOL, slow=True),
    case("cholesky_not_positive_definite_is_nan",
         lambda x: lax.linalg.cholesky(x, symmetrize_input=False),
         np.array([[[1., 2.], [2., 1.]], [[4., 0.], [1., 9.]]], np.float32), slow=True),
    case("triangular_solve_bf16", lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=True, lower=True),
         tri(3, np.float32, True).astype(BF16), rand((3, 2)).astype(BF16), tol=(3e-2, 3e-2),
         slow=True),
    case("triangular_solve_batched_f32", all_triangular_solves,
         tri(3, np.float32, True, (2,)), tri(3, np.float32, False, (2,), 1),
         rand((2, 3, 2), seed=2), rand((2, 2, 3), seed=3), tol=LA_TOL, slow=True),
    case("lu_c64", lax.linalg.lu, rand((5, 5), C64), tol=LA_TOL, slow=True),
    case("lu_singular_exact", lax.linalg.lu,
         np.array([[0., 1., 0., 2.], [0., 2., 0., 1.], [0., 3., 0., 1.], [0., 1., 0., 5.]],
                  np.float32), slow=True),
    case("lu_pivots_to_permutation", lambda p: lax.linalg.lu_pivots_to_permutation(p, 6),
         np.array([[2, 3, 2, 5], [0, 1, 5, 4]], I32), slow=True),
    case("lu_factor_solve_scipy", lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b),
         rand((4, 4)), rand((4, 3), seed=1), tol=LA_TOL, slow=True),
    case("cho_solve_scipy", lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=True), b),
         spd(4), rand((4, 2), seed=1), tol=LA_TOL, slow=True),
    case("custom_linear_solve", lambda a, b: lax.custom_linear_solve(
        lambda x: a @ x, b, lambda _, y: jnp.linalg.solve(a, y), symmetric=True),
         spd(3), rand((3,), seed=1), tol=LA_TOL, slow=True),
    case("solve_c64_batched", jnp.linalg.solve, spd(3, C64, (2,)), rand((2, 3, 2), C64, seed=1),
         tol=LA_TOL, slow=True),
    case("qr_complete_wide_c64", qr_invariants("complete"), rand((3, 5), C64), tol=LA_TOL,
         slow=True),
    case("qr_complete_tall", qr_invariants("complete"), rand((5, 3)), tol=LA_TOL, slow=True),
    case("svd_full_tall", svd_invariants(True), rand((5, 3)), tol=LA_TOL, slow=True),
    case("svd_values_c64", lambda x: jnp.linalg.svd(x, compute_uv=False), rand((2, 4, 3), C64),
         tol=LA_TOL, slow=True),
    case("svd_users", lambda x: (jnp.linalg.pinv(x), jnp.linalg.matrix_rank(x),
                                 jnp.linalg.norm(x, 2), jnp.linalg.cond(x)),
         rand((4, 3)), tol=(1e-3, 1e-3), slow=True),
    case("lstsq_fixed", lambda a, b: jnp.linalg.lstsq(a, b)[0], rand((5, 3)),
         rand((5, 2), seed=1), tol=LA_TOL, slow=True),
    case("eigh_upper_no_symmetrize_c64", eigh_invariants(lower=False, symmetrize_input=False),
         rand((3, 3), C64), tol=LA_TOL, slow=True),
    case("eigvalsh", jnp.linalg.eigvalsh, spd(5), tol=LA_TOL, slow=True),
    case("eigh_nan_input_is_nan", lambda x: lax.linalg.eigh(x, symmetrize_input=False),
         np.array([[np.nan, 1.], [1., 2.]], np.float32), compare=_all_nan, slow=True,
         gaps=gaps("TF's XLA runtime, which executes the native module, returns finite "
                   "eigenvectors (the identity) for a NaN input where JAX's are NaN",
                   ["native"], error="expected NaN everywhere")),
    case("empty_matrices", lambda a, b: (lax.linalg.svd(a), lax.linalg.svd(a.T,
                                                                           full_matrices=False),
                                         lax.linalg.lu(b), lax.linalg.qr(a)),
         np.zeros((0, 3), np.float32), np.zeros((2, 0, 0), np.float32), slow=True),
    case("symmetric_product_batched_alpha_beta",
         lambda a, c: lax.linalg.symmetric_product(a, c, alpha=2., beta=-1.),
         rand((2, 3, 4)), spd(3, batch=(2,)), tol=LA_TOL, slow=True),
    case("expm_fixed", jsl.expm, rand((4, 4), low=-1, high=1), tol=LA_TOL, slow=True),
    case("tridiagonal_solve_c64", lax.linalg.tridiagonal_solve, *tridiagonal(5, C64), tol=LA_TOL,
         slow=True),
    case("tridiagonal_solve_m1", lax.linalg.tridiagonal_solve, *tridiagonal(1), tol=LA_TOL,
         slow=True),
    case("tridiagonal_solve_singular_is_nan", lax.linalg.tridiagonal_solve,
         np.array([0., 1., 1.], np.float32), np.array([0., 0., 1.], np.float32),
         np.array([0., 1., 0.], np.float32), np.ones((3, 1), np.float32), slow=True),
    case("poly_cholesky_batch", jnp.linalg.cholesky, spd(3, batch=(2,)),
         polymorphic_shapes=["(b, 3, 3)"], tol=LA_TOL, slow=True),
    case("poly_lu_n", lax.linalg.lu, rand((5, 5)), polymorphic_shapes=["(n, n)"], tol=LA_TOL,
         slow=True, gaps=gaps("JAX's CPU lowering of lu needs a static matrix size to export",
                              ["native"], error="cannot be interpreted as an integer")),
    case("poly_solve_batch", jnp.linalg.solve, spd(3, batch=(2,)), rand((2, 3, 1), seed=1),
         polymorphic_shapes=["(b, 3, 3)", "(b, 3, 1)"], tol=LA_TOL, slow=True),
    case("poly_tridiagonal_solve", lax.linalg.tridiagonal_solve, *tridiagonal(6),
         polymorphic_shapes=["(m,)", "(m,)", "(m,)", "(m, 2)"], tol=LA_TOL, slow=True,
         gaps=gaps("JAX's CPU lowering of tridiagonal_solve compares the symbolic size with "
                   "a block size, which export cannot decide", ["native"],
                   error="inconclusive")),
]

# 64-bit dtypes. TF's XLA kernels for SelfAdjointEigV2 and Svd stop iterating
# at a tolerance near float32's, also for float64.
_XLA_ITERATIVE = gaps("TF's XLA kernels for SelfAdjointEigV2 and Svd stop at a float32-level "
                      "tolerance, also for float64", ["graph"], ["compiled"], tol=(1e-6, 1e-6))
CASES += [
    case("cholesky_f64", jnp.linalg.cholesky, spd(6, F64), tol=(1e-12, 1e-12)),
    case("lu_f64_blocked", lax.linalg.lu, rand((150, 140), F64), tol=(1e-9, 1e-9), slow=True),
    case("solve_c128", jnp.linalg.solve, spd(4, C128), rand((4, 2), C128, seed=1),
         tol=(1e-12, 1e-12), slow=True),
    case("triangular_solve_c128", all_triangular_solves,
         tri(3, C128, True), tri(3, C128, False, seed=1), rand((3, 2), C128, seed=2),
         rand((2, 3), C128, seed=3), tol=(1e-12, 1e-12), slow=True),
    case("qr_f64", qr_invariants("reduced"), rand((4, 3), F64), tol=(1e-12, 1e-12), slow=True),
    case("svd_f64", svd_invariants(False), rand((4, 3), F64), tol=(1e-11, 1e-11), slow=True,
         gaps=_XLA_ITERATIVE),
    case("eigh_f64", eigh_invariants(), spd(5, F64), tol=(1e-11, 1e-11), gaps=_XLA_ITERATIVE),
    case("eigh_c128", eigh_invariants(), spd(4, C128), tol=(1e-11, 1e-11), slow=True,
         gaps=_XLA_ITERATIVE),
    case("tridiagonal_solve_f64", lax.linalg.tridiagonal_solve, *tridiagonal(6, F64),
         tol=(1e-12, 1e-12), slow=True),
]

# TF has no XLA kernel for Eig, complex Svd with singular vectors or a
# tridiagonal solve that perturbs singular pivots: those run in eager and graph
# mode, and under jit_compile=True are refused while tracing.
def _no_xla_kernel(primitive, tf_op):
  return gaps(f"refused while tracing under jit_compile=True: TF's {tf_op} has no XLA kernel; "
              "run the graph without jit_compile", ["graph"], ["compiled"],
              error=rf"'{primitive}' cannot be converted for tf\.function\(jit_compile=True\)")


CASES += [
    case("eig_f32", eig_invariants, rand((4, 4)), tol=LA_TOL, graph_ops=["Eig"],
         refuse=_EIG_LAPACK_ONLY, gaps=_NO_XLA_KERNEL_FOR_EIG),
    case("eig_c64_batched", eig_invariants, rand((2, 3, 3), C64), tol=LA_TOL, slow=True,
         refuse=_EIG_LAPACK_ONLY, gaps=_NO_XLA_KERNEL_FOR_EIG),
    case("eigvals_diagonal", jnp.linalg.eigvals, np.diag(np.arange(1., 5.)).astype(np.float32),
         tol=LA_TOL, slow=True, refuse=_EIG_LAPACK_ONLY, gaps=_NO_XLA_KERNEL_FOR_EIG),
    case("svd_c64", svd_invariants(False), rand((4, 3), C64), tol=LA_TOL, slow=True,
         gaps=_no_xla_kernel("svd", "Svd of complex matrices")),
    case("tridiagonal_solve_perturb_singular", lambda dl, d, du, b: lax.linalg.tridiagonal_solve(
        dl, d, du, b, perturb_singular=True), *tridiagonal(5), tol=LA_TOL,
         gaps={**_no_xla_kernel("tridiagonal_solve", "TridiagonalSolve with perturb_singular"),
               **gaps("JAX's lowering for export supports perturb_singular=True on no "
                      "platform", ["native"], error="perturb_singular=True is not supported")}),
]

# 16-bit floats: JAX's CPU lowering (LAPACK) has none, so jax.jit fails
# (JAX 0.10 when lowering, later versions already when tracing) and graph
# serialization refuses them likewise.
_LAPACK_16_BIT = "LAPACK has no 16-bit float types; JAX's CPU lowering refuses them too"
_NO_JAX_RESULT_16_BIT = {
    **gaps("JAX's CPU lowering has no 16-bit float LAPACK call: jax.jit fails, so there is no "
           "result to compare with", ["native"], error="Unsupported dtype|does not accept dtype"),
    # The litert route's portable lowering gets past JAX's CPU lowering; then
    # litert-converter refuses the op (cholesky, lu), or LiteRT has no kernel
    # for the custom call it keeps (eigh).
    **gaps("jax.jit fails (no 16-bit float LAPACK call on CPU), so there is no result to "
           "compare with; the litert route converts the portable lowering, which "
           "litert-converter or LiteRT refuses", ["tflite_litert"],
           error="Unsupported dtype|does not accept dtype|litert-converter cannot|"
                 "STABLEHLO_CUSTOM_CALL"),
}


def _refused_in_graph(name, fun, arg, primitive, why, **kw):
  return case(name, fun, arg, refuse=refused(primitive, why, "graph"), **kw)


CASES += [
    _refused_in_graph("cholesky_f16", lambda x: lax.linalg.cholesky(x.astype(F16)), spd(3),
                      "cholesky", _LAPACK_16_BIT, gaps=_NO_JAX_RESULT_16_BIT),
    _refused_in_graph("lu_bf16", lambda x: lax.linalg.lu(x.astype(jnp.bfloat16)), rand((3, 3)),
                      "lu", _LAPACK_16_BIT, gaps=_NO_JAX_RESULT_16_BIT),
    _refused_in_graph("eigh_f16", lambda x: lax.linalg.eigh(x.astype(F16)), spd(3), "eigh",
                      _LAPACK_16_BIT, gaps=_NO_JAX_RESULT_16_BIT),
]

# Refused by both serializations: LAPACK-only custom calls natively, and no
# TF op for graph serialization.
def _refused_everywhere(name, fun, arg, primitive, native_primitive, why):
  return case(name, fun, arg,
              refuse={**refused(native_primitive, "CPU lowering is only a LAPACK custom call",
                                "native"),
                      **refused(primitive, why, "graph")})


CASES += [
    _refused_everywhere("schur_3x3", lambda x: lax.linalg.schur(x), rand((3, 3)), "schur",
                        "schur", "TensorFlow has no Schur decomposition op"),
]

# Householder form (geqrf, householder_product, ormqr, hessenberg, tridiagonal,
# geqp3): LAPACK's reflectors and taus, reproduced step by step
# (jax2tf/jax_forms/householder.py).
def _householder_q(x):
  reflectors, taus = jnp.linalg.qr(x, mode="raw")
  return lax.linalg.householder_product(reflectors.mT, taus)


CASES += [
    case("qr_raw_geqrf", lambda x: jnp.linalg.qr(x, mode="raw"), rand((3, 3)), tol=LA_TOL),
    case("geqrf_tall_batched", lambda x: jnp.linalg.qr(x, mode="raw"), rand((2, 5, 3)),
         tol=LA_TOL),
    case("geqrf_wide_c64", lambda x: jnp.linalg.qr(x, mode="raw"), rand((3, 4), C64),
         tol=LA_TOL),
    case("householder_product", _householder_q, rand((4, 3)), tol=LA_TOL),
    case("householder_product_c64_batched",
         lambda a, t: lax.linalg.householder_product(a, t), rand((2, 4, 3), C64),
         rand((2, 2), C64, seed=1), tol=LA_TOL),
    case("ormqr_left", lambda x, c: jsl.qr_multiply(x, c, mode="left")[0], rand((4, 3)),
         rand((3, 2), seed=1), tol=LA_TOL),
    case("ormqr_right_conjugate_c64",
         lambda x, c: jsl.qr_multiply(x, c, conjugate=True)[0], rand((4, 3), C64),
         rand((2, 4), C64, seed=1), tol=LA_TOL),
    # Column-pivoted QR (geqp3).
    case("qr_pivoting_3x3", lambda x: jsl.qr(x, pivoting=True), rand((3, 3)), tol=LA_TOL),
    case("qr_pivoting_wide_c64", lambda x: jsl.qr(x, pivoting=True, mode="economic"),
         rand((3, 5), C64), tol=LA_TOL),
    case("qr_multiply_pivoting_batched",
         lambda x, c: jsl.qr_multiply(x, c, mode="left", pivoting=True)[0],
         rand((2, 5, 3)), rand((2, 3, 2), seed=1), tol=LA_TOL),
    # Hessenberg and tridiagonal reductions.
    case("hessenberg_3x3", lax.linalg.hessenberg, rand((3, 3)), tol=LA_TOL),
    case("hessenberg_batched", lax.linalg.hessenberg, rand((2, 5, 5)), tol=LA_TOL),
    case("hessenberg_c64", lax.linalg.hessenberg, rand((4, 4), C64), tol=LA_TOL),
    case("tridiagonal_reduction_3x3", lax.linalg.tridiagonal, spd(3), tol=LA_TOL),
    case("tridiagonal_upper_batched", lambda x: lax.linalg.tridiagonal(x, lower=False),
         rand((2, 5, 5)), tol=LA_TOL),
    case("tridiagonal_c64", lax.linalg.tridiagonal, rand((4, 4), C64), tol=LA_TOL),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/linalg.json.
CASES[:] = recorded.apply(CASES, "tflite", "linalg")
CASES[:] = recorded.apply(CASES, "tflite_native", "linalg")
CASES[:] = recorded.apply(CASES, "tflite_litert", "linalg")
CASES[:] = recorded.apply(CASES, "tfjs", "linalg")
