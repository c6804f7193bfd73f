"""JAX's semantics in ordinary TF ops, shared by the rule families.

One floor below the families in `jax2tf/graph/rules/`: what several of them
need to reproduce XLA where TF differs lives here once, so that a fix reaches
every primitive that depends on it.

* dtype predicates that see bfloat16 and the float8 types as floats;
* 16-bit widening: TF's CPU kernels lack (or approximate in the narrow type)
  much float16/bfloat16 math, which XLA evaluates in float32 and rounds once;
* the compute dtype of sums, products and contractions (integers wrap,
  16-bit floats accumulate in float32);
* max/min with XLA's order: NaN propagates and -0.0 is below +0.0, both for
  elementwise combination and for reductions over axes; complex max/min
  compare (real, imag) lexicographically, and their reductions reproduce
  XLA's fold, in which NaN does not propagate;
* integer keys of floats whose integer order is a float order (total order
  for comparisons and top_k, sort's order with NaNs last);
* dimension lists (Python ints and int32 TF scalars) as shapes;
* constant operands, and hiding one from TF's graph optimizer (grappler)
  where its rewrite would compute another number than XLA.

Graph optimizers fold arithmetic on zeros and eager TF caches constants by
value (-0.0 == +0.0), so the sign of zero is read from the data at run time:
from 1/x (-inf for -0.0) in the max/min helpers, which every target runtime
can divide, and from the bits where a rule needs them anyway (float keys).
"""

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
import tensorflow as tf

from jax2tf.targets import quirks

# ---------------------------------------------------------------- dtypes ---

SMALL_FLOATS = (tf.float16, tf.bfloat16)
_UNSIGNED_OF = {8: tf.uint8, 16: tf.uint16, 32: tf.uint32, 64: tf.uint64}
_SIGNED_OF = {8: tf.int8, 16: tf.int16, 32: tf.int32, 64: tf.int64}


def np_dtype(dtype) -> np.dtype:
  """A NumPy dtype from a NumPy, ml_dtypes or TF dtype."""
  if isinstance(dtype, tf.DType):
    return np.dtype(dtype.as_numpy_dtype)
  return np.dtype(dtype)


def is_float(dtype) -> bool:
  """Real floating point, bfloat16 and float8 included (NumPy sees those as 'V')."""
  dtype = np_dtype(dtype)
  if dtype.kind == "f":
    return True
  if dtype.kind != "V":
    return False
  try:
    ml_dtypes.finfo(dtype)
  except (ValueError, TypeError):
    return False
  return True


def is_complex(dtype) -> bool:
  return np_dtype(dtype).kind == "c"


def is_int(dtype) -> bool:
  return np_dtype(dtype).kind in "iu"


def is_unsigned(dtype) -> bool:
  return np_dtype(dtype).kind == "u"


def bit_width(dtype) -> int:
  return np_dtype(dtype).itemsize * 8


def signed_int_of_width(dtype) -> tf.DType:
  """The signed integer type as wide as `dtype`, to read its bits with tf.bitcast."""
  return _SIGNED_OF[bit_width(dtype)]


def unsigned_int_of_width(dtype) -> tf.DType:
  return _UNSIGNED_OF[bit_width(dtype)]


def const(value, dtype) -> tf.Tensor:
  """A constant of TF or NumPy `dtype`."""
  return tf.constant(np.asarray(value).astype(np_dtype(dtype)))


# ------------------------------------------------------------- widening ---


def widened(dtype) -> tf.DType:
  """float32 for 16-bit floats, else the dtype itself."""
  dtype = tf.as_dtype(np_dtype(dtype))
  return tf.float32 if dtype in SMALL_FLOATS else dtype


def in_f32(fn: Callable, *xs: tf.Tensor) -> tf.Tensor:
  """fn on float32 copies of float16/bfloat16 operands, cast back.

  XLA evaluates these functions in float32 for narrow types and rounds the
  result once; TF's CPU kernels lack some narrow types or approximate in them.
  """
  dtype = xs[0].dtype
  if dtype not in SMALL_FLOATS:
    return fn(*xs)
  return tf.cast(fn(*[tf.cast(x, tf.float32) for x in xs]), dtype)


