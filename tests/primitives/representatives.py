"""Which cases of the case table the fast tier runs in each column.

Every case in every column is the exhaustive tier (`make test-all`): about
2,600 cases in 13 columns. The fast tier (`make test`, `-m "not slow"`) runs,
in each column, representatives of the cases not marked `slow=True` in their
table, chosen by this rule:

1. For every expectation recorded for the column, one case that records it
   (the first in table order): a `Refusal` (its primitive and reason) or a
   `Gap` (its reason, error and tolerance) there, or, in the graph TF mode of
   a graph serialization, the TF ops a case's graph must hold (each case's
   own). These are what the column is documented to do otherwise than plain
   agreement with JAX; each of them shows up in CI, and every case that
   shares it in `make test-all`. (A deployment column's refusals for want of
   a kernel are derived when a case runs, not recorded: the cases that meet
   them are chosen by rule 2, as cases that may run plainly.)
2. Then cases chosen so that the cases which run plainly in the column (no
   refusal, no gap) cover everything they cover together: each primitive of
   their jaxprs (sub-jaxprs included), on each combination of dtype classes
   (float, complex, signed, unsigned, bool, PRNG key) among its operands and
   results; each argument or result dtype within each rule family (float16,
   bfloat16, float64, int8, ..., which the lowerings widen, narrow or refuse
   differently); and each primitive under polymorphic shapes. Chosen greedily:
   the case that adds the most of these not yet covered (counting only cases
   that run to a comparison in the column), ties to the one with fewer
   equations, then to table order.
   In the two columns that reach another column's consumer by another path
   (`BY_PRIMITIVE_ONLY`), each primitive, plain and polymorphic, is covered
   rather than each combination of dtype classes or family dtype.

Every other (case, column) pair is marked slow, never skipped: `make test-all`
runs it. Variants of one primitive (another layout or shape, parameters, a
dtype whose class and family are already covered) are what moves to the
exhaustive tier; no primitive, dtype class, family dtype or recorded
expectation leaves the fast tier. A case JAX cannot trace runs in every column.

The rule reads only the case table and the jaxprs JAX traces for it (from
abstract arguments, a few seconds for the table), so every pytest-xdist worker
computes the same selection.
"""

import contextlib
import dataclasses
import heapq
import warnings

import jax
import numpy as np

from jax2tf.deploy import provenance
from tests.support import case as case_lib

_CLASS_OF_KIND = {
  "f": "float",
  "V": "float",
  "c": "complex",
  "i": "signed",
  "u": "unsigned",
  "b": "bool",
}


def _dtype_class(dtype) -> str:
  try:
    kind = np.dtype(dtype).kind
  except TypeError:
    return "key"  # PRNG key arrays (key<fry>, ...), which NumPy has no dtype for
  return _CLASS_OF_KIND.get(kind, "other")


def _dtype_of(var):
  return getattr(var.aval, "dtype", None)


@dataclasses.dataclass(frozen=True)
class Footprint:
  """What a case exercises, for the selection: its keys and its size."""

  keys: frozenset
  equations: int
  traced: bool = True  # False: JAX could not trace it, and it runs everywhere


def footprint(case) -> Footprint:
  """The primitives, dtype classes and dtypes of `case`, from its jaxpr."""
  with jax.enable_x64(True) if case.x64 else contextlib.nullcontext(), warnings.catch_warnings():
    # Tracing only: a case's own conversions (complex to real, ...) warn when run.
    warnings.simplefilter("ignore")
    args = [jax.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype) for a in case.make_args()]
    closed = provenance.closed_jaxpr(case.fun, args)
  if closed is None:
    # A case whose function JAX rejects (the runner then expects JAX's
    # error) has no jaxpr to take representatives from.
    return Footprint(frozenset(), 0, traced=False)
  eqns = list(provenance.equations(closed.jaxpr))
  keys = set()
  for eqn in eqns:
    dtypes = [_dtype_of(v) for v in (*eqn.invars, *eqn.outvars)]
    keys.add(
      (
        "primitive",
        eqn.primitive.name,
        tuple(sorted({_dtype_class(d) for d in dtypes if d is not None})),
      )
    )
  if case.polymorphic_shapes is not None:
    keys |= {("polymorphic", k[1]) for k in list(keys)}
  outs = [_dtype_of(v) for v in closed.jaxpr.outvars]
  for dtype in [a.dtype for a in args] + [d for d in outs if d is not None]:
    keys.add(("dtype", case.family, str(dtype)))
  return Footprint(frozenset(keys), len(eqns))


