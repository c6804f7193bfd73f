"""The JAX forms of LAPACK's Householder reductions
(jax2tf/jax_forms/householder.py) against JAX's own LAPACK results.

The graph route lowers the forms; the case table (tests/cases/linalg.py)
runs them through every column.
"""

import jax
import numpy as np
import pytest
from jax.lax import linalg as lax_linalg

from jax2tf.internals import jax_private
from jax2tf.jax_forms import householder

_TOL = {np.float32: 2e-5, np.complex64: 2e-5, np.float64: 1e-12, np.complex128: 1e-12}


def _matrix(shape, dtype, *, zero_column=None, seed=0):
  """A random matrix; `zero_column` of it exactly zero, so that a reflector
  has nothing to reflect (larfg's tau = 0)."""
  rng = np.random.default_rng(seed)
  x = rng.normal(size=shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.normal(size=shape)
  x = x.astype(dtype)
  if zero_column is not None:
    x[..., zero_column] = 0
  return x


def _assert_close(got, want, dtype):
  got, want = jax.tree.leaves(got), jax.tree.leaves(want)
  assert len(got) == len(want)
  for i, (g, w) in enumerate(zip(got, want)):
    assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
    scale = max(1.0, float(np.max(np.abs(w), initial=0)))
    np.testing.assert_allclose(g, w, rtol=_TOL[dtype], atol=_TOL[dtype] * scale, err_msg=f"{i}")


_DTYPES = [np.float32, np.complex64, np.float64, np.complex128]
_QR_SHAPES = {
  "tall": ((6, 4), None),
  "wide": ((3, 5), None),
  "square_batched": ((2, 3, 4, 4), None),
  # Column 1 is zero from the start and stays so below row 0: its step skips.
  "zero_column": ((5, 4), 1),
  "one_by_one": ((1, 1), None),
}


def _dtype_param(dtype):
  return pytest.param(dtype, id=np.dtype(dtype).name)


@pytest.mark.parametrize("dtype", [_dtype_param(d) for d in _DTYPES])
@pytest.mark.parametrize("shape", sorted(_QR_SHAPES))
def test_geqrf_and_householder_product_are_lapack_s(shape, dtype):
  dims, zero = _QR_SHAPES[shape]
  with jax.enable_x64(np.dtype(dtype) in (np.float64, np.complex128)):
    a = _matrix(dims, dtype, zero_column=zero)
    want = jax.jit(jax_private.geqrf_p.bind)(a)
    _assert_close(jax.jit(householder.geqrf)(a), want, dtype)
    if dims[-2] >= dims[-1]:  # orgqr's Q has no more columns than rows
      reflectors, taus = want
      _assert_close(
        jax.jit(householder.householder_product)(reflectors, taus),
        jax.jit(lax_linalg.householder_product)(reflectors, taus),
        dtype,
      )


@pytest.mark.parametrize("dtype", [_dtype_param(d) for d in _DTYPES])
@pytest.mark.parametrize("shape", sorted(_QR_SHAPES))
def test_geqp3_is_lapack_s(shape, dtype):
  dims, zero = _QR_SHAPES[shape]
  with jax.enable_x64(np.dtype(dtype) in (np.float64, np.complex128)):
    # Distinct column norms, so that rounding picks no other pivot.
    a = _matrix(dims, dtype, zero_column=zero) * np.arange(1, dims[-1] + 1).astype(dtype)
    jpvt = np.zeros(dims[:-2] + dims[-1:], np.int32)
    if dims[-1] > 2:
      jpvt[..., dims[-1] - 1] = 1  # a column marked to lead
    geqp3 = jax.jit(lambda a, jpvt: jax_private.geqp3_p.bind(a, jpvt, use_magma=None))
    _assert_close(jax.jit(householder.geqp3)(a, jpvt), geqp3(a, jpvt), dtype)


_SQUARE_SHAPES = {
  "single": ((5, 5), None),
  "batched": ((2, 4, 4), None),
  # Column 0 is zero below the diagonal: the first reflector is skipped.
  "zero_below": ((4, 4), 0),
  "two_by_two": ((2, 2), None),
}


@pytest.mark.parametrize("dtype", [_dtype_param(d) for d in _DTYPES])
@pytest.mark.parametrize("shape", sorted(_SQUARE_SHAPES))
def test_hessenberg_and_tridiagonal_are_lapack_s(shape, dtype):
  dims, zero = _SQUARE_SHAPES[shape]
  with jax.enable_x64(np.dtype(dtype) in (np.float64, np.complex128)):
    a = _matrix(dims, dtype)
    if zero is not None:
      a[..., zero + 1 :, zero] = 0
      a[..., zero, zero + 1 :] = 0  # the tridiagonal reductions read one triangle each
    _assert_close(jax.jit(householder.hessenberg)(a), jax.jit(lax_linalg.hessenberg)(a), dtype)
    for lower in (True, False):
      _assert_close(
        jax.jit(lambda a: householder.tridiagonal(a, lower=lower))(a),
        jax.jit(lambda a: lax_linalg.tridiagonal(a, lower=lower))(a),
        dtype,
      )
