"""Comparing a converted function's results with JAX's, seeing what JAX distinguishes.

Shapes and dtypes must be equal. Integers and bools must be equal. For floating
and complex results (each part of a complex number on its own) NaN must sit at
the same positions, infinities must be the same infinities, and wherever both
results are zero the signs of zero must agree; only the remaining finite
values are compared with a tolerance, or bit for bit with `exact=True`.
`numpy.testing.assert_allclose` sees none of -0.0 versus +0.0.

bfloat16, float16 and the float8 types are compared through float32, which
holds each of their values exactly (NumPy sees the ml_dtypes types as kind 'V').

`mismatch` gives what differs as a record (`Mismatch`): its kind, every
differing element and the values there, so that a caller that judges a
mismatch (the fuzzer's known gaps) reads arrays, never the message, which
quotes only the first few elements. `assert_same` raises that record's
message, as a `MismatchError` that carries the record.
"""

import dataclasses

import jax
import numpy as np

from tests.support import case as case_lib

_SHOWN = 5  # mismatching elements quoted in a message


# The phrases that name what differs, and the kinds of a Mismatch; the case
# table's gaps name them in their error patterns.
NAN_POSITIONS = "NaN positions differ"
INFINITIES = "infinities differ"
SIGNS_OF_ZERO = "signs of zero differ"
VALUES = "values differ"
SHAPE = ": shape "
DTYPE = ": dtype "
RESULT_COUNT = "results where JAX has"
MISMATCH_KINDS = (NAN_POSITIONS, INFINITIES, SIGNS_OF_ZERO, VALUES, SHAPE, DTYPE, RESULT_COUNT)
ELEMENT_KINDS = MISMATCH_KINDS[:4]  # those of differing elements


@dataclasses.dataclass(frozen=True, eq=False)
class Mismatch:
  """The first check that failed, on the first result (a pytree leaf) it failed on.

  For a complex result each part is checked on its own: `part` is "real" or
  "imaginary", and the values are that part's. `indices` (one row per
  differing element, in the result's dimensions) holds all of them, and
  `expected`/`actual` JAX's and the converted values there, in the result's
  dtype. A shape, dtype or result-count mismatch has no elements.
  """

  kind: str  # one of MISMATCH_KINDS
  message: str
  where: str
  leaf: int = 0
  part: str = ""
  exact: bool = False  # compared bit for bit, not within a tolerance
  indices: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0), int))
  expected: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
  actual: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
  size: int = 0  # elements of the result
  expected_shape: tuple = ()
  actual_shape: tuple = ()


class MismatchError(AssertionError):
  """What `assert_same` raises: the message, with the record as `mismatch`."""

  def __init__(self, mismatch: Mismatch):
    super().__init__(mismatch.message)
    self.mismatch = mismatch


def mismatch(expected, actual, *, tol=None, exact=False, where: str = "result") -> Mismatch | None:
  """What differs between `actual` (a pytree of arrays) and `expected`, or None.

  tol: (rtol, atol), by default per result dtype (tests.support.case.DEFAULT_TOL).
  """
  e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
  a_leaves = jax.tree_util.tree_leaves(actual)
  if len(e_leaves) != len(a_leaves):
    text = f"{where}: {len(a_leaves)} {RESULT_COUNT} {len(e_leaves)} ({e_tree})"
    return Mismatch(RESULT_COUNT, text, where)
  for i, (e, a) in enumerate(zip(e_leaves, a_leaves)):
    found = array_mismatch(
      e, a, tol=tol, exact=exact, where=where if len(e_leaves) == 1 else f"{where} {i}"
    )
    if found is not None:
      return dataclasses.replace(found, leaf=i)
  return None


def assert_same(expected, actual, *, tol=None, exact=False, where: str = "result"):
  """`actual` (a pytree of arrays) is `expected`, element by element; else a
  MismatchError (an AssertionError) carrying what differs."""
  found = mismatch(expected, actual, tol=tol, exact=exact, where=where)
  if found is not None:
    raise MismatchError(found)


def assert_array_same(expected, actual, *, tol=None, exact=False, where: str = "result"):
  found = array_mismatch(expected, actual, tol=tol, exact=exact, where=where)
  if found is not None:
    raise MismatchError(found)


def is_inexact(dtype) -> bool:
  return jax.dtypes.issubdtype(np.dtype(dtype), np.inexact)


