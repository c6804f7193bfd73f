"""Which mismatches are known: the case table's gaps, and the fuzzer's own.

A (minimized) mismatch is known when a gap holds in its column, its message
matches the gap's error, and its primitives fit the gap. For a gap of the
case table, every primitive of the program must be one of the gapped case's
(the gap is about what that case computes). The fuzzer's own gaps,
`FUZZ_GAPS`, are for what no single case holds (XLA's algebraic rewrites of a
combination, denormal inputs): each says how its primitives must fit.
"""

import dataclasses
import functools
import re
from collections.abc import Callable

import jax
import ml_dtypes
import numpy as np

from tests.support import collect, compare
from tools.fuzz import program as program_lib
from tools.fuzz import targets

SUBSET, ANY, ALL = "subset", "any", "all"


@dataclasses.dataclass(frozen=True)
class KnownGap:
  primitives: frozenset[str]
  columns: frozenset[tuple[str, str]]
  error: str  # a pattern the mismatch's message matches
  why: str
  source: str  # the case id, or "fuzz"
  # How the program's primitives fit: SUBSET (all of them among the gap's),
  # ANY (one of the gap's among them) or ALL (all of the gap's among them).
  match: str = SUBSET
  # Holds only where this change of the inputs (flushing subnormals, taming
  # huge values) applies and makes the mismatch go: `inputs_changed(program)`
  # is the changed program, or None where it changes nothing.
  inputs_changed: Callable | None = None
  # Holds only where this is true of the program and the mismatch's message.
  holds_for: Callable | None = None


def _columns(*columns: str) -> frozenset:
  """Columns by name: a serialization ("native") or one column ("graph-eager")."""
  return frozenset(
    c for c in targets.TF_COLUMNS if c[0] in columns or targets.column_name(c) in columns
  )


