"""Integer ops of an exported module in the forms TFLite has kernels for.

TFLite (both converters, and LiteRT's kernels) has no LeftShift, BitwiseOr
or BitwiseAnd, and no MUL on uint64 (jax2tf/targets/target.py lists them
missing for TFLITE and LITERT); the graph route formulates them in uint32
arithmetic (jax2tf/graph/portable_bits.py). JAX's threefry PRNG meets all of
them: its rotations are `(x << r) | (x >> (32 - r))` and its counters
(`iota_2x32_shape`) are computed in uint64 and split into 32-bit halves.
The patterns here write the same identities on StableHLO:

* an `or` whose operands share no bit that either may have set (known
  from left and logical right shifts by constants, and from constants) is
  their sum: a rotation `(x << r) | (x >> (32 - r))`, or the exponent
  that `jax.random.uniform` sets on its mantissa bits;
* a left shift of a 32-bit integer by a constant r is a product with 2**r
  (0 from r = 32 on, as XLA's shift), wrapping as the shift does;
* 64-bit unsigned arithmetic of iotas and constants (adds, products,
  logical right shifts, broadcasts, reshapes) whose every value is bounded,
  from the static shapes and the constants, below 2**32, converted to a
  32-bit integer, is computed in uint32: the same numbers (a value bounded
  by 0 is zeros);
* where such arithmetic may reach 2**32 (iotas of a polymorphic shape,
  whose sizes come as 32-bit integers, times constants), it is computed
  exactly in pairs of uint32 words (jax2tf/targets/uint32_words.py, whose
  high word of a product the graph route's `mulhi` shares), modulo 2**64 as
  uint64 arithmetic is.

For the TFLite converters alone (XLA computes them itself), a shift right
gives XLA's bits: its amount brought into range with XLA's answer (zeros,
or copies of the sign bit) selected outside it, and a logical shift of
signed integers or an arithmetic one of uint32 made on the other
signedness, since TFLite's RIGHT_SHIFT follows the type, not the op.

dynamic_ops.py then writes the polymorphic iotas so that the converters
take them.
"""

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.native import stablehlo_values as values
from jax2tf.native.module_patterns import Pattern, replace
from jax2tf.targets import uint32_words


def _integer_width(t) -> int | None:
  """The width of an integer tensor type's elements (not booleans), or None."""
  if not values.is_integer_tensor(t):
    return None
  width = ir.IntegerType(t.element_type).width
  return width if width > 1 else None


def _splat_int(value) -> int | None:
  """The one integer that every element of constant `value` is, or None."""
  c = values.constant_at_any_shape(value)
  if c is None or c.elements is None or c.elements.size == 0:
    return None
  first = int(c.elements[0])
  return first if bool((c.elements == c.elements[0]).all()) else None


def _possible_bits(value, width: int) -> int:
  """A mask of the bits `value` (an integer tensor of `width` bits) may have
  set: those a logical right shift or a left shift by a constant amount
  leaves, those of a constant, else all."""
  everything = 2**width - 1
  c = values.constant_at_any_shape(value)
  if c is not None and c.elements is not None:
    bits = 0
    for element in np.unique(c.elements):
      bits |= int(element) % 2**width
    return bits
  if not isinstance(value, ir.OpResult):
    return everything
  op = value.owner
  if op.name not in ("stablehlo.shift_left", "stablehlo.shift_right_logical"):
    return everything
  amount = _splat_int(op.operands[1])
  if amount is None:
    return everything
  # Shift amounts read as unsigned (XLA's rule): a negative one is huge.
  amount = min(amount % 2**width, width)
  if op.name == "stablehlo.shift_left":
    return (everything << amount) & everything
  return everything >> amount


def _or_of_disjoint_bits_as_sum(op):
  result = op.results[0]
  width = _integer_width(result.type)
  if width is None:
    return
  a, b = op.operands
  if _possible_bits(a, width) & _possible_bits(b, width):
    return
  with ir.InsertionPoint(op), op.location:
    total = hlo.AddOp(a, b)
  result.replace_all_uses_with(total.result)
  op.erase()


OR_OF_DISJOINT_BITS_AS_SUM = Pattern(
  "or_of_disjoint_bits_as_sum", ("stablehlo.or",), _or_of_disjoint_bits_as_sum
)


