"""Matmuls of one operand by several loop-invariant weights, as one matmul.

An LSTM cell written gate by gate (Flax's `LSTMCell`) multiplies the carried
state by four kernels at each step, adds four biases and four input
projections, and only then parts ways (three sigmoids, one tanh). TF without
XLA runs a loop body op by op, so each of those twelve small ops costs a
dispatch per step, where Keras's cell does one matmul by the kernels side by
side, one add, and a split. Here a scan body gets the same shape:

- matmuls (`dot_general`) of the same operand, with the same dimension
  numbers, by loop-constant weights become one matmul by the weights
  concatenated along their last free axis (a concatenation the scan's
  hoisting then computes once, before the loop);
- the elementwise ops that each part then meets alike (the same primitive,
  the part at the same operand position) with a loop constant sized like
  the part along that axis (a bias), or with nothing (a shared tanh), become
  one op on the whole, the constants concatenated the same way;
- one split gives the parts back where the chains part ways.

Where the caller asks (`join_groups`), two such groups whose parts then meet
pairwise (each gate's input projection plus its carry projection) become one
op on both wholes, as Keras's cell adds its two matmuls once. The input
projections are then scanned as one array as wide as the gates together,
which XLA's CPU loops read several times slower than one array per gate
(measured under jax.jit and TF's jit_compile): the caller asks only where XLA
does not compile the loop.

Each element is computed by the same operations on the same values, so the
results are the loop's (up to the blocking a matmul kernel picks for its
size, as for any matmul).
"""

import dataclasses
import heapq

import jax
from jax import lax
from jax.extend import core as jax_core

from jax2tf import equations
from jax2tf.graph.fusions import is_var

# Elementwise ops a group's parts may meet alike and share.
_BINARY = frozenset({"add", "sub", "mul", "div", "max", "min"})
_UNARY = frozenset({"logistic", "tanh", "exp", "log", "neg", "abs", "sqrt", "rsqrt"})


@dataclasses.dataclass
class _Step:
  """One elementwise op applied to every part: `others[k]` is part k's other
  operand (None for a unary op), the part at operand `position`."""

  eqns: list  # the op's equation for each part
  position: int
  others: list
  joined: "_Group | None" = None  # the group whose parts `others` are


@dataclasses.dataclass
class _Group:
  lhs: object
  dots: list  # the matmul equations, in program order
  axis: int  # the rhs axis the weights are concatenated along
  out_axis: int  # the output axis the parts lie along
  sizes: list
  steps: list = dataclasses.field(default_factory=list)

  @property
  def members(self) -> list:
    return self.dots + [e for s in self.steps for e in s.eqns]

  @property
  def outputs(self) -> list:
    last = self.steps[-1].eqns if self.steps else self.dots
    return [e.outvars[0] for e in last]


def fuse(
  closed: jax_core.ClosedJaxpr, invariant: set, *, join_groups: bool = False
) -> jax_core.ClosedJaxpr:
  """The scan body `closed` with its sibling matmuls fused as above;
  `closed` itself where there are none. `invariant`: its variables that hold
  the same value at each step (scan_hoisting.loop_constants); `join_groups`:
  whether groups whose parts meet pairwise become one (above)."""
  jaxpr = closed.jaxpr
  if jaxpr.constvars or closed.consts or jaxpr.effects:
    return closed
  groups = _plan(jaxpr, invariant, join_groups)
  if not groups:
    return closed
  order = _order(jaxpr, groups)
  if order is None:  # a group reads what another group gives it
    return closed
  specs = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in jaxpr.invars]
  try:
    fused = jax.make_jaxpr(lambda *a: _evaluate(jaxpr, order, a))(*specs)
  except Exception:  # noqa: BLE001 -- a form JAX does not accept: keep the body as it is
    return closed
  if fused.consts or len(fused.jaxpr.outvars) != len(jaxpr.outvars):
    return closed
  return fused


def _uses(jaxpr) -> dict:
  users: dict = {}
  for eqn in jaxpr.eqns:
    for v in eqn.invars:
      if is_var(v):
        users.setdefault(v, []).append(eqn)
  for v in jaxpr.outvars:
    if is_var(v):
      users.setdefault(v, []).append(None)
  return users