def polynomial(coefficients: Sequence[float], x: tf.Tensor) -> tf.Tensor:
  """The polynomial with `coefficients` (highest degree first) at `x`, by Horner's scheme."""
  p = tf.fill(tf.shape(x), tf.constant(coefficients[0], x.dtype))
  for c in coefficients[1:]:
    p = p * x + c
  return p


# Integer results wrap modulo 2**bits; computing in a wider (or same-width
# signed) integer type and casting back keeps exactly those low bits.
_INT_COMPUTE = {
  np.dtype(np.int8): tf.int32,
  np.dtype(np.uint8): tf.int32,
  np.dtype(np.int16): tf.int32,
  np.dtype(np.uint16): tf.int32,
  np.dtype(np.int32): tf.int32,
  np.dtype(np.uint32): tf.int32,
  np.dtype(np.int64): tf.int64,
  np.dtype(np.uint64): tf.int64,
}


def compute_dtype(out_dtype) -> tf.DType:
  """The TF dtype a sum, product or contraction producing `out_dtype` runs in."""
  out_dtype = np_dtype(out_dtype)
  if out_dtype == np.bool_:
    return tf.int32
  if out_dtype in _INT_COMPUTE:
    return _INT_COMPUTE[out_dtype]
  # JAX (XLA on CPU) accumulates 16-bit floats in float32 and rounds once.
  return widened(out_dtype)


def cast_result(res: tf.Tensor, out_dtype) -> tf.Tensor:
  """`res`, computed in `compute_dtype(out_dtype)`, as `out_dtype`."""
  out_dtype = np_dtype(out_dtype)
  if out_dtype == np.bool_:
    return tf.not_equal(res, 0)
  return tf.cast(res, tf.as_dtype(out_dtype))


# -------------------------------------------------- static operand facts ---


def static_value(x: tf.Tensor):
  """The value of a small constant operand (a jaxpr literal), else None."""
  n = x.shape.num_elements()
  if n is None or n > 16:
    return None
  try:
    return tf.get_static_value(x)
  except (TypeError, ValueError):
    return None


# Ops that TF's TFLite converter folds a constant through (it folds the
# PlaceholderWithDefault of `hidden_from_grappler` too; grappler does not).
_FOLDED_THROUGH = (
  "BroadcastTo",
  "Reshape",
  "ExpandDims",
  "Cast",
  "Identity",
  "PlaceholderWithDefault",
)


def producer(x: tf.Tensor) -> str | None:
  """The type of the graph op computing `x` (None in eager mode)."""
  return None if tf.executing_eagerly() else x.op.type


def constant_value(x: tf.Tensor) -> np.ndarray | None:
  """The value of `x` when it is a constant reshaped, broadcast or cast (as
  TF's TFLite converter will fold it), else None."""
  casts = []
  while (value := tf.get_static_value(x)) is None:
    if producer(x) not in _FOLDED_THROUGH:
      return None
    if x.op.type == "Cast":
      casts.append(x.dtype)
    x = x.op.inputs[0]
  value = np.asarray(value)
  for dtype in reversed(casts):
    value = value.astype(dtype.as_numpy_dtype)
  return value


def is_constant_of(x: tf.Tensor, values) -> bool:
  """Whether every element of `x` is a constant among `values`."""
  value = constant_value(x)
  if value is None:
    return False
  if value.dtype.kind not in "biuc":  # numpy promotes no int with bfloat16, float8
    value = value.astype(np.float64)
  return bool(np.isin(value, values).all())


