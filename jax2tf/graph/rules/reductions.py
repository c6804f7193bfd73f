"""Reductions over axes: sums, products, extrema, logical and bitwise folds, argmax/argmin.

lax.reduce with a body that is a monoid becomes that monoid's TF reduction;
any other body (and several operands) is XlaVariadicReduceV2 where XLA ops are
allowed, else a fold of the reduced elements in the order XLA's CPU backend
takes them (windowing.window_fold).

Cases: tests/cases/reductions.py
"""

import functools

import numpy as np
import tensorflow as tf
from jax import lax

from jax2tf.graph import int_lanes, ordered_lanes, portable_bits, registry, windowing
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register
from jax2tf.internals import tf_private
from jax2tf.shapes import dim_eval
from jax2tf.targets import xla_fold


def _axes(axes):
  return [int(a) for a in axes]


@register(lax.reduce_sum_p)
def _reduce_sum(ctx, x, *, axes, out_sharding=None):
  del out_sharding  # no TF meaning
  shape = ctx.avals_in[0].shape
  if ctx.is_static([shape[a] for a in axes]) and xla_fold.reduces_nothing(
    int(shape[a]) for a in axes
  ):
    # A sum of one element keeps -0.0, which LiteRT's and TF.js's SUM add
    # to +0.0.
    return tf.squeeze(x, _axes(axes))
  # 16-bit floats accumulate in float32 (as XLA on CPU does); integers wrap.
  dt = sem.compute_dtype(ctx.aval_out.dtype)
  return tf.cast(tf.reduce_sum(tf.cast(x, dt), _axes(axes)), x.dtype)


@register(lax.reduce_prod_p)
def _reduce_prod(ctx, x, *, axes, out_sharding=None):
  del out_sharding
  shape = ctx.avals_in[0].shape

  def product(x):
    dt = sem.compute_dtype(ctx.aval_out.dtype)
    return tf.cast(tf.reduce_prod(tf.cast(x, dt), _axes(axes)), x.dtype)

  def exact_product(x):
    if not ctx.is_static([shape[a] for a in axes]):
      return product(x)
    return _exact_int32_product(ctx, x, [int(shape[a]) for a in axes], _axes(axes))

  return ctx.kernel_or("Prod", product, exact_product, x.dtype)(x)


def _exact_int32_product(ctx, x, sizes, axes):
  # TF.js's Prod of int32 rounds large products. Products wrap the same in
  # any order: halve each axis by multiplying its halves exactly.
  for size, axis in sorted(zip(sizes, axes), key=lambda p: -p[1]):
    while size > 1:
      if size % 2:
        pad = [[0, 0]] * x.shape.rank
        pad[axis] = [0, 1]
        x, size = tf.pad(x, pad, constant_values=1), size + 1
      low, high = tf.split(x, 2, axis=axis)
      x, size = ctx.bits.multiply(low, high), size // 2
    x = tf.squeeze(x, axis) if size == 1 else tf.reduce_prod(x, axis)  # an empty axis: 1
  return x


def _negation_hidden(ctx, x):
  """`x`, where it is a signed integer's Neg, hidden from TF's graph optimizer."""
  if x.dtype.is_integer and not x.dtype.is_unsigned and sem.producer(x) == "Neg":
    return ctx.hide_from_grappler(x, "negated_extremum")
  return x


def _extremum(ctx, x, axes, is_max):
  x = _negation_hidden(ctx, x)
  shape = ctx.avals_in[0].shape
  if not sem.is_complex(x.dtype) and any(dim_eval.is_zero(shape[a]) for a in _axes(axes)):
    # A max or min of nothing is the identity (-inf for a float max); TF.js's
    # Max of nothing is NaN.
    identity = windowing.monoid("max" if is_max else "min", ctx.avals_in[0].dtype).identity
    return tf.fill(ctx.shape(ctx.aval_out.shape), tf.cast(identity, x.dtype))
  if sem.is_complex(x.dtype):
    # TF's reductions have no complex max/min; XLA's compares lexicographically.
    return sem.reduce_complex_extremum(x, _axes(axes), is_max)
  return sem.reduce_extremum(x, _axes(axes), is_max, signed_zeros=ctx.target.signed_zeros)


@register(
  lax.reduce_max_p, narrow_ints_in_int32=int_lanes.reduces_no_empty_axis, uint32_as_order_keys=True
)
def _reduce_max(ctx, x, *, axes, out_sharding=None):
  del out_sharding
  return _extremum(ctx, x, axes, True)


@register(
  lax.reduce_min_p, narrow_ints_in_int32=int_lanes.reduces_no_empty_axis, uint32_as_order_keys=True
)
def _reduce_min(ctx, x, *, axes, out_sharding=None):
  del out_sharding
  return _extremum(ctx, x, axes, False)


