"""Primitive test cases: a JAX function, its arguments, and what to expect in each column.

A column is one serialization (how `jax2tf.convert` lowers the function) run in
one TF mode (how TF executes the result). Both tuples are defined here and
nowhere else, together with which serialization inherits the refusals and gaps
of another: a case that graph serialization refuses is refused with
enable_xla=False too, since that flavour can only do less. A new column (a
deployment runtime, say) is one more entry of `SERIALIZATIONS`.

In every column a case either matches `jax.jit(case.fun)` on the same
arguments, or is listed as refused there (conversion must fail, naming the
primitive and a remedy), or has a known gap there (a looser tolerance, or a
failure that must keep failing until the gap is fixed).

    CASES = Cases()
    CASES.add("sin_float32", lax.sin, A(4, 6, lo=-5, hi=5))
    CASES.add("floor_float32", lax.floor, A(16, specials=SPECIALS), exact=True)
    CASES.add("eig", ..., refuse=refused("eig", "LAPACK only", "native"))
"""

import dataclasses
import functools
import inspect
import pathlib
import types
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import ml_dtypes
import numpy as np

# --------------------------------------------------------------------------
# Columns


@dataclasses.dataclass(frozen=True)
class Serialization:
  """One way of converting a function, and what its refusals look like."""

  name: str
  title: str  # how the coverage page names it
  options: Mapping[str, Any]  # keyword arguments of jax2tf.convert
  remedies: tuple[str, ...]  # a refusal's message proposes one of these
  parent: str | None = None  # whose refusals and gaps hold here too
  graph: bool = False  # one TF op per primitive: the graph is checked
  xla_ops: bool = True  # may emit Xla* TF ops
  modes: tuple[str, ...] = ()  # where the result runs; default TF_MODES
  # The deployment target whose kernel lists predict its refusals
  # (tests/support/refusals.py): a case it refuses must be refused for
  # an op or dtype the target lists as missing, and no other way.
  target: str | None = None


# eager: the converted function called directly; graph: inside tf.function;
# compiled: inside tf.function(jit_compile=True).
TF_MODES = ("eager", "graph", "compiled")

SERIALIZATIONS = (
  Serialization(
    "native",
    "native",
    types.MappingProxyType({"native_serialization": True}),
    ("native_serialization=False",),
  ),
  Serialization(
    "graph",
    "graph",
    types.MappingProxyType({"native_serialization": False, "enable_xla": True}),
    ("native serialization",),
    graph=True,
  ),
  Serialization(
    "graph_no_xla",
    "graph, enable_xla=False",
    types.MappingProxyType({"native_serialization": False, "enable_xla": False}),
    ("native serialization", "enable_xla=True"),
    parent="graph",
    graph=True,
    xla_ops=False,
  ),
  # jax2tf.to_tflite(route="graph"): the graph_no_xla function through TF's
  # TFLite converter with builtin ops only, run on the LiteRT interpreter.
  Serialization(
    "tflite",
    "TFLite (LiteRT)",
    types.MappingProxyType({"route": "graph"}),
    ("native serialization", "enable_xla=True", "allow_flex=True", "route='native'"),
    parent="graph_no_xla",
    xla_ops=False,
    modes=("litert",),
    target="tflite",
  ),
  # jax2tf.to_tflite(route="native"): the StableHLO module, legalized by the
  # converter, on LiteRT.
  Serialization(
    "tflite_native",
    "TFLite (LiteRT), native route",
    types.MappingProxyType({"route": "native"}),
    ("native_serialization=False", "allow_flex=True", "route='graph'"),
    parent="native",
    modes=("litert",),
    target="tflite",
  ),
  # jax2tf.to_tflite(route="litert"): JAX's own StableHLO, rewritten by the
  # LITERT target's pipeline, through the standalone litert-converter (no
  # TensorFlow), on LiteRT. No parent: native serialization's refusals are
  # its own custom-call check and TF's XlaCallModule, neither of which this
  # route has (it leaves every custom call to the converter, which refuses
  # in its own words), so every case runs here, and what the converter
  # refuses must be what the LITERT target's kernel list holds.
  Serialization(
    "tflite_litert",
    "TFLite (LiteRT), litert route",
    types.MappingProxyType({"route": "litert"}),
    ("route='graph'", "route='native'"),
    modes=("litert",),
    target="litert",
  ),
  # jax2tf.to_tfjs: the graph_no_xla function as a TF.js graph model, run by
  # the pure JavaScript TF.js (cpu backend) in Node.
  Serialization(
    "tfjs",
    "TF.js (Node)",
    types.MappingProxyType({}),
    # Refusals inherited from graph serialization propose its remedies.
    ("native serialization", "enable_xla=True", "jax2tf.to_tflite", "cast"),
    parent="graph_no_xla",
    xla_ops=False,
    modes=("node",),
    target="tfjs",
  ),
)
SERIALIZATION_NAMES = tuple(s.name for s in SERIALIZATIONS)
_BY_NAME = {s.name: s for s in SERIALIZATIONS}