def _shift_left_by_constant_as_product(op):
  result = op.results[0]
  if _integer_width(result.type) != 32:
    return
  x, amount = op.operands
  r = _splat_int(amount)
  if r is None:
    return
  r %= 2**32  # XLA reads the amount as unsigned: -1 shifts everything out
  factor = 1 << r if r < 32 else 0
  if not ir.IntegerType(result.type.element_type).is_unsigned and factor >= 2**31:
    factor -= 2**32  # 2**31 as a signed 32-bit factor: the same bits
  with ir.InsertionPoint(op), op.location:
    product = hlo.MulOp(x, values.filled_like(x, factor))
  op.results[0].replace_all_uses_with(product.result)
  op.erase()


SHIFT_LEFT_BY_CONSTANT_AS_PRODUCT = Pattern(
  "shift_left_by_constant_as_product", ("stablehlo.shift_left",), _shift_left_by_constant_as_product
)


# --- 64-bit unsigned arithmetic that fits 32 bits -----------------------------

_NARROWED = 2**32
_NARROWABLE = frozenset(
  {
    "stablehlo.constant",
    "stablehlo.iota",
    "stablehlo.broadcast_in_dim",
    "stablehlo.reshape",
    "stablehlo.add",
    "stablehlo.multiply",
    "stablehlo.shift_right_logical",
  }
)


def _is_uint64(t) -> bool:
  return (
    values.is_integer_tensor(t)
    and ir.IntegerType(t.element_type).width == 64
    and ir.IntegerType(t.element_type).is_unsigned
  )


def _bound(value, bounds: dict) -> int | None:
  """The largest number `value` (uint64) may hold, computed from static
  shapes and constants, or None where the value is not such arithmetic or
  some value on the way to it may reach 2**32."""
  if value in bounds:
    return bounds[value]
  bound = None
  if isinstance(value, ir.OpResult) and _is_uint64(value.type) and value.type.has_static_shape:
    op = value.owner
    if op.name in _NARROWABLE:
      operands = [_bound(v, bounds) for v in op.operands]
      known = [b for b in operands if b is not None]
      if len(known) == len(operands):
        bound = _bound_of(op, known)
  if bound is not None and bound >= _NARROWED:
    bound = None
  bounds[value] = bound
  return bound


def _bound_of(op, operands: list[int]) -> int | None:
  name = op.name
  if name == "stablehlo.constant":
    c = values.constant_of(op.results[0])
    return None if c is None or c.elements is None else int(c.elements.max(initial=0))
  if name == "stablehlo.iota":
    dimension = ir.IntegerAttr(op.attributes["iota_dimension"]).value
    return max(op.results[0].type.shape[dimension] - 1, 0)
  if name in ("stablehlo.broadcast_in_dim", "stablehlo.reshape"):
    return operands[0]
  if name == "stablehlo.add":
    return operands[0] + operands[1]
  if name == "stablehlo.multiply":
    return operands[0] * operands[1]
  # A logical right shift: by the smallest amount, at most the operand.
  c = values.constant_of(op.operands[1])
  if c is None or c.elements is None or c.elements.size == 0:
    return None
  return operands[0] >> min(int(c.elements.min()), 64)


def _uint32_type(t):
  return ir.RankedTensorType.get(t.shape, ir.IntegerType.get_unsigned(32), t.encoding)


def _narrowed(value, bounds: dict, done: dict):
  """`value` (whose bound is below 2**32) computed in uint32."""
  if value in done:
    return done[value]
  op = value.owner
  t = _uint32_type(value.type)
  if bounds[value] == 0:
    out = values.constant_splat(t, 0)
  elif op.name == "stablehlo.constant":
    c = values.constant_of(value)
    assert c is not None and c.elements is not None  # as its bound says
    elements = c.elements.astype(np.uint32)
    if elements.size == 1:
      out = values.constant_splat(t, int(elements[0]))
    else:
      dense = ir.DenseElementsAttr.get(np.ascontiguousarray(elements), type=t)  # type: ignore[call-overload]  # stubs: no arrays
      out = hlo.ConstantOp(dense).result
  elif op.name == "stablehlo.iota":
    out = hlo.IotaOp(t, op.attributes["iota_dimension"]).result
  else:
    operands = [_narrowed(v, bounds, done) for v in op.operands]
    attributes = {name: op.attributes[name] for name in op.attributes}
    out = ir.Operation.create(op.name, results=[t], operands=operands, attributes=attributes)
    out = out.results[0]
  done[value] = out
  return out