def _plan(jaxpr, invariant: set, join_groups: bool) -> list:
  users = _uses(jaxpr)
  taken: set = set()  # equations already in a group (by id)
  groups = []
  by_key: dict = {}
  for eqn in jaxpr.eqns:
    key = _dot_key(eqn)
    if key is not None:
      by_key.setdefault(key, []).append(eqn)
  for (lhs, *_), dots in by_key.items():
    if len(dots) < 2:
      continue
    if lhs in invariant:  # the scan's hoisting computes these before the loop
      continue
    # Weights the loop computes anew at each step would be concatenated anew.
    dots = [e for e in dots if e.invars[1] in invariant]
    if len(dots) < 2:
      continue
    rhs = dots[0].invars[1].aval
    contracting = dots[0].params["dimension_numbers"][0][1]
    free = [d for d in range(rhs.ndim) if d not in contracting]
    axis = free[-1]
    out_axis = lhs.aval.ndim - len(contracting) + len(free) - 1
    sizes = [e.invars[1].aval.shape[axis] for e in dots]
    if not all(isinstance(s, int) for s in sizes):
      continue
    group = _Group(lhs, dots, axis, out_axis, sizes)
    taken.update(id(e) for e in dots)
    _extend(group, users, invariant, taken, [])
    groups.append(group)
  if join_groups:
    # Each group has taken what it meets alone; a pairwise op of two groups
    # is then taken by the first that meets it, which goes on from there.
    for group in groups:
      _extend(group, users, invariant, taken, [g for g in groups if g is not group])
  return groups


def _extend(group: _Group, users: dict, invariant: set, taken: set, partners: list) -> None:
  while (step := _next_step(group, users, invariant, taken, partners)) is not None:
    group.steps.append(step)
    taken.update(id(e) for e in step.eqns)


def _dot_key(eqn):
  """What sibling matmuls share, or None for an equation that is not one."""
  if eqn.primitive.name != "dot_general":
    return None
  lhs, rhs = eqn.invars
  if not (is_var(lhs) and is_var(rhs)):
    return None
  (_, rhs_contracting), (lhs_batch, _) = eqn.params["dimension_numbers"]
  free = [d for d in range(rhs.aval.ndim) if d not in rhs_contracting]
  if lhs_batch or not free:
    return None
  shape = list(rhs.aval.shape)
  shape[free[-1]] = None  # the axis the parts differ along
  params = tuple(sorted((k, repr(v)) for k, v in eqn.params.items()))
  return (lhs, tuple(shape), rhs.aval.dtype, params)


def _next_step(
  group: _Group, users: dict, invariant: set, taken: set, partners: list
) -> _Step | None:
  """The elementwise op every part of `group` meets next, if they all meet
  one alike: with loop constants, with nothing, or with the parts of one of
  `partners`, part by part."""
  outs = group.outputs
  eqns = []
  for v in outs:
    u = users.get(v, [])
    if len(u) != 1 or u[0] is None or id(u[0]) in taken:
      return None
    eqns.append(u[0])
  first = eqns[0]
  name = first.primitive.name
  if len({id(e) for e in eqns}) != len(eqns) or name not in _BINARY | _UNARY:
    return None
  if any(e.primitive is not first.primitive or e.params != first.params for e in eqns):
    return None
  if any(e.outvars[0].aval.shape != v.aval.shape for e, v in zip(eqns, outs)):
    return None
  if name in _UNARY:
    return _Step(eqns, 0, [None] * len(eqns))
  positions = {0 if e.invars[0] is v else 1 for e, v in zip(eqns, outs)}
  if len(positions) != 1 or any(e.invars[0] is e.invars[1] for e in eqns):
    return None
  position = positions.pop()
  others = [e.invars[1 - position] for e in eqns]
  for partner in partners:
    if partner.outputs == others and _same_layout(partner, group):
      return _Step(eqns, position, others, joined=partner)
  # Otherwise only loop constants: per-step operands side by side would be scanned as
  # one wider array, which XLA's CPU loops read several times slower (an
  # LSTM's input projections, measured under jax.jit and TF's jit_compile).
  if not all(is_var(o) and o in invariant for o in others):
    return None
  axis, ndim = group.out_axis, outs[0].aval.ndim
  shapes = [o.aval.shape for o in others]
  if any(len(s) != ndim for s in shapes):
    return None
  if any(s[axis] != n for s, n in zip(shapes, group.sizes)):
    return None
  rest = {tuple(d for i, d in enumerate(s) if i != axis) for s in shapes}
  if len(rest) != 1 or len({o.aval.dtype for o in others}) != 1:
    return None
  return _Step(eqns, position, others)


