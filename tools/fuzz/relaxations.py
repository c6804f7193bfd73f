"""Named relaxations: what a known gap allows of a mismatch, judged on arrays.

Each is a function of the mismatch's context (the program, its column, a
way to rerun a changed program) and the comparison's record
(`tests.support.compare.Mismatch`: its kind, every differing element, JAX's
and the column's values there), true where the mismatch is the difference
its docstring describes. The gaps of `tools.fuzz.known_gaps` name them,
with the columns, kinds and primitives each holds for.
"""

import dataclasses
from collections.abc import Callable

import ml_dtypes
import numpy as np

from tests.support import compare
from tools.fuzz import program as program_lib
from tools.fuzz import rewrites, targets

# The kinds of mismatch, as the gaps name them.
NAN, INF, ZERO, VALUES = (
  compare.NAN_POSITIONS, compare.INFINITIES, compare.SIGNS_OF_ZERO, compare.VALUES
)  # fmt: skip
SHAPE = compare.SHAPE
FLOATS = frozenset({NAN, INF, ZERO, VALUES})


@dataclasses.dataclass(frozen=True)
class Context:
  program: program_lib.Program
  column: tuple
  found: targets.Outcome  # the mismatch (found.mismatch), on argument set found.args
  # rerun(program): the outcome of a changed program where it still
  # mismatches in the column, else None; None where nothing reruns.
  rerun: Callable | None = None
  # explained(program, outcome): whether another known gap explains it.
  explained: Callable = lambda program, outcome: False


Relaxation = Callable[[Context, compare.Mismatch], bool]
RELAXATIONS: dict[str, Relaxation] = {}


def relaxation(f: Relaxation) -> Relaxation:
  RELAXATIONS[f.__name__] = f
  return f


def _floats(m: compare.Mismatch):
  """JAX's and the column's differing values as float64, or None where the
  result is not floating (or has no differing elements)."""
  if not len(m.expected) or not compare.is_inexact(m.expected.dtype):
    return None
  return m.expected.astype(np.float64), m.actual.astype(np.float64)


def _zeros(m, jax_negative: bool) -> bool:
  found = _floats(m)
  if found is None:
    return False
  e, a = found
  return bool(
    np.all((e == 0) & (a == 0) & (np.signbit(e) == jax_negative) & (np.signbit(a) != jax_negative))
  )


@relaxation
def zero_sign_lost(ctx, m) -> bool:
  """Every differing element is -0.0 in JAX and +0.0 in the column: JAX's XLA
  keeps a -0.0 (it folds x + 0 to x, rewrites a product by a converted
  boolean into a select, sums all-zero dot terms to -0.0 for some shapes)
  where the column's kernels compute +0.0 as IEEE says, or the column's XLA
  rewrites where JAX's does not (TF's XLA, a product of a boolean by -1)."""
  return _zeros(m, jax_negative=True)


@relaxation
def zero_sign_gained(ctx, m) -> bool:
  """Every differing element is +0.0 in JAX and -0.0 in the column: the
  column folds away an addition of zero that JAX's XLA makes (TF's graph
  optimizer and XLA on a pad's cotangent), or sums all-zero terms to -0.0
  where JAX's XLA gives +0.0 (LiteRT's FULLY_CONNECTED, for some shapes)."""
  return _zeros(m, jax_negative=False)


@relaxation
def subnormal_flush(ctx, m) -> bool:
  """Every differing element is a zero in JAX and a float32 (or narrower)
  subnormal in the column: JAX's XLA on CPU flushes subnormal results to
  zero in the ops that read them; TF's kernels and XLA, LiteRT and TF.js
  keep them."""
  found = _floats(m)
  tiny = float(np.finfo(np.float32).smallest_normal)
  return found is not None and bool(
    np.all((found[0] == 0) & (np.abs(found[1]) > 0) & (np.abs(found[1]) < tiny))
  )


def _apart(m) -> np.ndarray | None:
  """How far apart JAX and the column are at each differing element; None
  unless all are finite numbers."""
  found = _floats(m)
  if found is None or not (np.isfinite(found[0]).all() and np.isfinite(found[1]).all()):
    return None
  return np.abs(found[0] - found[1])


