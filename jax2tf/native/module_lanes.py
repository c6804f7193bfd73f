"""Narrow dtypes computed in a wide one, in a StableHLO module that LiteRT
runs: the module side of the target legalizations `float16_in_float32` and
`narrow_ints_in_int32` (jax2tf/targets/target.py), whose graph side is
jax2tf/graph/float_lanes.py and int_lanes.py, where why each is exact is
written.

LiteRT's builtin kernels compute floats in float32 and take 8- and 16-bit
integers in most arithmetic only quantized, while its CAST converts float32
to float16 and bfloat16 (rounding to nearest even) and int32 to the narrow
integers (keeping the low bits). So each op below that reads or writes a
16-bit float or an 8- or 16-bit integer computes on wide copies of its
operands, and each narrow result is converted back: rounded or wrapped
where JAX rounds or wraps it, since JAX's lowering has already made every
step an op of its own (an exp2 is a multiply and an exp, a reduction's
identity a constant).

Left narrow, so that the converter refuses them as before: the ops that
read a value's width or bits (bitcasts, population counts, leading zeros,
reduce_precision), a logical shift right of signed integers and an
arithmetic one of unsigned integers (the sign bit is the narrow type's),
conversions (the bridge between the types: a float converted to a narrow
integer saturates at the narrow bounds), dots of narrow integers into wide
ones (LiteRT has those kernels), and reductions, windows, scatters and sorts
whose body would round otherwise (but sums and products of 16-bit floats
compute wide, as on the graph route: `_Lanes.wide_folds`), reads bits or
gives several results (an argmax, which the converter recognizes by its narrow
initial values). Control flow keeps its narrow
values; the ops in its bodies compute wide. A broadcast to a 16-bit type
(or an iota of several axes, which the converters write as a broadcast)
doubles its operand by concatenations instead: the converters move the
convert back to 16 bits above a BROADCAST_TO, which LiteRT has no 16-bit
kernel for (the graph route's lanes write a Tile). In the TFLite pipelines the
patterns before these already write population counts, leading zeros and
logical shifts right of signed integers in forms the lanes take
(jax2tf/native/kernel_forms.py, integer_patterns.py): what reaches the
lanes narrow there is what those leave.

The third legalization, `uint32_as_order_keys` (jax2tf/graph/ordered_lanes.py),
maps uint32 onto int32 keys of the same order by flipping the top bit
(XOR and BITCAST, which LiteRT has for uint32): the ops whose result depends
only on the order, equality and places of their values (data movement,
comparisons, max and min, their reductions and windows) compute on the keys.
Beside them, the wrapping arithmetic LiteRT has no uint32 kernel for
(negation, subtraction, and sums and products of reductions and windows)
computes on int32 of the same bits, which wraps to the same bits.
"""

import dataclasses
from collections.abc import Callable

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.native import module_patterns
from jax2tf.native import stablehlo_values as values
from jax2tf.targets import Target