def _uint64_arithmetic_in_uint32(op):
  source, result = op.operands[0], op.results[0]
  width = _integer_width(result.type)
  if not _is_uint64(source.type) or width is None or width > 32:
    return
  bounds: dict = {}
  if _bound(source, bounds) is None:
    return
  with ir.InsertionPoint(op), op.location:
    narrowed = _narrowed(source, bounds, {})
    if result.type != narrowed.type:
      narrowed = hlo.ConvertOp(result.type, narrowed).result
  result.replace_all_uses_with(narrowed)
  op.erase()
  _erase_unused(source)


def _erase_unused(value) -> None:
  """The op computing `value`, and those only it read, where nothing else
  reads their results: the 64-bit ops left behind, which a converter
  would otherwise try to legalize. Each is erased after every op reading
  it (all found before any is erased)."""
  dead: list = []

  def unread(op) -> bool:
    return all(use.owner in dead for r in op.results for use in r.uses)

  todo = [value]
  while todo:
    v = todo.pop()
    if not isinstance(v, ir.OpResult):
      continue
    op = v.owner
    if op.name not in _ERASABLE or op in dead or not unread(op):
      continue
    dead.append(op)
    todo.extend(op.operands)
  for op in dead:
    op.erase()


UINT64_ARITHMETIC_IN_UINT32 = Pattern(
  "uint64_arithmetic_in_uint32", ("stablehlo.convert",), _uint64_arithmetic_in_uint32
)


# --- 64-bit unsigned arithmetic in uint32 words -------------------------------

# Ops whose operand (the first) goes through as it is: in words, each word
# goes through. Their results take the words' type; other operands (sizes)
# and attributes stay.
_WORDWISE = frozenset(
  {
    "stablehlo.broadcast_in_dim",
    "stablehlo.dynamic_broadcast_in_dim",
    "stablehlo.reshape",
    "stablehlo.dynamic_reshape",
  }
)


# The 64-bit ops that the patterns leave unread, which they erase.
_ERASABLE = _NARROWABLE | _WORDWISE | {"stablehlo.dynamic_iota"}


class _Words:
  """uint32 StableHLO values for the formulas in uint32 words
  (jax2tf/targets/uint32_words.py): a Python int is a constant of the other
  operand's shape."""

  @staticmethod
  def _value(x, y):
    return values.filled_like(x, y) if isinstance(y, int) else y

  def add(self, x, y):
    return hlo.AddOp(x, self._value(x, y)).result

  def mul(self, x, y):
    return hlo.MulOp(x, self._value(x, y)).result

  def xor(self, x, y):
    return hlo.XorOp(x, self._value(x, y)).result

  def shr(self, x, n: int):
    return hlo.ShiftRightLogicalOp(x, values.filled_like(x, n)).result


WORDS = _Words()


def _iota_fits(op) -> bool:
  """Whether an iota's values fit 32 bits: a static size below 2**32, or
  sizes read from 32-bit integers."""
  if op.name == "stablehlo.iota":
    t = ir.RankedTensorType(op.results[0].type)
    dimension = ir.IntegerAttr(op.attributes["iota_dimension"]).value
    return not t.is_dynamic_dim(dimension) and t.shape[dimension] <= _NARROWED
  shape = ir.RankedTensorType(op.operands[0].type)
  return ir.IntegerType(shape.element_type).width <= 32


def _can_split(value, seen: dict) -> bool:
  """Whether uint64 `value` is computed from constants and iotas by ops
  that `_words` writes in uint32 words."""
  if value in seen:
    return seen[value]
  ok = False
  if isinstance(value, ir.OpResult) and _is_uint64(value.type):
    op = value.owner
    name = op.name
    if name == "stablehlo.constant":
      c = values.constant_of(value)
      ok = c is not None and c.elements is not None
    elif name in ("stablehlo.iota", "stablehlo.dynamic_iota"):
      ok = _iota_fits(op)
    elif name in _WORDWISE:
      ok = _can_split(op.operands[0], seen)
    elif name in ("stablehlo.add", "stablehlo.multiply"):
      ok = all(_can_split(v, seen) for v in op.operands)
    elif name == "stablehlo.shift_right_logical":
      ok = _can_split(op.operands[0], seen) and _splat_int(op.operands[1]) is not None
  seen[value] = ok
  return ok


