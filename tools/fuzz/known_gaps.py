"""Which mismatches are known: the case table's gaps, and the fuzzer's own.

A (minimized) mismatch is known when a gap holds in its column, the
comparison's record is of a kind the gap allows (or, for a case gap about an
error, the error's message matches it), its primitives fit the gap, and each
relaxation the gap names (`tools.fuzz.relaxations`) holds of the record's
arrays. For a gap of the case table, every primitive of the program must be
one of the gapped case's (the gap is about what that case computes). The
fuzzer's own gaps, `FUZZ_GAPS`, are for what no single case holds (XLA's
algebraic rewrites of a combination, denormal inputs): each says how its
primitives must fit.
"""

import dataclasses
import functools
import inspect

import jax

from tests.support import case as case_lib
from tests.support import collect
from tests.support.compare import kinds_named
from tools.fuzz import program as program_lib
from tools.fuzz import relaxations, targets
from tools.fuzz.relaxations import FLOATS, INF, NAN, SHAPE, VALUES, ZERO

SUBSET, ANY, ALL = "subset", "any", "all"


@dataclasses.dataclass(frozen=True)
class KnownGap:
  primitives: frozenset[str]
  columns: frozenset[tuple[str, str]]
  kinds: frozenset[str]  # of the comparison's Mismatch: relaxations.NAN, ...
  why: str = ""  # by default the docstring of the last relaxation of `when`
  source: str = "fuzz"  # the case id, or "fuzz"
  # How the program's primitives fit: SUBSET (all of them among the gap's),
  # ANY (one of the gap's among them) or ALL (all of the gap's among them).
  match: str = ANY
  when: tuple[str, ...] = ()  # relaxations, by name, that must all hold
  part: bool = False  # only on a part of a complex result
  # A case gap's pattern for an error the column raises (a converter's or a
  # runtime's message, not a comparison's); no kinds then needed.
  error: str = ""
  replaces: str = ""  # a case whose own gap this one stands for

  def __post_init__(self):
    assert all(name in relaxations.RELAXATIONS for name in self.when), self.when
    if not self.why:
      doc = inspect.getdoc(relaxations.RELAXATIONS[self.when[-1]]) or ""
      object.__setattr__(self, "why", " ".join(doc.split()))


def _columns(*columns: str) -> frozenset:
  """Columns by name: a serialization ("native") or one column ("graph-eager")."""
  return frozenset(
    c for c in targets.TF_COLUMNS if c[0] in columns or targets.column_name(c) in columns
  )


TF = _columns("native", "graph", "graph_no_xla")
EVERY = TF | frozenset(targets.DEPLOYED.values())
# The columns no XLA compiles: TF's kernels (the graph without jit_compile), LiteRT, TF.js.
KERNELS = _columns("graph-eager", "graph-graph", "graph_no_xla-eager", "graph_no_xla-graph") | (
  frozenset(targets.DEPLOYED.values())
)
COMPILED = _columns("graph-compiled", "graph_no_xla-compiled")
LITERT, TFJS = frozenset({targets.DEPLOYED["tflite"]}), frozenset({targets.DEPLOYED["tfjs"]})

# Not in FUZZ_GAPS: whether it holds takes a process of its own (see
# isolation), where JAX's jax.jit of the (minimized) program ends it too.
XLA_ENDS_JAX_TOO = KnownGap(
  frozenset(),
  _columns("native", "graph-compiled", "graph_no_xla-compiled"),
  frozenset(),
  "XLA ends the process compiling the program, and JAX's own jax.jit of it too: native "
  "serialization hands TF's XLA the module JAX's jit compiles, and jit_compile has TF's XLA "
  "compile the graph's ops into the same operations (integer division of constant zeros, "
  "folded at compile time, raises SIGFPE; a bitwise and/or of a narrowing signed integer "
  "conversion with an array segfaults XLA's CPU compiler, in JAX 0.10's and TF 2.21's)",
)

_SUMS_AND_PRODUCTS = relaxations.SUMS - {"scatter-add"} | {"reduce_prod", "cumprod"}


def _gap(primitives, columns, kinds, *when: str, **details) -> KnownGap:
  """A fuzz gap: `primitives` space-separated, `when` the relaxations' names."""
  names = primitives.split() if isinstance(primitives, str) else primitives
  return KnownGap(frozenset(names), columns, frozenset(kinds), when=when, **details)