@dataclasses.dataclass(frozen=True)
class _Lanes:
  """How one legalization computes a narrow element type in a wide one."""

  # The wide element type for a narrow one; None for any other.
  wide_of: Callable[[ir.Type], ir.Type | None]
  # Ops without regions computed wide, and the ops a combiner's body may
  # hold for it to be computed wide.
  ops: tuple[str, ...]
  body_ops: frozenset[str]
  # A narrow value as the wide type, a wide one back as the narrow type, and
  # a narrow constant's element (a Python number) as the wide type's.
  to_wide: Callable = lambda value, wide: hlo.ConvertOp(wide, value).result
  to_narrow: Callable = lambda value, narrow: hlo.ConvertOp(narrow, value).result
  wide_element: Callable = lambda element: element
  # Ops that stay narrow though named in `ops`.
  keeps: Callable = lambda op: False
  # The wide value a narrow one was made from by `to_narrow`, where going
  # back is exact (keys: a bijection), else None.
  made_from: Callable = lambda value: None
  # Whether a wide value means another number than its narrow one (order
  # keys), so that indices stay narrow.
  encodes_values: bool = False
  # Whether a broadcast to a narrow element type is written in ops the
  # converters keep wide (`_tiled_broadcast`): LiteRT has no 16-bit
  # BROADCAST_TO.
  tiles_broadcasts: Callable = lambda element: False
  # Whether JAX's argmax and argmin reductions compute wide (their initial
  # values are infinities in both types).
  widens_arg_reductions: bool = False
  # The combiners whose sums and products compute wide too, rounded once,
  # as the graph route's lanes compute them. XLA rounds each step of a
  # 16-bit fold, in an order of its own (vector lanes, then a tree: 4,096
  # float16 ones sum to 4096, where adding in order stops at 2048), which
  # no LiteRT kernel follows. The results agree to the 16-bit rounding,
  # except where a partial result overflows: inf under jax.jit, finite here.
  # A scatter's updates of one index combine before rounding, as in the
  # graph route's scatters, which combine duplicated indices first.
  wide_folds: frozenset[str] = frozenset()

  def wide_type(self, t):
    if not isinstance(t, ir.RankedTensorType):
      return None
    wide = self.wide_of(t.element_type)
    return None if wide is None else ir.RankedTensorType.get(t.shape, wide, t.encoding)

  def wide_operands(self, op, wide_types) -> list:
    """`op`'s operands in the wide types (None: as they are). A splat
    constant becomes a wide constant, not a conversion of one: the converter
    reads a reduction's initial value, a pad's fill or a clamp's bounds only
    from a constant."""
    out = []
    for o, wide in zip(op.operands, wide_types):
      if wide is None:
        out.append(o)
        continue
      source = self.made_from(o)
      if source is not None and source.type == wide:
        out.append(source)
        continue
      c = values.constant_of(o)
      if c is not None and c.elements is not None and c.elements.size == 1:
        splat = values.constant_splat(wide, self.wide_element(c.elements[0].item()))
        if splat is not None:
          out.append(splat)
          continue
      out.append(self.to_wide(o, wide))
    return out


# Elementwise ops, data movement, dots and convolutions: ops without
# regions whose narrow result the wide one, converted back, gives.
_ARITHMETIC = tuple(
  "stablehlo." + name
  for name in (
    "abs add and atan2 broadcast_in_dim cbrt ceil clamp compare concatenate "
    "convolution cosine divide dot_general dynamic_broadcast_in_dim "
    "dynamic_gather dynamic_iota dynamic_pad dynamic_reshape dynamic_slice "
    "dynamic_update_slice exponential exponential_minus_one floor gather iota "
    "is_finite log log_plus_one logistic maximum minimum multiply negate not or "
    "pad power real_dynamic_slice remainder reshape reverse round_nearest_afz "
    "round_nearest_even rsqrt select shift_left shift_right_arithmetic "
    "shift_right_logical sign sine slice sqrt subtract tan tanh transpose xor"
  ).split()
)
# Those whose result depends only on the order, equality and places of the
# values, and reads none of them as an index.
_ORDERED = tuple(
  "stablehlo." + name
  for name in (
    "broadcast_in_dim clamp compare concatenate dynamic_broadcast_in_dim dynamic_gather "
    "dynamic_reshape dynamic_slice dynamic_update_slice gather maximum minimum pad "
    "real_dynamic_slice reshape reverse select slice transpose"
  ).split()
)

# Moves whose operands after the first (after the first two: an update's)
# are indices. Lanes that encode values anew (order keys) leave those alone:
# an index must keep its value.
_DATA_OPERANDS = {
  "stablehlo.dynamic_gather": 1,
  "stablehlo.dynamic_slice": 1,
  "stablehlo.dynamic_update_slice": 2,
  "stablehlo.gather": 1,
  "stablehlo.real_dynamic_slice": 1,
}