def _words(value, done: dict) -> tuple:
  """(high, low) uint32 words of uint64 `value` (which `_can_split`)."""
  if value in done:
    return done[value]
  op = value.owner
  t = _uint32_type(value.type)
  name = op.name
  if name == "stablehlo.constant":
    c = values.constant_of(value)
    assert c is not None and c.elements is not None  # as _can_split found
    words = []
    for part in (c.elements >> np.uint64(32), c.elements & np.uint64(2**32 - 1)):
      part = part.astype(np.uint32)
      if part.size == 1 or bool((part == part[0]).all()):
        words.append(values.constant_splat(t, int(part[0])))
      else:
        dense = ir.DenseElementsAttr.get(np.ascontiguousarray(part), type=t)  # type: ignore[call-overload]  # stubs: no arrays
        words.append(hlo.ConstantOp(dense).result)
    out = (words[0], words[1])
  elif name in ("stablehlo.iota", "stablehlo.dynamic_iota"):
    attributes = {a: op.attributes[a] for a in op.attributes}
    low = ir.Operation.create(name, results=[t], operands=list(op.operands), attributes=attributes)
    out = (_zeros_like(low.results[0]), low.results[0])
  elif name in _WORDWISE:
    attributes = {a: op.attributes[a] for a in op.attributes}
    rest = list(op.operands)[1:]
    out = tuple(
      ir.Operation.create(name, results=[t], operands=[w, *rest], attributes=attributes).results[0]
      for w in _words(op.operands[0], done)
    )
  elif name == "stablehlo.add":
    out = uint32_words.add(WORDS, *(_words(v, done) for v in op.operands))
  elif name == "stablehlo.multiply":
    out = uint32_words.multiply(WORDS, *(_words(v, done) for v in op.operands))
  else:  # a logical right shift by a constant (read as unsigned)
    x = _words(op.operands[0], done)
    n = _splat_int(op.operands[1])
    assert n is not None  # as _can_split found
    out = uint32_words.shift_right(WORDS, x, min(n % 2**64, 64), _zeros_like(x[1]))
  done[value] = out
  return out


def _zeros_like(word):
  return values.filled_like(word, 0)


def _uint64_arithmetic_in_uint32_words(op):
  source, result = op.operands[0], op.results[0]
  width = _integer_width(result.type)
  if not _is_uint64(source.type) or width is None or width > 32:
    return
  if not _can_split(source, {}):
    return
  with ir.InsertionPoint(op), op.location:
    low = _words(source, {})[1]
    if result.type != low.type:
      low = hlo.ConvertOp(result.type, low).result
  result.replace_all_uses_with(low)
  op.erase()
  _erase_unused(source)


UINT64_ARITHMETIC_IN_UINT32_WORDS = Pattern(
  "uint64_arithmetic_in_uint32_words", ("stablehlo.convert",), _uint64_arithmetic_in_uint32_words
)


def shift_out_of_range(amount, width: int):
  """Where a shift by integer tensor `amount` moves every bit of a
  `width`-bit integer out: XLA reads the amount as unsigned, so a negative
  one is too. Signed amounts are compared as signed numbers, since TFLite
  compares 32-bit integers only so (a uint32 comparison is written in int32
  keys by jax2tf/native/module_lanes.py)."""
  if ir.IntegerType(amount.type.element_type).is_unsigned:
    return values.compare(amount, values.filled_like(amount, width), "GE", "UNSIGNED")
  negative = values.compare(amount, values.filled_like(amount, 0), "LT", "SIGNED")
  too_big = values.compare(amount, values.filled_like(amount, width), "GE", "SIGNED")
  return hlo.OrOp(negative, too_big).result