def _fold_planes(planes, axes, kind):
  """AND/OR/XOR over axes of one bit plane (bool)."""
  if kind == "and":
    return tf.reduce_all(planes, axes)
  if kind == "or":
    return tf.reduce_any(planes, axes)
  return tf.equal(tf.math.floormod(tf.reduce_sum(tf.cast(planes, tf.int32), axes), 2), 1)


def _bitwise_fold(ctx, x, axes, kind):
  """AND/OR/XOR over axes of an integer array, one bit plane at a time."""
  if portable_bits.handles(x.dtype):
    fold = ctx.kernel_or("BitwiseAnd", _bitwise_fold_in_kernels, _bitwise_fold_portable)
    return fold(ctx, x, axes, kind)
  return _bitwise_fold_in_kernels(ctx, x, axes, kind)


def _bitwise_fold_portable(ctx, x, axes, kind):
  """Without BitwiseAnd/Or: planes read by shifts, put back by additions
  (the planes share no bit)."""
  xu = portable_bits.to_u32(x)
  res = tf.zeros(ctx.shape(ctx.aval_out.shape), tf.uint32)
  for b in range(sem.bit_width(x.dtype)):
    folded = _fold_planes(portable_bits.bit_is_set(xu, b), axes, kind)
    mask = tf.constant(1 << b, tf.uint32)
    res = res + tf.where(folded, mask, tf.zeros_like(mask))
  return portable_bits.from_u32(res, x.dtype)


def _bitwise_fold_in_kernels(ctx, x, axes, kind):
  unsigned = sem.unsigned_int_of_width(x.dtype)
  xu = tf.bitcast(x, unsigned) if x.dtype != unsigned else x
  res = tf.zeros(ctx.shape(ctx.aval_out.shape), unsigned)
  for b in range(sem.bit_width(x.dtype)):
    mask = tf.constant(1 << b, unsigned)
    folded = _fold_planes(tf.not_equal(tf.bitwise.bitwise_and(xu, mask), 0), axes, kind)
    res = tf.bitwise.bitwise_or(res, tf.where(folded, mask, tf.zeros_like(mask)))
  return tf.bitcast(res, x.dtype) if x.dtype != unsigned else res


def _logical(kind):
  def rule(ctx, x, *, axes):
    axes = _axes(axes)
    shape = ctx.avals_in[0].shape
    if any(dim_eval.is_zero(shape[a]) for a in axes):
      # A fold of nothing is the identity (TF.js's All of nothing is false).
      dtype = np.dtype(ctx.avals_in[0].dtype)
      zero = np.zeros((), dtype)
      identity = np.invert(zero) if kind == "and" else zero
      return tf.fill(ctx.shape(ctx.aval_out.shape), tf.constant(identity, x.dtype))
    if x.dtype != tf.bool:
      return _bitwise_fold(ctx, x, axes, kind)
    return _fold_planes(x, axes, kind)

  return rule


register(lax.reduce_and_p)(_logical("and"))
register(lax.reduce_or_p)(_logical("or"))
register(lax.reduce_xor_p)(_logical("xor"))


def _arg_extremum(ctx, x, axes, index_dtype, is_max):
  (axis,) = _axes(axes)
  dtype = np.dtype(ctx.avals_in[0].dtype)
  out = tf.as_dtype(np.dtype(index_dtype))
  tf_out = out if out in (tf.int32, tf.int64) else tf.int64
  if dtype == np.bool_ or dtype.name in ("float16", "bfloat16") or dtype.itemsize == 1:
    x = tf.cast(x, tf.float32 if sem.is_float(dtype) else tf.int32)
  x = ctx.hide_from_grappler(x, "monotonic_arg_reduction")
  # ArgMax/ArgMin return the first index among ties, as JAX does.
  res = (tf.math.argmax if is_max else tf.math.argmin)(x, axis, output_type=tf_out)
  if sem.is_float(dtype):
    # JAX picks the first NaN, for argmin too.
    nan = tf.math.is_nan(x)
    first_nan = tf.math.argmax(tf.cast(nan, tf.int32), axis, output_type=tf_out)
    res = tf.where(tf.reduce_any(nan, axis), first_nan, res)
  return tf.cast(res, out)


@register(lax.argmax_p, uint32_as_order_keys=ordered_lanes.index_is_not_uint32)
def _argmax(ctx, x, *, axes, index_dtype):
  return _arg_extremum(ctx, x, axes, index_dtype, True)


@register(lax.argmin_p, uint32_as_order_keys=ordered_lanes.index_is_not_uint32)
def _argmin(ctx, x, *, axes, index_dtype):
  return _arg_extremum(ctx, x, axes, index_dtype, False)


# ----------------------------------------------------------- generic reduce ---


_REDUCERS = {"sum": tf.reduce_sum, "prod": tf.reduce_prod}