# Every rewrite of TF's graph optimizer (grappler) seen to compute other
# numbers than XLA, by the name a rule hides its operand under
# (RuleContext.hide_from_grappler). Each was observed in a `tf.function`.
GRAPPLER_REWRITES = {
  "reciprocal": "1 / x becomes Reciprocal, off in the last bit on CPUs with AVX-512 "
  "(1 / 1.0 is 0.99999994)",
  "rsqrt": "x / sqrt(y) becomes x * Rsqrt(y), off in the last bit",
  "neg": "0 - x becomes Neg: -0.0 for +0.0, and no kernel for unsigned integers",
  "log1p": "log(1 + x) becomes Log1p",
  "expm1": "exp(x) - 1 becomes Expm1",
  "squared_difference": "the square of a difference becomes SquaredDifference, which has "
  "no kernel for 8- and 16-bit integers, uint32 and uint64",
  "complex_doubling": "a complex x + x (or x - (-x)) becomes 2 * x, a complex product whose "
  "real part is NaN where x has an infinite imaginary part (0 * inf)",
  "negated_extremum": "max(-x) becomes -min(x) where the Neg has no other reader; -x wraps "
  "at a signed integer's minimum (-(-32768) is -32768 in int16)",
  "reassociation": "a float sum of sums (a product of products) of variables is regrouped: "
  "one AddN, or the operands of fewest broadcasts first, which round otherwise than XLA",
  "fused_relu": "a matmul or convolution, its bias and a Relu become one oneDNN kernel "
  "(_FusedMatMul, _FusedConv2D) whose Relu turns NaN into 0",
  "monotonic_arg_reduction": "argmax(f(x)) becomes argmax(x) (argmin for a decreasing f) for "
  "an elementwise monotonic f it knows (Sign, Neg, ...): where f ties values that x does "
  "not, that picks another index (argmin(sign([5, 4])) becomes 1, JAX's is 0)",
}


# Rewrites that matter where TF's runtime executes the graph: its remapper
# fuses for TF's CPU kernels, and the regrouped sums are computed there. A
# converter gets no PlaceholderWithDefault for them: TF's TFLite converter
# then refuses a Conv2D near one ("neither a custom op nor a flex op"), and
# its own fusions fold biases and scales into a convolution's weights.
TF_RUNTIME_REWRITES = frozenset({"fused_relu", "reassociation"})


# Float ops whose results grappler regroups when an op of the same kind reads
# them (GRAPPLER_REWRITES["reassociation"]).
SUMS = frozenset({"Add", "AddV2", "AddN"})
PRODUCTS = frozenset({"Mul"})


def in_written_order(x: tf.Tensor, y: tf.Tensor, regrouped: frozenset, hide) -> tuple:
  """The operands of a sum (`regrouped` SUMS) or a product (PRODUCTS), each
  passed through `hide(t, "reassociation")` where an op of `regrouped`
  computes it from variables only. XLA adds (multiplies) such a chain as
  written, where grappler regroups it: one AddN, or the operands of fewest
  broadcasts first. A chain with a constant is left to grappler, which folds
  the constants together as the XLA of jax 0.10 does (that of jax 0.12 adds
  as written: docs/graph_serialization.md)."""
  if not (is_float(x.dtype) or is_complex(x.dtype)):
    return x, y  # integer sums and products are exact in any order
  if _is_constant_node(x) or _is_constant_node(y):
    return x, y
  return tuple(
    hide(t, "reassociation")
    if producer(t) in regrouped and not any(_is_constant_node(i) for i in t.op.inputs)
    else t
    for t in (x, y)
  )


def _is_constant_node(x: tf.Tensor) -> bool:
  """Whether `x` is a graph constant, reshaped, broadcast or cast (its value
  is not read: it may be a model's weights)."""
  while producer(x) in _FOLDED_THROUGH:
    x = x.op.inputs[0]
  return producer(x) == "Const"


def hidden_from_grappler(x: tf.Tensor) -> tf.Tensor:
  """`x` through an op whose value TF's graph optimizer cannot see.

  Grappler rewrites some patterns in a `tf.function` into ops that compute
  other numbers than XLA: 1/x and x/sqrt(y) into Reciprocal and Rsqrt (off
  in the last bit on CPUs with AVX-512, 1/1 is 0.99999994), 0 - x into Neg
  (-0.0 for +0.0), log(1 + x) and exp(x) - 1 into Log1p and Expm1 (and
  pow(x, 0.5) into Sqrt, which the pow rule does not emit). It never folds a
  PlaceholderWithDefault (a caller could feed it): one op that forwards its
  input, which XLA compiles and TF's TFLite converter folds away. Eager ops
  are not rewritten. (Rules call RuleContext.hide_from_grappler, which
  leaves `x` itself for targets that run no grappler.)
  """
  if tf.executing_eagerly():
    return x
  return tf.raw_ops.PlaceholderWithDefault(input=x, shape=x.shape)