# Sums of terms, and how large a term can be: the product of the largest
# factors for dots and convolutions, the largest operand for reductions (and
# for a scatter-add, whose updates at one index add up with its operand).
_SUMS_OF_PRODUCTS = frozenset({"dot_general", "conv_general_dilated"})
SUMS = _SUMS_OF_PRODUCTS | frozenset({"reduce_sum", "cumsum", "scatter-add"})
# How many roundings of the largest term a sum's order can move its result by.
_SUM_ROUNDINGS = 8


@relaxation
def summation_order(ctx, m) -> bool:
  """Every differing element is finite on both sides and apart by no more
  than 8 roundings of the largest term that the program's sums (dots,
  convolutions, reductions, scatter-adds), op by op in JAX, add: JAX's XLA,
  TF's kernels and XLA, LiteRT and TF.js add in orders none of them
  specifies, and a small term lost against huge ones that cancel survives
  in another order (huge terms cancel: 3.4e38 - 3.4e38 - 1.2 is -1.2 added
  left to right, 0 right to left)."""
  found, apart = program_lib.operands_of(ctx.program, SUMS), _apart(m)
  if not found or apart is None:
    return False
  bound = max(_rounding_of_largest_term(primitive, operands) for primitive, operands in found)
  return bool(np.all(apart <= bound))


def _rounding_of_largest_term(primitive: str, operands) -> float:
  floats = [np.asarray(x) for x in operands if compare.is_inexact(np.asarray(x).dtype)]
  if not floats or any(x.size == 0 for x in floats):
    return 0.0
  largest = [_largest_finite(x) for x in floats]
  term = float(np.prod(largest[:2])) if primitive in _SUMS_OF_PRODUCTS else max(largest)
  eps = max(float(ml_dtypes.finfo(x.real.dtype).eps) for x in floats)
  return _SUM_ROUNDINGS * eps * term


def _largest_finite(x) -> float:
  parts = np.concatenate([x.real.ravel(), x.imag.ravel()]) if x.dtype.kind == "c" else x.ravel()
  wide = np.abs(parts.astype(np.float64))
  finite = wide[np.isfinite(wide)]
  return float(finite.max()) if finite.size else 0.0


# From this quotient on, one rounding of a remainder's operands moves it by
# a share of its divisor beyond the fuzzer's float32 tolerance.
_AMPLIFYING_QUOTIENT = 2.0**10


@relaxation
def remainder_amplified(ctx, m) -> bool:
  """A remainder of the program reads a value the program rounds and, op by
  op in JAX, divides a dividend at least 2**10 times its divisor, and every
  differing element is finite and apart by no more than twice the largest
  such divisor: one ulp of the divisor (a product rounded in another order
  by the column's kernels), times the quotient, moves the remainder anywhere
  between 0 and the divisor."""
  inputs, program = set(ctx.program.inputs), ctx.program
  if program.exact or not any(e.op == "rem" and not set(e.uses) <= inputs for e in program.eqs):
    return False
  found, apart = program_lib.operands_of(program, frozenset({"rem"})), _apart(m)
  if not found or apart is None:
    return False
  reach = 0.0
  for _, operands in found:
    if not all(compare.is_inexact(np.asarray(v).dtype) for v in operands):
      continue
    x, y = (np.abs(np.asarray(v).astype(np.float64)) for v in operands)
    amplified = np.isfinite(x) & np.isfinite(y) & (y > 0) & (x >= _AMPLIFYING_QUOTIENT * y)
    if amplified.any():
      reach = max(reach, float(np.broadcast_to(y, amplified.shape)[amplified].max()))
  return reach > 0 and bool(np.all(apart <= 2 * reach))


def _integers(m) -> bool:
  return bool(len(m.expected)) and np.issubdtype(m.expected.dtype, np.integer)


@relaxation
def integer_step(ctx, m) -> bool:
  """A program JAX rounds in, whose differing elements are integers one step
  apart: a float result that JAX's XLA and the column round one ulp apart
  (erf(3.798) is 1.0 in JAX's XLA, 0.99999994 in TF's kernels), converted
  to an integer type where a step lies between them."""
  apart = np.abs(m.expected.astype(np.int64) - m.actual.astype(np.int64)) if _integers(m) else None
  return not ctx.program.exact and apart is not None and bool(np.all(apart == 1))


@relaxation
def nan_or_infinity_converted(ctx, m) -> bool:
  """Every differing element is, on both sides, what JAX converts NaN or an
  infinity to in the result's integer type (0, its least or its largest
  value): a float that is NaN in JAX and infinite in the column (or the
  other way round), converted."""
  if not _integers(m):
    return False
  info = np.iinfo(m.expected.dtype)
  specials = [0, info.min, info.max]
  return bool(np.isin(m.expected, specials).all() and np.isin(m.actual, specials).all())