# Body ops that give the same narrow result computed wide: selections and
# comparisons of any type, the bit operations and the modular arithmetic of
# integers. A float sum or product would round once where JAX rounds at each
# step; keys neither add nor combine bits as the uint32 values do. Logic on
# the booleans a comparison gives is exact in every lane.
_SELECTING = frozenset(
  "stablehlo." + name for name in "compare maximum minimum return select".split()
)
_MODULAR = frozenset("stablehlo." + name for name in "add and multiply or subtract xor".split())
_BOOLEAN = frozenset("stablehlo." + name for name in "and not or xor".split())
_FOLDING = frozenset({"stablehlo.add", "stablehlo.multiply"})


def _float16_in_float32(element) -> ir.Type | None:
  if isinstance(element, (ir.F16Type, ir.BF16Type)):
    return ir.F32Type.get()
  return None


def _narrow_int_in_int32(element) -> ir.Type | None:
  if isinstance(element, ir.IntegerType) and element.width in (8, 16):
    return ir.IntegerType.get_signless(32)
  return None


def _uint32_as_int32(element) -> ir.Type | None:
  if isinstance(element, ir.IntegerType) and element.width == 32 and element.is_unsigned:
    return ir.IntegerType.get_signless(32)
  return None


def _keeps_narrow_ints(op) -> bool:
  """Whether `op` stays on narrow integers: a shift right whose result
  depends on their width (it fills from the narrow type's sign bit, or must
  not), or a dot or convolution of them into a wide type, which LiteRT
  computes as they are (int8 FULLY_CONNECTED and BATCH_MATMUL into int32)
  and not in int32."""
  element = ir.RankedTensorType(op.results[0].type).element_type
  if not isinstance(element, ir.IntegerType):
    return False
  if op.name in ("stablehlo.dot_general", "stablehlo.convolution"):
    return _narrow_int_in_int32(element) is None
  if op.name == "stablehlo.shift_right_logical":
    return not element.is_unsigned
  if op.name == "stablehlo.shift_right_arithmetic":
    return element.is_unsigned
  return False


_TOP_BIT = 1 << 31


def _as_order_keys(value, wide):
  flipped = hlo.XorOp(value, values.filled_like(value, _TOP_BIT)).result
  return hlo.BitcastConvertOp(wide, flipped).result


def _from_order_keys(value, narrow):
  bits = hlo.BitcastConvertOp(narrow, value).result
  return hlo.XorOp(bits, values.filled_like(bits, _TOP_BIT)).result


def _order_keys_of(value):
  """The keys `value` was made from by `_from_order_keys`, or None."""
  if not isinstance(value, ir.OpResult) or value.owner.name != "stablehlo.xor":
    return None
  bits, flip = value.owner.operands
  c = values.constant_of(flip)
  if c is None or c.elements is None or c.elements.size != 1 or int(c.elements[0]) != _TOP_BIT:
    return None
  if not isinstance(bits, ir.OpResult) or bits.owner.name != "stablehlo.bitcast_convert":
    return None
  return bits.owner.operands[0]


def _int32_of_bits(element: int) -> int:
  """The int32 number with the bits of the uint32 `element`."""
  return element - (1 << 32) if element >= _TOP_BIT else element


def _order_key(element: int) -> int:
  """The int32 key of the uint32 `element`: the same bits, top bit flipped."""
  return _int32_of_bits(element ^ _TOP_BIT)


def _is_16_bit(element) -> bool:
  return isinstance(element, (ir.F16Type, ir.BF16Type)) or (
    isinstance(element, ir.IntegerType) and element.width == 16
  )


_FLOAT16 = _Lanes(
  _float16_in_float32,
  _ARITHMETIC,
  _SELECTING,
  tiles_broadcasts=_is_16_bit,
  widens_arg_reductions=True,
  wide_folds=frozenset({"stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.scatter"}),
)
_NARROW_INTS = _Lanes(
  _narrow_int_in_int32,
  _ARITHMETIC,
  _SELECTING | _MODULAR,
  keeps=_keeps_narrow_ints,
  tiles_broadcasts=_is_16_bit,
)
_UINT32_KEYS = _Lanes(
  _uint32_as_int32,
  _ORDERED,
  _SELECTING,
  to_wide=_as_order_keys,
  to_narrow=_from_order_keys,
  wide_element=_order_key,
  made_from=_order_keys_of,
  encodes_values=True,
)