def may_be_nan(x: tf.Tensor) -> bool:
  if not (x.dtype.is_floating or x.dtype.is_complex):
    return False
  v = static_value(x)
  wide = np.complex128 if x.dtype.is_complex else np.float64
  return v is None or bool(np.isnan(np.asarray(v, wide)).any())


def may_be_zero(x: tf.Tensor) -> bool:
  v = static_value(x)
  return v is None or bool((np.asarray(v, np.float64) == 0).any())


def is_positive_zero_scalar(x: tf.Tensor) -> bool:
  return _is_zero_scalar(x, negative=False)


def is_negative_zero_scalar(x: tf.Tensor) -> bool:
  return x.dtype.is_floating and _is_zero_scalar(x, negative=True)


def _is_zero_scalar(x: tf.Tensor, negative: bool) -> bool:
  v = static_value(x)
  if v is None or x.shape.rank != 0:
    return False
  v = np.asarray(v, np.float64)
  return bool(v == 0 and np.signbit(v) == negative)


def positive_zeros(x: tf.Tensor) -> tf.Tensor:
  """Float `x` with +0.0 for -0.0 (NaN stays NaN)."""
  return tf.where(tf.equal(x, 0), tf.zeros([], x.dtype), x)


def negate_float(x: tf.Tensor) -> tf.Tensor:
  """-x as a product with -1: exact, and it keeps the signs of zeros in
  every runtime (LiteRT's NEG, XNNPack's, gives +0.0 for both zeros)."""
  return tf.multiply(x, const(-1, x.dtype))


# -------------------------------------------------------------- max/min ---


# Where the target's tensors hold no -0.0 (`Target.signed_zeros` False: a
# fully int8-quantized TFLite model, whose int8 tensors have one zero, and
# whose int8 DIV refuses the zero divisor of the 1/x that tells the zeros
# apart), the helpers below take `signed_zeros=False` and treat every zero
# as +0.0.


def _zero_is_negative(x: tf.Tensor, signed_zeros: bool) -> tf.Tensor:
  """For a zero `x`, whether it is -0.0 (1/x is -inf); False without signed zeros."""
  if not signed_zeros:
    return tf.zeros_like(x, dtype=tf.bool)
  return tf.less(_inverse(x), 0)


def is_negative(x: tf.Tensor, *, signed_zeros: bool = True) -> tf.Tensor:
  """Whether float `x` is below zero or is -0.0 (undefined for NaN).

  1/x tells the zeros apart (-inf for -0.0), with ops that every runtime has
  a kernel for; reading the sign bit takes a Bitcast, which TF.js lacks.
  """
  if not signed_zeros:
    return tf.less(x, 0)
  return tf.logical_or(tf.less(x, 0), _zero_is_negative(x, signed_zeros))


def _inverse(x: tf.Tensor) -> tf.Tensor:
  # A division rather than tf.math.reciprocal: TFLite has DIV but no RECIPROCAL.
  return tf.math.truediv(tf.ones([], x.dtype), x)


def is_decisive_zero(x: tf.Tensor, is_max: bool, *, signed_zeros: bool = True) -> tf.Tensor:
  """Whether `x` is the zero that wins a tie of zeros: +0.0 for max, -0.0 for min.

  1/x is +inf only for +0.0 and -inf only for -0.0 (and for the denormals
  whose inverse overflows, which outrank any zero and so never decide a
  tie). At least inf, not equal to it: TF's TFLite converter may leave an
  infinite constant as the largest finite float (lite/infinities.py).
  """
  if not signed_zeros:
    return tf.equal(x, 0) if is_max else tf.zeros_like(x, dtype=tf.bool)
  if is_max:
    return tf.greater_equal(_inverse(x), const(np.inf, x.dtype))
  return tf.less_equal(_inverse(x), const(-np.inf, x.dtype))


