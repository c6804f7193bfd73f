"""Elementwise math, comparisons, logic and conversions, with JAX's semantics.

Every rule here emits ordinary TF ops only, so each works with enable_xla=False.

Two recurring concerns:

* JAX's semantics are XLA's, which differ from the plain TF kernels in corner
  cases (integer division by zero, shifts by the bit width or more, NaN in
  max/min/clamp, float->int conversion of NaN and out-of-range values, sign of
  zero). The rules spell those cases out so that TF eager, TF graph and
  TF-compiled all give what `jax.jit` gives.
* TF's CPU kernels lack some dtypes (unsigned ints for Neg/Abs/Sign/TruncateMod,
  int8/int16 for TruncateMod, float16/bfloat16 for TruncateMod/NextAfter)
  although the XLA kernels have them. Where a rule computes in another type,
  the detour is exact (integer arithmetic that wraps the same way, float ops
  whose result is representable in the narrow type). Transcendental functions
  of float16/bfloat16 are evaluated in float32 and rounded once, as XLA does.
* Denormal floats: TF's CPU kernels run with flush-to-zero, so float results
  that are or come from denormals can differ from XLA's; no rule corrects this.

Cases: tests/cases/elementwise.py
"""

import functools

import ml_dtypes
import numpy as np
import tensorflow as tf
from jax import lax
from jax.extend.core import primitives as core_primitives

from jax2tf.graph import int32_bits, int_lanes, registry, windowing
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register
from jax2tf.targets import float_formulas, portable_math, quirks, rounding

# Integers narrower than 32 bits: several TF and TFLite kernels lack them.
_NARROW_INTS = (tf.int8, tf.uint8, tf.int16, tf.uint16)

# ---------------------------------------------------------------------------
# Unary float math that TF has for every dtype JAX accepts.

# TF's float16/bfloat16 kernels for these evaluate approximations in the narrow
# type; XLA evaluates them in float32 and rounds once, and so do these rules.


def _math_with_accuracy(tf_fn):
  def rule(ctx, x, *, accuracy=None):
    # `accuracy` is a hint about acceptable approximation error; TF's kernels
    # have one implementation each, the most accurate one.
    del accuracy
    return sem.in_f32(tf_fn, x)

  return rule


for _p, _fn in [
  (lax.sin_p, tf.sin),
  (lax.cos_p, tf.cos),
  (lax.tanh_p, tf.tanh),
  (lax.sqrt_p, tf.sqrt),
  (lax.rsqrt_p, tf.math.rsqrt),
  (lax.logistic_p, tf.sigmoid),
]:
  register(_p)(_math_with_accuracy(_fn))


@register(lax.log_p)
def _log(ctx, x, *, accuracy=None):
  del accuracy  # see _math_with_accuracy
  if sem.producer(x) in ("Add", "AddV2"):
    if any(sem.is_constant_of(term, [1]) for term in x.op.inputs):
      x = ctx.hide_from_grappler(x, "log1p")
  return sem.in_f32(ctx.kernel_or("Log", tf.math.log, _log_portable, x.dtype), x)


def _exp_complex(z):
  # As XLA computes it, which differs from TF's kernel (C99's cexp) at
  # special values: e^(a/2) cis(b) e^(a/2), finite where e^a alone would
  # overflow, and an imaginary part of +0 where b is a zero of either sign
  # (C99 keeps b's sign: exp(1 - 0j) is e - 0j, JAX's e + 0j).
  a, b = tf.math.real(z), tf.math.imag(z)
  half = tf.exp(a / sem.const(2, a.dtype))
  imag = tf.where(tf.equal(b, 0), tf.zeros_like(b), half * tf.sin(b) * half)
  return tf.complex(half * tf.cos(b) * half, imag)


@register(lax.exp_p)
def _exp(ctx, x, *, accuracy=None):
  del accuracy  # see _math_with_accuracy
  return _exp_complex(x) if x.dtype.is_complex else sem.in_f32(tf.exp, x)


# Without XLA the graph feeds the TFLite and TF.js converters, which lack
# some of these kernels: the formulas of jax2tf/targets/portable_math.py,
# which a native module for those targets computes too.
def _portable(formula):
  return lambda x: formula(_TfFloatOps(x.dtype), x)


_log_portable = _portable(portable_math.log)


def _portable_rule(op: str, tf_fn, portable_fn):
  # The target's kernel list says which of these it formulates (the
  # formulations only TFLite needs leave float64 to TF's kernel: their
  # series are truncated for float32, and TFLite's float64 kernels are few).
  def rule(ctx, x, *, accuracy=None):
    del accuracy  # see _math_with_accuracy
    return sem.in_f32(ctx.kernel_or(op, tf_fn, portable_fn, x.dtype), x)

  return rule


for _p, _op, _tf_fn, _formula in [
  (lax.atan_p, "Atan", tf.atan, portable_math.atan),
  (lax.asin_p, "Asin", tf.asin, portable_math.asin),
  (lax.cosh_p, "Cosh", tf.cosh, portable_math.cosh),
  (lax.tan_p, "Tan", tf.tan, portable_math.tan),
  (lax.acos_p, "Acos", tf.acos, portable_math.acos),
  (lax.sinh_p, "Sinh", tf.sinh, portable_math.sinh),
  (lax.asinh_p, "Asinh", tf.asinh, portable_math.asinh),
  (lax.acosh_p, "Acosh", tf.acosh, portable_math.acosh),
  (lax.atanh_p, "Atanh", tf.atanh, portable_math.atanh),
  (lax.expm1_p, "Expm1", tf.math.expm1, portable_math.expm1),
  (lax.log1p_p, "Log1p", tf.math.log1p, portable_math.log1p),
]:
  register(_p)(_portable_rule(_op, _tf_fn, _portable(_formula)))