def serialization(name: str) -> Serialization:
  if name not in _BY_NAME:
    raise ValueError(f"unknown serialization {name!r}; the columns are {SERIALIZATION_NAMES}")
  return _BY_NAME[name]


def modes_of(name: str) -> tuple[str, ...]:
  """Where a serialization's result runs: the TF modes, or its own runtime."""
  return serialization(name).modes or TF_MODES


COLUMNS = tuple((s, m) for s in SERIALIZATION_NAMES for m in modes_of(s))


def lineage(name: str) -> tuple[str, ...]:
  """`name` and the serializations it inherits from, nearest first."""
  out = [name]
  while (parent := serialization(out[-1]).parent) is not None:
    out.append(parent)
  return tuple(out)


# --------------------------------------------------------------------------
# Dtypes and tolerances

F16, BF16, F32, F64 = np.float16, ml_dtypes.bfloat16, np.float32, np.float64
C64, C128 = np.complex64, np.complex128
I8, I16, I32, I64 = np.int8, np.int16, np.int32, np.int64
U8, U16, U32, U64 = np.uint8, np.uint16, np.uint32, np.uint64
BOOL = np.bool_

# NaN, infinities and both zeros: the values where implementations disagree.
SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0)

# uint32 values around both ends and the top bit, where reading uint32 as
# int32 (or its top bit flipped) would reorder them; as rows of 8.
U32_ORDER_EDGES = np.array(
  [0, 1, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF, 12345], np.uint32
)


def u32_order_rows(n: int = 3) -> np.ndarray:
  """`n` rows of U32_ORDER_EDGES, each rotated by 3 more than the last."""
  return np.stack([np.roll(U32_ORDER_EDGES, 3 * i) for i in range(n)])


# Default (rtol, atol) by result dtype, for cases that give none: the two
# sides may use different polynomial approximations for transcendentals.
DEFAULT_TOL = {
  np.dtype(F16): (1e-2, 1e-3),
  np.dtype(BF16): (2e-2, 1e-2),
  np.dtype(F32): (2e-5, 2e-6),
  np.dtype(F64): (1e-12, 1e-14),
  np.dtype(C64): (2e-5, 2e-6),
  np.dtype(C128): (1e-12, 1e-14),
}
_FLOAT8_TOL = (1.3e-1, 1.3e-1)


def default_tol(dtype) -> tuple[float, float]:
  dtype = np.dtype(dtype)
  if dtype in DEFAULT_TOL:
    return DEFAULT_TOL[dtype]
  if "float8" in dtype.name or "float4" in dtype.name or "float6" in dtype.name:
    return _FLOAT8_TOL
  return (2e-5, 2e-6)


def is_64(dtype) -> bool:
  """Whether values of `dtype` need jax.enable_x64."""
  dtype = np.dtype(dtype)
  return dtype.itemsize == 8 and dtype.kind in "iuf" or dtype == np.dtype(C128)


def dtype_name(dtype) -> str:
  return np.dtype(dtype).name


# --------------------------------------------------------------------------
# Arguments