def _is_extreme_constant(x: tf.Tensor) -> bool:
  """Whether `x` is a constant that TF's TFLite converter drops a max or
  min with (targets/quirks.py says which)."""
  value = constant_value(x)
  return value is not None and quirks.tflite_drops_min_max_with(value)


def _pick(is_max: bool, x: tf.Tensor, y: tf.Tensor, signed_zeros: bool) -> tf.Tensor:
  """XLA's max/min of two floats: NaN propagates, -0.0 < +0.0."""
  for a, c in ((x, y), (y, x)):
    if _is_extreme_constant(c):
      # One comparison and a select instead, which the converter keeps,
      # and which keeps a's NaN (c has none, and no zero to tie with).
      beats = tf.greater(c, a) if is_max else tf.less(c, a)
      return tf.where(beats, c, a)
  res = tf.maximum(x, y) if is_max else tf.minimum(x, y)
  if may_be_zero(x) and may_be_zero(y):
    # TF returns either zero; XLA orders them.
    both_zero = tf.logical_and(tf.equal(x, 0), tf.equal(y, 0))
    x_negative = _zero_is_negative(x, signed_zeros)
    zero = tf.where(x_negative, y, x) if is_max else tf.where(x_negative, x, y)
    res = tf.where(both_zero, zero, res)
  # TF may return the other operand when one is NaN; XLA propagates the NaN.
  if may_be_nan(y):
    res = tf.where(tf.math.is_nan(y), y, res)
  if may_be_nan(x):
    res = tf.where(tf.math.is_nan(x), x, res)
  return res


def _combine(is_max: bool, x: tf.Tensor, y: tf.Tensor, signed_zeros: bool) -> tf.Tensor:
  if x.dtype == tf.bool:
    return tf.logical_or(x, y) if is_max else tf.logical_and(x, y)
  if x.dtype.is_complex:
    # Lexicographic on (real, imag), as XLA compares complex numbers.
    rx, ry, ix, iy = tf.math.real(x), tf.math.real(y), tf.math.imag(x), tf.math.imag(y)
    if is_max:
      pick_x = tf.logical_or(rx > ry, tf.logical_and(tf.equal(rx, ry), ix > iy))
    else:
      pick_x = tf.logical_or(rx < ry, tf.logical_and(tf.equal(rx, ry), ix < iy))
    return tf.where(pick_x, x, y)
  if not x.dtype.is_floating:
    return tf.maximum(x, y) if is_max else tf.minimum(x, y)
  if is_max and is_positive_zero_scalar(x) and not is_positive_zero_scalar(y):
    # max(0.0, x) as jnp.maximum(0, x) writes it: XLA's max is symmetric,
    # NaN and signed zeros included.
    x, y = y, x
  if is_max and is_positive_zero_scalar(y):
    # max(x, 0.0), i.e. relu: TF's (and TFLite's) Relu propagates NaN like
    # XLA; only its relu(-0.0) == -0.0 needs correcting. The select reads
    # nothing but Relu's result, so the TFLite converter still fuses the Relu
    # into a preceding FullyConnected or Conv2D. (Abs would be one op, but
    # XLA drops an Abs of a Relu, and its Relu keeps -0.0.)
    return positive_zeros(tf.nn.relu(x))
  return _pick(is_max, x, y, signed_zeros)


def maximum(x: tf.Tensor, y: tf.Tensor, *, signed_zeros: bool = True) -> tf.Tensor:
  """lax.max: NaN-propagating, -0.0 < +0.0, bool as or, complex lexicographic."""
  return _combine(True, x, y, signed_zeros)


def minimum(x: tf.Tensor, y: tf.Tensor, *, signed_zeros: bool = True) -> tf.Tensor:
  """lax.min: NaN-propagating, -0.0 < +0.0, bool as and, complex lexicographic."""
  return _combine(False, x, y, signed_zeros)