def _shift_right_as_other_signedness(x, amount, logical: bool):
  """A shift right of 32-bit integer tensor `x` by an amount in range, made
  on the integers of the other signedness: TFLite's RIGHT_SHIFT is
  arithmetic on signed integers and logical on unsigned ones, whatever the
  op asked."""
  element = ir.IntegerType(x.type.element_type)
  other = (
    ir.IntegerType.get_signless(32) if element.is_unsigned else ir.IntegerType.get_unsigned(32)
  )
  bits = [hlo.BitcastConvertOp(values.retyped(v, other), v).result for v in (x, amount)]
  shift = hlo.ShiftRightLogicalOp if logical else hlo.ShiftRightArithmeticOp
  return hlo.BitcastConvertOp(x.type, shift(*bits).result).result


def _logical_shift_right_of_signed(x, amount, width: int):
  """x >>> amount for a signed integer tensor `x` and an amount in range,
  in ops whose TFLite kernels shift as XLA does: 32 bits are shifted as
  uint32; narrower ones are made non-negative in int32 (their bits,
  zero-extended), where an arithmetic shift is a logical one, and wrapped
  back."""
  if width == 32:
    return _shift_right_as_other_signedness(x, amount, logical=True)
  i32 = ir.IntegerType.get_signless(32)
  wide = hlo.ConvertOp(values.retyped(x, i32), x).result
  negative = values.compare(wide, values.filled_like(wide, 0), "LT", "SIGNED")
  zero_extended = hlo.SelectOp(
    negative, hlo.AddOp(wide, values.filled_like(wide, 1 << width)).result, wide
  ).result
  shifted = hlo.ShiftRightArithmeticOp(
    zero_extended, hlo.ConvertOp(values.retyped(amount, i32), amount).result
  ).result
  return hlo.ConvertOp(x.type, shifted).result


def _shift_right_as_xla(op):
  # XLA reads a shift's amount as unsigned, and from the width on a right
  # shift leaves zeros (logical) or copies of the sign bit (arithmetic).
  # TFLite's RIGHT_SHIFT shifts by the amount as it comes (a negative one
  # gave x back), fills a signed integer from its sign bit even for a
  # logical shift (-8 >>> 1 gave -4) and an unsigned one with zeros even
  # for an arithmetic shift. The amount is brought into range and XLA's
  # answer selected outside it, as the graph route does
  # (jax2tf/graph/bit_ops.py), and a shift of the other kind than TFLite's
  # for the type is made on the other signedness.
  width = _integer_width(op.results[0].type)
  if width is None or width > 32:
    return  # TFLite has no 64-bit shifts to fix
  x, amount = op.operands
  signed = not ir.IntegerType(x.type.element_type).is_unsigned
  logical = op.name == "stablehlo.shift_right_logical"
  r = _splat_int(amount)
  checked = r is None or not 0 <= r < width
  # An arithmetic shift of narrow unsigned integers stays narrow (it fills
  # from their sign bit), refused as before (jax2tf/native/module_lanes.py).
  mismatched = logical == signed and (logical or width == 32)
  if not checked and not mismatched:
    return
  with ir.InsertionPoint(op), op.location:
    if checked:
      out = shift_out_of_range(amount, width)
      amount = hlo.SelectOp(out, values.filled_like(amount, 0), amount).result
    if mismatched and logical:
      result = _logical_shift_right_of_signed(x, amount, width)
    elif mismatched:
      result = _shift_right_as_other_signedness(x, amount, logical=False)
    else:
      shifted = op.clone()
      shifted.operands[1] = amount
      result = shifted.results[0]
    if checked:
      if logical:
        fill = values.filled_like(x, 0)
      elif mismatched:
        fill = _shift_right_as_other_signedness(x, values.filled_like(x, width - 1), logical=False)
      else:
        fill = hlo.ShiftRightArithmeticOp(x, values.filled_like(x, width - 1)).result
      result = hlo.SelectOp(out, fill, result).result
  replace(op, result)


# For the TFLite converters only: XLA computes these shifts itself.
SHIFTS_RIGHT_AS_XLA = Pattern(
  "shifts_right_as_xla",
  ("stablehlo.shift_right_logical", "stablehlo.shift_right_arithmetic"),
  _shift_right_as_xla,
)


# In order: a rotation's `or` reads its shifts before they become products.
TFLITE_INTEGER_OPS = (
  OR_OF_DISJOINT_BITS_AS_SUM,
  SHIFT_LEFT_BY_CONSTANT_AS_PRODUCT,
  UINT64_ARITHMETIC_IN_UINT32,
  UINT64_ARITHMETIC_IN_UINT32_WORDS,
)