def primitives(fp: Footprint) -> frozenset:
  """The names of the primitives in a footprint's jaxpr (sub-jaxprs included)."""
  return frozenset(k[1] for k in fp.keys if k[0] == "primitive")


def _expectation(case, serialization: str, mode: str):
  """The expectation `case` records for this column, as a key that cases
  recording the same one share (None for plain agreement with JAX): a
  refusal's primitive and reason, a gap's reason, error and tolerance; the
  TF ops a graph must hold are the case's own."""
  refusal = case.refusal(serialization)
  if refusal is not None:
    return ("refused", refusal.primitive, refusal.reason)
  gap = case.gap(serialization, mode)
  if gap is not None:
    return ("gap", gap.why, gap.error, gap.tol)
  ser = case_lib.serialization(serialization)
  if mode == "graph" and ser.graph and case.graph_ops_in(serialization):
    return ("graph_ops", case.id)
  return None


def _runs_to_comparison(case, serialization: str, mode: str) -> bool:
  if case.refusal(serialization) is not None:
    return False
  gap = case.gap(serialization, mode)
  return gap is None or gap.tol is not None


# Columns that take another column's conversion to the same consumer by
# another path: the no-XLA graph compiled by TF's XLA (its own target,
# TF_NO_XLA, runs in the eager and graph modes; XLA is TF_XLA's target), and
# the native module through TF's TFLite converter (the TFLITE target, which
# the tflite column covers on the graph route). Rule 2 covers each primitive
# there (on its own, and under polymorphic shapes), not each dtype class of
# its operands nor each family dtype.
BY_PRIMITIVE_ONLY = frozenset({("graph_no_xla", "compiled"), ("tflite_native", "litert")})


def _keys(fp: Footprint, column: tuple[str, str]) -> frozenset:
  if column not in BY_PRIMITIVE_ONLY:
    return fp.keys
  return frozenset(k[:2] for k in fp.keys if k[0] in ("primitive", "polymorphic"))


def select(cases, serialization: str, mode: str, footprints) -> frozenset:
  """The ids of the representatives of `cases` (none of them slow) in one column."""
  footprints = {
    c.id: dataclasses.replace(footprints[c.id], keys=_keys(footprints[c.id], (serialization, mode)))
    for c in cases
  }
  keep = {c.id for c in cases if not footprints[c.id].traced}
  # One case per recorded expectation (the first in table order): a refusal
  # or a gap met by many cases for one reason is checked once here, each
  # case of it in `make test-all`.
  expectations = {}
  for c in cases:
    expected = _expectation(c, serialization, mode)
    if expected is not None:
      expectations.setdefault(expected, c.id)
  keep |= set(expectations.values())
  covered = set()
  for c in cases:
    if c.id in keep and _runs_to_comparison(c, serialization, mode):
      covered |= footprints[c.id].keys
  # Greedy set cover, lazily: a case's count of new keys only falls as others
  # are kept, so a case whose recounted rank still leads the heap leads for real.
  heap = [
    (-len(footprints[c.id].keys - covered), footprints[c.id].equations, i, c.id)
    for i, c in enumerate(cases)
    if c.id not in keep
  ]
  heapq.heapify(heap)
  while heap:
    _, equations, i, case_id = heapq.heappop(heap)
    new = len(footprints[case_id].keys - covered)
    if not new:
      continue
    if heap and (-new, equations, i) > heap[0][:3]:
      heapq.heappush(heap, (-new, equations, i, case_id))
      continue
    keep.add(case_id)
    covered |= footprints[case_id].keys
  return frozenset(keep)


def fast_pairs(cases, footprints=None) -> frozenset:
  """{(case id, "serialization-mode")} that run in the fast tier; `footprints`
  ({case id: Footprint}) where the caller has them already."""
  fast = [c for c in cases if not c.slow]
  known = footprints or {}
  footprints = {c.id: known[c.id] if c.id in known else footprint(c) for c in fast}
  return frozenset(
    (case_id, f"{s}-{m}") for s, m in case_lib.COLUMNS for case_id in select(fast, s, m, footprints)
  )
