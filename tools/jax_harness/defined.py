"""How a converted result is judged against `jax.jit`'s.

`exact`: every result equal, at the dtype's tolerance. Where that fails,
`check` accepts what JAX leaves implementation-defined, judged by what does
define it:

* eigenvectors and singular vectors (any sign or phase): `A v = v w`,
  `u s vh = A`, with the same eigenvalues and singular values;
* eig's eigenvalues (LAPACK's order): the same multiset;
* a Cholesky factor's other triangle: only the factor's triangle compared;
* an unstable sort's ties: the same keys, and the same rows as a multiset;
* approx_top_k's ties: the same values, each at its index;
* a convolution or window sum computed wider than its operands (a
  `preferred_element_type`, a 16-bit sum in another order): the operands'
  precision.
"""

import jax
import numpy as np


def _array(x) -> np.ndarray:
  return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _leaves(tree) -> list:
  return [_array(x) for x in jax.tree_util.tree_leaves(tree)]


def _tolerance(dtype) -> tuple[float, float]:
  dt = np.dtype(dtype)
  if dt.kind in "biu":
    return 0.0, 0.0
  if dt.itemsize <= 2 or dt.name == "bfloat16":
    return 1e-2, 1e-2
  if dt in (np.float64, np.complex128):
    return 1e-10, 1e-10
  return 1e-4, 1e-4


def exact(expected, actual) -> str | None:
  """None where every result equals JAX's at its dtype's tolerance."""
  ex, ac = _leaves(expected), _leaves(actual)
  if len(ex) != len(ac):
    return f"{len(ac)} results, JAX {len(ex)}"
  for i, (e, a) in enumerate(zip(ex, ac)):
    if e.shape != a.shape:
      return f"result {i}: shape {a.shape}, JAX {e.shape}"
    if e.dtype != a.dtype and "bfloat16" not in (e.dtype.name, a.dtype.name):
      return f"result {i}: dtype {a.dtype}, JAX {e.dtype}"
    if e.dtype.kind in "biu":
      if not np.array_equal(e, a):
        return f"result {i}: {int(np.sum(e != a))}/{e.size} values differ"
      continue
    wide = np.complex128 if e.dtype.kind == "c" else np.float64
    ef, af = e.astype(wide), a.astype(wide)
    rtol, atol = _tolerance(e.dtype)
    close = np.isclose(af, ef, rtol=rtol, atol=atol, equal_nan=True)
    if not close.all():
      diff = float(np.nanmax(np.abs(af - ef)[~close]))
      return f"result {i}: {int((~close).sum())}/{e.size} values differ (max abs diff {diff:.3g})"
  return None


def _scale(x: np.ndarray) -> float:
  """An absolute tolerance for products of `x` with itself."""
  relative = {2: 3e-2, 4: 1e-3}.get(
    np.dtype(x.dtype).itemsize // (2 if x.dtype.kind == "c" else 1), 1e-8
  )
  return relative * max(1.0, float(np.abs(x).max(initial=0.0))) * max(x.shape[-2:], default=1)


def _hermitian(x: np.ndarray, lower: bool) -> np.ndarray:
  triangle = np.tril(x) if lower else np.triu(x)
  strict = np.tril(x, -1) if lower else np.triu(x, 1)
  return triangle + np.conj(np.swapaxes(strict, -1, -2))


def _sorted_eigenvalues(w: np.ndarray, t: float) -> np.ndarray:
  order = np.lexsort((np.round(w.imag / t), np.round(w.real / t)), axis=-1)
  return np.take_along_axis(w, order, -1)


def _eig(h, x, ex, ac) -> str | None:
  t = 10 * _scale(x)
  w = ac[0]
  if not np.allclose(_sorted_eigenvalues(w, t), _sorted_eigenvalues(ex[0], t), atol=t):
    return "eigenvalues differ as a multiset"
  a, vectors = x.astype(np.complex128), iter(ac[1:])
  if h.params["compute_left_eigenvectors"]:
    vl_h = np.conj(np.swapaxes(next(vectors), -1, -2))
    if not np.allclose(vl_h @ a, w[..., :, None] * vl_h, atol=t):
      return "vl^H A != w vl^H"
  if h.params["compute_right_eigenvectors"]:
    vr = next(vectors)
    if not np.allclose(a @ vr, vr * w[..., None, :], atol=t):
      return "A vr != vr w"
  return None


def _eigh(h, x, ex, ac) -> str | None:
  v, w = ac
  t = _scale(x)
  if not np.allclose(w, ex[1], atol=t):
    return "eigenvalues differ"
  a = _hermitian(x, h.params["lower"])
  return None if np.allclose(a @ v, v * w[..., None, :], atol=t) else "A v != v w"


def _svd(h, x, ex, ac) -> str | None:
  t = _scale(x)
  if not np.allclose(ac[0], ex[0], atol=t):
    return "singular values differ"
  if not h.params["compute_uv"]:
    return None
  s, u, vh = ac
  k = s.shape[-1]
  rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
  return None if np.allclose(rebuilt, x, atol=t) else "u s vh != A"


def _cholesky(h, x, ex, ac) -> str | None:
  rtol, _ = _tolerance(x.dtype)
  atol = rtol * max(1.0, float(np.abs(ex[0]).max(initial=0.0)))
  return (
    None
    if np.allclose(np.tril(ac[0]), np.tril(ex[0]), rtol=rtol, atol=atol)
    else ("lower triangles differ")
  )


def _sort(h, x, ex, ac) -> str | None:
  for i in range(h.params["num_keys"]):
    if not np.array_equal(ac[i], ex[i], equal_nan=True):
      return f"keys {i} differ"
  axis = h.params["dimension"]

  def rows(results):
    stacked = np.stack([np.moveaxis(r, axis, -1).astype(np.float64) for r in results], -1)
    stacked = stacked.reshape(-1, *stacked.shape[-2:])
    return [sorted(map(tuple, m)) for m in stacked]

  return None if rows(ac) == rows(ex) else "not a permutation of JAX's rows"


def _approx_top_k(h, x, ex, ac) -> str | None:
  values, indices = ac
  if not np.array_equal(values, ex[0]):
    return "values differ"
  axis = h.params.get("reduction_dimension", -1)
  at = np.take_along_axis(x, indices.astype(np.int64), axis=axis)
  return None if np.array_equal(at, values) else "x[indices] != values"


def _at_operand_precision(h, x, ex, ac) -> str | None:
  rtol, _ = _tolerance(x.dtype)
  for e, a in zip(ex, ac):
    atol = rtol * max(1.0, float(np.abs(e).max(initial=0.0)))
    if not np.allclose(a, e, rtol=rtol, atol=atol):
      return "differs beyond the operands' precision"
  return None


_CHECKS = {
  "eig": _eig,
  "eigh": _eigh,
  "svd": _svd,
  "cholesky": _cholesky,
  "sort": _sort,
  "approx_top_k": _approx_top_k,
  "conv_general_dilated": _at_operand_precision,
  "reduce_window_add": _at_operand_precision,
}


def check(h, args, expected, actual) -> str | None:
  """None where `actual` is a valid answer where JAX's is implementation-defined."""
  judge = _CHECKS.get(h.group_name)
  if judge is None or not args:
    return "no implementation-defined output in this group"
  return judge(h, np.asarray(args[0]), _leaves(expected), _leaves(actual))
