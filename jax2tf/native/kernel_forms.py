"""Where a target lacks the kernel of an op, a module writes the form the
graph's rules write for it (the target's `missing_kernels_by_dtype`,
jax2tf/targets/target.py): the same knowledge, read for StableHLO ops.

* `Neg` on floats: LiteRT's NEG (XNNPack's too) gives +0.0 for -0.0, so -x
  is x * -1, which is exact and keeps the signs of zeros, NaN and
  infinities (jax2tf/graph/semantics.py `negate_float`).
* `BitwiseAnd`, `BitwiseOr`, `LeftShift` and `PopulationCount` (and with it
  the leading-zero count) on integers of up to 32 bits: TFLite has none, so they are uint32 arithmetic (add,
  multiply, xor, logical right shift, which it has), with the formulas the
  graph route's jax2tf/graph/portable_bits.py uses
  (jax2tf/targets/uint32_words.py). Narrower integers are extended to 32
  bits, whose low bits come out the same, and cut back. What
  jax2tf/native/integer_patterns.py writes more cheaply (an `or` of
  disjoint bits, a shift by a constant) is written there first.
* `round_nearest_afz` where the target's converter refuses it (its kernel
  list): from floor and ceil, with the graph route's formula
  (jax2tf/targets/rounding.py).
"""

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.native import module_patterns
from jax2tf.native import stablehlo_values as values
from jax2tf.native.integer_patterns import WORDS, shift_out_of_range
from jax2tf.targets import Target, rounding, uint32_words


def _negate_as_product(target: Target):
  def rewrite(op):
    t = op.results[0].type
    if not values.is_float_tensor(t):
      return
    dtype = values.numpy_dtype(ir.RankedTensorType(t).element_type)
    if dtype is None or not target.lacks_kernel("Neg", dtype.name):
      return
    x = op.operands[0]
    with ir.InsertionPoint(op), op.location:
      product = hlo.MulOp(x, values.filled_like(x, -1.0)).result
    module_patterns.replace(op, product)

  return rewrite


def _lacked_integer(target: Target, kernel: str, value) -> ir.IntegerType | None:
  """The element type of integer tensor `value`, of 8 to 32 bits, where
  `target` lacks `kernel` for it; else None."""
  t = value.type
  if not values.is_integer_tensor(t):
    return None
  element = ir.IntegerType(t.element_type)
  dtype = values.numpy_dtype(element)
  if not 8 <= element.width <= 32 or dtype is None or not target.lacks_kernel(kernel, dtype.name):
    return None
  return element


def _low_bits(u, width: int):
  """uint32 `u` with the bits from `width` on cleared (a narrower integer's
  extension undone)."""
  if width == 32:
    return u
  return WORDS.shr(WORDS.mul(u, 1 << (32 - width)), 32 - width)


def _to_u32(x):
  """The bits of integer tensor `x` (8 to 32 bits) as uint32, narrower
  ones extended through int32 (TFLite casts every integer type to int32,
  not all to uint32)."""
  element = ir.IntegerType(x.type.element_type)
  u32 = ir.IntegerType.get_unsigned(32)
  if element.width == 32:
    return x if element.is_unsigned else hlo.BitcastConvertOp(values.retyped(x, u32), x).result
  wide = hlo.ConvertOp(values.retyped(x, ir.IntegerType.get_signless(32)), x).result
  return hlo.BitcastConvertOp(values.retyped(x, u32), wide).result


def _from_u32(u, element):
  """The low bits of uint32 tensor `u` as `element` (the inverse of `_to_u32`)."""
  if element.width == 32:
    return u if element.is_unsigned else hlo.BitcastConvertOp(values.retyped(u, element), u).result
  wide = hlo.BitcastConvertOp(values.retyped(u, ir.IntegerType.get_signless(32)), u).result
  return hlo.ConvertOp(values.retyped(u, element), wide).result


def _in_uint32(target: Target, kernel: str, formula):
  """A rewrite of an op `target` lacks `kernel` for into `formula` of its
  operands' uint32 bits (and their width)."""

  def rewrite(op):
    element = _lacked_integer(target, kernel, op.results[0])
    if element is None:
      return
    with ir.InsertionPoint(op), op.location:
      words = [_to_u32(v) for v in op.operands]
      result = _from_u32(formula(*words, width=element.width), element)
    module_patterns.replace(op, result)

  return rewrite


