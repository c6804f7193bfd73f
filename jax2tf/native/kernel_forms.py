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
* `log`, `log_plus_one`, `exponential_minus_one`, `tan` and JAX's
  composites for `sinh`, `cosh`, `asinh`, `atanh`, `asin` and `acos`, where
  the target lacks the TF op: the graph route's formulas of
  jax2tf/targets/portable_math.py (16-bit floats in float32).
* Without XLA (TFLite's converters): `cbrt`, float `remainder`, float
  `sign` and float-to-integer `convert` with XLA's values, from the graph
  route's formulas of jax2tf/targets/float_formulas.py.
"""

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.native import module_patterns
from jax2tf.native import stablehlo_values as values
from jax2tf.native.integer_patterns import WORDS, shift_out_of_range
from jax2tf.targets import Target, float_formulas, portable_math, rounding, uint32_words


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
  """StableHLO ops for the formulas of jax2tf/targets/rounding.py,
  float_formulas.py and portable_math.py; a float is a constant of
  `like`'s type."""

  def __init__(self, like, int_type=None):
    self.like = like
    self.int_type = int_type  # the result's tensor type, for float_to_int

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

  def mul(self, x, y):
    return hlo.MulOp(x, self._value(y)).result

  def div(self, x, y):
    return hlo.DivOp(x, self._value(y)).result

  def reciprocal(self, x):
    return hlo.DivOp(values.filled_like(x, 1.0), x).result

  def pow(self, x, c):
    return hlo.PowOp(x, self._value(c)).result

  def negate(self, x):
    # A product: LiteRT's NEG gives +0.0 for -0.0 (see _negate_as_product).
    return hlo.MulOp(x, self._value(-1.0)).result

  def equal(self, x, y):
    return values.compare(x, self._value(y), "EQ")

  def less(self, x, c):
    return values.compare(x, self._value(c), "LT")

  def greater_equal(self, x, c):
    return values.compare(x, self._value(c), "GE")

  def is_regular(self, x):
    finite = hlo.IsFiniteOp(x).result
    return hlo.AndOp(finite, values.compare(x, self._value(0.0), "NE")).result

  def is_negative(self, x):
    return values.is_negative(x)

  def remainder_of_magnitudes(self, a, b):
    # The converters write a remainder from a floored modulo, which on
    # magnitudes needs none of its corrections.
    return hlo.RemOp(a, b).result

  def select(self, pred, a, b):
    return hlo.SelectOp(pred, self._value(a), self._value(b)).result

  def less_equal(self, x, c):
    return values.compare(x, self._value(c), "LE")

  def is_nan(self, x):
    return values.is_nan(x)

  def logical_or(self, a, b):
    return hlo.OrOp(a, b).result

  def truncate(self, x):
    return hlo.ConvertOp(self.int_type, x).result

  def int_select(self, pred, value, res):
    return hlo.SelectOp(pred, values.filled_like(res, value), res).result

  def sign(self, x):
    return hlo.SignOp(x).result

  def constant(self, c, like):
    return values.filled_like(like, c)

  def exp(self, x):
    return hlo.ExpOp(x).result

  def log(self, x):
    return hlo.LogOp(x).result

  def sqrt(self, x):
    return hlo.SqrtOp(x).result

  def sin(self, x):
    return hlo.SineOp(x).result

  def cos(self, x):
    return hlo.CosineOp(x).result

  def atan2(self, y, x):
    return hlo.Atan2Op(y, x).result

  def round_half_even(self, x):
    return hlo.RoundNearestEvenOp(x).result

  def not_equal(self, x, y):
    return values.compare(x, self._value(y), "NE")


def _float_to_int(op):
  x = op.operands[0]
  t = op.results[0].type
  if not values.is_float_tensor(x.type) or not values.is_integer_tensor(t):
    return
  dtype = values.numpy_dtype(ir.RankedTensorType(t).element_type)
  if dtype is None or dtype == np.bool_:
    return
  info = np.iinfo(dtype)
  with ir.InsertionPoint(op), op.location:
    res = float_formulas.float_to_int(_HloFloatOps(x, t), x, int(info.min), int(info.max))
  module_patterns.replace(op, res)


def _complex_of_real(op):
  # A complex of a real and +0.0 is the real converted: LiteRT's CAST
  # makes complex64 of float32, where a complex of two reals is TF's
  # Complex, which only the Flex delegate runs.
  real, imag = op.operands
  if module_patterns.zeros_sign(imag) is False:  # +0.0 throughout
    with ir.InsertionPoint(op), op.location:
      module_patterns.replace(op, hlo.ConvertOp(op.results[0].type, real).result)


# An iota of this many elements at most becomes a constant where its type
# is 64 bits wide: 512 KiB of a model (1 MiB of complex128).
_MOST_CONSTANT_IOTA = 1 << 16


def _wide_iota_as_constant(op):
  # Both converters write an iota as RANGE and BROADCAST_TO (and a complex
  # one as `_complex_iota`'s CAST), which LiteRT has no kernels of for
  # float64, 64-bit integers or complex128; at static sizes it is a constant.
  t = ir.RankedTensorType(op.results[0].type)
  element = t.element_type
  if isinstance(element, ir.ComplexType):
    dtype = np.dtype(np.complex128) if str(element.element_type) == "f64" else None
  else:
    dtype = values.numpy_dtype(element)
  if dtype is None or dtype.itemsize != 8 and dtype.kind != "c":
    return
  if not t.has_static_shape or np.prod(t.shape) > _MOST_CONSTANT_IOTA:
    return
  axis = ir.IntegerAttr(op.attributes["iota_dimension"]).value
  positions = np.arange(t.shape[axis], dtype=dtype).reshape(
    [n if d == axis else 1 for d, n in enumerate(t.shape)]
  )
  data = np.ascontiguousarray(np.broadcast_to(positions, t.shape))
  with ir.InsertionPoint(op), op.location:
    constant = hlo.ConstantOp(ir.DenseElementsAttr.get(data, type=t)).result
    module_patterns.replace(op, constant)


def _complex_iota(op):
  # An iota of complex numbers is an iota of their real parts (LiteRT has
  # no complex IOTA), converted as `_complex_of_real`.
  t = op.results[0].type
  if not isinstance(t.element_type, ir.ComplexType):
    return
  part = t.element_type.element_type
  with ir.InsertionPoint(op), op.location:
    reals = hlo.IotaOp(values.retyped(op.results[0], part), op.attributes["iota_dimension"])
    module_patterns.replace(op, hlo.ConvertOp(t, reals.result).result)


def _root_exponent(op) -> float | None:
  """The exponent of a power whose exponent is a constant 0.5 or -0.5."""
  c = values.constant_at_any_shape(op.operands[1])
  if c is None or c.elements is None or c.elements.size == 0:
    return None
  first = float(c.elements[0])
  if first not in (0.5, -0.5) or np.any(c.elements != first):
    return None
  return first


def _root_power(op):
  # The converters take these exponents for SQRT and RSQRT.
  exponent = _root_exponent(op)
  if exponent is not None:
    _in_float32(lambda ops, x, _: float_formulas.root_power(ops, x, exponent))(op)


def _in_float32(formula, applies=lambda op, dtype: True):
  """A rewrite of a float op (that `applies` to, given its NumPy dtype)
  into `formula(ops, *operands)`, 16-bit floats computed in float32 and
  rounded once, as XLA computes them."""

  def rewrite(op):
    t = op.results[0].type
    if not values.is_float_tensor(t):
      return
    element = ir.RankedTensorType(t).element_type
    dtype = values.numpy_dtype(element)
    if dtype is None or not applies(op, dtype):
      return
    narrow = isinstance(element, (ir.F16Type, ir.BF16Type))
    with ir.InsertionPoint(op), op.location:
      xs = list(op.operands)
      if narrow:
        f32 = ir.F32Type.get()
        xs = [hlo.ConvertOp(values.retyped(x, f32), x).result for x in xs]
      res = formula(_HloFloatOps(xs[0]), *xs)
      if narrow:
        res = hlo.ConvertOp(t, res).result
    module_patterns.replace(op, res)

  return rewrite


# The elementary functions of jax2tf/targets/portable_math.py, by the TF op
# a target may lack: StableHLO's own ops, and the composites JAX writes for
# chlo ops (whose decompositions would run on kernels that lose the signs of
# zeros and accuracy near zero). Log first: the forms after it write LOGs of
# their own, which are meant as they are.
_MATH_OPS = (
  ("stablehlo.log", "Log", portable_math.log),
  ("stablehlo.log_plus_one", "Log1p", portable_math.log1p),
  ("stablehlo.exponential_minus_one", "Expm1", portable_math.expm1),
  ("stablehlo.tan", "Tan", portable_math.tan),
)
_MATH_COMPOSITES = (
  ("chlo.sinh", "Sinh", portable_math.sinh),
  ("chlo.cosh", "Cosh", portable_math.cosh),
  ("chlo.asinh", "Asinh", portable_math.asinh),
  ("chlo.atanh", "Atanh", portable_math.atanh),
  ("chlo.asin", "Asin", portable_math.asin),
  ("chlo.acos", "Acos", portable_math.acos),
)


def _is_a_sum_over_the_last_axis(value) -> bool:
  """Whether `value` is a reduction's result along the last axis of its
  operand, reshaped or not (the sum of a log_softmax over the last axis,
  kept as a dimension of 1), as the flatbuffer pass fuses it."""
  while isinstance(value, ir.OpResult) and value.owner.name in _RESHAPING:
    value = value.owner.operands[0]
  if not (isinstance(value, ir.OpResult) and value.owner.name == "stablehlo.reduce"):
    return False
  rank = ir.RankedTensorType(value.owner.operands[0].type).rank
  return list(ir.DenseI64ArrayAttr(value.owner.attributes["dimensions"])) == [rank - 1]


_RESHAPING = (
  "stablehlo.broadcast_in_dim",
  "stablehlo.dynamic_broadcast_in_dim",
  "stablehlo.dynamic_reshape",
  "stablehlo.reshape",
)


def _composite_name(op) -> str:
  return ir.StringAttr(op.attributes["name"]).value


def composite_forms_for(target: Target) -> tuple[module_patterns.Pattern, ...]:
  """The forms of the chlo composites `target` lacks kernels for: before
  the pipeline inlines composites."""

  def lacked(name, kernel):
    return lambda op, dtype: _composite_name(op) == name and target.lacks_kernel(kernel, dtype.name)

  return tuple(
    module_patterns.Pattern(
      f"{name}_portable_for_{target.name}",
      ("stablehlo.composite",),
      _in_float32(formula, lacked(name, kernel)),
    )
    for name, kernel, formula in _MATH_COMPOSITES
  )


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

  without_xla = (
    ()
    if target.xla_ops
    else (
      # A consumer without XLA has no cube root (TF none; litert-converter's
      # is a power of 1/3, NaN below zero) nor truncated float remainder.
      form("cbrt_from_power", "stablehlo.cbrt", _in_float32(float_formulas.cbrt)),
      form("fmod_of_magnitudes", "stablehlo.remainder", _in_float32(float_formulas.fmod)),
      form("root_power", "stablehlo.power", _root_power),
      form("complex_of_real_as_convert", "stablehlo.complex", _complex_of_real),
      form("wide_iota_as_constant", "stablehlo.iota", _wide_iota_as_constant),
      form("complex_iota_as_convert", "stablehlo.iota", _complex_iota),
      # Its casts leave NaN and floats out of the integer's range undefined.
      form("float_to_int_saturating", "stablehlo.convert", _float_to_int),
      # float64 keeps LiteRT's SIGN: LiteRT compares no float64.
      form(
        "sign_keeping_zeros",
        "stablehlo.sign",
        _in_float32(float_formulas.sign, lambda op, dtype: dtype != np.float64),
      ),
    )
  )

  def lacked(kernel):
    def applies(op, dtype):
      if kernel == "Log" and _is_a_sum_over_the_last_axis(op.operands[0]):
        # log(sum(exp(x - max))): the flatbuffer pass makes the chain one
        # LOG_SOFTMAX (jax2tf/lite/activations.py), whose kernel is exact
        # where LiteRT's LOG is not. Along another axis it stays a LOG,
        # which on x86 CPUs without AVX-512 gives 88.7 for a row's NaN.
        return False
      return target.lacks_kernel(kernel, dtype.name)

    return applies

  math = tuple(
    form(f"{name.split('.')[1]}_portable", name, _in_float32(formula, lacked(kernel)))
    for name, kernel, formula in _MATH_OPS
  )
  return (
    math
    + without_xla
    + (
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
  )
