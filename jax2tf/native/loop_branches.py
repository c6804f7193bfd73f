"""Conditionals inside loops as a select of their branches, for litert-converter.

litert-converter writes a `stablehlo.case` or `stablehlo.if` inside a
`stablehlo.while` body as an IF operator of the body's subgraph whose
inputs it numbers wrongly where a branch reads a value the loop carries: a
`lax.cond` in a `fori_loop` or `scan` that reads the carry gave other
numbers than `jax.jit` with no error (the else branch received another loop
value), and one reading two carried values ended the process. Top-level
conditionals convert right, and TF's converter, which numbers them itself,
has none of this.

A branch of a StableHLO conditional reads the enclosing values directly
(it has no arguments) and has no effects a LiteRT model can hold, so both
branches are computed in the loop body and a select keeps the taken one's
results, as StableHLO picks the branch: index k for a `case`, the last
branch for an index out of range; the first branch for a true `if`.
Computing both costs the work of the branch not taken.
"""

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.native import module_patterns
from jax2tf.native import stablehlo_values as values


def _functions_run_in_loops(module) -> set[str]:
  """The functions called, directly or through others, from a loop's body
  (JAX calls a loop body's pieces as functions; the converter inlines them)."""
  called: dict[str, list[str]] = {}
  in_loops: set[str] = set()

  def visit(o):
    if o.name != "func.call":
      return
    callee = ir.FlatSymbolRefAttr(o.attributes["callee"]).value
    caller = values.enclosing(o, "func.func")
    caller_name = ir.StringAttr(caller.attributes["sym_name"]).value if caller else ""
    called.setdefault(caller_name, []).append(callee)
    if values.enclosing(o.parent, "stablehlo.while") is not None:
      in_loops.add(callee)

  values.walk(module, visit)
  pending = list(in_loops)
  while pending:
    for callee in called.get(pending.pop(), []):
      if callee not in in_loops:
        in_loops.add(callee)
        pending.append(callee)
  return in_loops


def _inside_loop(op, functions_in_loops: set[str]) -> bool:
  if values.enclosing(op.parent, "stablehlo.while") is not None:
    return True
  function = values.enclosing(op, "func.func")
  return function is not None and (
    ir.StringAttr(function.attributes["sym_name"]).value in functions_in_loops
  )


def _branch_results(op, region):
  """Moves the ops of `region` (one block) before `op`; their results that
  the region returns."""
  block = region.blocks[0]
  ops = [o.operation for o in block.operations]
  terminator = ops[-1]
  for inner in ops[:-1]:
    inner.move_before(op)
  return list(terminator.operands)


def _select_branches(op):
  if any(len(region.blocks) != 1 for region in op.regions):
    return
  branches = [_branch_results(op, region) for region in op.regions]
  with ir.InsertionPoint(op), op.location:
    if op.name == "stablehlo.if":
      (pred,) = op.operands
      results = [hlo.SelectOp(pred, a, b).result for a, b in zip(*branches)]
    else:
      (index,) = op.operands
      results = list(branches[-1])
      for k in reversed(range(len(branches) - 1)):
        taken = values.compare(index, values.filled_like(index, k), "EQ", "SIGNED")
        results = [hlo.SelectOp(taken, a, b).result for a, b in zip(branches[k], results)]
  for old, new in zip(op.results, results):
    old.replace_all_uses_with(new)
  op.erase()


def _conditionals_in_loops_as_selects(module):
  # The module at once: which functions loops run is one walk of it.
  functions_in_loops = _functions_run_in_loops(module)
  for op in values.ops_named(module, ("stablehlo.case", "stablehlo.if")):
    if _inside_loop(op, functions_in_loops):
      _select_branches(op)


CONDITIONALS_IN_LOOPS_AS_SELECTS = module_patterns.Pattern(
  "conditionals_in_loops_as_selects", ("builtin.module",), _conditionals_in_loops_as_selects
)