@register(lax.reduce_p)
def _reduce(ctx, *args, computation, jaxpr, dimensions):
  del computation  # the same function as `jaxpr`
  n = len(args) // 2
  operands, inits = args[:n], args[n:]
  axes = _axes(dimensions)
  shape = ctx.avals_in[0].shape
  if ctx.is_static([shape[a] for a in axes]) and xla_fold.reduces_nothing(
    int(shape[a]) for a in axes
  ):
    # As XLA computes it: neither the init nor the body is applied.
    return [ctx.reshape(x, aval.shape) for x, aval in zip(operands, ctx.avals_out)]
  kind = windowing.recognise_body(jaxpr) if n == 1 else None
  if kind is not None:
    x, init = operands[0], inits[0]
    if x.dtype == tf.bool:
      res = (tf.reduce_any if kind == "max" else tf.reduce_all)(x, axes)
      return [(tf.logical_or if kind == "max" else tf.logical_and)(res, init)]
    if kind in ("max", "min") and x.dtype.is_complex:
      # Without NaN propagation the init is the first element of XLA's fold.
      return [sem.reduce_complex_extremum(x, axes, kind == "max", init)]
    if kind in ("max", "min"):
      res = _extremum(ctx, x, axes, kind == "max")
      op = functools.partial(
        sem.maximum if kind == "max" else sem.minimum, signed_zeros=ctx.target.signed_zeros
      )
    else:
      dt = sem.compute_dtype(ctx.avals_out[0].dtype)
      res = tf.cast(_REDUCERS[kind](tf.cast(x, dt), axes), x.dtype)
      op = tf.add if kind == "sum" else tf.multiply
    return [op(res, tf.cast(init, res.dtype))]
  generic = ctx.kernel_or("XlaVariadicReduceV2", _xla_reduce, _reduce_fold)
  return generic(ctx, operands, inits, jaxpr, axes)


def _reduce_fold(ctx, operands, inits, jaxpr, axes):
  """A reduction with any body as XLA's CPU backend folds it (the order of
  jax2tf/targets/xla_fold.py)."""
  shape = list(ctx.avals_in[0].shape)
  xs, ones = list(operands), [1] * len(shape)
  if any(dim_eval.is_zero(shape[a]) for a in axes):  # nothing to fold in
    return [tf.broadcast_to(i, ctx.shape(aval.shape)) for i, aval in zip(inits, ctx.avals_out)]
  if len(xs) == 1:
    symbolic = [a for a in axes if not dim_eval.is_constant(shape[a])]
    if symbolic:
      raise registry.no_xla_error(
        ctx.primitive,
        dict(dimensions=tuple(axes), shape=tuple(shape)),
        f"XLA folds a reduction with a custom body in an order that depends on the length "
        f"of the reduced axis {symbolic[0]} (a tree of windows of "
        f"{xla_fold.TREE_WINDOW} from {xla_fold.TREE_WINDOW + 1} elements on), which "
        "is symbolic here; give the reduced axes constant sizes",
      )
    while xla_fold.needs_tree([shape[a] for a in axes]):
      xs, shape = _tree_level(ctx, xs, inits, jaxpr, axes, shape)
  out_shape = [1 if a in axes else d for a, d in enumerate(shape)]
  window = [d if a in axes else 1 for a, d in enumerate(shape)]
  body = windowing.body_at(ctx, jaxpr, None, out_shape)
  no_padding = [(0, 0)] * len(shape)
  accs = windowing.window_fold(
    ctx, xs, list(inits), body, window, ones, no_padding, ones, ones, shape, out_shape
  )
  return [ctx.reshape(a, aval.shape) for a, aval in zip(accs, ctx.avals_out)]


def _tree_level(ctx, xs, inits, jaxpr, axes, shape):
  """One level of XLA's tree reduction (xla_fold.tree_windows)."""
  windows = dict(zip(axes, xla_fold.tree_windows([shape[a] for a in axes])))
  window = [windows.get(a, 1) for a in range(len(shape))]
  out_shape = [-(-d // w) for d, w in zip(shape, window)]
  padding = [
    xla_fold.same_padding(d, windows[a]) if a in windows else (0, 0) for a, d in enumerate(shape)
  ]
  ones = [1] * len(shape)
  body = windowing.body_at(ctx, jaxpr, None, out_shape)
  xs = windowing.window_fold(
    ctx, xs, list(inits), body, window, window, padding, ones, ones, shape, out_shape
  )
  return xs, out_shape


def _xla_reduce(ctx, operands, inits, jaxpr, axes):
  specs = [tf.TensorSpec((), x.dtype) for x in operands] * 2

  def reducer(*scalars):
    return tuple(ctx.lower_jaxpr(jaxpr, scalars))

  fn = tf.function(reducer, autograph=False).get_concrete_function(*specs)
  return list(tf_private.xla_variadic_reduce(list(operands), list(inits), axes, fn))