def _as_int32_bits(value, wide):
  return hlo.BitcastConvertOp(wide, value).result


def _int32_bits_of(value):
  """The int32 value `value` is the bitcast of, or None."""
  if not isinstance(value, ir.OpResult) or value.owner.name != "stablehlo.bitcast_convert":
    return None
  source = value.owner.operands[0]
  element = ir.RankedTensorType(source.type).element_type
  if isinstance(element, ir.IntegerType) and element.width == 32 and not element.is_unsigned:
    return source
  return None


# uint32 wrapping arithmetic that LiteRT has no uint32 kernel for (NEG, SUB,
# SUM, CUMSUM), on int32 of the same bits: two's complement wraps modulo
# 2**32 to the same bits.
_UINT32_BITS = _Lanes(
  _uint32_as_int32,
  ("stablehlo.negate", "stablehlo.subtract"),
  frozenset({"stablehlo.add", "stablehlo.multiply", "stablehlo.return"}),
  to_wide=_as_int32_bits,
  to_narrow=_as_int32_bits,
  wide_element=_int32_of_bits,
  made_from=_int32_bits_of,
)


# Ops whose region is a combiner of scalars that the converter legalizes as
# a whole (a reduction's body into REDUCE_MAX, a sort's comparator): their
# bodies keep the types of the op unless the op is computed wide whole.
_COMBINING = frozenset(
  "stablehlo." + name
  for name in "reduce reduce_window scatter select_and_scatter sort all_reduce reduce_scatter map".split()
)


def _in_combiner(op) -> bool:
  parent = op.parent
  return parent is not None and parent.name in _COMBINING


def _attributes(op, lanes: _Lanes, wide: bool) -> dict:
  """`op`'s attributes, a comparison's type made signed for int32 keys
  (uint32 compared UNSIGNED, its keys SIGNED)."""
  attributes = {name: op.attributes[name] for name in op.attributes}
  if wide and lanes is _UINT32_KEYS and op.name == "stablehlo.compare":
    attributes["compare_type"] = hlo.ComparisonTypeAttr.get("SIGNED")
  return attributes


def _narrow_results(op, wide_results, result_types, lanes: _Lanes) -> None:
  for old, new, wide in zip(op.results, wide_results, result_types):
    old.replace_all_uses_with(lanes.to_narrow(new, old.type) if wide is not None else new)
  op.erase()


def _tiled_broadcast(value, result_type, dims):
  """broadcast_in_dim of `value` to `result_type` along `dims` as a reshape,
  concatenations that double it along each broadcast axis and a slice, or
  None where the shapes are not static or `dims` reorders the axes. The
  converters move the convert back to a narrow dtype above a broadcast (as
  the graph route's lanes say), and have no 16-bit BROADCAST_TO; they leave
  a CONCATENATION alone."""
  source = ir.RankedTensorType(value.type)
  if not (source.has_static_shape and result_type.has_static_shape) or list(dims) != sorted(dims):
    return None
  element = result_type.element_type
  shape = [1] * result_type.rank
  for axis, size in zip(dims, source.shape):
    shape[axis] = size
  tiled = hlo.ReshapeOp(ir.RankedTensorType.get(shape, element), value).result
  for axis, size in enumerate(result_type.shape):
    if shape[axis] == size:
      continue
    while shape[axis] < size:
      tiled = hlo.ConcatenateOp([tiled, tiled], axis).result
      shape[axis] *= 2
    if shape[axis] != size:
      limits = list(shape)
      limits[axis] = size
      tiled = hlo.SliceOp(tiled, [0] * len(shape), limits, [1] * len(shape)).result
      shape[axis] = size
  return tiled