def fix_extremum_zeros_and_nans(
  res: tf.Tensor, is_max: bool, *, zero_found: tf.Tensor, nan_found: tf.Tensor
) -> tf.Tensor:
  """Corrects a float max/min computed by TF's kernels to XLA's answer.

  `res` is TF's result; `zero_found` says whether the zero that decides a
  tie of zeros was among the reduced values (+0.0 for max, -0.0 for min), and
  `nan_found` whether a NaN was. TF's kernels return whichever zero they meet,
  and under jit_compile TF's XLA uses a max/min that drops NaN.
  """
  # Zeros from `res` at run time, not constants: TF's TFLite converter writes
  # a constant -0.0 as +0.0 (and eager TF caches constants by value).
  pos = tf.abs(res)
  neg = negate_float(pos)
  signed_zero = tf.where(zero_found, pos, neg) if is_max else tf.where(zero_found, neg, pos)
  res = tf.where(tf.equal(res, 0), signed_zero, res)
  return tf.where(nan_found, tf.constant(np.nan, res.dtype), res)


def reduce_extremum(
  x: tf.Tensor, axes: Sequence[int], is_max: bool, *, signed_zeros: bool = True
) -> tf.Tensor:
  """reduce_max/reduce_min over `axes` of a float, bool or integer tensor, as XLA."""
  if x.dtype == tf.bool:
    return (tf.reduce_any if is_max else tf.reduce_all)(x, axes)
  # Max/min are exact in a wider type; TF's CPU kernels lack some 16-bit types.
  xw = tf.cast(x, widened(x.dtype))
  res = (tf.reduce_max if is_max else tf.reduce_min)(xw, axes)
  if xw.dtype.is_floating:
    # Only the zero that decides the answer is looked for: max is +0.0 if any
    # +0.0 is present, min is -0.0 if any -0.0 is. Two passes over the input.
    zero_found = tf.reduce_any(is_decisive_zero(xw, is_max, signed_zeros=signed_zeros), axes)
    nan_found = tf.reduce_any(tf.math.is_nan(xw), axes)
    res = fix_extremum_zeros_and_nans(res, is_max, zero_found=zero_found, nan_found=nan_found)
  return tf.cast(res, x.dtype)


def _last_index(mask: tf.Tensor, idx: tf.Tensor) -> tf.Tensor:
  """The last position along the last axis where `mask` holds (-1 if none), kept as an axis."""
  return tf.reduce_max(tf.where(mask, idx, -1), -1, keepdims=True)


def reduce_complex_extremum(
  x: tf.Tensor, axes: Sequence[int], is_max: bool, init: complex | tf.Tensor | None = None
) -> tf.Tensor:
  """reduce_max/reduce_min over `axes` of a complex tensor, as XLA folds it.

  JAX's reducer compares lexicographically (real part, then imaginary part)
  and selects: max(acc, e) is acc if acc > e, else e. Comparisons with NaN are
  false, so a NaN never propagates and the answer depends on the order of the
  fold. This reproduces a sequential fold over the reduced elements in
  row-major order, starting from `init` (the identity, -inf+0j for max, when
  None), which is what XLA on CPU does for up to 32 reduced elements (longer
  reductions it folds in another order; the answers then differ only where a
  NaN or a tie of signed zeros is among the elements).
  In that fold an element whose real part is NaN replaces the accumulator
  and is replaced by the next element, so only the elements after the last
  one count; among those, the fold keeps the last element of the largest
  real part, and among the elements of that real part, the same rule on the
  imaginary part. Found positions are gathered, never recomputed, so signed
  zeros and NaN payloads come out as they went in.
  """
  rank = x.shape.rank
  axes = sorted(int(a) for a in axes)
  kept = [d for d in range(rank) if d not in axes]
  y = tf.transpose(x, kept + axes) if axes != list(range(rank - len(axes), rank)) else x
  lead = tf.shape(y)[: len(kept)]
  y = tf.reshape(y, tf.concat([lead, [-1]], 0))
  if init is None:
    init = complex(lowest(np.float64) if is_max else highest(np.float64), 0)
  init = tf.cast(init, y.dtype) if isinstance(init, tf.Tensor) else tf.constant(init, y.dtype)
  start = tf.fill(tf.concat([lead, [1]], 0), init)
  n = y.shape[-1]
  if n != 1:
    y = tf.concat([start, y], -1)
    if n is None:
      # XLA drops a reduction of one element: the element, not folded with init.
      one = tf.equal(tf.shape(y)[-1], 2)
      y = tf.concat([tf.where(one, y[..., -1:], y[..., :1]), y[..., 1:]], -1)

  idx = tf.range(tf.shape(y)[-1])
  re, im = tf.math.real(y), tf.math.imag(y)
  reduce = tf.reduce_max if is_max else tf.reduce_min
  fill = tf.constant(-np.inf if is_max else np.inf, re.dtype)
  last_nan_re = _last_index(tf.math.is_nan(re), idx)
  counted = idx > last_nan_re
  best_re = reduce(tf.where(counted, re, fill), -1, keepdims=True)
  at_best = tf.logical_and(counted, tf.equal(re, best_re))
  # The same rule on the imaginary parts of the elements with the best real part.
  last_nan_im = _last_index(tf.logical_and(at_best, tf.math.is_nan(im)), idx)
  tail = tf.logical_and(at_best, idx > last_nan_im)
  best_im = reduce(tf.where(tail, im, fill), -1, keepdims=True)
  pick = _last_index(tf.logical_and(tail, tf.equal(im, best_im)), idx)
  pick = tf.where(tf.equal(last_nan_im, _last_index(at_best, idx)), last_nan_im, pick)
  last = tf.shape(y)[-1] - 1
  pick = tf.where(tf.equal(last_nan_re, last), last, pick)
  return tf.squeeze(tf.gather(y, pick, axis=len(kept), batch_dims=len(kept)), -1)