for _p, _fn in [
  (lax.floor_p, tf.floor),
  (lax.ceil_p, tf.math.ceil),
  (lax.is_finite_p, tf.math.is_finite),
]:
  register(_p)(lambda ctx, x, _fn=_fn: _fn(x))


# Not in float32 lanes: JAX rounds the product below to a 16-bit x's dtype
# (exp2(2.828125) is 7.0625 in bfloat16, not the nearer 7.09375).
@register(lax.exp2_p, float16_in_float32=False)
def _exp2(ctx, x, *, accuracy=None):
  del accuracy
  # JAX lowers exp2 as exp(log(2) * x) with log(2) rounded to x's dtype.
  log2 = sem.const(np.log(2.0), x.dtype)
  # The product in float32, rounded back, is the correctly rounded one; TF's
  # XLA keeps that rounding (not a 16-bit multiply's, whose result it then
  # reads unrounded), and TFLite has no 16-bit multiply.
  product = sem.in_f32(tf.multiply, log2, x)
  return sem.in_f32(tf.exp, product)


@register(lax.cbrt_p)
def _cbrt(ctx, x, *, accuracy=None):
  del accuracy
  return sem.in_f32(lambda v: float_formulas.cbrt(_TfFloatOps(v.dtype), v), x)


@register(lax.round_p)
def _round(ctx, x, *, rounding_method):
  if int(rounding_method) == int(lax.RoundingMethod.TO_NEAREST_EVEN):
    return tf.round(x)  # TF's Round rounds half to even.
  return rounding.round_half_away_from_zero(_TfFloatOps(x.dtype), x)


class _TfFloatOps:
  """TF ops for the formulas of jax2tf/targets/rounding.py,
  float_formulas.py and portable_math.py, on `dtype` (`signed_zeros`: the
  target's)."""

  def __init__(self, dtype, signed_zeros: bool = True, int_dtype=None, ctx=None):
    self.dtype = dtype
    self.signed_zeros = signed_zeros
    self.int_dtype = int_dtype
    self.ctx = ctx  # the rule's, where a formula divides 1 by a value

  def reciprocal(self, x):
    return _reciprocal(self.ctx, x)

  def _value(self, v):
    return sem.const(v, self.dtype) if isinstance(v, float) else v

  floor, ceil, abs = staticmethod(tf.floor), staticmethod(tf.math.ceil), staticmethod(tf.abs)

  def add(self, x, y):
    return x + self._value(y)

  def sub(self, x, y):
    return x - self._value(y)

  def mul(self, x, y):
    return x * self._value(y)

  def div(self, x, y):
    return x / self._value(y)

  def pow(self, x, c):
    return tf.pow(x, self._value(c))

  def negate(self, x):
    return sem.negate_float(x)

  def equal(self, x, y):
    return tf.equal(x, self._value(y))

  def less(self, x, c):
    return x < self._value(c)

  def greater_equal(self, x, c):
    return x >= self._value(c)

  def is_regular(self, x):
    return tf.logical_and(tf.math.is_finite(x), tf.not_equal(x, self._value(0.0)))

  def is_negative(self, x):
    return sem.is_negative(x, signed_zeros=self.signed_zeros)

  def remainder_of_magnitudes(self, a, b):
    # TruncateMod has no TFLite or TF.js kernel; FloorMod has.
    return tf.math.floormod(a, b)

  def less_equal(self, x, c):
    return x <= self._value(c)

  def constant(self, c, like):
    return tf.fill(tf.shape(like), sem.const(c, self.dtype))

  exp, log, sqrt = staticmethod(tf.exp), staticmethod(tf.math.log), staticmethod(tf.sqrt)
  sin, cos, atan2 = staticmethod(tf.sin), staticmethod(tf.cos), staticmethod(tf.math.atan2)
  round_half_even = staticmethod(tf.round)  # TF's Round rounds half to even

  def not_equal(self, x, y):
    return tf.not_equal(x, self._value(y))

  is_nan, logical_or = staticmethod(tf.math.is_nan), staticmethod(tf.logical_or)
  sign = staticmethod(tf.sign)

  def truncate(self, x):
    return tf.cast(x, self.int_dtype)

  def int_select(self, pred, value, res):
    return tf.where(pred, sem.const(value, self.int_dtype), res)

  def select(self, pred, a, b):
    return tf.where(pred, self._value(a), self._value(b))


@register(lax.neg_p, uint32_as_int32_bits=True)  # uint32 lanes negate as int32 does
def _neg(ctx, x):
  if sem.is_int(x.dtype):
    return ctx.bits.negative(x)
  if sem.is_float(x.dtype):  # LiteRT's NEG loses the sign of zeros
    return ctx.kernel_or("Neg", tf.negative, sem.negate_float, x.dtype)(x)
  return tf.negative(x)


def _is_nonzero(ctx, x) -> tf.Tensor:
  """x != 0 for an integer `x`."""
  return ctx.kernel_or("NotEqual", _nonzero, _nonzero_in_int32, x.dtype)(x)


def _nonzero(x):
  return tf.not_equal(x, tf.zeros_like(x))


def _nonzero_in_int32(x):
  # uint32 bits read as int32 are zero exactly where they are; int32 holds
  # 8- and 16-bit integers exactly.
  return _nonzero(tf.bitcast(x, tf.int32) if x.dtype == tf.uint32 else tf.cast(x, tf.int32))


@register(lax.sign_p)
def _sign(ctx, x):
  if sem.is_unsigned(x.dtype):
    return tf.cast(_is_nonzero(ctx, x), x.dtype)
  if sem.is_float(x.dtype):
    return float_formulas.sign(_TfFloatOps(x.dtype), x)
  return tf.sign(x)