def _same_layout(a: _Group, b: _Group) -> bool:
  """Whether the parts of `a` and `b` lie alike: the same sizes, along the
  same axis, of the same shapes and dtypes."""
  if a.out_axis != b.out_axis or a.sizes != b.sizes:
    return False
  return all(
    u.aval.shape == v.aval.shape and u.aval.dtype == v.aval.dtype
    for u, v in zip(a.outputs, b.outputs)
  )


def _order(jaxpr, groups: list) -> list | None:
  """The equations and groups in an order where each reads only what comes
  before it (each group computed as one), or None where none exists."""
  group_of = {id(e): g for g in groups for e in g.members}
  nodes: list = []  # equations outside groups, and groups, in program order
  seen: set = set()
  for eqn in jaxpr.eqns:
    g = group_of.get(id(eqn))
    if g is None:
      nodes.append(eqn)
    elif id(g) not in seen:
      seen.add(id(g))
      nodes.append(g)

  def reads(node) -> list:
    if isinstance(node, _Group):
      vs = [node.lhs, *(e.invars[1] for e in node.dots)]
      vs += [o for s in node.steps for o in s.others if o is not None]
      return vs
    return [v for v in node.invars if is_var(v)]

  def gives(node) -> list:
    return node.outputs if isinstance(node, _Group) else list(node.outvars)

  producer = {id(v): i for i, n in enumerate(nodes) for v in gives(n)}
  readers: list = [[] for _ in nodes]
  waiting = [0] * len(nodes)
  for i, n in enumerate(nodes):
    for j in {producer[id(v)] for v in reads(n) if id(v) in producer}:
      readers[j].append(i)
      waiting[i] += 1
  ready = [i for i, w in enumerate(waiting) if w == 0]
  heapq.heapify(ready)
  done = []
  while ready:
    i = heapq.heappop(ready)  # the earliest: program order where it can be kept
    done.append(nodes[i])
    for j in readers[i]:
      waiting[j] -= 1
      if waiting[j] == 0:
        heapq.heappush(ready, j)
  return done if len(done) == len(nodes) else None


def _evaluate(jaxpr, order: list, args) -> list:
  env = dict(zip(jaxpr.invars, args))
  # A group's parts are split off its whole where something reads them: id
  # of the part's variable -> (group, whole).
  unsplit: dict = {}
  wholes: dict = {}  # id of a group -> its whole

  def read(v):
    if not is_var(v):
      return v.val
    if v not in env:
      g, whole = unsplit[id(v)]
      env.update(zip(g.outputs, lax.split(whole, g.sizes, g.out_axis)))
    return env[v]

  for node in order:
    if not isinstance(node, _Group):
      env.update(zip(node.outvars, equations.bind(node, [read(v) for v in node.invars])))
      continue
    g = node
    weights = lax.concatenate([read(e.invars[1]) for e in g.dots], g.axis)
    whole = g.dots[0].primitive.bind(read(g.lhs), weights, **g.dots[0].params)
    for step in g.steps:
      prim, params = step.eqns[0].primitive, step.eqns[0].params
      if step.others[0] is None:
        whole = prim.bind(whole, **params)
        continue
      if step.joined is not None:
        other = wholes[id(step.joined)]
      else:
        other = lax.concatenate([read(v) for v in step.others], g.out_axis)
      operands = (whole, other) if step.position == 0 else (other, whole)
      whole = prim.bind(*operands, **params)
    wholes[id(g)] = whole
    for v in g.outputs:
      unsplit[id(v)] = (g, whole)
  return [read(v) for v in jaxpr.outvars]