@relaxation
def nan_to_infinity(ctx, m) -> bool:
  """Every differing element is NaN in JAX and an infinity in the column:
  LiteRT's complex MUL multiplies as C does (C99's Annex G), recovering an
  infinity where both parts of the product come out NaN and a factor has
  an infinite part; JAX's XLA keeps the NaN."""
  found = _floats(m)
  return found is not None and bool(np.all(np.isnan(found[0]) & np.isinf(found[1])))


@relaxation
def overflow_seen(ctx, m) -> bool:
  """NaN positions or infinities differ, or booleans computed from them
  (is_finite, a comparison): a partial result that overflows in one order
  of accumulation and not in another, not a number that moved."""
  return m.kind != VALUES or (len(m.expected) > 0 and m.expected.dtype == np.bool_)


@relaxation
def unit_broadcast(ctx, m) -> bool:
  """A polymorphic program's result has a shape of 0s and 1s in JAX and only
  1s, of the same rank, in the column: TF.js 4.22's broadcastTo returns one
  element reshaped, not broadcast, to such a shape (a scalar broadcast to
  [1, 0] comes back as [1, 1]); the converter makes such results constants
  where TF knows their shape, not where a dimension is 1 only at run time."""
  want, got = m.expected_shape, m.actual_shape
  return (
    m.kind == SHAPE
    and ctx.program.polymorphic_shapes is not None
    and len(got) == len(want)
    and 0 in want
    and set(want) <= {0, 1}
    and all(g == 1 for g in got)
  )


COMPLEX_ARITHMETIC = frozenset(
  {"dot_general", "reduce_prod", "mul", "cumprod", "div", "pow", "integer_pow"}
)
# Beyond these a product of parts overflows float32, or a power's
# y * log(x) grows to where sine and cosine of it part ways.
_HUGE_FACTOR_PART, _HUGE_EXPONENT_PART = 1e18, 1e3


@relaxation
def complex_special_parts(ctx, m) -> bool:
  """A complex product, quotient or power of the program reads, op by op in
  JAX, a part that is infinite, NaN, zero or huge (or sits in a loop or
  branch, whose operands are not followed): JAX's XLA on CPU gives NaN (or
  an infinity, dividing by zero) where the naive complex formulas of TF's
  kernels (and, for dots, of TF's XLA runtime) give an infinity (or NaN).
  Finite parts apart count only for a power with a huge part, whose sine
  and cosine of y * log(x) then take any value."""
  if not any(np.issubdtype(d, np.complexfloating) for d in program_lib.value_dtypes(ctx.program)):
    return False
  values_apart = m.kind == VALUES and m.part != ""
  found = program_lib.operands_of(ctx.program, COMPLEX_ARITHMETIC)
  if found is None:
    return not values_apart
  for primitive, operands in found:
    if values_apart and primitive != "pow":
      continue
    huge = _HUGE_EXPONENT_PART if primitive in ("pow", "integer_pow") else _HUGE_FACTOR_PART
    for x in map(np.asarray, operands):
      if not np.iscomplexobj(x):
        continue
      parts = np.concatenate([x.real.ravel(), x.imag.ravel()]).astype(np.float64)
      if (np.abs(parts) > huge).any():
        return True
      if not values_apart and (not np.isfinite(parts).all() or (parts == 0).any()):
        return True
  return False


@relaxation
def folded_zero_product(ctx, m) -> bool:
  """The program multiplies by a value computed from constants alone, and
  the column gives +0.0 at every differing element, or differs from JAX
  exactly as JAX's own results (op by op) do once such products are zeros:
  TF's TFLite converter folds a product with constant zeros into zeros,
  losing 0 * inf's NaN and 0 * -2's -0.0 (and what adds to it a number)."""
  if not program_lib.multiplies_by_a_constant(ctx.program):
    return False
  found = _floats(m)
  if found is not None and bool(np.all((found[1] == 0) & ~np.signbit(found[1]))):
    return True
  want = targets.expected(ctx.program)
  folded = program_lib.results_with_zero_products_folded(ctx.program)
  tol = targets.tolerance(ctx.program, want)
  for i, (w, f) in enumerate(zip(want, folded)):
    if (own := compare.mismatch(w, f, tol=tol, exact=tol is None)) is not None:
      return i == ctx.found.args and _same_elements(own, m)
  return False


