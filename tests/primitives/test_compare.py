"""tests.support.compare sees what JAX distinguishes: NaN places, infinities, signs of zero."""

import ml_dtypes
import numpy as np
import pytest

from tests.support import compare

BF16 = ml_dtypes.bfloat16
FLOATS = [np.float16, BF16, np.float32, np.float64, ml_dtypes.float8_e4m3fn]


def _same(expected, actual, **kw):
  compare.assert_same(np.asarray(expected), np.asarray(actual), **kw)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_equal_values_pass(dtype):
  x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0], dtype)
  _same(x, x.copy())
  _same(x, x.copy(), exact=True)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_sign_of_zero_differs(dtype, exact):
  with pytest.raises(AssertionError, match="signs of zero differ"):
    _same(np.array([1.0, -0.0], dtype), np.array([1.0, 0.0], dtype), exact=exact)
  with pytest.raises(AssertionError, match="signs of zero differ"):
    _same(np.array([0.0], dtype), np.array([-0.0], dtype), tol=(1.0, 1.0))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_nan_moved(dtype):
  with pytest.raises(AssertionError, match="NaN positions differ"):
    _same(np.array([np.nan, 1.0], dtype), np.array([1.0, np.nan], dtype), tol=(1.0, 1.0))
  with pytest.raises(AssertionError, match="NaN positions differ"):
    _same(np.array([np.nan, 1.0], dtype), np.array([np.nan, np.nan], dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16],
                         ids=lambda d: np.dtype(d).name)
def test_inf_versus_large_finite(dtype):
  big = float(ml_dtypes.finfo(dtype).max)
  with pytest.raises(AssertionError, match="infinities differ"):
    _same(np.array([np.inf], dtype), np.array([big], dtype), tol=(1.0, 1.0))
  with pytest.raises(AssertionError, match="infinities differ"):
    _same(np.array([big], dtype), np.array([np.inf], dtype), tol=(1.0, 1.0))
  with pytest.raises(AssertionError, match="infinities differ"):
    _same(np.array([np.inf], dtype), np.array([-np.inf], dtype))


def test_tolerance_applies_to_the_finite_rest():
  _same(np.array([1.0, np.nan, -0.0], np.float32), np.array([1.0 + 1e-6, np.nan, -0.0],
                                                             np.float32))
  with pytest.raises(AssertionError, match="beyond rtol"):
    _same(np.array([1.0], np.float32), np.array([1.001], np.float32))
  with pytest.raises(AssertionError, match="bit for bit"):
    _same(np.array([1.0], np.float32), np.array([np.nextafter(np.float32(1), 2)], np.float32),
          exact=True)
  # Default tolerances are per dtype: bfloat16 is looser than float32.
  _same(np.array([1.0], BF16), np.array([1.0078125], BF16))


def test_complex_parts_are_checked_separately():
  _same(np.array([1 + 2j], np.complex64), np.array([1 + 2j], np.complex64), exact=True)
  with pytest.raises(AssertionError, match="imaginary part.*signs of zero"):
    _same(np.array([complex(1, 0.0)], np.complex64),
          np.array([complex(1, -0.0)], np.complex64))
  with pytest.raises(AssertionError, match="real part.*NaN"):
    _same(np.array([complex(np.nan, 1)], np.complex128),
          np.array([complex(0, 1)], np.complex128))


def test_complex_with_a_nan_part_compares_the_other_part():
  # |nan + 0j| is NaN: the finite part still matches within tolerance.
  _same(np.array([complex(np.nan, 0.0), complex(np.inf, 2.0)], np.complex64),
        np.array([complex(np.nan, 0.0), complex(np.inf, 2.0)], np.complex64))
  with pytest.raises(AssertionError, match="imaginary part.*values differ"):
    _same(np.array([complex(np.nan, 2.0)], np.complex64),
          np.array([complex(np.nan, 3.0)], np.complex64))


def test_integers_and_bools_are_exact():
  _same(np.array([1, -2], np.int8), np.array([1, -2], np.int8), tol=(1.0, 1.0))
  with pytest.raises(AssertionError, match="values differ"):
    _same(np.array([1, -2], np.int8), np.array([1, -3], np.int8), tol=(1.0, 1.0))
  with pytest.raises(AssertionError, match="values differ"):
    _same(np.array([True]), np.array([False]))


def test_shapes_dtypes_and_structure():
  with pytest.raises(AssertionError, match="shape"):
    _same(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))
  with pytest.raises(AssertionError, match="dtype"):
    _same(np.zeros(3, np.float32), np.zeros(3, np.float64))
  with pytest.raises(AssertionError, match="results where JAX has"):
    compare.assert_same((np.zeros(2),), (np.zeros(2), np.zeros(2)))


def test_a_mismatch_records_every_differing_element():
  want = np.arange(8, dtype=np.float32)
  got = want.copy()
  got[[1, 3, 4, 5, 6, 7]] += 1  # more than the message quotes
  found = compare.mismatch(want, got, tol=(1e-5, 1e-5))
  assert found.kind == compare.VALUES and not found.exact
  assert found.indices.tolist() == [[1], [3], [4], [5], [6], [7]]
  np.testing.assert_array_equal(found.expected, want[[1, 3, 4, 5, 6, 7]])
  np.testing.assert_array_equal(found.actual, got[[1, 3, 4, 5, 6, 7]])
  assert "(and 1 more)" in found.message
  with pytest.raises(compare.MismatchError) as raised:
    compare.assert_same(want, got, tol=(1e-5, 1e-5))
  assert str(raised.value) == found.message and raised.value.mismatch.kind == compare.VALUES
  assert compare.mismatch(want, want.copy()) is None


def test_a_mismatch_record_names_its_kind_part_and_result():
  zeros = compare.mismatch(np.array([0.0, -0.0], BF16), np.array([-0.0, -0.0], BF16))
  assert (zeros.kind, zeros.indices.tolist(), zeros.expected.dtype) == (
    compare.SIGNS_OF_ZERO, [[0]], np.dtype(BF16)
  )
  part = compare.mismatch(
    (np.zeros(2), np.array([complex(1, np.nan)], np.complex64)),
    (np.zeros(2), np.array([complex(1, np.inf)], np.complex64)),
  )
  assert (part.kind, part.part, part.leaf) == (compare.NAN_POSITIONS, "imaginary", 1)
  assert np.isnan(part.expected).all() and np.isinf(part.actual).all()
  scalar = compare.mismatch(np.int32(3), np.int32(4))
  assert scalar.indices.shape == (1, 0) and scalar.actual.tolist() == [4]
  shape = compare.mismatch(np.zeros((1, 0)), np.zeros((1, 1)))
  assert (shape.kind, shape.expected_shape, shape.actual_shape) == (compare.SHAPE, (1, 0), (1, 1))


def test_a_case_gaps_error_names_the_kinds_it_allows():
  assert compare.kinds_named(r"NaN\ positions\ differ|infinities differ") == {
    compare.NAN_POSITIONS, compare.INFINITIES
  }
  assert compare.kinds_named("values differ beyond") == {compare.VALUES}
  assert compare.kinds_named("Unsupported dtype|does not accept dtype") == frozenset()