def _tiled(op, wide_operands, wide_result):
  """A broadcast, or an iota of several axes (which the converters write as
  one of a single axis, broadcast), as `_tiled_broadcast`; else None."""
  if op.name == "stablehlo.broadcast_in_dim":
    dims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
    return _tiled_broadcast(wide_operands[0], wide_result, dims)
  if op.name == "stablehlo.iota" and wide_result.rank > 1 and wide_result.has_static_shape:
    axis = ir.IntegerAttr(op.attributes["iota_dimension"]).value
    line = ir.RankedTensorType.get([wide_result.shape[axis]], wide_result.element_type)
    return _tiled_broadcast(hlo.IotaOp(line, 0).result, wide_result, [axis])
  return None


def _region_free(lanes: _Lanes):
  def widen(op):
    if len(op.regions) or _in_combiner(op):
      return
    operand_types = [lanes.wide_type(o.type) for o in op.operands]
    data = _DATA_OPERANDS.get(op.name)
    if lanes.encodes_values and data is not None:
      operand_types[data:] = [None] * (len(operand_types) - data)
    result_types = [lanes.wide_type(r.type) for r in op.results]
    if not any(operand_types) and not any(result_types):
      return
    if lanes.keeps(op):
      return
    if len(op.operands) and all(values.constant_of(o) is not None for o in op.operands):
      return  # the converter folds it, and a later op may need to see a constant
    with ir.InsertionPoint(op), op.location:
      operands = lanes.wide_operands(op, operand_types)
      narrow = ir.RankedTensorType(op.results[0].type).element_type if op.results else None
      tiles = narrow is not None and result_types[0] is not None and lanes.tiles_broadcasts(narrow)
      tiled = _tiled(op, operands, result_types[0]) if tiles else None
      if tiled is not None:
        _narrow_results(op, [tiled], result_types, lanes)
        return
      wide_op = ir.Operation.create(
        op.name,
        results=[w or r.type for w, r in zip(result_types, op.results)],
        operands=operands,
        attributes=_attributes(op, lanes, any(operand_types)),
      )
      _narrow_results(op, wide_op.results, result_types, lanes)

  return widen


def _body_computes_wide(op, lanes: _Lanes) -> bool:
  """Whether each op of `op`'s body gives the narrow result computed wide
  (or, in a sum XLA accumulates wide, XLA's), and reads only the block's
  arguments and results of the ops before it (not a value from outside the
  region, which keeps its narrow type)."""
  block = op.regions[0].blocks[0]
  inside = set(block.arguments)
  for body_op in block.operations:
    if len(body_op.regions) or any(o not in inside for o in body_op.operands):
      return False
    inside.update(body_op.results)
    elements = [ir.RankedTensorType(r.type).element_type for r in body_op.results]
    if body_op.name in _BOOLEAN and all(values.is_bool_tensor(r.type) for r in body_op.results):
      continue
    if body_op.name in _FOLDING and op.name in lanes.wide_folds:
      continue
    if body_op.name not in lanes.body_ops:
      return False
    if body_op.name in _MODULAR and not all(isinstance(e, ir.IntegerType) for e in elements):
      return False
  return True


def _combiner(lanes: _Lanes):
  """Reductions, windows, scatters and sorts on narrow dtypes, computed wide
  with a body rebuilt on wide scalars, where that body is exact wide."""

  def widen(op):
    # One result: the converter recognizes an argmax (a reduction of values
    # and indices) by its initial values, the extremes of the narrow type,
    # which a wide one would hide; but a float's are infinities in any width.
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
      return
    if len(op.results) != 1 and not (
      lanes.widens_arg_reductions and module_patterns.arg_direction(op)
    ):
      return
    operand_types = [lanes.wide_type(o.type) for o in op.operands]
    result_types = [lanes.wide_type(r.type) for r in op.results]
    if not any(operand_types) and not any(result_types):
      return
    body = op.regions[0].blocks[0]
    if not _body_computes_wide(op, lanes):
      return
    with ir.InsertionPoint(op), op.location:
      wide_op = ir.Operation.create(
        op.name,
        results=[w or r.type for w, r in zip(result_types, op.results)],
        operands=lanes.wide_operands(op, operand_types),
        attributes=_attributes(op, lanes, True),
        regions=1,
      )
      arg_types = [lanes.wide_type(a.type) or a.type for a in body.arguments]
      block = wide_op.regions[0].blocks.append(*arg_types)
      wide_values = dict(zip(body.arguments, block.arguments))
      with ir.InsertionPoint(block):
        for body_op in body.operations:
          wide_body_op = ir.Operation.create(
            body_op.name,
            results=[lanes.wide_type(r.type) or r.type for r in body_op.results],
            operands=[wide_values[o] for o in body_op.operands],
            attributes=_attributes(body_op, lanes, True),
          )
          wide_values.update(zip(body_op.results, wide_body_op.results))
      results = list(wide_op.results)
      if _integer_max_or_min(wide_op):
        results = [_from_wide_identity(wide_op)]
      _narrow_results(op, results, result_types, lanes)

  return widen


