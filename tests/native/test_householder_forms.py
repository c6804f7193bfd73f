"""The JAX forms of LAPACK's Householder reductions
(jax2tf/jax_forms/householder.py) against JAX's own LAPACK results, and where
native modules take them (portable_lowering.py, target_lowerings.py).

The graph route lowers the same forms; the case table
(tests/cases/linalg.py) runs them through every column.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export as jax_export
from jax.lax import linalg as lax_linalg

from jax2tf import targets
from jax2tf.internals import jax_private
from jax2tf.jax_forms import householder
from jax2tf.native import target_lowerings

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


def _custom_calls(fun, target, *args):
  exported = jax_export.export(
    jax.jit(fun), platforms=("cpu",), _override_lowering_rules=target_lowerings.lowering_rules(target)
  )(*args)
  return set(re.findall(r"custom_call @(\w+)", exported.mlir_module()))


_A = _matrix((2, 5, 3), np.float32)
_SQUARE = _matrix((4, 4), np.float32)


def test_native_modules_reduce_static_matrices_with_the_forms():
  # No LAPACK custom call for any target; XLA's own QR custom calls only
  # where XLA runs the module.
  for target in (targets.TF_XLA, targets.TFLITE, targets.LITERT):
    for fun, arg in (
      (lax_linalg.hessenberg, _SQUARE),
      (lambda a: lax_linalg.tridiagonal(a, lower=False), _SQUARE),
      (lambda a: jax.scipy.linalg.qr(a, pivoting=True, mode="economic"), _A[0]),
    ):
      assert not {c for c in _custom_calls(fun, target, arg) if "lapack" in c}, target.name
  assert _custom_calls(jnp.linalg.qr, targets.TF_XLA, _A) == {
    "Qr",
    "ProductOfElementaryHouseholderReflectors",
  }
  for target in (targets.TFLITE, targets.LITERT):
    assert _custom_calls(jnp.linalg.qr, target, _A) == set(), target.name
    # Complex matrices, which both converters crash on as forms, keep the
    # custom calls there.
    complex_a = _A.astype(np.complex64)
    assert "Qr" in _custom_calls(jnp.linalg.qr, target, complex_a), target.name
    assert "lapack_cgehrd_ffi" in _custom_calls(lax_linalg.hessenberg, target, complex_a[0, :3])
    assert not _custom_calls(lax_linalg.hessenberg, targets.TF_XLA, complex_a[0, :3])


def test_a_symbolic_matrix_keeps_jax_s_lowerings():
  # The forms loop over the columns: with a symbolic matrix size, the
  # module keeps JAX's custom calls (the portable ones for geqrf and
  # householder_product; LAPACK's for tridiagonal, for each platform).
  (n,) = jax_export.symbolic_shape("n")
  spec = jax.ShapeDtypeStruct((n, n), np.float32)
  calls = _custom_calls(jnp.linalg.qr, targets.LITERT, spec)
  assert {"Qr", "ProductOfElementaryHouseholderReflectors"} <= calls
  exported = jax_export.export(
    jax.jit(lax_linalg.tridiagonal),
    platforms=("cpu", "cuda"),
    _override_lowering_rules=target_lowerings.lowering_rules(targets.TF_XLA),
  )(spec)
  calls = set(re.findall(r"custom_call @(\w+)", exported.mlir_module()))
  assert {"lapack_ssytrd_ffi", "cusolver_sytrd_ffi"} <= calls