@dataclasses.dataclass(frozen=True)
class Arg:
  """A random argument: shape, dtype and value domain, or a fixed value.

  Random values are drawn from a generator seeded by the case's name, so a
  case sees the same arguments in every column and every run.
  """

  shape: tuple
  dtype: Any = F32
  lo: float = -3.0
  hi: float = 3.0
  specials: tuple = ()  # values written at the first flat positions
  value: Any = None  # a fixed value instead of random data

  def make(self, rng: np.random.Generator) -> np.ndarray:
    if self.value is not None:
      return np.asarray(self.value, dtype=self.dtype)
    dt = np.dtype(self.dtype)
    if dt == np.bool_:
      x = rng.random(self.shape) < 0.5
    elif dt.kind in "iu":
      info = np.iinfo(dt)
      lo, hi = max(int(self.lo), info.min), min(int(self.hi), info.max)
      x = rng.integers(lo, hi, size=self.shape, endpoint=True, dtype=dt)
    elif dt.kind == "c":
      x = (
        rng.uniform(self.lo, self.hi, self.shape) + 1j * rng.uniform(self.lo, self.hi, self.shape)
      ).astype(dt)
    else:
      x = rng.uniform(self.lo, self.hi, self.shape).astype(dt)
    x = np.array(x)
    if self.specials:
      flat = x.reshape(-1)
      n = min(len(self.specials), flat.size)
      flat[:n] = np.asarray(self.specials[:n]).astype(dt)
    return x

  def __str__(self):
    return f"{dtype_name(self.dtype)}{list(self.shape)}"


def A(*shape, dtype=F32, lo=-3.0, hi=3.0, specials=()) -> Arg:
  """A random argument of this shape."""
  return Arg(tuple(shape), dtype, lo, hi, tuple(specials))


def V(value, dtype) -> Arg:
  """A fixed argument."""
  return Arg(np.shape(value), dtype, value=value)


def rand(shape, dtype=F32, low=-3.0, high=3.0, seed=0) -> np.ndarray:
  """A fixed random array (drawn once, from `seed`)."""
  rng = np.random.default_rng(seed)
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if np.issubdtype(dtype, np.integer):
    info = np.iinfo(dtype)
    lo, hi = max(int(low), info.min), min(int(high), info.max)
    return rng.integers(lo, hi + 1, size=shape, dtype=dtype)
  if np.issubdtype(dtype, np.complexfloating):
    re_, im = rng.uniform(low, high, shape), rng.uniform(low, high, shape)
    return (re_ + 1j * im).astype(dtype)
  return rng.uniform(low, high, shape).astype(dtype)


def _make_arg(arg, rng, position):
  if isinstance(arg, Arg):
    return arg.make(rng)
  if callable(arg):
    # A generator of its own, seeded by its position.
    return np.asarray(arg(np.random.default_rng(position)))
  return np.asarray(arg)


# --------------------------------------------------------------------------
# Expectations per column


@dataclasses.dataclass(frozen=True)
class Refusal:
  """Conversion must fail in this column, with an error naming `primitive`."""

  primitive: str
  reason: str


@dataclasses.dataclass(frozen=True)
class Gap:
  """A known shortfall in one column.

  With `tol`, the case runs there with that looser (rtol, atol). Without, it
  must fail there (conversion, execution or comparison) with an error matching
  `error`, so that a fix shows up as a test to update, never as silence.
  """

  why: str
  tol: tuple | None = None
  error: str = ""  # or CRASHES: the runtime dies running it
  # Where the runtime's kernels differ by CPU (LiteRT picks its vectorized
  # kernels by instruction set): what the case does on the other CPUs, an
  # error pattern, or "" where it matches JAX there. None: the same everywhere.
  elsewhere: str | None = None


# A Gap's error for a case that kills the runtime's process: the runner
# checks that it still does, in a child process.
CRASHES = "crashes LiteRT"


def refused(primitive: str, reason: str, *serializations: str) -> dict:
  """{serialization: Refusal} for each of `serializations`."""
  assert serializations, f"refusal of {primitive!r} names no serialization"
  return {s: Refusal(primitive, reason) for s in serializations}


def gaps(
  why: str,
  serializations: Iterable[str],
  modes: Iterable[str] | None = None,
  *,
  tol=None,
  error: str = "",
) -> dict:
  """{(serialization, mode): Gap} for every pair; by default every mode of
  each serialization that has it (TF modes, or the serialization's runtime)."""
  return {
    (s, m): Gap(why, tol, error)
    for s in serializations
    for m in (modes_of(s) if modes is None else [m for m in modes if m in modes_of(s)])
  }


