"""Comparing a converted function's results with JAX's, seeing what JAX distinguishes.

Shapes and dtypes must be equal. Integers and bools must be equal. For floating
and complex results (each part of a complex number on its own) NaN must sit at
the same positions, infinities must be the same infinities, and wherever both
results are zero the signs of zero must agree; only the remaining finite
values are compared with a tolerance, or bit for bit with `exact=True`.
`numpy.testing.assert_allclose` sees none of -0.0 versus +0.0.

bfloat16, float16 and the float8 types are compared through float32, which
holds each of their values exactly (NumPy sees the ml_dtypes types as kind 'V').
"""

import jax
import numpy as np

from tests.support import case as case_lib

_SHOWN = 5  # mismatching elements quoted in a message


# The phrases that name what differs; the fuzzer's minimizer reads them back
# to keep a mismatch of the same kind while it shrinks a program.
NAN_POSITIONS = "NaN positions differ"
INFINITIES = "infinities differ"
SIGNS_OF_ZERO = "signs of zero differ"
VALUES = "values differ"
SHAPE = ": shape "
DTYPE = ": dtype "
RESULT_COUNT = "results where JAX has"
MISMATCH_KINDS = (NAN_POSITIONS, INFINITIES, SIGNS_OF_ZERO, VALUES, SHAPE, DTYPE, RESULT_COUNT)


def assert_same(expected, actual, *, tol=None, exact=False, where: str = "result"):
  """`actual` (a pytree of arrays) is `expected`, element by element.

  tol: (rtol, atol), by default per result dtype (tests.support.case.DEFAULT_TOL).
  """
  e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
  a_leaves = jax.tree_util.tree_leaves(actual)
  assert len(e_leaves) == len(a_leaves), (
    f"{where}: {len(a_leaves)} {RESULT_COUNT} {len(e_leaves)} ({e_tree})"
  )
  for i, (e, a) in enumerate(zip(e_leaves, a_leaves)):
    assert_array_same(
      e, a, tol=tol, exact=exact, where=where if len(e_leaves) == 1 else f"{where} {i}"
    )


def is_inexact(dtype) -> bool:
  return jax.dtypes.issubdtype(np.dtype(dtype), np.inexact)


def assert_array_same(expected, actual, *, tol=None, exact=False, where: str = "result"):
  e, a = np.asarray(expected), np.asarray(actual)
  assert e.shape == a.shape, f"{where}{SHAPE}{a.shape} where JAX has {e.shape}"
  assert e.dtype == a.dtype, f"{where}{DTYPE}{a.dtype} where JAX has {e.dtype}"
  if not is_inexact(e.dtype):
    _assert_at(e == a, e, a, where, VALUES)
    return
  rtol, atol = (0.0, 0.0) if exact else (tol or case_lib.default_tol(e.dtype))
  if e.dtype.kind == "c":
    # The tolerance scales with the complex magnitude, as for assert_allclose.
    # Where the magnitude is NaN or infinite (the other part is), each part
    # scales by its own magnitude, so a finite part is still compared.
    scale = np.abs(e.astype(np.complex128))
    for part, e_p, a_p in (("real", e.real, a.real), ("imaginary", e.imag, a.imag)):
      part_scale = np.where(np.isfinite(scale), scale, np.abs(e_p.astype(np.float64)))
      _assert_floats(e_p, a_p, rtol, atol, exact, part_scale, f"{where} ({part} part)")
  else:
    _assert_floats(e, a, rtol, atol, exact, None, where)


def _wide(x):
  return x.astype(np.float32) if x.dtype.itemsize < 4 else x


def _bits(x):
  return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def _assert_floats(e, a, rtol, atol, exact, scale, where):
  e_w, a_w = _wide(e), _wide(a)
  e_nan, a_nan = np.isnan(e_w), np.isnan(a_w)
  _assert_at(e_nan == a_nan, e, a, where, NAN_POSITIONS)
  numbers = ~e_nan
  e_inf, a_inf = np.isinf(e_w), np.isinf(a_w)
  _assert_at(~numbers | ~(e_inf | a_inf) | (e_w == a_w), e, a, where, INFINITIES)
  both_zero = numbers & (e_w == 0) & (a_w == 0)
  _assert_at(~both_zero | (np.signbit(e_w) == np.signbit(a_w)), e, a, where, SIGNS_OF_ZERO)
  if exact:
    _assert_at(~numbers | (_bits(e) == _bits(a)), e, a, where, f"{VALUES} (bit for bit)")
    return
  finite = numbers & ~(e_inf | a_inf)
  e64, a64 = e_w.astype(np.float64), a_w.astype(np.float64)
  bound = atol + rtol * (np.abs(e64) if scale is None else scale)
  with np.errstate(invalid="ignore", over="ignore"):
    close = np.abs(a64 - e64) <= bound
  _assert_at(~finite | close, e, a, where, f"{VALUES} beyond rtol={rtol:g}, atol={atol:g}")


def _assert_at(ok, e, a, where, what):
  ok = np.asarray(ok)
  if ok.all():
    return
  bad = np.argwhere(~ok) if ok.ndim else np.zeros((1, 0), int)
  shown = []
  for index in bad[:_SHOWN]:
    index = tuple(int(i) for i in index)
    shown.append(f"at {list(index)}: JAX {_show(e[index])}, converted {_show(a[index])}")
  more = f" (and {len(bad) - _SHOWN} more)" if len(bad) > _SHOWN else ""
  raise AssertionError(
    f"{where}: {what} in {len(bad)} of {ok.size} elements{more}; " + "; ".join(shown)
  )


def _show(x) -> str:
  x = np.asarray(x)
  if x.dtype.itemsize < 4 and is_inexact(x.dtype):
    x = x.astype(np.float32)
  return repr(x.item()) if x.ndim == 0 else repr(x)