_MAX_MIN = ("stablehlo.maximum", "stablehlo.minimum")


def _integer_max_or_min(op) -> str | None:
  """The body op of a reduction or window of one integer operand whose body
  is a single maximum or minimum, or None."""
  body = list(op.regions[0].blocks[0].operations)
  if len(op.operands) != 2 or len(body) != 2 or body[0].name not in _MAX_MIN:
    return None
  element = ir.RankedTensorType(op.results[0].type).element_type
  return body[0].name if isinstance(element, ir.IntegerType) else None


def _from_wide_identity(op):
  """`op` (an integer max or min reduction or window, wide) started from the
  wide type's identity, its own initial value combined with the result
  after: the converter makes REDUCE_MAX/MIN only of a reduction from the
  identity, and the narrow one (-128 for an int8 maximum) is not the wide
  one's. Equal, since the initial value is combined once either way. (The
  keys of uint32's identities are int32's: nothing to combine.)"""
  combine = _integer_max_or_min(op)
  element = ir.IntegerType(ir.RankedTensorType(op.results[0].type).element_type)
  top, bottom = 2 ** (element.width - 1) - 1, -(2 ** (element.width - 1))
  identity = bottom if combine == "stablehlo.maximum" else top
  init = op.operands[1]
  c = values.constant_of(init)
  if c is not None and c.elements is not None and c.elements.size == 1:
    if int(c.elements[0]) == identity:
      return op.results[0]
  op.operands[1] = values.scalar(element, identity)
  # The identity is made before the op, which reads it.
  op.operands[1].owner.move_before(op)
  pick = hlo.MaxOp if combine == "stablehlo.maximum" else hlo.MinOp
  result = op.results[0]
  return pick(result, values.broadcast_like(init, result)).result


_COMBINERS = tuple("stablehlo." + name for name in "reduce reduce_window scatter sort".split())


def _patterns(name: str, lanes: _Lanes) -> tuple[module_patterns.Pattern, ...]:
  # The ops without regions first, then those with a body, which the first
  # leaves alone (a pattern collects its ops before it rewrites them, so it
  # must not erase an op whose body ops it collected too).
  return (
    module_patterns.Pattern(name, lanes.ops, _region_free(lanes)),
    module_patterns.Pattern(f"{name}_combiners", _COMBINERS, _combiner(lanes)),
  )


# The module side of each legalization of target.LEGALIZATIONS that has one
# (uint32 as int32 bits, TF.js's, is the graph's only).
_BY_LEGALIZATION = {
  "float16_in_float32": _patterns("float16_in_float32", _FLOAT16),
  "narrow_ints_in_int32": _patterns("narrow_ints_in_int32", _NARROW_INTS),
  # LiteRT's uint32 kernels are data movement, ADD, MUL, XOR, shifts and
  # BITCAST: order ops compute on keys, the wrapping arithmetic it lacks on
  # the same bits as int32.
  "uint32_as_order_keys": (
    *_patterns("uint32_as_order_keys", _UINT32_KEYS),
    *_patterns("uint32_arithmetic_on_int32_bits", _UINT32_BITS),
  ),
}


def patterns_for(target: Target) -> tuple[module_patterns.Pattern, ...]:
  """The lanes `target` computes narrow dtypes in, as module patterns."""
  return tuple(p for n in target.legalizations for p in _BY_LEGALIZATION.get(n, ()))