def _shift_left(x, amount, width: int):
  # XLA's shift reads the amount as unsigned: from the width on (a negative
  # amount too) every bit is shifted out. In range, a product with 2**amount
  # as two factors of at most 2**16, each exact in int32 (TFLite's POW is
  # of floats and int32). `amount` is the uint32 bits of the shift's own.
  out = shift_out_of_range(amount, width)
  zeros = values.filled_like(amount, 0)
  in_range = hlo.SelectOp(out, zeros, amount).result
  s = hlo.BitcastConvertOp(values.retyped(amount, ir.IntegerType.get_signless(32)), in_range).result
  half = hlo.ShiftRightArithmeticOp(s, values.filled_like(s, 1)).result
  two = values.filled_like(s, 2)
  factors = [hlo.PowOp(two, e).result for e in (half, hlo.SubtractOp(s, half).result)]
  factor = WORDS.mul(*(_to_u32(f) for f in factors))
  return hlo.SelectOp(out, zeros, WORDS.mul(x, factor)).result


class _HloFloatOps:
  """StableHLO ops for the formulas of jax2tf/targets/rounding.py; a float
  is a constant of `like`'s type."""

  def __init__(self, like):
    self.like = like

  def _value(self, v):
    return values.filled_like(self.like, v) if isinstance(v, float) else v

  def floor(self, x):
    return hlo.FloorOp(x).result

  def ceil(self, x):
    return hlo.CeilOp(x).result

  def abs(self, x):
    return hlo.AbsOp(x).result

  def add(self, x, y):
    return hlo.AddOp(x, self._value(y)).result

  def sub(self, x, y):
    return hlo.SubtractOp(x, self._value(y)).result

  def less(self, x, c):
    return values.compare(x, self._value(c), "LT")

  def greater_equal(self, x, c):
    return values.compare(x, self._value(c), "GE")

  def select(self, pred, a, b):
    return hlo.SelectOp(pred, self._value(a), self._value(b)).result


def _round_half_away_from_floor(target: Target):
  def rewrite(op):
    x = op.operands[0]
    dtype = values.numpy_dtype(x.type.element_type)
    if dtype is None or not target.refuses("mhlo.round_nearest_afz", (dtype.name,)):
      return
    with ir.InsertionPoint(op), op.location:
      rounded = rounding.round_half_away_from_zero(_HloFloatOps(x), x)
    module_patterns.replace(op, rounded)

  return rewrite


def patterns_for(target: Target) -> tuple[module_patterns.Pattern, ...]:
  """The forms of the ops `target` lacks kernels for, as module patterns."""

  def form(name: str, ops: str, rewrite):
    return module_patterns.Pattern(f"{name}_for_{target.name}", (ops,), rewrite)

  return (
    form("negate_as_product", "stablehlo.negate", _negate_as_product(target)),
    form(
      "round_half_away_from_floor",
      "stablehlo.round_nearest_afz",
      _round_half_away_from_floor(target),
    ),
    form(
      "and_in_uint32",
      "stablehlo.and",
      _in_uint32(target, "BitwiseAnd", lambda a, b, width: uint32_words.bitwise_and(WORDS, a, b)),
    ),
    form(
      "or_in_uint32",
      "stablehlo.or",
      _in_uint32(target, "BitwiseOr", lambda a, b, width: uint32_words.bitwise_or(WORDS, a, b)),
    ),
    form(
      "shift_left_in_uint32", "stablehlo.shift_left", _in_uint32(target, "LeftShift", _shift_left)
    ),
    form(
      "clz_in_uint32",
      "stablehlo.count_leading_zeros",
      # TF has no leading-zero count: the graph route smears and counts
      # bits, so it is portable where PopulationCount is.
      _in_uint32(
        target,
        "PopulationCount",
        lambda u, width: uint32_words.count_leading_zeros(WORDS, _low_bits(u, width), width),
      ),
    ),
    form(
      "popcount_in_uint32",
      "stablehlo.popcnt",
      _in_uint32(
        target,
        "PopulationCount",
        lambda u, width: uint32_words.population_count(WORDS, _low_bits(u, width), width),
      ),
    ),
  )
