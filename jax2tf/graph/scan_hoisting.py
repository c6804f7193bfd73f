"""What a scan's body computes without its carry, computed before the loop.

A body equation that reads no carried value computes at each step what
could be computed for every step at once: from the loop's constants alone
(the same value at each step: a reshaped bias, a transposed kernel), or
from the constants and the step's slices of the scanned inputs (an LSTM's
input projections, `x_t @ W`). TF without XLA runs a loop op by op, so each
of these costs a dispatch per step, and the projections are small matmuls
where one large one would do. Here the first kind runs once before the
loop, and the second kind for all steps at once (`jax.vmap` of those
equations over the scanned axis, so one matmul of every step's rows); the
loop then reads their values as constants and as scanned inputs. Each
element is computed by the same operations as in the loop, so the results
are the loop's (up to the blocking a matmul kernel picks for its size).

Hoisting for all steps keeps a value per step alive through the loop, so
only the values the loop reads are kept, and the scanned part is hoisted
only where it holds a matmul or convolution (the work worth batching) and
its values have static sizes of at most `MOST_HOISTED_BYTES` in all. It
takes only primitives that vmap batches as themselves (elementwise ops,
reshapes, reductions, matmuls, ...), so the targets meet no op the loop
did not hold.
"""

import dataclasses
import math

import jax
import numpy as np
from jax.extend import core as jax_core

from jax2tf.graph import sibling_matmuls
from jax2tf.graph.fusions import is_var

# At most this many bytes of per-step values computed before the loop.
MOST_HOISTED_BYTES = 64 << 20

# Equations whose batched form does one large operation instead of one per
# step: what makes computing the scanned part before the loop worth it.
_BATCHED_WORK = frozenset({"dot_general", "conv_general_dilated"})

# Primitives whose every run gives new values (XLA's stateful generator):
# before the loop, every step would read the same ones.
_DRAWN_AT_EACH_RUN = frozenset({"rng_uniform"})