def array_mismatch(expected, actual, *, tol=None, exact=False, where: str = "result"):
  """What differs between two arrays, or None (see `mismatch`)."""
  e, a = np.asarray(expected), np.asarray(actual)
  if e.shape != a.shape or e.dtype != a.dtype:
    kind, got, want = (SHAPE, a.shape, e.shape) if e.shape != a.shape else (DTYPE, a.dtype, e.dtype)
    text = f"{where}{kind}{got} where JAX has {want}"
    return Mismatch(kind, text, where, expected_shape=e.shape, actual_shape=a.shape)
  if not is_inexact(e.dtype):
    return _check(e == a, e, a, where, VALUES, "", True)
  rtol, atol = (0.0, 0.0) if exact else (tol or case_lib.default_tol(e.dtype))
  if e.dtype.kind != "c":
    return _floats(e, a, rtol, atol, exact, None, where, "")
  # The tolerance scales with the complex magnitude, as for assert_allclose.
  # Where the magnitude is NaN or infinite (the other part is), each part
  # scales by its own magnitude, so a finite part is still compared.
  scale = np.abs(e.astype(np.complex128))
  for part, e_p, a_p in (("real", e.real, a.real), ("imaginary", e.imag, a.imag)):
    part_scale = np.where(np.isfinite(scale), scale, np.abs(e_p.astype(np.float64)))
    found = _floats(e_p, a_p, rtol, atol, exact, part_scale, f"{where} ({part} part)", part)
    if found is not None:
      return found
  return None


def _wide(x):
  return x.astype(np.float32) if x.dtype.itemsize < 4 else x


def _bits(x):
  return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def _floats(e, a, rtol, atol, exact, scale, where, part):
  e_w, a_w = _wide(e), _wide(a)
  e_nan, a_nan = np.isnan(e_w), np.isnan(a_w)
  numbers = ~e_nan
  e_inf, a_inf = np.isinf(e_w), np.isinf(a_w)
  both_zero = numbers & (e_w == 0) & (a_w == 0)
  checks = [
    (lambda: e_nan == a_nan, NAN_POSITIONS),
    (lambda: ~numbers | ~(e_inf | a_inf) | (e_w == a_w), INFINITIES),
    (lambda: ~both_zero | (np.signbit(e_w) == np.signbit(a_w)), SIGNS_OF_ZERO),
  ]
  for ok, kind in checks:
    if (found := _check(ok(), e, a, where, kind, part, exact)) is not None:
      return found
  if exact:
    return _check(~numbers | (_bits(e) == _bits(a)), e, a, where, VALUES, part, exact)
  finite = numbers & ~(e_inf | a_inf)
  e64, a64 = e_w.astype(np.float64), a_w.astype(np.float64)
  bound = atol + rtol * (np.abs(e64) if scale is None else scale)
  with np.errstate(invalid="ignore", over="ignore"):
    close = np.abs(a64 - e64) <= bound
  return _check(~finite | close, e, a, where, VALUES, part, exact, f"rtol={rtol:g}, atol={atol:g}")


def _check(ok, e, a, where, kind, part, exact, tol_text="") -> Mismatch | None:
  ok = np.asarray(ok)
  if ok.all():
    return None
  bad = np.argwhere(~ok) if ok.ndim else np.zeros((1, 0), int)
  what = kind
  if kind == VALUES and is_inexact(e.dtype):
    what = f"{VALUES} (bit for bit)" if exact else f"{VALUES} beyond {tol_text}"
  shown = []
  for index in bad[:_SHOWN]:
    index = tuple(int(i) for i in index)
    shown.append(f"at {list(index)}: JAX {_show(e[index])}, converted {_show(a[index])}")
  more = f" (and {len(bad) - _SHOWN} more)" if len(bad) > _SHOWN else ""
  message = f"{where}: {what} in {len(bad)} of {ok.size} elements{more}; " + "; ".join(shown)
  at = tuple(bad.T)
  return Mismatch(
    kind, message, where, part=part, exact=exact, indices=bad, size=ok.size,
    expected=np.asarray(e)[at].reshape(len(bad)), actual=np.asarray(a)[at].reshape(len(bad)),
    expected_shape=e.shape, actual_shape=a.shape,
  )  # fmt: skip


def _show(x) -> str:
  x = np.asarray(x)
  if x.dtype.itemsize < 4 and is_inexact(x.dtype):
    x = x.astype(np.float32)
  return repr(x.item()) if x.ndim == 0 else repr(x)


def kinds_named(pattern: str) -> frozenset[str]:
  """The kinds of mismatch whose phrases a case's `Gap.error` names, as
  alternatives of its pattern ("NaN\\ positions\\ differ|infinities differ"),
  escaped or not: a caller holding a Mismatch checks its kind against them."""
  named = {p.replace("\\", "") for p in pattern.split("|")}
  return frozenset(k for k in ELEMENT_KINDS if any(n.startswith(k) for n in named))