@register(lax.abs_p)
def _abs(ctx, x):
  if sem.is_unsigned(x.dtype):
    return x
  if sem.is_int(x.dtype):
    return ctx.bits.abs(x)
  return tf.abs(x)  # complex -> its real dtype, as in JAX


@register(lax.square_p, uint32_as_int32_bits=True)
def _square(ctx, x):
  if sem.is_int(x.dtype):
    return ctx.bits.square(x)
  return tf.square(x)


if hasattr(lax, "one_minus_square_p"):  # newer JAX: in the VJPs of tanh, asin, ...

  @register(lax.one_minus_square_p)
  def _one_minus_square(ctx, x):
    # (1 + x) * (1 - x), as JAX lowers it: no cancellation for |x| near 1.
    one = tf.ones_like(x)
    return tf.multiply(tf.add(one, x), tf.subtract(one, x))


if hasattr(lax, "log2_p"):  # newer JAX: jnp.log2 binds its own primitive

  @register(lax.log2_p)
  def _log2(ctx, x, *, accuracy=None):
    del accuracy
    # As JAX lowers it: log(x) times 1/log(2) rounded to x's real dtype
    # (real and imaginary parts scaled separately for complex x).
    y = sem.in_f32(tf.math.log, x)
    re = tf.math.real(y) if sem.is_complex(x.dtype) else y
    scale = sem.const(1.0 / np.log(2.0), re.dtype)
    if sem.is_complex(x.dtype):
      return tf.complex(tf.multiply(re, scale), tf.multiply(tf.math.imag(y), scale))
    return tf.multiply(y, scale)


if hasattr(lax, "polynomial_p"):  # newer JAX: lax.polynomial

  @register(lax.polynomial_p)
  def _polynomial(ctx, x, *coeffs, unroll=None):
    # Horner's rule in JAX's order of operations. Past `unroll` terms JAX runs
    # a scan that starts from zeros, one more multiply-add (so 0 * inf gives NaN
    # there, as it does here); either way the result broadcasts x and coeffs.
    threshold = 8 if unroll is None else unroll
    shape = ctx.shape(ctx.aval_out.shape)
    if len(coeffs) <= threshold:
      acc, rest = coeffs[-1], coeffs[:-1]
    else:
      acc, rest = tf.zeros(shape, x.dtype), coeffs
    for c in reversed(rest):
      acc = tf.add(tf.multiply(acc, x), c)
    return tf.broadcast_to(acc, shape)


@register(lax.pow_p)
def _pow(ctx, x, y):
  # JAX converts an integer exponent to the base's dtype before HLO power.
  if y.dtype != x.dtype:
    y = tf.cast(y, x.dtype)
  exponent = sem.constant_value(y)
  if (
    sem.is_float(x.dtype)
    and exponent is not None
    and (y.shape.rank == 0 or x.shape == y.shape)
    and exponent.size
    and np.all(exponent == exponent.flat[0])
    and float(exponent.flat[0]) in (0.5, -0.5, -1.0)
  ):
    return sem.in_f32(lambda base: _root_power(ctx, base, float(exponent.flat[0])), x)
  if x.dtype.is_complex:
    return _complex_pow(x, y)
  return sem.in_f32(tf.pow, x, y)


def _complex_pow(x, y):
  """x ** y as XLA gives it at a zero base: 1 for a zero exponent, 0 for a
  positive real one, NaN for any other. TF's kernel, exp(y log x), gives NaN
  for 0 ** 0 and -0.0 or infinite parts elsewhere."""
  res = tf.pow(x, y)
  shape = tf.shape(res)
  real_positive = tf.logical_and(tf.math.imag(y) == 0, tf.math.real(y) > 0)
  at_zero = tf.where(
    tf.equal(y, 0),
    sem.const(1, x.dtype),
    tf.where(real_positive, sem.const(0, x.dtype), sem.const(complex(np.nan, np.nan), x.dtype)),
  )
  zero_base = tf.broadcast_to(tf.equal(x, 0), shape)
  return tf.where(zero_base, tf.broadcast_to(at_zero, shape), res)


def _root_power(ctx, x, exponent: float):
  """x ** exponent for a constant exponent of 0.5, -0.5 or -1, as XLA gives
  it: from a square root or a division (correctly rounded); TF's Pow misses
  the last bit, and grappler takes these exponents for Sqrt, Rsqrt and
  Reciprocal (float_formulas.root_power)."""
  if exponent == -1:
    return _reciprocal(ctx, x)
  return float_formulas.root_power(_TfFloatOps(x.dtype, ctx=ctx), x, exponent)


def _reciprocal(ctx, x):
  """1 / x with JAX's rounding: a division whose 1 grappler cannot see (it
  would compute a Reciprocal, which misses the last bit: 1 / 1.0 is
  0.99999994 on CPUs with AVX-512)."""
  one = ctx.hide_from_grappler(tf.ones([], x.dtype), "reciprocal")
  return _constant_first(ctx, tf.math.truediv, one, x)


@register(lax.integer_pow_p, uint32_as_int32_bits=True)
def _integer_pow(ctx, x, *, y):
  if y == 0:
    return tf.ones_like(x)
  # Square-and-multiply in the operand's dtype: the same products, in the same
  # order, as JAX's expansion, so floats round identically.
  multiply = ctx.bits.multiply
  n, acc, base = abs(y), None, x
  while n:
    if n & 1:
      acc = base if acc is None else multiply(acc, base)
    n >>= 1
    if n:
      base = multiply(base, base)
  if y < 0:
    return _reciprocal(ctx, acc)
  return acc