# What the scanned part may hold: primitives that vmap batches as the same
# primitive over a leading axis (a gather, a dynamic slice or a nested loop
# would come out as other primitives, which a target may lack).
_BATCHED_AS_THEMSELVES = _BATCHED_WORK | frozenset(
  {
    "abs", "add", "and", "broadcast_in_dim", "ceil", "clamp", "concatenate",
    "convert_element_type", "copy", "cos", "div", "eq", "exp", "exp2", "expand_dims",
    "floor", "ge", "gt", "integer_pow", "le", "log", "log1p", "logistic", "lt", "max",
    "min", "mul", "ne", "neg", "not", "or", "pad", "pow", "reduce_max", "reduce_min",
    "reduce_prod", "reduce_sum", "reshape", "rsqrt", "select_n", "sign", "sin", "slice",
    "split", "sqrt", "square", "squeeze", "stop_gradient", "sub", "tan", "tanh", "transpose",
    "xor",
  }
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Hoisted:
  """A scan split in two: `before` (a closed jaxpr of the loop's constants,
  and of its scanned inputs where `takes_xs`) gives the loop-invariant
  values, then the per-step values stacked along a leading axis; `body` takes the constants, the
  invariant values, the carry, the scanned inputs at `xs_kept` and the
  per-step values, and gives what the original body gives."""

  before: jax_core.ClosedJaxpr
  n_invariant: int
  takes_xs: bool
  xs_kept: tuple  # the positions of the scanned inputs the loop still reads
  body: jax_core.ClosedJaxpr


def _static_bytes(aval) -> int | None:
  if not all(isinstance(d, int) for d in aval.shape):
    return None
  return math.prod(aval.shape) * np.dtype(aval.dtype).itemsize


def split(
  closed, n_consts: int, n_carry: int, length, *, join_groups: bool = False
) -> Hoisted | None:
  """The scan body `closed` (constants, carry, then scanned inputs) split
  as above, or None where nothing is worth computing before the loop; its
  sibling matmuls fused first (sibling_matmuls.fuse, `join_groups` passed
  on)."""
  if closed.jaxpr.constvars or closed.consts:
    return None
  constants = loop_constants(closed.jaxpr, n_consts)
  closed = sibling_matmuls.fuse(closed, constants, join_groups=join_groups)
  jaxpr = closed.jaxpr
  kinds = _kinds(jaxpr, n_consts, n_carry)
  if any(k == "per_step" and e.primitive.name in _BATCHED_WORK for k, e in zip(kinds, jaxpr.eqns)):
    hoisted = _split(jaxpr, n_consts, n_carry, length, kinds)
    if hoisted is not None:
      return hoisted
  invariant_only = [k if k == "invariant" else None for k in kinds]
  if not any(invariant_only):
    return None
  return _split(jaxpr, n_consts, n_carry, length, invariant_only)


def loop_constants(jaxpr, n_consts: int) -> set:
  """The variables of the scan body `jaxpr` that hold the same value at each
  step: its constants, and what equations compute from them alone, but for
  effects and stateful draws."""
  found = set(jaxpr.invars[:n_consts])
  for eqn in jaxpr.eqns:
    if _same_at_each_step(eqn) and all(not is_var(v) or v in found for v in eqn.invars):
      found.update(eqn.outvars)
  return found


def _same_at_each_step(eqn) -> bool:
  return not eqn.effects and eqn.primitive.name not in _DRAWN_AT_EACH_RUN


def _kinds(jaxpr, n_consts: int, n_carry: int) -> list[str | None]:
  """Per equation: "invariant" (it reads constants only), "per_step" (the
  scanned inputs too, but no carried value), or None (it stays in the loop)."""
  invariant = loop_constants(jaxpr, n_consts)
  per_step = set(jaxpr.invars[n_consts + n_carry :])
  kinds: list[str | None] = []
  for eqn in jaxpr.eqns:
    ins = [v for v in eqn.invars if is_var(v)]
    if not _same_at_each_step(eqn) or any(v not in invariant and v not in per_step for v in ins):
      kinds.append(None)
    elif all(v in invariant for v in ins):
      kinds.append("invariant")
    elif eqn.primitive.name in _BATCHED_AS_THEMSELVES:
      kinds.append("per_step")
      per_step.update(eqn.outvars)
    else:
      kinds.append(None)
  return kinds


def _split(jaxpr, n_consts: int, n_carry: int, length, kinds) -> Hoisted | None:
  """The split that hoists the equations `kinds` marks, or None where the
  per-step values it would keep are not of a static size within
  `MOST_HOISTED_BYTES`, or vmap cannot batch them."""
  consts = jaxpr.invars[:n_consts]
  xs = jaxpr.invars[n_consts + n_carry :]
  invariant = {v for k, e in zip(kinds, jaxpr.eqns) if k == "invariant" for v in e.outvars}
  per_step = {v for k, e in zip(kinds, jaxpr.eqns) if k == "per_step" for v in e.outvars}

  # The hoisted values the loop still reads: its equations' operands and
  # its outputs.
  kept = [e for k, e in zip(kinds, jaxpr.eqns) if k is None]
  read = {v for e in kept for v in e.invars if is_var(v)}
  read.update(v for v in jaxpr.outvars if is_var(v))
  hoisted_eqns = [e for k, e in zip(kinds, jaxpr.eqns) if k is not None]
  defined = [v for e in hoisted_eqns for v in e.outvars if is_var(v)]
  invariant_out = [v for v in defined if v in read and v in invariant]
  per_step_out = [v for v in defined if v in read and v in per_step]
  if per_step_out:
    sizes = [_static_bytes(v.aval) for v in per_step_out]
    if not isinstance(length, int) or any(s is None for s in sizes):
      return None
    if length * sum(s for s in sizes if s is not None) > MOST_HOISTED_BYTES:
      return None

  invariant_eqns = [e for k, e in zip(kinds, jaxpr.eqns) if k == "invariant"]
  per_step_eqns = [e for k, e in zip(kinds, jaxpr.eqns) if k == "per_step"]
  # Invariant values the per-step equations read, besides those the loop reads.
  invariant_in = [
    v for v in defined if v in invariant and any(v in e.invars for e in per_step_eqns)
  ]
  invariant_all = list(dict.fromkeys(invariant_out + invariant_in))

  def sub_jaxpr(invars, outvars, eqns, what):
    debug = jax_core.DebugInfo(
      "jax2tf.convert",
      f"scan body, {what}",
      tuple(f"in{i}" for i in range(len(invars))),
      tuple(f"out{i}" for i in range(len(outvars))),
    )
    effects = frozenset().union(*(e.effects for e in eqns))
    return jax_core.Jaxpr([], invars, outvars, eqns, effects, debug)

  once = sub_jaxpr(list(consts), invariant_all, invariant_eqns, "before the loop")
  steps = sub_jaxpr(
    [*consts, *invariant_all, *xs], per_step_out, per_step_eqns, "for all steps before the loop"
  )

  def before(*args):
    cs, stacked_xs = args[:n_consts], args[n_consts:]
    values = jax.core.eval_jaxpr(once, [], *cs)
    if not per_step_out:
      return values[: len(invariant_out)]

    def step(*x_i):
      return jax.core.eval_jaxpr(steps, [], *cs, *values, *x_i)

    return [*values[: len(invariant_out)], *jax.vmap(step)(*stacked_xs)]

  specs = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in consts]
  if per_step_out:  # the scanned inputs whole
    specs += [jax.ShapeDtypeStruct((length, *v.aval.shape), v.aval.dtype) for v in xs]
  try:
    before_closed = jax.make_jaxpr(before)(*specs)
  except Exception:  # noqa: BLE001 -- an equation vmap cannot batch: keep the loop as it is
    return None
  # A scanned input only the hoisted equations read is sliced no more.
  xs_kept = [i for i, v in enumerate(xs) if v in read]
  body = sub_jaxpr(
    [
      *consts,
      *invariant_out,
      *jaxpr.invars[n_consts : n_consts + n_carry],
      *(xs[i] for i in xs_kept),
      *per_step_out,
    ],
    list(jaxpr.outvars),
    kept,
    "in the loop",
  )
  return Hoisted(
    before=before_closed,
    n_invariant=len(invariant_out),
    takes_xs=bool(per_step_out),
    xs_kept=tuple(xs_kept),
    body=jax_core.ClosedJaxpr(body, []),
  )
