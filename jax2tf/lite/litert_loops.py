"""Loops as LiteRT's flatbuffer holds them: a WHILE calling two subgraphs.

litert-converter legalizes `stablehlo.while` into a `tfl.while` whose
condition and body stay regions of the op, reading values of the enclosing
function (constants, the scanned sequence) directly. Its flatbuffer exporter
writes a WHILE only when each region is one call of a function (the
subgraphs the operator names), and otherwise fails without a word; TF's own
converter outlines the regions before it exports, a pass litert-converter
does not register. `outline_loops` does that on the converted module: each
region becomes a private function whose arguments are the loop's values and
every value of the enclosing function that the region reads, passed to the
loop as extra loop values that its body returns unchanged (constants are
copied into the function instead). Nothing computed changes.

Written for the MLIR bindings of litert-converter (`ir`, its module).
"""

_CONSTANTS = frozenset({"arith.constant", "tfl.pseudo_const", "tfl.no_value"})


def _inner_ops(op):
  """Every op nested in `op`'s regions, outermost first."""
  for region in op.regions:
    for block in region.blocks:
      for inner in block.operations:
        inner = inner.operation
        yield inner
        yield from _inner_ops(inner)


def _defined_inside(op) -> set:
  """The values `op`'s regions define: their blocks' arguments and the
  results of their ops."""
  defined = set()
  for region in op.regions:
    for block in region.blocks:
      defined.update(block.arguments)
  for inner in _inner_ops(op):
    defined.update(inner.results)
    for region in inner.regions:
      for block in region.blocks:
        defined.update(block.arguments)
  return defined


def _captures(op) -> list:
  """The values of the enclosing function that `op`'s regions read, in the
  order they are first read."""
  defined = _defined_inside(op)
  found: dict = {}
  for inner in _inner_ops(op):
    for value in inner.operands:
      if value not in defined:
        found.setdefault(value, None)
  return list(found)


def _constant_op(ir, value):
  """The op defining `value` where it is a constant, else None."""
  owner = value.owner
  if isinstance(owner, ir.Block):
    return None
  owner = owner.operation
  return owner if owner.name in _CONSTANTS else None


def _replace_in(op, mapping: dict) -> None:
  """Operands of the ops nested in `op` (or of `op`, a block's op) read the
  values `mapping` gives for them."""
  for inner in [op, *_inner_ops(op)]:
    for i, value in enumerate(inner.operands):
      if value in mapping:
        inner.operands[i] = mapping[value]


def _is_call(region) -> bool:
  """Whether `region` is already as the exporter writes it: one call and a
  yield of its results."""
  blocks = list(region.blocks)
  if len(blocks) != 1:
    return False
  ops = [op.operation for op in blocks[0].operations]
  return len(ops) == 2 and ops[0].name == "func.call" and ops[1].name == "tfl.yield"


def _function(ir, func, module, name: str, block, argument_types, result_types):
  """A private function `name` of the module whose body is `block` (moved),
  its terminator (a tfl.yield) now a return."""
  with ir.InsertionPoint(module.body):
    function = func.FuncOp(name, (argument_types, result_types))
  function.attributes["sym_visibility"] = ir.StringAttr.get("private")
  block.append_to(function.regions[0])
  terminator = block.operations[len(block.operations) - 1].operation
  with ir.InsertionPoint(terminator), terminator.location:
    func.ReturnOp(list(terminator.operands))
  terminator.erase()
  return function


def _outline(ir, func, module, loop, names) -> None:
  captures = _captures(loop)
  # Constants are copied into the functions; other values become loop values.
  copies = {v: _constant_op(ir, v) for v in captures if _constant_op(ir, v) is not None}
  extra = [v for v in captures if v not in copies]
  cond_block, body_block = (region.blocks[0] for region in loop.regions)
  types = [v.type for v in loop.operands] + [v.type for v in extra]
  for block in (cond_block, body_block):
    mapping = {}
    for v in extra:
      mapping[v] = block.add_argument(v.type, loop.location)
    first = block.operations[0].operation
    for value, owner in copies.items():
      mapping[value] = owner.clone(ir.InsertionPoint(first)).results[0]
    for op in list(block.operations):
      _replace_in(op.operation, mapping)
  # The body returns the extra loop values unchanged.
  body_yield = body_block.operations[len(body_block.operations) - 1].operation
  n = len(loop.operands)
  with ir.InsertionPoint(body_yield), body_yield.location:
    ir.Operation.create(
      "tfl.yield", operands=list(body_yield.operands) + list(body_block.arguments)[n:]
    )
  body_yield.erase()
  cond_type = cond_block.operations[len(cond_block.operations) - 1].operation.operands[0].type
  cond_name, body_name = names()
  _function(ir, func, module, cond_name, cond_block, types, [cond_type])
  _function(ir, func, module, body_name, body_block, types, types)
  with ir.InsertionPoint(loop), loop.location:
    attributes = {name: loop.attributes[name] for name in loop.attributes}
    new = ir.Operation.create(
      "tfl.while",
      results=types,
      operands=list(loop.operands) + extra,
      attributes=attributes,
      regions=2,
    )
  for region, callee, result_types in (
    (new.regions[0], cond_name, [cond_type]),
    (new.regions[1], body_name, types),
  ):
    block = region.blocks.append(*types, arg_locs=[loop.location] * len(types))
    with ir.InsertionPoint(block), loop.location:
      call = func.CallOp(result_types, ir.FlatSymbolRefAttr.get(callee), list(block.arguments))
      ir.Operation.create("tfl.yield", operands=list(call.results))
  for old, replacement in zip(loop.results, new.results):
    old.replace_all_uses_with(replacement)
  loop.erase()


def outline_loops(ir, module) -> bool:
  """Outlines the regions of every `tfl.while` of `module` (innermost loops
  first) into functions, but for those already so; whether there was any."""
  from litert_converter.mlir.dialects import func  # pylint: disable=import-outside-toplevel

  loops = [
    op
    for op in _inner_ops(module.operation)
    if op.name == "tfl.while" and not all(_is_call(region) for region in op.regions)
  ]
  if not loops:
    return False
  taken = {
    ir.StringAttr(op.operation.attributes["sym_name"]).value
    for op in module.body.operations
    if "sym_name" in op.operation.attributes
  }
  counter = [0]

  def names():
    while True:
      k = counter[0]
      counter[0] += 1
      pair = (f"while_cond_{k}", f"while_body_{k}")
      if not taken & set(pair):
        taken.update(pair)
        return pair

  # Innermost first: an outer loop's region then holds the inner loop with
  # calls for regions.
  for loop in reversed(loops):
    _outline(ir, func, module, loop, names)
  return True