def flushed(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its subnormal inputs flushed to zeros of their sign, or
  None where it has none."""
  return _with_floats(program, _flush)


def tamed(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its huge finite float inputs brought down to a magnitude
  whose sums and products of a few terms stay finite, or None where it has none."""
  return _with_floats(program, _tame)


def without_infinities(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its infinite float inputs brought down to a finite
  magnitude (as `tamed`'s), or None where it has none."""
  return _with_floats(program, _finite)


def within_sin_range(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its finite float inputs beyond 2**26 brought down to it
  (where LiteRT's SIN and COS still reduce their argument), or None."""
  return _with_floats(program, functools.partial(_clamp_finite, limit=2.0**26))


def within_tan_range(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its finite float inputs beyond 2**13 brought down to it
  (where the TFLite formulation of tan still reduces its argument exactly),
  or None."""
  return _with_floats(program, functools.partial(_clamp_finite, limit=2.0**13))


def with_litert_rsqrt(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its rsqrt NaN at zeros, as LiteRT's RSQRT gives (JAX
  gives +-inf), or None where it has no rsqrt."""
  eqs = tuple(
    # Renamed: a program changed once is not changed again.
    dataclasses.replace(
      e, expr=f"jnp.where({e.uses[0]} == 0, jnp.nan, {e.expr})", op="litert_rsqrt"
    )
    if e.op == "rsqrt"
    else e
    for e in program.eqs
  )
  return dataclasses.replace(program, eqs=eqs) if eqs != program.eqs else None


_CUMULATIVE_MIN_MAX = re.compile(r"lax\.cum(min|max)\((\w+), (\d+), reverse=(True|False)\)")


def with_tf_xla_min_max(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its float min and max as TF's XLA runtime computes them,
  or None where it has none: a tie of -0.0 and +0.0 gives the first operand
  (JAX's XLA orders -0.0 below +0.0), and cummin/cummax fold each window from
  its lowest index, so the lowest-indexed of tied zeros is kept. None also
  where JAX's results do not change: the program's min and max have no such
  ties."""
  avals = program_lib.avals(program)
  eqs = []
  for e in program.eqs:
    dtype = avals.get(e.out, ((), np.dtype(np.int32)))[1]
    if not compare.is_inexact(dtype) or np.dtype(dtype).kind == "c":
      eqs.append(e)
      continue
    if e.op in ("min", "max"):
      a = e.uses[0]
      expr = f"jnp.where({a} == {e.uses[1]}, {a}, {e.expr})"
    elif e.op in ("cummin", "cummax") and (found := _CUMULATIVE_MIN_MAX.fullmatch(e.expr)):
      which, x, axis, reverse = found.groups()
      if 0 in avals[x][0]:
        eqs.append(e)
        continue
      expr = _tie_first_cumulative(which, x, int(axis), reverse == "True")
    else:
      eqs.append(e)
      continue
    # Renamed: a program changed once is not changed again.
    eqs.append(dataclasses.replace(e, expr=expr, op=f"tf_xla_{e.op}"))
  if tuple(eqs) == program.eqs:
    return None
  changed = dataclasses.replace(program, eqs=tuple(eqs))
  leaves = [jax.tree_util.tree_leaves(targets.expected(p)) for p in (program, changed)]
  return None if all(_bits(a) == _bits(b) for a, b in zip(*leaves)) else changed


def _tie_first_cumulative(which: str, x: str, axis: int, reverse: bool) -> str:
  """cum{which} along `axis` as a fold from each window's lowest index whose
  ties keep what it holds (a scan: JAX's associative scan interleaves its
  halves by adding, which turns -0.0 into +0.0)."""
  keep = "v" if reverse else "c"  # reversed, the lowest index comes last
  step = f"lambda c, v: (lambda m: (m, m))(jnp.where(c == v, {keep}, lax.{which}(c, v)))"
  flip = "jnp.flip({}, 0)" if reverse else "{}"
  s = flip.format(f"jnp.moveaxis({x}, {axis}, 0)")
  folded = f"jnp.concatenate([s[:1], lax.scan({step}, s[0], s[1:])[1]], 0)"
  return f"(lambda s: jnp.moveaxis({flip.format(folded)}, 0, {axis}))({s})"


def _with_floats(program, change) -> program_lib.Program | None:
  changed = False
  args = []
  for arg_set in program.args:
    out = []
    for a in arg_set:
      if a.dtype.kind == "c":
        f = np.empty_like(a)  # parts set one by one: 1j * inf would put a NaN in the real part
        f.real, f.imag = change(a.real), change(a.imag)
      elif a.dtype.kind in "fV" and a.dtype != np.bool_:
        f = change(a)
      else:
        f = a
      changed |= _bits(f) != _bits(a)
      out.append(f)
    args.append(tuple(out))
  return dataclasses.replace(program, args=tuple(args)) if changed else None


def _tame(x):
  return _clamp_finite(x, float(ml_dtypes.finfo(x.dtype).max) ** 0.5 / 16)


def _finite(x):
  wide = np.asarray(x).astype(np.float32)
  limit = float(ml_dtypes.finfo(x.dtype).max) ** 0.5 / 16
  return np.where(np.isinf(wide), np.copysign(limit, wide), wide).astype(x.dtype)


def _clamp_finite(x, limit: float):
  wide = np.asarray(x).astype(np.float32)
  huge = np.isfinite(wide) & (np.abs(wide) > limit)
  return np.where(huge, np.copysign(limit, wide), wide).astype(x.dtype)


_FLOAT16S = {np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)}


def computes_16_bit_floats(program: program_lib.Program, detail: str) -> bool:
  """Whether the program computes a float16 or bfloat16 value."""
  del detail
  return bool(program_lib.value_dtypes(program) & _FLOAT16S)


def integer_one_step_apart(program: program_lib.Program, detail: str) -> bool:
  """Whether an inexact program's first differing element is an integer one
  step from JAX's: a float result one rounding apart, converted."""
  found = re.search(r"JAX (-?\d+), converted (-?\d+)$", detail)
  return not program.exact and found is not None and abs(int(found[1]) - int(found[2])) == 1


def _differing_pairs(detail: str) -> list[tuple[str, str]]:
  """The (JAX, converted) values of the differing elements a mismatch's detail shows."""
  return re.findall(r"JAX (\S+?), converted (\S+?)(?:;|$)", detail)


def _differs_only_as(detail: str, jax: str, converted: tuple[str, ...]) -> bool:
  """Whether every differing element a mismatch's detail shows is `jax` in
  JAX and one of `converted` in the column."""
  pairs = _differing_pairs(detail)
  return bool(pairs) and all(j == jax and c in converted for j, c in pairs)


def only_jax_negative_zeros(program: program_lib.Program, detail: str) -> bool:
  """Whether every differing element is -0.0 in JAX and +0.0 in the column."""
  del program
  return _differs_only_as(detail, "-0.0", ("0.0",))


def only_jax_positive_zeros(program: program_lib.Program, detail: str) -> bool:
  """Whether every differing element is +0.0 in JAX and -0.0 in the column."""
  del program
  return _differs_only_as(detail, "0.0", ("-0.0",))


def _differs_only_in_booleans(detail: str) -> bool:
  """Whether every differing element a mismatch's detail shows is a boolean."""
  pairs = _differing_pairs(detail)
  return bool(pairs) and all({j, c} <= {"True", "False"} for j, c in pairs)


def _flushed_only(detail: str) -> bool:
  """Whether every differing element a mismatch's detail shows is a zero in
  JAX and a float32 (or narrower) subnormal in the column: a value that
  JAX's XLA on CPU flushed."""
  tiny = float(np.finfo(np.float32).smallest_normal)

  def flushed(jax: str, converted: str) -> bool:
    try:
      j, c = float(jax), float(converted)
    except ValueError:
      return False
    return j == 0 and 0 < abs(c) < tiny

  pairs = _differing_pairs(detail)
  return bool(pairs) and all(flushed(j, c) for j, c in pairs)


def _shapes(text: str) -> tuple[int, ...]:
  return tuple(int(d) for d in re.findall(r"\d+", text))


def tfjs_unit_broadcast(program: program_lib.Program, detail: str) -> bool:
  """Whether a polymorphic program's result has a shape of 0s and 1s in
  JAX and only 1s, of the same rank, in the column: TF.js's broadcastTo of
  one element to such a shape."""
  m = re.search(r"shape \(([\d, ]*)\) where JAX has \(([\d, ]*)\)", detail)
  if m is None or program.polymorphic_shapes is None:
    return False
  got, want = _shapes(m.group(1)), _shapes(m.group(2))
  return len(got) == len(want) and 0 in want and set(want) <= {0, 1} and all(g == 1 for g in got)


def folded_product_with_zeros(program: program_lib.Program, detail: str) -> bool:
  """Whether the program multiplies by a value computed from constants and
  the column gives +0.0 where JAX differs (a product with zeros folded), or
  differs from JAX as JAX itself does once such products are folded (a sum
  with the folded product)."""
  if not program_lib.multiplies_by_a_constant(program):
    return False
  return bool(re.search(r"converted 0\.0$", detail)) or _differs_as_folded(program, detail)


def _differs_as_folded(program: program_lib.Program, detail: str) -> bool:
  """Whether comparing JAX's results with those of its zero products folded
  fails with the very detail the column's mismatch shows (the same check,
  elements, values and argument set)."""
  if "] args#" not in detail:
    return False
  want = targets.expected(program)
  folded = program_lib.results_with_zero_products_folded(program)
  tol = targets.tolerance(program, want)
  for i, (w, f) in enumerate(zip(want, folded)):
    try:
      compare.assert_same(w, f, tol=tol, exact=tol is None, where=f"] args#{i}")
    except AssertionError as e:
      return str(e).splitlines()[0] == detail[detail.index("] args#") :]
  return False


_COMPLEX_ARITHMETIC = frozenset(
  {"dot_general", "reduce_prod", "mul", "cumprod", "div", "pow", "integer_pow"}
)
# What NaN and the infinities convert to, in JAX, for each integer type.
_CONVERTED_NAN_OR_INFINITY = frozenset(
  {"0"}
  | {
    str(v)
    for t in (np.int8, np.int16, np.int32, np.int64)
    for v in (np.iinfo(t).min, np.iinfo(t).max)
  }
  | {str(np.iinfo(t).max) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}
)


def complex_arithmetic_on_special_parts(program: program_lib.Program, detail: str) -> bool:
  """Whether a complex product, quotient or power of the program reads a part
  that is infinite, NaN or zero, or huge: where the formulas of JAX's XLA and
  of TF's kernels part ways. (Where one sits in a nested computation, whose
  operands are not followed, it is taken to.) Complex results whose finite
  values part ways come only from powers with a huge part, whose sine and
  cosine of y * log(x) then differ: for those, only such a power counts."""
  values_apart = re.search(r"\((real|imaginary) part\): values differ", detail) is not None
  found = program_lib.operands_of(program, _COMPLEX_ARITHMETIC)
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


# Beyond these a product of parts overflows float32, or a power's
# y * log(x) grows to where sine and cosine of it part ways.
_HUGE_FACTOR_PART = 1e18
_HUGE_EXPONENT_PART = 1e3


# From this quotient on, one rounding of a remainder's operands moves it by
# a share of its divisor beyond the fuzzer's float32 tolerance.
_AMPLIFYING_QUOTIENT = 2.0**10


def rem_of_a_rounded_value(program: program_lib.Program, detail: str) -> bool:
  """Whether a remainder of the program reads a value the program rounds,
  and, op by op in JAX, divides a dividend at least 2**10 times its divisor
  there, and every differing element the mismatch's detail shows is finite
  and apart by no more than twice the largest such divisor: one rounding of
  the dividend or the divisor moves such a remainder anywhere in its range."""
  inputs = set(program.inputs)
  if program.exact or not any(e.op == "rem" and not set(e.uses) <= inputs for e in program.eqs):
    return False
  found = program_lib.operands_of(program, frozenset({"rem"}))
  apart = _distances(detail)
  if not found or not apart:
    return False
  reach = 0.0
  for _, operands in found:
    if not all(compare.is_inexact(np.asarray(v).dtype) for v in operands):
      continue
    x, y = (np.abs(np.asarray(v).astype(np.float64)) for v in operands)
    amplified = np.isfinite(x) & np.isfinite(y) & (y > 0) & (x >= _AMPLIFYING_QUOTIENT * y)
    if amplified.any():
      reach = max(reach, float(np.broadcast_to(y, amplified.shape)[amplified].max()))
  return reach > 0 and all(d <= 2 * reach for d in apart)


def _distances(detail: str) -> list[float]:
  """How far apart JAX and the column are at each differing element the
  mismatch's detail shows; empty unless all are finite numbers."""
  try:
    apart = [abs(float(j) - float(c)) for j, c in _differing_pairs(detail)]
  except ValueError:
    return []
  return apart if all(np.isfinite(apart)) else []


# Sums of terms, and how large a term can be: the product of the largest
# factors for dots and convolutions, the largest operand for reductions (and
# for a scatter-add, whose updates at one index add up with its operand).
_SUMS_OF_PRODUCTS = frozenset({"dot_general", "conv_general_dilated"})
_SUMS = _SUMS_OF_PRODUCTS | frozenset({"reduce_sum", "cumsum", "scatter-add"})
# How many roundings of the largest term a sum's order can move its result by.
_SUM_ROUNDINGS = 8


def within_rounding_of_summed_terms(program: program_lib.Program, detail: str) -> bool:
  """Whether every differing element a mismatch's detail shows is finite on
  both sides and apart by no more than a few roundings of the largest term
  that the program's sums (dots, convolutions, reductions) add: huge terms
  that cancel, added in another order."""
  found = program_lib.operands_of(program, _SUMS)
  apart = _distances(detail)
  if not found or not apart:
    return False
  bound = max(_rounding_of_largest_term(primitive, operands) for primitive, operands in found)
  return all(d <= bound for d in apart)


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


def _differs_only_as_nan_and_infinity_converted(detail: str) -> bool:
  """Whether every differing element a mismatch's detail shows is, on both
  sides, what JAX converts NaN or an infinity to, and not the same one."""
  pairs = _differing_pairs(detail)
  return bool(pairs) and all({j, c} <= _CONVERTED_NAN_OR_INFINITY for j, c in pairs)


def _bits(x) -> bytes:
  return np.ascontiguousarray(x).tobytes()


def _flush(x):
  wide = np.asarray(x).astype(np.float32)
  tiny = float(ml_dtypes.finfo(x.dtype).smallest_normal)
  sub = (wide != 0) & (np.abs(wide) < tiny)
  return np.where(sub, np.copysign(0.0, wide), wide).astype(x.dtype)


_GRAPH_NO_XLA_COMPILE = ("graph-eager", "graph-graph", "graph_no_xla-eager", "graph_no_xla-graph")

# Not in FUZZ_GAPS: whether it holds takes a process of its own (see
# isolation), where JAX's jax.jit of the (minimized) program ends it too.
XLA_ENDS_JAX_TOO = KnownGap(
  frozenset(),
  _columns("native", "graph-compiled", "graph_no_xla-compiled"),
  "the process died",
  "XLA ends the process compiling the program, and JAX's own jax.jit of it too: native "
  "serialization hands TF's XLA the module JAX's jit compiles, and jit_compile has TF's XLA "
  "compile the graph's ops into the same operations (integer division of constant zeros, "
  "folded at compile time, raises SIGFPE; a bitwise and/or of a narrowing signed integer "
  "conversion with an array segfaults XLA's CPU compiler, in JAX 0.10's and TF 2.21's)",
  "fuzz",
  match=ANY,
)

# Gaps only the fuzzer meets, each with its reason.
FUZZ_GAPS = (
  KnownGap(
    frozenset({"max", "min", "cummax", "cummin"}),
    _columns("native"),
    "NaN positions differ|infinities differ|signs of zero differ|values differ",
    "TF's XLA runtime, which executes the native module, gives the first operand of a min or "
    "max of -0.0 and +0.0 (cummin and cummax: the lowest-indexed of tied zeros), where JAX's "
    "XLA orders -0.0 below +0.0; what the program computes from that zero differs too (rsqrt "
    "gives +inf for -inf). The case table pins the same (elementwise.min_nan_zero_sign)",
    "fuzz",
    match=ANY,
    inputs_changed=with_tf_xla_min_max,
  ),
  KnownGap(
    frozenset({"nextafter"}),
    _columns("native", "graph", "graph_no_xla") | frozenset(targets.DEPLOYED.values()),
    "values differ|signs of zero differ",
    "nextafter from a zero gives the smallest subnormal (1.4e-45): JAX's XLA on CPU flushes "
    "it to zero in the ops that read it (max, add); TF's XLA and kernels, LiteRT's and "
    "TF.js's keep it",
    "fuzz",
    match=ANY,
    holds_for=lambda program, detail: _flushed_only(detail),
  ),
  KnownGap(
    frozenset(),
    _columns("native", "graph", "graph_no_xla") | frozenset(targets.DEPLOYED.values()),
    "NaN positions differ|infinities differ|signs of zero differ|values differ",
    "JAX's XLA on CPU flushes subnormal floats to zero (log(-tiny) is -inf there); TF's own "
    "kernels, LiteRT's and TF.js's keep them, and so does TF's XLA in some of the graph's ops "
    "under jit_compile; TF's XLA flushes some that JAX's keeps (cummax, in native "
    "serialization)",
    "fuzz",
    match=ANY,
    inputs_changed=flushed,
  ),
  KnownGap(
    frozenset({"div", "integer_pow", "pow"}),
    _columns("native", "graph", "graph_no_xla") | frozenset(targets.DEPLOYED.values()),
    "NaN positions differ|infinities differ|signs of zero differ|values differ",
    "a quotient by a huge value is subnormal (1 / 3.4e38 is 2.9e-39): JAX's XLA on CPU "
    "flushes it to zero (atan2 of it with itself is then 0, not pi/4); TF.js's and LiteRT's "
    "kernels keep it",
    "fuzz",
    match=ANY,
    inputs_changed=tamed,
  ),
  KnownGap(
    frozenset({"rem"}),
    _columns("native", "graph", "graph_no_xla") | frozenset(targets.DEPLOYED.values()),
    "values differ",
    "a remainder of a dividend thousands of times its divisor, where one of them is a "
    "rounded result (a product of several terms, rounded in another order): one ulp of the "
    "divisor, times the quotient, moves the remainder anywhere between 0 and the divisor "
    "(rem(3.4e38, -0.13375) for a cumprod one ulp apart)",
    "fuzz",
    match=ANY,
    holds_for=rem_of_a_rounded_value,
  ),
  KnownGap(
    _SUMS,
    _columns("native", "graph", "graph_no_xla") | frozenset(targets.DEPLOYED.values()),
    "values differ",
    "sums whose huge terms cancel: JAX's XLA, TF's kernels and XLA, LiteRT and TF.js add in "
    "different orders (none is specified), and a small term lost against a huge one in one "
    "order survives in another (3.4e38 - 3.4e38 - 1.2 is -1.2 added left to right, 0 right "
    "to left; so do a scatter-add's updates at a repeated index); the results are then "
    "apart by up to a few roundings of the largest term",
    "fuzz",
    match=ANY,
    holds_for=within_rounding_of_summed_terms,
  ),
  KnownGap(
    frozenset(
      {"dot_general", "reduce_sum", "reduce_prod", "cumsum", "cumprod", "conv_general_dilated"}
    ),
    _columns("native", "graph", "graph_no_xla") | frozenset(targets.DEPLOYED.values()),
    "NaN positions differ|infinities differ|values differ",
    "sums and products of several terms near the ends of the float range: JAX's XLA, TF's "
    "kernels and XLA, LiteRT and TF.js accumulate in different orders (none is specified), "
    "and a partial result overflows to inf in one order and not in another (inf - inf or "
    "inf * 0 then gives NaN; is_finite or a comparison shows it as a boolean)",
    "fuzz",
    match=ANY,
    inputs_changed=tamed,
    holds_for=lambda program, detail: (
      "values differ" not in detail or _differs_only_in_booleans(detail)
    ),
  ),
  KnownGap(
    frozenset({"mul", "convert_element_type"}),
    _columns(*_GRAPH_NO_XLA_COMPILE) | frozenset(targets.DEPLOYED.values()),
    "NaN positions differ|signs of zero differ",
    "JAX's XLA rewrites x * convert(p) (p boolean) to select(p, x, 0), so inf * False is 0 "
    "and -2 * False is +0 there (the gradient of reduce_min/max over NaN does so); TF's, "
    "LiteRT's and TF.js's kernels multiply, giving NaN and -0 as IEEE says. Under jit_compile "
    "TF's XLA rewrites it too",
    "fuzz",
    match=ALL,
  ),
  KnownGap(
    frozenset({"neg", "convert_element_type"}),
    _columns("graph_no_xla-compiled"),
    "signs of zero differ",
    "without XLA ops, neg is a product by -1 (LiteRT's NEG loses the sign of zeros); under "
    "jit_compile TF's XLA rewrites convert(p) * -1 (p boolean) to select(p, -1, 0), so "
    "-convert(False) is +0.0 there where JAX gives -0.0",
    "fuzz",
    match=ALL,
    holds_for=only_jax_negative_zeros,
  ),
  KnownGap(
    frozenset({"add_any", "add", "pad"}),
    _columns(*_GRAPH_NO_XLA_COMPILE) | frozenset(targets.DEPLOYED.values()),
    "signs of zero differ",
    "JAX's XLA folds x + 0 to x, keeping -0.0 (a gradient adds the zero cotangent of a pad or "
    "an unused output); TF's, LiteRT's and TF.js's kernels add, giving +0.0 as IEEE says (the case table records the "
    "same for switch: control_flow.switch_*)",
    "fuzz",
    match=ANY,
    holds_for=only_jax_negative_zeros,
  ),
  KnownGap(
    frozenset({"scatter-add", "dynamic_update_slice"}),
    _columns("graph-compiled", "graph_no_xla-compiled"),
    "signs of zero differ",
    "JAX's XLA folds x + scatter-add(zeros, i, u) and x + dynamic_update_slice(zeros, u, i) "
    "(a gradient's sum of a gather's or a dynamic slice's cotangent and another) into an "
    "update of x itself; where nothing lands, x's -0.0 stays, where adding the zeros gives "
    "+0.0 (as JAX op by op does); TF's XLA does not fold the graph's forms",
    "fuzz",
    match=ANY,
    holds_for=lambda program, detail: "add_any" in program_lib.primitives(program),
  ),
  KnownGap(
    frozenset({"pad"}),
    _columns("graph-graph", "graph_no_xla-graph", "graph-compiled", "graph_no_xla-compiled"),
    "signs of zero differ",
    "TF's graph optimizer and TF's XLA fold the graph's form of a pad's transpose, where it "
    "reads only padding, to zeros, and then x + 0 to x, keeping -0.0; JAX's XLA computes "
    "that zero cotangent and adds it, giving +0.0 as IEEE says (so does TF eager)",
    "fuzz",
    match=ANY,
    holds_for=lambda program, detail: (
      "add_any" in program_lib.primitives(program) and only_jax_positive_zeros(program, detail)
    ),
  ),
  KnownGap(
    frozenset({"argmax", "argmin"}),
    _columns("native", "graph", "graph_no_xla") | frozenset(targets.DEPLOYED.values()),
    "values differ",
    "argmax or argmin of values that JAX rounds: a tie in JAX's XLA that the column's "
    "kernels break by one ulp (or the other way round) picks another index: atan2(x, x) is "
    "pi/4 for every x > 0 in JAX's XLA, not in TF's kernel",
    "fuzz",
    match=ANY,
    holds_for=lambda program, detail: not program.exact,
  ),
  KnownGap(
    frozenset({"convert_element_type"}),
    _columns("native", "graph", "graph_no_xla") | frozenset(targets.DEPLOYED.values()),
    "values differ",
    "a float result that JAX's XLA and the column round one ulp apart, converted to an "
    "integer type, lands one step apart where a step lies between them: erf(3.798) is 1.0 "
    "in JAX's XLA, 0.99999994 (the nearer float) in TF's, hence 1 and 0 as uint32",
    "fuzz",
    match=ALL,
    holds_for=integer_one_step_apart,
  ),
  KnownGap(
    frozenset(),
    _columns("graph-compiled", "graph_no_xla-compiled"),
    "values differ|signs of zero differ",
    "16-bit floats under jit_compile: graph serialization computes some 16-bit ops in float32 "
    "and rounds back, and TF's XLA drops a rounding between two such casts (it allows excess "
    "precision): bf16 2.09375 squared stays 4.384 where JAX rounds it to 4.375, expm1 gives "
    "79 where JAX gives 78.5, rem(x + y, y) sees the unrounded sum, and the min of a bf16 "
    "1/x that JAX flushes to -0.0 comes out +0.0 from the float32 value; sin and cos of large "
    "arguments turn such a step into any value. (A rule's own error would show in the "
    "serialization's eager and graph columns too, which this gap leaves out.)",
    "fuzz",
    match=ANY,
    holds_for=computes_16_bit_floats,
  ),
  KnownGap(
    frozenset(),
    frozenset({targets.DEPLOYED["tfjs"]}),
    r"shape \(",
    "TF.js 4.22's broadcastTo returns one element reshaped, not broadcast, to a shape of only "
    "0s and 1s (a scalar broadcast to [1, 0], as SelectV2 does, comes back as [1, 1]); the "
    "converter makes such results constants where TF knows their shape, but not where a "
    "polymorphic dimension is 1 only at run time",
    "fuzz",
    match=ANY,
    holds_for=tfjs_unit_broadcast,
  ),
  KnownGap(
    frozenset({"abs"}),
    _columns("native", "graph", "graph_no_xla"),
    "NaN positions differ",
    "abs of a complex number with one infinite and one NaN part: JAX 0.10's XLA gives NaN; "
    "C99's cabs, TF's kernels and TF's XLA give inf, as JAX 0.12 does",
    "fuzz",
    match=ANY,
  ),
  KnownGap(
    _COMPLEX_ARITHMETIC,
    _columns("native", "graph", "graph_no_xla"),
    r"\((real|imaginary) part\): (NaN positions|infinities|signs of zero|values) differ",
    "complex products and quotients with infinite or zero parts: JAX's XLA on CPU gives NaN "
    "(or an infinity, dividing by zero) where the naive complex formulas of TF's kernels (and, "
    "for dots, of TF's XLA runtime) give an infinity (or NaN); so do complex powers, "
    "exp(y * log(x)), with an infinite part, or a huge one (whose sine and cosine of "
    "y * log(x) then take any value)",
    "fuzz",
    match=ANY,
    holds_for=complex_arithmetic_on_special_parts,
  ),
  KnownGap(
    frozenset({"convert_element_type"}),
    _columns("native", "graph", "graph_no_xla"),
    "values differ",
    "the gap above, converted to integers: a part that is NaN in JAX and infinite in the "
    "column (or the other way round) converts to 0 and to the integer type's extreme",
    "fuzz",
    match=ALL,
    holds_for=lambda program, detail: (
      bool(program_lib.primitives(program) & _COMPLEX_ARITHMETIC)
      and any(np.issubdtype(d, np.complexfloating) for d in program_lib.value_dtypes(program))
      and _differs_only_as_nan_and_infinity_converted(detail)
      and complex_arithmetic_on_special_parts(program, detail)
    ),
  ),
  KnownGap(
    frozenset({"mul", "integer_pow"}),
    frozenset({targets.DEPLOYED["tflite"]}),
    r"\((real|imaginary) part\): NaN positions differ",
    "LiteRT's complex MUL multiplies as C does (C99's Annex G): where both parts of the "
    "product come out NaN and a factor has an infinite part, it recovers an infinity; JAX's "
    "XLA keeps the NaN (a complex integer_pow is such products)",
    "fuzz",
    match=ANY,
    holds_for=lambda program, detail: _differs_only_as(detail, "nan", ("inf", "-inf")),
  ),
  KnownGap(
    frozenset({"add"}),
    _columns("graph-graph", "graph_no_xla-graph"),
    r"\((real|imaginary) part\): NaN positions differ",
    "TF's graph optimizer rewrites x + x as 2 * x; for a complex x with an infinite part the "
    "complex product gives a NaN part where the sum gives none",
    "fuzz",
    match=ANY,
  ),
  KnownGap(
    frozenset({"dot_general"}),
    _columns("native", "graph", "graph_no_xla") | frozenset(targets.DEPLOYED.values()),
    "signs of zero differ",
    "a dot product whose terms are all zeros, some -0.0: JAX's XLA on CPU sums them to -0.0 "
    "for some shapes (a row times a matrix) and to +0.0 for others (a matrix times a "
    "column); TF's kernels, TF's XLA, LiteRT's and TF.js's give +0.0",
    "fuzz",
    match=ANY,
    holds_for=only_jax_negative_zeros,
  ),
  KnownGap(
    frozenset({"dot_general"}),
    frozenset({targets.DEPLOYED["tflite"]}),
    "signs of zero differ",
    "the gap above the other way round: LiteRT's FULLY_CONNECTED (XNNPack's) sums terms that "
    "are all -0.0 to -0.0 for some shapes (a 2x2 times the transpose of a 3x2) where JAX's "
    "XLA gives +0.0; neither says which sign such a sum has",
    "fuzz",
    match=ANY,
    holds_for=only_jax_positive_zeros,
  ),
  KnownGap(
    frozenset({"dot_general"}),
    frozenset({targets.DEPLOYED["tflite"]}),
    "infinities differ",
    "LiteRT's FULLY_CONNECTED (XNNPack's) clamps its results to the finite range: inf "
    "becomes 3.4e38",
    "fuzz",
    match=ANY,
  ),
  KnownGap(
    frozenset({"dot_general"}),
    frozenset({targets.DEPLOYED["tflite"]}),
    "values differ|NaN positions differ|signs of zero differ",
    "LiteRT's FULLY_CONNECTED clamps an infinite result to 3.4e38, and what the program "
    "computes from it differs: a min of it and 3.4e38 becomes a tie, whose gradient is "
    "split in half where JAX gives it wholly to the finite operand",
    "fuzz",
    match=ANY,
    inputs_changed=without_infinities,
  ),
  KnownGap(
    frozenset({"sin", "cos"}),
    frozenset({targets.DEPLOYED["tflite"]}),
    "NaN positions differ|infinities differ|values differ",
    "LiteRT's SIN and COS lose their range reduction beyond |x| of about 1e9: NaN, or values "
    "far outside [-1, 1] (the case table pins the same: elementwise.sin_cos_huge_arguments)",
    "fuzz",
    match=ANY,
    inputs_changed=within_sin_range,
  ),
  KnownGap(
    frozenset({"tan"}),
    frozenset({targets.DEPLOYED["tflite"]}),
    "NaN positions differ|infinities differ|values differ",
    "TFLite has no Tan: its formulation reduces the argument by pi/2 in three float32 parts "
    "(Cody and Waite), exact up to |x| of about 8192 and ever further off beyond (the case "
    "table pins the same: elementwise.tan_huge_arguments)",
    "fuzz",
    match=ANY,
    inputs_changed=within_tan_range,
  ),
  KnownGap(
    frozenset({"mul"}),
    frozenset({targets.DEPLOYED["tflite"]}),
    "NaN positions differ|signs of zero differ",
    "TF's TFLite converter folds a product with zeros computed from constants alone (a "
    "gradient's cotangent of an empty slice, padded, or of two uses that cancel) into zeros: "
    "0 * inf gives 0, and what adds to it a number, where JAX gives NaN, and 0 * -2 gives "
    "+0.0 (the case table pins the same: "
    "elementwise.mul_by_constant_zeros)",
    "fuzz",
    match=ANY,
    holds_for=folded_product_with_zeros,
  ),
  KnownGap(
    frozenset({"sqrt", "rsqrt"}),
    frozenset({targets.DEPLOYED["tflite"]}),
    "NaN positions differ|infinities differ",
    "LiteRT's RSQRT (XNNPack's) gives NaN at +-0.0 where JAX gives +-inf, and TF's TFLite "
    "converter turns c / sqrt(x) (sqrt's gradient) into c * rsqrt(x); the case table pins "
    "the same (elementwise.rsqrt_float32_specials)",
    "fuzz",
    match=ANY,
  ),
  KnownGap(
    frozenset({"rsqrt"}),
    frozenset({targets.DEPLOYED["tflite"]}),
    "NaN positions differ|infinities differ|signs of zero differ|values differ",
    "LiteRT's RSQRT gives NaN at +-0.0 where JAX gives +-inf, and what the program computes "
    "from it differs: x >= rsqrt(-0.0) is True in JAX, False on LiteRT (held where JAX "
    "with rsqrt NaN at zeros gives the column's result)",
    "fuzz",
    match=ANY,
    inputs_changed=with_litert_rsqrt,
  ),
)


# Cases whose gap comes from what their operands are (constants a converter
# folds), not from their primitives: any program of these primitives would
# fit them. A gap of FUZZ_GAPS checks the operands instead.
_GAPS_OF_OPERANDS = frozenset({"elementwise.mul_by_constant_zeros"})


@functools.cache
def case_table_gaps() -> tuple[KnownGap, ...]:
  """The case table's gaps in the fuzzer's columns (TF's, LiteRT's, TF.js's),
  with the primitives of their cases."""
  out = []
  for c in collect.all_cases():
    if c.id in _GAPS_OF_OPERANDS:
      continue
    by_gap: dict = {}
    for column in targets.columns(tflite=True, tfjs=True):
      gap = c.gap(*column)
      if gap is not None and c.refusal(column[0]) is None:
        by_gap.setdefault(gap, set()).add(column)
    if not by_gap:
      continue
    try:
      with jax.enable_x64(c.x64):
        prims = program_lib.jaxpr_primitives(jax.make_jaxpr(c.fun)(*c.make_args()).jaxpr)
    except Exception:  # pylint: disable=broad-except
      continue  # a case JAX cannot trace (its gap is about that) tells nothing here
    for gap, cols in by_gap.items():
      error = gap.error or "values differ beyond"
      if gap.elsewhere:
        # The runtime's kernels differ by CPU: either outcome is the gap's.
        error = f"{error}|{gap.elsewhere}"
      out.append(KnownGap(frozenset(prims), frozenset(cols), error, gap.why, c.id))
  return tuple(out)


def explain(program: program_lib.Program, column, detail: str, rerun=None) -> KnownGap | None:
  """The known gap behind a mismatch of `program` in `column`, or None.

  `rerun(program)` reruns a program in the column and gives its mismatch's
  detail, or None where it passes: a gap about subnormal or huge inputs holds
  only where changing them makes the mismatch go, or leaves one that another
  known gap explains (LiteRT's clamp of inf, once huge inputs are tamed).
  """
  primitives = program_lib.primitives(program)
  for gap in FUZZ_GAPS + case_table_gaps():
    if tuple(column) not in gap.columns or not re.search(gap.error, detail):
      continue
    fits = {
      SUBSET: primitives <= gap.primitives,
      ANY: not gap.primitives or bool(primitives & gap.primitives),
      ALL: gap.primitives <= primitives,
    }[gap.match]
    if not fits or (gap.holds_for is not None and not gap.holds_for(program, detail)):
      continue
    if gap.inputs_changed is not None:
      changed = gap.inputs_changed(program)
      if changed is None or rerun is None:
        continue
      left = rerun(changed)
      if left is not None and explain(changed, column, left, rerun) is None:
        continue
    return gap
  return None