# Gaps only the fuzzer meets, one a row: primitives, columns, the kinds of
# mismatch, the relaxations that must hold; a `why` where the relaxations
# alone do not say which runtime does what.
# fmt: off
FUZZ_GAPS = (
  _gap("nextafter", EVERY, {VALUES, ZERO}, "subnormal_flush",
       why="nextafter from a zero gives the smallest subnormal (1.4e-45): JAX's XLA on CPU "
       "flushes it to zero in the ops that read it (max, add); TF's XLA and kernels, "
       "LiteRT's and TF.js's keep it"),
  _gap("", EVERY, FLOATS, "subnormal_inputs"),
  _gap("div integer_pow pow", EVERY, FLOATS, "huge_inputs",
       why="a quotient by a huge value is subnormal (1 / 3.4e38 is 2.9e-39): JAX's XLA on "
       "CPU flushes it to zero (atan2 of it with itself is then 0, not pi/4); TF.js's and "
       "LiteRT's kernels keep it"),
  _gap("rem", EVERY, {VALUES}, "remainder_amplified"),
  _gap(relaxations.SUMS, EVERY, {VALUES}, "summation_order"),
  _gap(_SUMS_AND_PRODUCTS, EVERY, {NAN, INF, VALUES}, "overflow_seen", "huge_inputs",
       why="sums and products of several terms near the ends of the float range: JAX's "
       "XLA, TF's kernels and XLA, LiteRT and TF.js accumulate in different orders (none "
       "is specified), and a partial result overflows to inf in one order and not in "
       "another (inf - inf or inf * 0 then gives NaN; is_finite or a comparison shows it)"),
  _gap("mul convert_element_type", KERNELS, {NAN, ZERO}, match=ALL,
       why="JAX's XLA rewrites x * convert(p) (p boolean) to select(p, x, 0), so inf * False "
       "is 0 and -2 * False is +0 there; TF's, LiteRT's and TF.js's kernels multiply, "
       "giving NaN and -0 as IEEE says. Under jit_compile TF's XLA rewrites it too"),
  _gap("neg convert_element_type", _columns("graph_no_xla-compiled"), {ZERO},
       "zero_sign_lost", match=ALL,
       why="without XLA ops, neg is a product by -1; under jit_compile TF's XLA rewrites "
       "convert(p) * -1 (p boolean) to select(p, -1, 0), so -convert(False) is +0.0 there "
       "where JAX gives -0.0"),
  _gap("add_any add pad", KERNELS, {ZERO}, "zero_sign_lost",
       why="JAX's XLA folds x + 0 to x, keeping -0.0 (a gradient adds the zero cotangent of "
       "a pad or an unused output); TF's, LiteRT's and TF.js's kernels add, giving +0.0 as "
       "IEEE says (the case table records the same for switch: control_flow.switch_*)"),
  _gap("scatter-add dynamic_update_slice", COMPILED, {ZERO}, "gradient_sum",
       why="JAX's XLA folds x + scatter-add(zeros, i, u) and x + dynamic_update_slice(zeros, "
       "u, i) (a gradient's sum of cotangents) into an update of x itself; where nothing "
       "lands, x's -0.0 stays, where adding the zeros gives +0.0 (as JAX op by op does); "
       "TF's XLA does not fold the graph's forms"),
  _gap("pad", _columns("graph-graph", "graph_no_xla-graph") | COMPILED, {ZERO},
       "gradient_sum", "zero_sign_gained",
       why="TF's graph optimizer and TF's XLA fold the graph's form of a pad's transpose, "
       "where it reads only padding, to zeros, and then x + 0 to x, keeping -0.0; JAX's XLA "
       "adds that zero cotangent, giving +0.0 as IEEE says (so does TF eager)"),
  _gap("argmax argmin", EVERY, {VALUES}, "rounded_program"),
  _gap("convert_element_type", EVERY, {VALUES}, "integer_step", match=ALL),
  _gap("", COMPILED, {VALUES, ZERO}, "sixteen_bit_floats",
       why="16-bit floats under jit_compile: graph serialization computes some 16-bit ops "
       "in float32 and rounds back, and TF's XLA drops a rounding between two such casts "
       "(bf16 2.09375 squared stays 4.384 where JAX rounds it to 4.375; sin and cos of "
       "large arguments turn such a step into any value). A rule's own error would show "
       "in the eager and graph columns too, which this gap leaves out"),
  _gap("", TFJS, {SHAPE}, "unit_broadcast"),
  _gap("abs", TF, {NAN},
       why="abs of a complex number with one infinite and one NaN part: JAX 0.10's XLA "
       "gives NaN; C99's cabs, TF's kernels and TF's XLA give inf, as JAX 0.12 does"),
  _gap(relaxations.COMPLEX_ARITHMETIC, TF, FLOATS, "complex_special_parts", part=True),
  _gap("convert_element_type", TF, {VALUES}, "nan_or_infinity_converted",
       "complex_special_parts", match=ALL,
       why="complex arithmetic on special parts, converted to integers: a part that is NaN "
       "in JAX and infinite in the column (or the other way round) converts to 0 and to "
       "the integer type's extreme"),
  _gap("mul integer_pow", LITERT, {NAN}, "nan_to_infinity", part=True),
  _gap("add", _columns("graph-graph", "graph_no_xla-graph"), {NAN}, part=True,
       why="TF's graph optimizer rewrites x + x as 2 * x; for a complex x with an infinite "
       "part the complex product gives a NaN part where the sum gives none"),
  _gap("dot_general", EVERY, {ZERO}, "zero_sign_lost",
       why="a dot product whose terms are all zeros, some -0.0: JAX's XLA on CPU sums them "
       "to -0.0 for some shapes (a row times a matrix) and to +0.0 for others; TF's "
       "kernels, TF's XLA, LiteRT's and TF.js's give +0.0"),
  _gap("dot_general", LITERT, {ZERO}, "zero_sign_gained",
       why="LiteRT's FULLY_CONNECTED (XNNPack's) sums terms that are all -0.0 to -0.0 for "
       "some shapes where JAX's XLA gives +0.0; neither says which sign such a sum has"),
  _gap("dot_general", LITERT, {INF},
       why="LiteRT's FULLY_CONNECTED (XNNPack's) clamps its results to the finite range: "
       "inf becomes 3.4e38"),
  _gap("dot_general", LITERT, {VALUES, NAN, ZERO}, "infinite_inputs"),
  _gap("sin cos", LITERT, {NAN, INF, VALUES}, "sin_range"),
  _gap("tan", LITERT, {NAN, INF, VALUES}, "tan_range"),
  _gap("mul", LITERT, {NAN, ZERO}, "folded_zero_product",
       replaces="elementwise.mul_by_constant_zeros"),
  _gap("sqrt rsqrt", LITERT, {NAN, INF},
       why="LiteRT's RSQRT (XNNPack's) gives NaN at +-0.0 where JAX gives +-inf, and TF's "
       "TFLite converter turns c / sqrt(x) (sqrt's gradient) into c * rsqrt(x); the case "
       "table pins the same (elementwise.rsqrt_float32_specials)"),
  _gap("rsqrt", LITERT, FLOATS, "litert_rsqrt"),
)
# fmt: on