# --------------------------------------------------------------------------
# Cases


@dataclasses.dataclass(frozen=True)
class Case:
  name: str
  fun: Callable
  args: tuple  # Arg, fixed arrays, or callables(rng) -> array
  tol: tuple | None = None  # (rtol, atol); by default per result dtype
  exact: bool = False  # bit for bit (NaN payloads aside)
  compare: Callable | None = None  # compare(args, expected, actual, tol) for the non-unique
  refuse: Mapping[str, Refusal] = dataclasses.field(default_factory=dict)
  gaps: Mapping[tuple, Gap] = dataclasses.field(default_factory=dict)
  # TF op types the graph serializations must emit: a tuple for all of them,
  # or {serialization: tuple} where the flavours differ.
  graph_ops: Any = ()
  polymorphic_shapes: tuple | None = None
  x64: bool = False
  slow: bool = False  # exhaustive tier only
  family: str = ""  # the rule family; set by tests.support.collect
  # Where the case table defines it: the lines of tests/cases/<family>.py on
  # the stack of its definition, outermost first ("tests/cases/f.py:123"), so
  # that a name built in a loop or a helper can be found (see defined_at).
  defined_at: tuple[str, ...] = dataclasses.field(default=(), compare=False)

  @property
  def id(self) -> str:
    return f"{self.family}.{self.name}" if self.family else self.name

  def refusal(self, serialization_name: str) -> Refusal | None:
    for s in lineage(serialization_name):
      if s in self.refuse:
        return self.refuse[s]
    return None

  def gap(self, serialization_name: str, mode: str) -> Gap | None:
    # A parent's gaps hold only in the modes the two share: a runtime of its
    # own (LiteRT) has kernels of its own.
    for s in lineage(serialization_name):
      if (s, mode) in self.gaps:
        return self.gaps[(s, mode)]
    return None

  def graph_ops_in(self, serialization_name: str) -> tuple:
    if not isinstance(self.graph_ops, Mapping):
      return self.graph_ops
    for s in lineage(serialization_name):
      if s in self.graph_ops:
        return self.graph_ops[s]
    return ()

  def make_args(self) -> list:
    rng = np.random.default_rng(zlib.crc32(self.name.encode()))
    return [_make_arg(a, rng, i) for i, a in enumerate(self.args)]

  def dtypes(self) -> list[str]:
    """The argument dtypes, without drawing random data where they are declared."""
    return [
      dtype_name(a.dtype)
      if isinstance(a, Arg)
      else dtype_name(np.asarray(a(np.random.default_rng(i)) if callable(a) else a).dtype)
      for i, a in enumerate(self.args)
    ]


_REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
_CASE_TABLES = _REPOSITORY / "tests" / "cases"


def defined_at() -> tuple[str, ...]:
  """The lines of the case tables on the caller's stack, outermost first.

  For a case built in a loop (`CASES.add(f"rem_{name}", ...)`) or by a helper
  of its table, these are the line that runs the loop or calls the helper and
  the lines within, down to the one that makes the case.
  """
  lines = []
  frame = inspect.currentframe()
  while frame is not None:
    table = _case_table_of(frame.f_code.co_filename)
    if table is not None:
      lines.append(f"{table}:{frame.f_lineno}")
    frame = frame.f_back
  return tuple(reversed(lines))


@functools.cache
def _case_table_of(filename: str) -> str | None:
  """The path of the case table `filename` is, from the repository root; None for another file."""
  path = pathlib.Path(filename).resolve()
  return path.relative_to(_REPOSITORY).as_posix() if path.parent == _CASE_TABLES else None


