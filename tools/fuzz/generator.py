"""Random well-typed programs, as a function of (seed, index) only.

A program grows one equation at a time: an operation (ops.py) is drawn, an
operand among the values so far, and the operation draws any further operand
of the type it needs. Every equation is checked with `jax.eval_shape` (with
symbolic shapes when the program is polymorphic) before it is kept, so a
program is well typed by construction; an operation that does not suit its
operand is drawn again.
"""

import dataclasses

import jax
import numpy as np
from jax import export

from jax2tf.shapes import dim_eval
from tools.fuzz import ops
from tools.fuzz import program as program_lib
from tools.fuzz import values as V

# The two concrete sizes of "b" a polymorphic program is checked at.
POLY_SIZES = (3, 1)


@dataclasses.dataclass(frozen=True)
class Settings:
  max_eqs: int = 6
  max_rank: int = 3
  max_dim: int = 4
  edges: float = 0.25  # the fraction of edge values in the inputs
  p_poly: float = 0.15
  p_grad: float = 0.15
  p_empty: float = 0.05  # a dimension of size 0


class Builder:
  """The values of a program being generated, and the random draws."""

  def __init__(self, rng: np.random.Generator, settings: Settings, poly: bool):
    self.rng = rng
    self.settings = settings
    self.poly = poly
    self.inputs: list[str] = []
    self.specs: list[str | None] = []
    self.arg_shapes: list[tuple] = []
    self.arg_dtypes: list[np.dtype] = []
    self.eqs: list[program_lib.Eq] = []
    self.env: dict[str, tuple] = {}  # name -> (shape, dtype); symbolic "b" when poly
    self._b = export.symbolic_shape("b")[0] if poly else None

  # Draws ------------------------------------------------------------------

  def choice(self, seq):
    return seq[int(self.rng.integers(0, len(seq)))]

  def coin(self) -> bool:
    return bool(self.rng.random() < 0.5)

  def integers(self, lo: int, hi: int) -> int:
    """An integer in [lo, hi)."""
    return int(self.rng.integers(lo, hi)) if hi > lo else lo

  # Values -----------------------------------------------------------------

  def aval(self, name: str):
    return self.env[name]

  def operand(self, shape, dtype) -> str:
    """An existing value of this type (often), else a new input."""
    dtype = np.dtype(dtype)
    same = [n for n, (s, d) in self.env.items() if tuple(s) == tuple(shape) and d == dtype]
    if same and self.rng.random() < 0.6:
      return self.choice(same)
    return self.new_input(tuple(shape), dtype)

  def new_input(self, shape, dtype) -> str:
    name = f"x{len(self.inputs)}"
    self.inputs.append(name)
    # An input with "b" in its shape (leading or not) gets a polymorphic spec.
    symbolic = self.poly and any(not isinstance(d, int) for d in shape)
    self.specs.append(", ".join(str(d) for d in shape) if symbolic else None)
    self.arg_shapes.append(tuple(shape))
    self.arg_dtypes.append(np.dtype(dtype))
    self.env[name] = (tuple(shape), np.dtype(dtype))
    return name

  def random_shape(self):
    s = self.settings
    rank = self.integers(0, s.max_rank + 1)
    dims = [
      0 if self.rng.random() < s.p_empty else self.integers(1, s.max_dim + 1) for _ in range(rank)
    ]
    if self.poly and rank:
      dims[0] = self._b
    return tuple(dims)

  def try_add(self, op_fn) -> bool:
    names = list(self.env)
    # Mostly the newest value: chains and DAGs rather than scattered leaves.
    x = names[-1] if self.rng.random() < 0.5 else self.choice(names)
    before = (len(self.inputs), dict(self.env))
    op = op_fn(self, x)
    if op is None or not self._typecheck(op):
      # Forget the inputs the failed draw added.
      n, env = before
      del self.inputs[n:], self.specs[n:], self.arg_shapes[n:], self.arg_dtypes[n:]
      self.env = env
      return False
    return True

  def _typecheck(self, op: ops.Op) -> bool:
    out = f"v{len(self.eqs)}"
    uses = tuple(dict.fromkeys(op.uses))
    fun = program_lib.compile_source(f"def _eq({', '.join(uses)}):\n  return {op.expr}", "_eq")
    structs = [jax.ShapeDtypeStruct(self.env[u][0], self.env[u][1]) for u in uses]
    try:
      r = jax.eval_shape(fun, *structs)
    except Exception:  # pylint: disable=broad-except
      return False
    if not hasattr(r, "shape"):
      return False
    self.env[out] = (tuple(r.shape), np.dtype(r.dtype))
    self.eqs.append(program_lib.Eq(out, op.expr, uses, op.name, op.exact))
    return True

  def concrete(self, b: int, rng: np.random.Generator) -> tuple:
    args = []
    for shape, dtype in zip(self.arg_shapes, self.arg_dtypes):
      concrete = tuple(
        d if isinstance(d, int) else int(dim_eval.evaluate(d, {"b": b}, dim_eval.IntArithmetic))
        for d in shape
      )
      args.append(V.random_array(rng, concrete, dtype, self.settings.edges))
    return tuple(args)


def generate(seed: int, index: int, settings: Settings | None = None) -> program_lib.Program:
  """Program number `index` of the stream of `seed`."""
  settings = settings or Settings()
  rng = np.random.default_rng([seed, index])
  poly = bool(rng.random() < settings.p_poly)
  want_grad = bool(rng.random() < settings.p_grad)
  g = Builder(rng, settings, poly)
  g.new_input(g.random_shape(), np.dtype(V.FLOATS[0]) if want_grad else g.choice(V.DTYPES))
  table = [(f, w) for f, w in ops.OPS if not poly or f in ops.POLY_SAFE]
  weights = np.array([w for _, w in table], float)
  n_eqs = g.integers(1, settings.max_eqs + 1)
  tries = 0
  while len(g.eqs) < n_eqs and tries < 20 * n_eqs:
    tries += 1
    g.try_add(table[int(rng.choice(len(table), p=weights / weights.sum()))][0])
  # The values nothing reads (the newest three at most) are the outputs.
  read = {u for e in g.eqs for u in e.uses}
  outputs = [e.out for e in g.eqs if e.out not in read][-3:] or [g.inputs[0]]
  sizes = POLY_SIZES if poly else (None,)
  data_rng = np.random.default_rng([seed, index, 1])
  args = tuple(g.concrete(b or 0, data_rng) for b in sizes)
  prog = program_lib.Program(
    inputs=tuple(g.inputs),
    args=args,
    eqs=tuple(g.eqs),
    outputs=tuple(outputs),
    polymorphic_shapes=tuple(g.specs) if poly else None,
    name=f"fuzz_s{seed}_p{index}",
  )
  prog = program_lib.used(prog)
  if poly and not prog.is_valid():
    # An input sized by an expression of "b" (b + 1, say) that JAX cannot
    # solve "b" from: the same program at one size.
    prog = dataclasses.replace(prog, args=prog.args[:1], polymorphic_shapes=None)
  if want_grad:
    graded = dataclasses.replace(prog, grad=True)
    if graded.is_valid():
      return graded
  return prog