@register(lax.atan2_p)
def _atan2(ctx, x, y):
  if sem.is_complex(x.dtype):
    # StableHLO's complex atan2: -i log((y + i x) / sqrt(y^2 + x^2)).
    i = sem.const(1j, x.dtype)
    return -i * tf.math.log((y + i * x) / tf.sqrt(y * y + x * x))
  return sem.in_f32(tf.math.atan2, x, y)  # lax.atan2(x, y) is atan(x / y): TF's Atan2(y, x)


# ---------------------------------------------------------------------------
# Arithmetic.


def _doubled_complex_hidden(ctx, x, y):
  """`y`, hidden from TF's graph optimizer where `x op y` is a complex x + x
  (or x - (-x))."""
  if sem.is_complex(x.dtype) and (y is x or (sem.producer(y) == "Neg" and y.op.inputs[0] is x)):
    return ctx.hide_from_grappler(y, "complex_doubling")
  return y


def _add(ctx, x, y):
  if x.dtype == tf.bool:
    return tf.logical_or(x, y)
  y = _doubled_complex_hidden(ctx, x, y)
  x, y = sem.in_written_order(x, y, sem.SUMS, ctx.hide_from_grappler)
  return tf.add(*_complex_operands_broadcast(ctx, x, y))


# Addition and subtraction wrap alike on signed and unsigned bits.
register(lax.add_p, uint32_as_int32_bits=True)(_add)
register(core_primitives.add_jaxvals_p, uint32_as_int32_bits=True)(_add)


@register(lax.sub_p, uint32_as_int32_bits=True)
def _sub(ctx, x, y):
  if sem.is_constant_of(x, [0]):
    x = ctx.hide_from_grappler(x, "neg")
  elif sem.producer(x) == "Exp" and sem.is_constant_of(y, [1]):
    y = ctx.hide_from_grappler(y, "expm1")
  else:
    y = _doubled_complex_hidden(ctx, x, y)
  difference = _constant_first(ctx, tf.subtract, *_complex_operands_broadcast(ctx, x, y))
  if difference.dtype in _NO_SQUARED_DIFFERENCE:
    return ctx.hide_from_grappler(difference, "squared_difference")
  return difference


_NO_SQUARED_DIFFERENCE = frozenset({*_NARROW_INTS, tf.uint32, tf.uint64})


def _is_constant(t) -> bool:
  """Whether TF's TFLite converter will see `t` as a constant."""
  return sem.constant_value(t) is not None


def _transposed(t) -> bool:
  return quirks.transpose_moves_below(
    t,
    is_transpose=lambda t: t.op.type == "Transpose",
    varying_operands=lambda t: [i for i in t.op.inputs if not _is_constant(i)],
  )


def _constant_first(ctx, op, x, y):
  """op(x, y) for Sub or Div, which do not commute.

  TF's TFLite converter moves a Transpose below a Sub or Div whose other
  operand is a constant, and rebuilds the op with the transposed operand
  first: 3 - transpose(a) became a - 3, 3 / transpose(a) became a / 3
  (push-transpose-through-ewise, TF 2.21). A Reshape between hides the
  Transpose from that rewrite: the op runs on both operands with a leading
  unit axis, and its result is reshaped back.
  """
  if not ctx.target.swaps_constant_first_operands or tf.executing_eagerly():
    return op(x, y)
  if not _is_constant(x) or not _transposed(y):
    return op(x, y)

  out = op(*(_with_rank(v, 1 + max(x.shape.rank, y.shape.rank)) for v in (x, y)))
  return tf.reshape(out, out.shape[1:] if out.shape.is_fully_defined() else tf.shape(out)[1:])


def _with_rank(v, rank: int):
  """`v` reshaped to `rank` axes, the new ones leading and of size 1."""
  if v.shape.rank == rank:
    return v
  ones = [1] * (rank - v.shape.rank)
  if v.shape.is_fully_defined():
    return tf.reshape(v, ones + v.shape.as_list())
  return tf.reshape(v, tf.concat([ones, tf.shape(v)], 0))


def _complex_operands_broadcast(ctx, x, y):
  """`x` and `y` for a complex Add, Sub or Mul. Where the target's do not
  broadcast (TF.js's, cpu backend, 4.22, index an operand of lower rank, a
  scalar say, as if it had the result's size, reading past its end: NaN),
  both get the result's rank (leading unit axes), with which they do."""
  if ctx.target.broadcasts_complex_operands or not x.dtype.is_complex:
    return x, y
  if x.shape.rank == y.shape.rank:
    return x, y
  rank = max(x.shape.rank, y.shape.rank)
  return _with_rank(x, rank), _with_rank(y, rank)


@register(lax.mul_p, uint32_as_int32_bits=True)
def _mul(ctx, x, y, *, out_dtype=None):
  if out_dtype is not None:
    target = ctx.tf_dtype()
    x, y = tf.cast(x, target), tf.cast(y, target)
  if x.dtype == tf.bool:
    return tf.logical_and(x, y)
  if x.dtype == tf.int32:
    return ctx.bits.multiply(x, y)  # exact where the target's products are not
  x, y = sem.in_written_order(x, y, sem.PRODUCTS, ctx.hide_from_grappler)
  return tf.multiply(*_complex_operands_broadcast(ctx, x, y))