def case(
  name: str,
  fun: Callable,
  *args,
  tol=None,
  exact=False,
  compare=None,
  refuse=None,
  gaps=None,
  graph_ops=(),
  polymorphic_shapes=None,
  x64=None,
  slow=False,
) -> Case:
  """A checked Case; x64 defaults to whether an argument has a 64-bit dtype."""
  where = f"case {name!r}"
  assert callable(fun), f"{where}: fun is not callable"
  for a in args:
    assert isinstance(a, (Arg, np.ndarray, np.generic)) or callable(a), (
      f"{where}: argument {a!r} is neither an Arg, a NumPy value nor a callable(rng); "
      "a Python scalar would be float64 or int64 under x64"
    )
  refuse = dict(refuse or {})
  gaps = dict(gaps or {})
  unknown = set(refuse) - set(SERIALIZATION_NAMES)
  assert not unknown, f"{where}: refusals for unknown serializations {unknown}"
  unknown = set(gaps) - set(COLUMNS)
  assert not unknown, f"{where}: gaps for unknown columns {unknown}; columns are {COLUMNS}"
  for g in gaps.values():
    assert g.tol is not None or g.error, f"{where}: a gap needs a tolerance or an error"
  if tol is not None and tuple(tol) == (0, 0):
    tol, exact = None, True
  assert not (exact and tol), f"{where}: exact=True and a tolerance {tol}"
  if polymorphic_shapes is not None:
    polymorphic_shapes = tuple(polymorphic_shapes)
    assert len(polymorphic_shapes) == len(args), f"{where}: one polymorphic shape per argument"
  if x64 is None:
    x64 = any(is_64(d) for d in Case(name, fun, tuple(args)).dtypes())
  return Case(
    name,
    fun,
    tuple(args),
    tuple(tol) if tol else None,
    exact,
    compare,
    refuse,
    gaps,
    {k: tuple(v) for k, v in graph_ops.items()}
    if isinstance(graph_ops, Mapping)
    else tuple(graph_ops),
    polymorphic_shapes,
    bool(x64),
    bool(slow),
    defined_at=defined_at(),
  )


class Cases(list):
  """A family's cases, in declaration order."""

  def add(self, name: str, fun: Callable, *args, **kwargs) -> Case:
    c = case(name, fun, *args, **kwargs)
    self.append(c)
    return c


def exact_case(name: str, fun: Callable, *args, **kw) -> Case:
  """A case whose result JAX computes exactly: compared bit for bit."""
  return case(name, fun, *args, exact=True, **kw)


def in_column(
  cases: list,
  serialization_name: str,
  *,
  gaps: Mapping[tuple[str, str], Iterable[str]] = types.MappingProxyType({}),
  varies_by_cpu: Mapping[str, str] = types.MappingProxyType({}),
) -> list:
  """`cases` with their gaps in a deployment column.

  gaps: {(why, error): case names}: the case runs there but fails with an
    error matching `error` (a runtime kernel that differs from XLA's).
  varies_by_cpu: {case name: what it does on other CPUs} for gapped cases
    whose outcome depends on the CPU (see Gap.elsewhere).

  What the column refuses for want of a kernel is derived when a case runs
  (tests/primitives/runner.py), not listed here.
  """
  ser = serialization(serialization_name)
  column_gaps: dict[str, Gap] = {}
  for (why, error), names in gaps.items():
    for name in names:
      column_gaps[name] = Gap(why, None, error, elsewhere=varies_by_cpu.get(name))
  assert set(varies_by_cpu) <= set(column_gaps), (
    f"{serialization_name}: varies_by_cpu names cases without a gap: "
    f"{sorted(set(varies_by_cpu) - set(column_gaps))}"
  )
  unknown = set(column_gaps) - {c.name for c in cases}
  assert not unknown, f"{serialization_name} expectations name no case: {sorted(unknown)}"
  out = []
  for c in cases:
    case_gaps = dict(c.gaps)
    if c.name in column_gaps:
      for mode in modes_of(ser.name):
        case_gaps[(ser.name, mode)] = column_gaps[c.name]
    out.append(dataclasses.replace(c, gaps=case_gaps))
  return out


def fast_representatives(cases: list, names: Iterable[str]) -> list:
  """`cases` with the named exhaustive-tier cases moved to the fast tier.

  The exhaustive tier crosses every dtype with every primitive; one case per
  family for each of float16, bfloat16, float64, int64, uint64 and complex128
  runs in the fast tier too, so that CI exercises every dtype.
  """
  names = set(names)
  missing = names - {c.name for c in cases}
  assert not missing, f"fast representatives name no case: {sorted(missing)}"
  return [dataclasses.replace(c, slow=False) if c.name in names else c for c in cases]