def _same_elements(a: compare.Mismatch, b: compare.Mismatch) -> bool:
  """Whether two mismatches against JAX's results differ at the same
  elements, in the same way, with the same values."""
  return (
    (a.kind, a.leaf, a.part, a.exact) == (b.kind, b.leaf, b.part, b.exact)
    and np.array_equal(a.indices, b.indices)
    and a.actual.tobytes() == b.actual.tobytes()
  )


@relaxation
def rounded_program(ctx, m) -> bool:
  """The program rounds (some equation is inexact in JAX): a tie in JAX's
  XLA that the column's kernels break by one ulp picks another index for
  argmax or argmin (atan2(x, x) is pi/4 for every x > 0 in JAX's XLA, not
  in TF's kernel)."""
  return not ctx.program.exact


_FLOAT16S = {np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)}


@relaxation
def sixteen_bit_floats(ctx, m) -> bool:
  """The program computes a float16 or bfloat16 value: graph serialization
  computes some 16-bit ops in float32 and rounds back, and under jit_compile
  TF's XLA drops a rounding between two such casts (excess precision)."""
  return bool(program_lib.value_dtypes(ctx.program) & _FLOAT16S)


@relaxation
def gradient_sum(ctx, m) -> bool:
  """The program sums cotangents (add_any: a gradient), where XLA folds an
  update of zeros into the other operand."""
  return "add_any" in program_lib.primitives(ctx.program)


@relaxation
def tolerance(ctx, m) -> bool:
  """Values compared within a tolerance, not bit for bit: a case whose gap
  loosens its tolerance (a program JAX computes exactly has none to loosen)."""
  return m.kind == VALUES and not m.exact


def _goes_once(ctx, change) -> bool:
  """Whether the program changed by `change` no longer mismatches, or only
  as another known gap explains (LiteRT's clamp of inf, once huge inputs
  are tamed)."""
  changed = change(ctx.program)
  if changed is None or ctx.rerun is None:
    return False
  left = ctx.rerun(changed)
  return left is None or ctx.explained(changed, left)


@relaxation
def subnormal_inputs(ctx, m) -> bool:
  """Goes once subnormal inputs are flushed: JAX's XLA on CPU flushes them to
  zero (log(-tiny) is -inf there); TF's kernels, LiteRT's and TF.js's keep
  them, and so does TF's XLA in some of the graph's ops under jit_compile;
  TF's XLA flushes some that JAX's keeps (cummax, in native serialization)."""
  return _goes_once(ctx, rewrites.flushed)


@relaxation
def huge_inputs(ctx, m) -> bool:
  """Goes once finite inputs beyond the square root of the dtype's largest
  value (over 16) are brought down to it: sums and products near the ends
  of the float range overflow in one order of accumulation and not in
  another, and quotients by huge values are subnormals that JAX's XLA
  flushes and TF.js and LiteRT keep."""
  return _goes_once(ctx, rewrites.tamed)


@relaxation
def infinite_inputs(ctx, m) -> bool:
  """Goes once infinite inputs are made finite: LiteRT's FULLY_CONNECTED
  clamps an infinite result to 3.4e38, and what the program computes from
  it differs (a min with 3.4e38 becomes a tie, its gradient split in half)."""
  return _goes_once(ctx, rewrites.without_infinities)


@relaxation
def sin_range(ctx, m) -> bool:
  """Goes once inputs beyond 2**26 are brought down to it: LiteRT's SIN and
  COS lose their range reduction beyond |x| of about 1e9 (NaN, or values
  far outside [-1, 1])."""
  return _goes_once(ctx, rewrites.within_sin_range)


@relaxation
def tan_range(ctx, m) -> bool:
  """Goes once inputs beyond 2**13 are brought down to it: TFLite has no Tan,
  and its formulation reduces the argument by pi/2 in three float32 parts
  (Cody and Waite), exact up to |x| of about 8192 only."""
  return _goes_once(ctx, rewrites.within_tan_range)


@relaxation
def litert_rsqrt(ctx, m) -> bool:
  """Goes where JAX, with its rsqrt NaN at zeros, gives the column's result:
  LiteRT's RSQRT gives NaN at +-0.0 where JAX gives +-inf, and what the
  program computes from it differs (x >= rsqrt(-0.0) is False on LiteRT)."""
  return _goes_once(ctx, rewrites.with_litert_rsqrt)