@functools.cache
def case_table_gaps() -> tuple[KnownGap, ...]:
  """The case table's gaps in the fuzzer's columns (TF's, LiteRT's, TF.js's),
  with the primitives of their cases. A gap's error names the kinds of
  mismatch it allows (compare's phrases: "signs of zero differ"), or is a
  pattern of what the column raises; a gap that loosens the tolerance
  allows values apart beyond the fuzzer's."""
  replaced = {g.replaces for g in FUZZ_GAPS}
  out = []
  for c in collect.all_cases():
    if c.id in replaced:
      continue
    by_gap: dict = {}
    for column in targets.columns(tflite=True, tfjs=True, litert=True):
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
      out.append(_of_case(gap, frozenset(prims), frozenset(cols), c.id))
  return tuple(out)


def _of_case(gap: case_lib.Gap, prims: frozenset, cols: frozenset, source: str) -> KnownGap:
  # The runtime's kernels differ by CPU: either outcome is the gap's.
  patterns = [p for p in (gap.error, gap.elsewhere) if p]
  kinds = frozenset().union(*map(kinds_named, patterns)) if patterns else frozenset({VALUES})
  error = "|".join(p for p in patterns if not kinds_named(p))
  when = () if patterns else ("tolerance",)
  return KnownGap(prims, cols, kinds, gap.why, source, SUBSET, when, error=error)


def explain(program: program_lib.Program, column, found: targets.Outcome, rerun=None):
  """The known gap behind `found`, a mismatch of `program` in `column`, or None.

  `rerun(program)` reruns a program in the column and gives its outcome
  where it still mismatches, else None: a gap about subnormal or huge inputs
  holds only where changing them makes the mismatch go, or leaves one that
  another known gap explains (LiteRT's clamp of inf, once huge inputs are
  tamed).
  """
  primitives = program_lib.primitives(program)
  m = found.mismatch
  context = relaxations.Context(
    program, tuple(column), found, rerun,
    lambda p, left: explain(p, column, left, rerun) is not None,
  )  # fmt: skip
  for gap in FUZZ_GAPS + case_table_gaps():
    if tuple(column) not in gap.columns:
      continue
    if m is None:
      if not (gap.error and found.error_matches(gap.error)):
        continue
    elif m.kind not in gap.kinds or (gap.part and not m.part):
      continue
    fits = {
      SUBSET: primitives <= gap.primitives,
      ANY: not gap.primitives or bool(primitives & gap.primitives),
      ALL: gap.primitives <= primitives,
    }[gap.match]
    if fits and (m is None or all(relaxations.RELAXATIONS[n](context, m) for n in gap.when)):
      return gap
  return None