def lowest(dtype):
  """The identity of max for `dtype` (for complex, -inf + 0j, as JAX's)."""
  dtype = np_dtype(dtype)
  if is_float(dtype) or is_complex(dtype):
    return -np.inf
  if dtype == np.bool_:
    return False
  return np.iinfo(dtype).min


def highest(dtype):
  """The identity of min for `dtype` (for complex, inf + 0j, as JAX's)."""
  dtype = np_dtype(dtype)
  if is_float(dtype) or is_complex(dtype):
    return np.inf
  if dtype == np.bool_:
    return True
  return np.iinfo(dtype).max


# -------------------------------------------------------- float bit keys ---

_KEY_INT = {tf.float16: tf.int16, tf.bfloat16: tf.int16, tf.float32: tf.int32, tf.float64: tf.int64}


def float_order_key(x: tf.Tensor, *, total_order: bool) -> tf.Tensor:
  """A signed integer tensor whose order is the order of float `x`.

  With `total_order`, IEEE's total order (-NaN < -inf < ... < -0.0 < +0.0 <
  ... < +inf < NaN, NaNs by payload); without, sort's order: -0.0 == +0.0 and
  every NaN equal and above +inf. Reading the bits as a signed integer and
  flipping the magnitude bits of negative numbers gives an integer with the
  order of the sign-magnitude bit patterns.
  """
  if not total_order:
    x = positive_zeros(x)
    x = tf.where(tf.math.is_nan(x), tf.constant(np.nan, x.dtype), x)
  int_dt = _KEY_INT[x.dtype]
  bits = tf.bitcast(x, int_dt)
  magnitude = tf.constant(np.iinfo(int_dt.as_numpy_dtype).max, int_dt)
  return tf.where(bits < 0, tf.bitwise.bitwise_xor(bits, magnitude), bits)


# ---------------------------------------------------------- dimensions ---


def stack_dims(values: Sequence) -> list[int] | tf.Tensor:
  """Dimensions (Python ints and int32 TF scalars) as a list of ints when all
  are static, else as a 1-D int32 tensor."""
  if all(isinstance(v, (int, np.integer)) for v in values):
    return [int(v) for v in values]
  return tf.stack(
    [
      v
      if isinstance(v, tf.Tensor) and v.dtype == tf.int32
      else tf.cast(v, tf.int32)
      if isinstance(v, tf.Tensor)
      else tf.constant(int(v), tf.int32)
      for v in values
    ]
  )