if hasattr(lax, "mulhi_p"):

  @register(lax.mulhi_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
  def _mulhi(ctx, x, y):
    # The high half of the double-width product, signed for signed types.
    dtype = np.dtype(ctx.avals_in[0].dtype)
    if dtype.itemsize == 8:
      raise registry.unsupported_params_error(
        ctx.primitive,
        {"dtype": dtype.name},
        "the high half of a 64-bit product needs 128-bit integers, which TF has no "
        "tensors of; use 32-bit operands",
      )
    return ctx.bits.multiply_high(x, y, signed=dtype.kind != "u")


def _safe_int_divisor(x, y):
  """(divisor with 0 and -1 replaced by 1, y == 0, y == -1 or None)."""
  is_zero = tf.equal(y, 0)
  if sem.is_unsigned(y.dtype):
    return tf.where(is_zero, tf.ones_like(y), y), is_zero, None
  is_minus_one = tf.equal(y, -1)
  # Division by -1 is done apart: TF's kernel traps on INT_MIN / -1.
  safe = tf.where(tf.logical_or(is_zero, is_minus_one), tf.ones_like(y), y)
  return safe, is_zero, is_minus_one


@register(lax.div_p)
def _div(ctx, x, y):
  if not sem.is_int(x.dtype):
    pooled = windowing.average_pool_of(x, y)
    if pooled is not None:
      return pooled
    if sem.is_constant_of(x, [1]):
      x = ctx.hide_from_grappler(x, "reciprocal")
    if sem.producer(y) == "Sqrt":
      y = ctx.hide_from_grappler(y, "rsqrt")
    return _constant_first(ctx, tf.math.truediv, x, y)
  # XLA: integer division rounds toward zero, x / 0 is -1 (all bits set) and
  # INT_MIN / -1 wraps to INT_MIN. TF's kernel fails on 0 and traps on -1.
  safe, is_zero, is_minus_one = _safe_int_divisor(x, y)
  truncated = tf.truncatediv
  if x.dtype in (tf.int32, tf.int64):  # the narrower ones keep TruncateDiv
    truncated = ctx.kernel_or("TruncateDiv", tf.truncatediv, ctx.bits.truncate_divide, x.dtype)
  q = truncated(x, safe)
  if is_minus_one is not None:
    q = tf.where(is_minus_one, ctx.bits.negate(x), q)
  # All bits set: -1, or the largest value of an unsigned type.
  info = np.iinfo(x.dtype.as_numpy_dtype)
  all_ones = sem.const(-1 if info.min < 0 else info.max, x.dtype)
  return tf.where(is_zero, all_ones, q)


def _fmod_portable(x, y, *, signed_zeros: bool):
  return float_formulas.fmod(_TfFloatOps(x.dtype, signed_zeros), x, y)


@register(lax.rem_p)
def _rem(ctx, x, y):
  if sem.is_float(x.dtype):
    # fmod is exact, so computing a float16/bfloat16 one in float32 is too.
    fmod = functools.partial(_fmod_portable, signed_zeros=ctx.target.signed_zeros)
    return sem.in_f32(ctx.kernel_or("TruncateMod", tf.truncatemod, fmod, x.dtype), x, y)
  # XLA: the remainder takes the sign of x, x % 0 is x, INT_MIN % -1 is 0.
  safe, is_zero, _ = _safe_int_divisor(x, y)
  if x.dtype in (tf.int32, tf.int64):
    r = ctx.kernel_or("TruncateMod", tf.truncatemod, _truncated_remainder, x.dtype)(x, safe)
  else:  # no TruncateMod kernel for these; the identity wraps correctly
    r = tf.subtract(x, tf.multiply(tf.truncatediv(x, safe), safe))
  return tf.where(is_zero, x, r)


def _truncated_remainder(x, y):
  # FloorMod, then the truncated remainder's sign (that of x); |r| < |y|,
  # so r - y cannot overflow.
  r = tf.math.floormod(x, y)
  return tf.where(tf.logical_and(tf.not_equal(r, 0), tf.not_equal(r < 0, x < 0)), r - y, r)


@register(lax.max_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _max(ctx, x, y):
  if not (
    sem.is_float(x.dtype) and sem.is_positive_zero_scalar(x) != sem.is_positive_zero_scalar(y)
  ):
    return sem.maximum(x, y, signed_zeros=ctx.target.signed_zeros)
  # A relu (max(0.0, x) as jnp.maximum(0, x) writes it too: XLA's max is
  # symmetric), its operand kept out of a fused oneDNN kernel, which drops NaN.
  if sem.is_positive_zero_scalar(x):
    x, y = y, x
  x = ctx.hide_from_grappler(x, "fused_relu")
  if ctx.target.keeps_abs_of_relu:
    # relu: Relu gives -0.0 for -0.0 where XLA gives +0.0, and Abs fixes
    # that in one op that XNNPack runs (a select splits the graph between
    # XNNPack and TFLite's own kernels, 1.2-1.8x slower on the demo CNN).
    # XLA drops an Abs of a Relu, so a jit_compile'd graph keeps the -0.0:
    # a known gap of that mode.
    return tf.abs(tf.nn.relu(x))
  return sem.maximum(x, y, signed_zeros=ctx.target.signed_zeros)


@register(lax.min_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _min(ctx, x, y):
  return sem.minimum(x, y, signed_zeros=ctx.target.signed_zeros)


def _in_int32_bits(primitive):
  """Registers the form of `primitive` for uint32 operands carried as int32
  bits (TF.js), which compares them as unsigned in those bits."""
  return registry.register_in_lanes(
    primitive, "uint32_as_int32_bits", when=registry.first_operand_is_uint32
  )


_in_int32_bits(lax.max_p)(lambda ctx, x, y: int32_bits.unsigned_maximum(x, y))
_in_int32_bits(lax.min_p)(lambda ctx, x, y: int32_bits.unsigned_minimum(x, y))


@register(lax.clamp_p, uint32_as_order_keys=True)
def _clamp(ctx, lo, x, hi):
  # clamp(lo, x, hi) == min(max(x, lo), hi), NaN-propagating like XLA.
  signed_zeros = ctx.target.signed_zeros
  return sem.minimum(sem.maximum(x, lo, signed_zeros=signed_zeros), hi, signed_zeros=signed_zeros)


@register(lax.nextafter_p, float16_in_float32=False)
def _nextafter(ctx, x, y):
  if x.dtype not in sem.SMALL_FLOATS:
    return tf.math.nextafter(x, y)
  # No NextAfter kernel for 16-bit floats, and rounding a float32 result would
  # not give the 16-bit neighbour: step the bit pattern directly.
  # Every test reads the bit patterns: under jit_compile, XLA's CPU code
  # compares subnormals as zeros, where JAX steps from them.
  bits, y_bits = tf.bitcast(x, tf.uint16), tf.bitcast(y, tf.uint16)
  sign = sem.const(0x8000, tf.uint16)
  x_zero = tf.equal(tf.bitwise.bitwise_and(bits, ~sign), 0)
  y_zero = tf.equal(tf.bitwise.bitwise_and(y_bits, ~sign), 0)
  x_key = sem.float_order_key(x, total_order=True)
  y_key = sem.float_order_key(y, total_order=True)
  x_positive = tf.equal(tf.bitwise.bitwise_and(bits, sign), 0)
  away_from_zero = tf.equal(y_key > x_key, x_positive)
  stepped = tf.where(away_from_zero, bits + 1, bits - 1)
  # From +-0 the neighbour is the smallest subnormal with y's sign.
  from_zero = tf.bitwise.bitwise_or(tf.bitwise.bitwise_and(y_bits, sign), sem.const(1, tf.uint16))
  stepped = tf.where(x_zero, from_zero, stepped)
  res = tf.bitcast(stepped, x.dtype)
  same = tf.logical_or(tf.equal(x_key, y_key), tf.logical_and(x_zero, y_zero))
  res = tf.where(same, y, res)
  either_nan = tf.logical_or(tf.math.is_nan(x), tf.math.is_nan(y))
  return tf.where(either_nan, x + y, res)


# ---------------------------------------------------------------------------
# Complex numbers.


@register(lax.real_p)
def _real(ctx, x):
  return tf.math.real(x)


@register(lax.imag_p)
def _imag(ctx, x):
  return tf.math.imag(x)


@register(lax.conj_p)
def _conj(ctx, x, *, input_dtype=None, _input_dtype=None):
  # The operand's dtype, also available from x, comes as `input_dtype`, as
  # `_input_dtype` (JAX's older name, which its lowering still accepts) or not
  # at all where conj_p is bound directly.
  del input_dtype, _input_dtype
  if not sem.is_complex(x.dtype):
    return convert_to(x, ctx.tf_dtype())  # conj of a real array is complex in JAX
  return tf.math.conj(x)


@register(lax.complex_p)
def _complex(ctx, x, y):
  same_shape = x.shape.is_fully_defined() and x.shape == y.shape
  if not ctx.target.broadcasts_complex_operands and not same_shape:
    # TF.js's Complex asserts that both parts have one shape; TF's broadcasts.
    shape = ctx.shape(ctx.aval_out.shape)
    x, y = tf.broadcast_to(x, shape), tf.broadcast_to(y, shape)
  return tf.complex(x, y)


# ---------------------------------------------------------------------------
# Comparisons and logic.


def _compare(op: str, tf_fn, ordered: bool):
  widened = _compared_widened(tf_fn)

  def rule(ctx, x, y):
    # TF's ordered comparisons have no bool kernel (False < True, as in XLA).
    if ordered and x.dtype == tf.bool:
      return widened(x, y)
    return ctx.kernel_or(op, tf_fn, widened, x.dtype)(x, y)

  return rule


def _compared_widened(tf_fn):
  # int32 holds 8- and 16-bit integers and bools exactly, int64 keeps the
  # order of uint32s.
  def compare(x, y):
    wide = tf.int64 if x.dtype == tf.uint32 else tf.int32
    return tf_fn(tf.cast(x, wide), tf.cast(y, wide))

  return compare


for _p, _op, _fn, _ordered in [
  (lax.eq_p, "Equal", tf.equal, False),
  (lax.ne_p, "NotEqual", tf.not_equal, False),
  (lax.lt_p, "Less", tf.less, True),
  (lax.le_p, "LessEqual", tf.less_equal, True),
  (lax.gt_p, "Greater", tf.greater, True),
  (lax.ge_p, "GreaterEqual", tf.greater_equal, True),
]:
  register(_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)(_compare(_op, _fn, _ordered))
  if _ordered:
    _in_int32_bits(_p)(
      functools.partial(lambda fn, ctx, x, y: int32_bits.unsigned_compare(fn, x, y), _fn)
    )


# Total-order comparisons (eq_to, le_to, lt_to; jnp.searchsorted and sort
# comparators use them): on floats -NaN < -inf < ... < -0.0 < +0.0 < ... < inf
# < NaN, NaNs ordered by payload, i.e. the order of the sign-magnitude bit
# patterns. Reading the bits as a signed integer and flipping the magnitude
# bits of negative numbers gives an integer with that order.
def _total_order_keys(x) -> list:
  if x.dtype.is_complex:
    return _total_order_keys(tf.math.real(x)) + _total_order_keys(tf.math.imag(x))
  if x.dtype.is_floating:
    return [sem.float_order_key(x, total_order=True)]
  if x.dtype == tf.bool:
    return [tf.cast(x, tf.uint8)]
  return [x]


def _total_order_compare(tf_fn):
  def rule(ctx, x, y):
    res = None
    for kx, ky in zip(_total_order_keys(x), _total_order_keys(y)):
      res = tf_fn(kx, ky) if res is None else tf.logical_and(res, tf_fn(kx, ky))
    return res

  return rule


for _name, _fn in [("eq_to_p", tf.equal), ("le_to_p", tf.less_equal), ("lt_to_p", tf.less)]:
  # Complex operands reach only eq_to (the ordered ones take real types).
  register(getattr(lax, _name))(_total_order_compare(_fn))


# Integer bit operations are the target's (ctx.bits: jax2tf/graph/bit_ops.py).


def _logical(bool_fn, bits_op: str):
  def rule(ctx, x, y):
    if x.dtype == tf.bool:
      return bool_fn(x, y)
    return getattr(ctx.bits, bits_op)(x, y)

  return rule


register(lax.and_p, uint32_as_int32_bits=True)(_logical(tf.logical_and, "bitwise_and"))
register(lax.or_p, uint32_as_int32_bits=True)(_logical(tf.logical_or, "bitwise_or"))
register(lax.xor_p, uint32_as_int32_bits=True)(_logical(tf.math.logical_xor, "bitwise_xor"))


@register(lax.not_p, uint32_as_int32_bits=True)
def _not(ctx, x):
  if x.dtype == tf.bool:
    # Not LogicalNot: TF's graph optimizer rewrites LogicalNot(Less(a, b)) to
    # GreaterEqual(a, b), which is false where a or b is NaN.
    return tf.equal(x, tf.constant(False))
  return ctx.bits.invert(x)


@register(lax.shift_left_p, uint32_as_int32_bits=True)
def _shift_left(ctx, x, y):
  return ctx.bits.shift_left(x, y)


@register(
  lax.shift_right_logical_p,
  uint32_as_int32_bits=True,
  narrow_ints_in_int32=int_lanes.operand_is_unsigned,
)
def _shift_right_logical(ctx, x, y):
  return ctx.bits.shift_right_logical(x, y)


@register(
  lax.shift_right_arithmetic_p,
  uint32_as_int32_bits=True,
  narrow_ints_in_int32=int_lanes.operand_is_signed,
)
def _shift_right_arithmetic(ctx, x, y):
  return ctx.bits.shift_right_arithmetic(x, y)


@register(lax.population_count_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _population_count(ctx, x):
  return ctx.bits.population_count(x)


@register(lax.clz_p, uint32_as_int32_bits=True, narrow_ints_in_int32=False)
def _clz(ctx, x):
  return ctx.bits.count_leading_zeros(x)


# ---------------------------------------------------------------------------
# Conversions.


def _float_to_int(x, target: tf.DType):
  """XLA's conversion: TF's eager Cast leaves NaN and out-of-range values
  undefined."""
  info = np.iinfo(target.as_numpy_dtype)
  ops = _TfFloatOps(x.dtype, int_dtype=target)
  return float_formulas.float_to_int(ops, x, int(info.min), int(info.max))


def _f64_to_f32_rounded_to_odd(x: tf.Tensor) -> tf.Tensor:
  """float64 to float32, an inexact result moved to the neighbour with an odd
  last bit (round to odd).

  A narrower float then rounds it as it would round `x` itself: TF's CPU Cast
  of float64 to float16/bfloat16 goes through float32 on some CPUs and not on
  others, and the first rounding can land on a tie (1 + 2**-11 + 2**-40 to
  float16 gives 1.0 instead of 1.0009765625).
  """
  y = tf.cast(x, tf.float32)
  back = tf.cast(y, tf.float64)
  even = tf.equal(tf.bitwise.bitwise_and(tf.bitcast(y, tf.int32), 1), 0)
  inexact = tf.not_equal(back, x)  # NaN stays NaN either way
  toward_x = tf.where(back < x, sem.const(np.inf, tf.float32), sem.const(-np.inf, tf.float32))
  return tf.where(tf.logical_and(inexact, even), tf.math.nextafter(y, toward_x), y)


def convert_to(x, target: tf.DType) -> tf.Tensor:
  """`x` converted to `target` as lax.convert_element_type does."""
  if x.dtype == target:
    return x
  if sem.is_complex(x.dtype) and not target.is_complex:
    x = tf.math.real(x)  # JAX drops the imaginary part
  if target == tf.bool:
    return tf.not_equal(x, tf.zeros_like(x))
  if sem.is_float(x.dtype) and target.is_integer:
    return _float_to_int(x, target)
  if target.is_complex and x.dtype in (tf.bfloat16, tf.float16, tf.bool):
    x = tf.cast(x, tf.float32)  # no direct Cast kernel
  if x.dtype == tf.float64 and target in (tf.float16, tf.bfloat16):
    x = _f64_to_f32_rounded_to_odd(x)
  return tf.cast(x, target)


def _convert_in_lanes(ctx, x, *, new_dtype, weak_type, sharding) -> tf.Tensor:
  """convert_element_type where uint32 travels as int32 bits (TF.js)."""
  del weak_type, sharding  # no effect on values
  target = tf.as_dtype(np.dtype(new_dtype))
  source_unsigned = np.dtype(ctx.avals_in[0].dtype) == np.uint32
  if x.dtype == tf.int32 and target in (tf.int32, tf.uint32):
    return x  # the same bits, whichever way they are read
  if x.dtype == tf.int32 and target == tf.bool:
    return tf.not_equal(x, 0)
  if x.dtype == tf.int32 and target == tf.float32:
    # TF.js's cpu Cast of a large int32 does not round it to float32.
    return int32_bits.to_float32(x, unsigned=source_unsigned)
  if target == tf.uint32 and x.dtype == tf.bool:
    return tf.cast(x, tf.int32)
  if source_unsigned:
    x = tf.cast(x, tf.uint32)  # uint32 ops: TF.js refuses them at conversion
  res = convert_to(x, target)
  return tf.cast(res, tf.int32) if res.dtype == tf.uint32 else res


@register(
  lax.convert_element_type_p,
  uint32_as_int32_bits=True,
  narrow_ints_in_int32=int_lanes.operand_is_integral,
)
def _convert_element_type(ctx, x, *, new_dtype, weak_type, sharding):
  del weak_type, sharding  # no effect on values
  target = tf.as_dtype(np.dtype(new_dtype))
  if target == tf.bool and x.dtype.is_integer:
    return _is_nonzero(ctx, x)
  if _narrows_to_signed(x.dtype, target) and ctx.target.runs_on_tf_xla:
    # TF 2.21's XLA CPU compiler segfaults on a bitwise and/or of a narrowing
    # Cast to a signed type with another array (under jit_compile); through
    # the unsigned type of the target's width, the bits are the same.
    return tf.bitcast(tf.cast(x, sem.unsigned_int_of_width(target)), target)
  return convert_to(x, target)


registry.register_in_lanes(lax.convert_element_type_p, "uint32_as_int32_bits")(_convert_in_lanes)


def _narrows_to_signed(source: tf.DType, target: tf.DType) -> bool:
  return (
    source.is_integer
    and target.is_integer
    and not target.is_unsigned
    and sem.bit_width(target) < sem.bit_width(source)
  )


@register(
  lax.bitcast_convert_type_p,
  uint32_as_int32_bits=True,
  float16_in_float32=False,
  narrow_ints_in_int32=False,
)
def _bitcast_convert_type(ctx, x, *, new_dtype):
  target = tf.as_dtype(np.dtype(new_dtype))
  if target == x.dtype:
    return x
  # TF's Bitcast has JAX's shape rule: a trailing dimension appears or goes
  # when the widths differ.
  return tf.bitcast(x, target)


@registry.register_in_lanes(lax.bitcast_convert_type_p, "uint32_as_int32_bits")
def _bitcast_in_lanes(ctx, x, *, new_dtype):
  """bitcast_convert_type where uint32 travels as int32 bits (TF.js)."""
  target = tf.as_dtype(np.dtype(new_dtype))
  if x.dtype == tf.int32 and target in (tf.int32, tf.uint32, tf.float32):
    # uint32 and int32 share their lanes; TF.js has no Bitcast for a float.
    return x if target != tf.float32 else int32_bits.bits_to_float32(x)
  if target == tf.uint32:
    return tf.bitcast(x, tf.int32)  # TF.js refuses the Bitcast, naming this primitive
  return _bitcast_convert_type(ctx, x, new_dtype=new_dtype)


@register(lax.reduce_precision_p, float16_in_float32=False)
def _reduce_precision(ctx, x, *, exponent_bits, mantissa_bits):
  finfo = ml_dtypes.finfo(x.dtype.as_numpy_dtype)
  src_mant, src_exp = int(finfo.nmant), int(finfo.nexp)
  utype = sem.unsigned_int_of_width(x.dtype)
  u = tf.bitcast(x, utype)

  def c(v):
    return sem.const(v, utype)

  if mantissa_bits < src_mant:
    # Round the mantissa to nearest, ties to even, on the bit pattern: a carry
    # into the exponent is the correct rounding up.
    drop = src_mant - mantissa_bits
    last_kept = c(1 << drop)
    lowest_kept_bit = tf.bitwise.bitwise_and(tf.bitwise.right_shift(u, c(drop)), c(1))
    bias = c((1 << (drop - 1)) - 1) + lowest_kept_bit
    keep_mask = tf.bitwise.invert(last_kept - c(1))
    u = tf.bitwise.bitwise_and(u + bias, keep_mask)
  if exponent_bits < src_exp:
    # Out-of-range exponents become +-inf (overflow) or +-0 (underflow: the
    # narrow format is taken without subnormals, as XLA does).
    sign_mask = c(1 << (sem.bit_width(x.dtype) - 1))
    exp_mask = c(((1 << src_exp) - 1) << src_mant)
    src_bias = (1 << (src_exp - 1)) - 1
    new_bias = (1 << (exponent_bits - 1)) - 1
    exponent = tf.bitwise.bitwise_and(u, exp_mask)
    overflow = exponent > c((src_bias + new_bias) << src_mant)
    underflow = exponent <= c((src_bias - new_bias) << src_mant)
    signed_zero = tf.bitwise.bitwise_and(u, sign_mask)
    signed_inf = tf.bitwise.bitwise_or(signed_zero, exp_mask)
    u = tf.where(overflow, signed_inf, tf.where(underflow, signed_zero, u))
  res = tf.bitcast(u, x.dtype)
  return tf.where(tf.math.is_nan(x), x, res)


@register(lax.select_n_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _select_n(ctx, which, *cases):
  if len(cases) == 1:
    return cases[0]
  if which.dtype == tf.bool:
    return tf.where(which, cases[1], cases[0])
  # Out-of-range selectors are undefined in JAX; this picks the last case.
  res = cases[-1]
  for i in range(len(cases) - 2, -1, -1):
    res = tf.where(tf.equal(which, sem.const(i, which.dtype)), cases[i], res)
  return res


# ---------------------------------------------------------------------------
# Identities: TF values are immutable and gradients come from JAX's VJP.


@register(lax.stop_gradient_p, uint32_as_int32_bits=True)
def _stop_gradient(ctx, x):
  return tf.stop_gradient(x)


@register(lax.optimization_barrier_p, uint32_as_int32_bits=True)
def _optimization_barrier(ctx, *operands):
  # XLA's barrier only constrains scheduling; TF has no such concept.
  return [tf.identity(x) for x in operands]
