"""Broadcasts that TF's elementwise ops can do themselves.

A jaxpr broadcasts every operand of an elementwise op to the result's shape
first (`broadcast_in_dim`); TF's elementwise ops broadcast on their own. Where
each user of a broadcast is such an op, and each such op has another operand
of the full result shape, the broadcast lowers to its reshape alone (size-1
axes where it would repeat values), and the op repeats them: same values,
one op fewer, no copy. For TFLite it matters more: a broadcast to a shape with
a symbolic dimension takes its target as a computed tensor, which makes its
result (and everything TFLite runs after it) a dynamic tensor, sized again at
each call and kept off XNNPack.

`plan(jaxpr, fused)` picks the broadcasts; the interpreter tells their rule
through `RuleContext.broadcast_by_users`.
"""

import collections

from jax2tf.graph.fusions import is_var

# Elementwise primitives whose rules give TF's broadcasting result for
# operands of equal rank, some of them size-1 where the result is not.
_BROADCASTING_USERS = frozenset(
  {"add", "sub", "mul", "max", "min", "select_n", "and", "or", "eq", "ne", "lt", "le", "gt", "ge"}
)

# TFLite broadcasts comparisons up to rank 4 (other ops up to 5 or 6).
_MAX_RANK = 4


def plan(jaxpr, fused: frozenset | set = frozenset()) -> set[int]:
  """Indices of the `broadcast_in_dim` equations of `jaxpr` that may leave
  their broadcasting to their users. `fused`: indices of equations lowered in
  fused groups (their inputs must come whole)."""
  users: dict = collections.defaultdict(list)
  for i, eqn in enumerate(jaxpr.eqns):
    for v in eqn.invars:
      if is_var(v):
        users[v].append(i)
  outputs = {v for v in jaxpr.outvars if is_var(v)}
  candidates: dict = {}  # variable -> index of the broadcast producing it
  for i, eqn in enumerate(jaxpr.eqns):
    if eqn.primitive.name != "broadcast_in_dim" or i in fused or len(eqn.invars) != 1:
      continue
    (out,) = eqn.outvars
    if (
      out in outputs
      or not users[out]
      or len(out.aval.shape) > _MAX_RANK
      or any(
        jaxpr.eqns[j].primitive.name not in _BROADCASTING_USERS or j in fused for j in users[out]
      )
    ):
      continue
    candidates[out] = i
  # Each user needs one operand that has the full shape, which fixes the
  # shape of its result: where none has, one of its broadcasts stays whole.
  changed = True
  while changed:
    changed = False
    for j in sorted({j for v in candidates for j in users[v]}):
      eqn = jaxpr.eqns[j]
      shape = eqn.outvars[0].aval.shape
      full = any(is_var(v) and v not in candidates and v.aval.shape == shape for v in eqn.invars)
      if not full:
        first = next(v for v in eqn.invars if is_var(v) and v in candidates)
        del candidates[first]
        changed = True
  return set(candidates.values())
