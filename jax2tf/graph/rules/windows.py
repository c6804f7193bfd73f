"""Windowed reductions (pooling), their gradients' select primitives and cumulative ops.

Pooling becomes MaxPool / AvgPool where those are exact. Everything else is
a reduction over the window's strided slices of the padded operand (one
StridedSlice per window position), which has XLA's semantics for any window,
stride, dilation and padding, with ordinary TF ops only.

Cases: windows_cases.py
"""

import itertools
from typing import Any, NamedTuple, Sequence

import numpy as np
import jax
import tensorflow as tf
from jax import lax

from jax2tf.graph import registry
from jax2tf.graph.registry import register
from jax2tf.graph.rules import dot as dot_rules


# ---------------------------------------------------------------- helpers ---

def _nonneg(d) -> bool:
  """Whether pad amount `d` is known to be >= 0 (symbolic pads come from SAME)."""
  if isinstance(d, (int, np.integer)):
    return d >= 0
  try:
    return bool(d >= 0)
  except jax.errors.InconclusiveDimensionOperation:
    return True


def _to_tensor_list(values):
  if all(isinstance(v, int) for v in values):
    return values
  return tf.stack([tf.constant(v, tf.int32) if isinstance(v, int) else v for v in values])


def _scalar(value, dtype):
  return tf.cast(value, dtype) if isinstance(value, tf.Tensor) else tf.constant(value, dtype)


def pad_or_crop(ctx, x, shape, pads, value=0):
  """`x` (of symbolic `shape`) padded by (lo, hi) pairs; negative pads crop.

  Returns the new tensor and its symbolic shape."""
  shape = list(shape)
  if any(not _nonneg(lo) or not _nonneg(hi) for lo, hi in pads):
    begin, end = [], []
    for d, (lo, hi) in zip(shape, pads):
      begin.append(0 if _nonneg(lo) else -lo)
      end.append(d if _nonneg(hi) else d + hi)
    x = tf.strided_slice(x, _to_tensor_list([ctx.dim(b) for b in begin]),
                         _to_tensor_list([ctx.dim(e) for e in end]))
    shape = [e - b for b, e in zip(begin, end)]
    pads = [(lo if _nonneg(lo) else 0, hi if _nonneg(hi) else 0) for lo, hi in pads]
  if any(not (isinstance(p, int) and p == 0) for pair in pads for p in pair):
    tf_pads = [[ctx.dim(lo), ctx.dim(hi)] for lo, hi in pads]
    if not all(isinstance(p, int) for pair in tf_pads for p in pair):
      tf_pads = tf.reshape(_to_tensor_list([p for pair in tf_pads for p in pair]), [-1, 2])
    x = tf.pad(x, tf_pads, constant_values=_scalar(value, x.dtype))
    shape = [d + lo + hi for d, (lo, hi) in zip(shape, pads)]
  return x, shape


def dilate(ctx, x, shape, factors, value=0):
  """Inserts `factor - 1` copies of `value` between consecutive elements along each axis."""
  shape = list(shape)
  for axis, f in enumerate(factors):
    if f == 1:
      continue
    n = shape[axis]
    # (.., n, ..) -> (.., n, 1, ..) -> pad to (.., n, f, ..) -> (.., n*f, ..) -> crop.
    y = tf.expand_dims(x, axis + 1)
    pads = [[0, 0]] * (len(shape) + 1)
    pads[axis + 1] = [0, f - 1]
    y = tf.pad(y, pads, constant_values=_scalar(value, x.dtype))
    flat = shape[:axis] + [n * f] + shape[axis + 1:]
    y = tf.reshape(y, ctx.shape(flat))
    # Symbolic dimensions are >= 1, so only constants can be empty.
    new_n = max(n * f - f + 1, 0) if isinstance(n, int) else n * f - f + 1
    end = [ctx.dim(d) for d in flat]
    end[axis] = ctx.dim(new_n)
    x = tf.strided_slice(y, [0] * len(shape), _to_tensor_list(end))
    shape[axis] = new_n
  return x, shape


def window_slices(ctx, x, window, strides, window_dilation, out_shape):
  """For each window position (row-major), the strided slice of the padded
  operand `x` holding that position's element of every window."""
  for offsets in itertools.product(*[range(w) for w in window]):
    begin = [k * d for k, d in zip(offsets, window_dilation)]
    end = []
    for b, s, n in zip(begin, strides, out_shape):
      if isinstance(n, int) and n == 0:
        end.append(b)
      else:
        end.append(ctx.dim((n - 1) * s + 1 + b))
    yield offsets, tf.strided_slice(x, begin, _to_tensor_list(end), list(strides))


def _is_float(dtype) -> bool:
  dtype = np.dtype(dtype)
  return dtype.kind == "f" or dtype.name == "bfloat16"


def nan_max(a, b):
  res = tf.maximum(a, b)
  if a.dtype.is_floating:
    res = tf.where(tf.math.is_nan(a), a, tf.where(tf.math.is_nan(b), b, res))
  return res


def nan_min(a, b):
  res = tf.minimum(a, b)
  if a.dtype.is_floating:
    res = tf.where(tf.math.is_nan(a), a, tf.where(tf.math.is_nan(b), b, res))
  return res


def _lowest(dtype):
  dtype = np.dtype(dtype)
  if _is_float(dtype):
    return -np.inf
  if dtype == np.bool_:
    return False
  return np.iinfo(dtype).min


def _highest(dtype):
  dtype = np.dtype(dtype)
  if _is_float(dtype):
    return np.inf
  if dtype == np.bool_:
    return True
  return np.iinfo(dtype).max


def _bool_or(a, b):
  return tf.logical_or(a, b)


def _bool_and(a, b):
  return tf.logical_and(a, b)


# The combining op, padding value and TF compute dtype of each monoid.
def _monoid(kind, dtype):
  dtype = np.dtype(dtype)
  if kind == "sum":
    if dtype == np.bool_:
      return _bool_or, False, tf.bool
    return tf.add, 0, dot_rules.compute_dtype(dtype)
  if kind == "prod":
    if dtype == np.bool_:
      return _bool_and, True, tf.bool
    return tf.multiply, 1, dot_rules.compute_dtype(dtype)
  if kind == "max":
    if dtype == np.bool_:
      return _bool_or, False, tf.bool
    return nan_max, _lowest(dtype), _minmax_dtype(dtype)
  if kind == "min":
    if dtype == np.bool_:
      return _bool_and, True, tf.bool
    return nan_min, _highest(dtype), _minmax_dtype(dtype)
  raise ValueError(kind)


def _minmax_dtype(dtype):
  # Max/min are exact in a wider type; TF CPU lacks Maximum for some 16-bit types.
  if dtype.name in ("float16", "bfloat16"):
    return tf.float32
  return tf.as_dtype(dtype)


# ------------------------------------------------------- reduce_window ---

def _spatial_axes(window, strides, padding, base_dilation, window_dilation):
  return [i for i, (w, s, p, b, d) in enumerate(
      zip(window, strides, padding, base_dilation, window_dilation))
      if w != 1 or s != 1 or tuple(p) != (0, 0) or b != 1 or d != 1]


def _pool_layout(rank, spatial):
  """True when the operand is already (batch, spatial..., channel) for tf.nn.pool."""
  return (1 <= len(spatial) <= 3 and rank == len(spatial) + 2
          and spatial == list(range(1, rank - 1)))


def _is_tf_same(shape, window, strides, padding) -> bool:
  """Whether `padding` is what TF's padding="SAME" adds for these sizes."""
  for n, k, st, (lo, hi) in zip(shape, window, strides, padding):
    if not isinstance(n, int):
      return False
    total = max((-(-n // st) - 1) * st + k - n, 0)
    if (lo, hi) != (total // 2, total - total // 2):
      return False
  return True


def _try_pool(ctx, x, kind, window, strides, padding, base_dilation, window_dilation):
  """MaxPool / AvgPool when they compute exactly this window reduction."""
  dtype = np.dtype(ctx.avals_in[0].dtype)
  rank = len(window)
  spatial = _spatial_axes(window, strides, padding, base_dilation, window_dilation)
  if (kind not in ("max", "sum") or dtype != np.float32 or not _pool_layout(rank, spatial)
      or any(b != 1 for b in base_dilation) or any(d != 1 for d in window_dilation)
      or not all(isinstance(p, int) and p >= 0 for pair in padding for p in pair)
      or not all(isinstance(w, int) for w in window)):
    return None
  ksize = list(window[1:-1])
  st = list(strides[1:-1])
  _, pad_value, _ = _monoid(kind, dtype)
  if kind == "max":
    # TF's SAME max pooling ignores the padding, as -inf padding does.
    if _is_tf_same(ctx.avals_in[0].shape, window, strides, padding):
      xp, tf_padding = x, "SAME"
    else:
      xp, _ = pad_or_crop(ctx, x, ctx.avals_in[0].shape, padding, pad_value)
      tf_padding = "VALID"
    res = tf.nn.pool(xp, ksize, "MAX", strides=st, padding=tf_padding)
    # MaxPool skips NaNs; JAX's max propagates them.
    has_nan = tf.nn.pool(tf.cast(tf.math.is_nan(xp), tf.float32), ksize, "MAX",
                         strides=st, padding=tf_padding)
    return tf.where(has_nan > 0, tf.constant(np.nan, tf.float32), res)
  xp, _ = pad_or_crop(ctx, x, ctx.avals_in[0].shape, padding, pad_value)
  # AvgPool over VALID windows divides by the full window size, so multiplying
  # back gives the sum (up to one rounding).
  res = tf.nn.pool(xp, ksize, "AVG", strides=st, padding="VALID")
  return res * float(np.prod(ksize))


def window_reduce(ctx, x, kind, window, strides, padding, base_dilation, window_dilation,
                  *, shape=None, out_shape=None):
  """The reduction `kind` over every window, with XLA's reduce_window semantics
  (padding and base-dilation holes hold the monoid's identity)."""
  shape = list(ctx.avals_in[0].shape if shape is None else shape)
  out_shape = list(ctx.aval_out.shape if out_shape is None else out_shape)
  op, pad_value, dt = _monoid(kind, x.dtype.as_numpy_dtype)
  out_dtype = x.dtype
  x = tf.cast(x, dt)
  x, shape = dilate(ctx, x, shape, base_dilation, pad_value)
  x, shape = pad_or_crop(ctx, x, shape, padding, pad_value)
  res = None
  for _, piece in window_slices(ctx, x, window, strides, window_dilation, out_shape):
    res = piece if res is None else op(res, piece)
  if res is None:  # an empty window: every output is the identity
    res = tf.fill(ctx.shape(out_shape), tf.constant(pad_value, dt))
  if out_dtype == tf.bool:
    return res
  return tf.cast(res, out_dtype)


def _reduce_window_rule(kind):
  def rule(ctx, x, *, window_dimensions, window_strides, padding, base_dilation,
           window_dilation):
    res = _try_pool(ctx, x, kind, window_dimensions, window_strides, padding,
                    base_dilation, window_dilation)
    if res is not None:
      return res
    return window_reduce(ctx, x, kind, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation)
  return rule


register(lax.reduce_window_sum_p)(_reduce_window_rule("sum"))
register(lax.reduce_window_max_p)(_reduce_window_rule("max"))
register(lax.reduce_window_min_p)(_reduce_window_rule("min"))


# A generic reduce_window whose body is one of these binary primitives is that monoid.
_BODY_KINDS = {lax.add_p: "sum", lax.mul_p: "prod", lax.max_p: "max", lax.min_p: "min",
               lax.or_p: "max", lax.and_p: "min"}


def recognise_body(jaxpr) -> str | None:
  """The monoid a reduction body computes, when it is a single binary op of its
  two (scalar) arguments."""
  jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
  if len(jaxpr.invars) != 2 or len(jaxpr.outvars) != 1 or len(jaxpr.eqns) != 1:
    return None
  eqn = jaxpr.eqns[0]
  kind = _BODY_KINDS.get(eqn.primitive)
  if kind is None or set(map(id, eqn.invars)) != set(map(id, jaxpr.invars)):
    return None
  if eqn.outvars[0] is not jaxpr.outvars[0]:
    return None
  if np.dtype(jaxpr.invars[0].aval.dtype) == np.bool_ and kind in ("sum", "prod"):
    return None
  return kind


def _generic_no_xla(ctx, *, jaxpr, consts, **_):
  return len(ctx.avals_in) == 2 and not consts and recognise_body(jaxpr) is not None


def is_identity(init, kind, dtype) -> bool:
  """Whether the (TF) init value is known to be the identity of the monoid."""
  value = tf.get_static_value(init)
  if value is None:
    return False
  _, identity, _ = _monoid(kind, dtype)
  return bool(np.all(np.asarray(value) == identity))


@register(lax.reduce_window_p, no_xla=_generic_no_xla)
def _reduce_window(ctx, *args, jaxpr, consts, window_dimensions, window_strides, padding,
                   base_dilation, window_dilation):
  n = len(args) // 2
  operands, inits = args[:n], args[n:]
  kind = recognise_body(jaxpr) if n == 1 and not consts else None
  params = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
  if kind is not None and is_identity(inits[0], kind, ctx.avals_in[0].dtype):
    res = _try_pool(ctx, operands[0], kind, *params)
    if res is None:
      res = window_reduce(ctx, operands[0], kind, *params)
    return [res]
  if not ctx.enable_xla:
    # XLA leaves open how often a non-identity init enters each window.
    raise registry.no_xla_error(
        ctx.primitive, dict(window_dimensions=window_dimensions, padding=padding),
        "its init value is not known to be the identity of its reduction")
  return _xla_reduce_window(ctx, operands, inits, jaxpr, consts, *params)


class _Closed(NamedTuple):
  """A body with its constants, in the shape ctx.lower_jaxpr reads (the
  ClosedJaxpr class differs between JAX versions)."""
  jaxpr: Any
  consts: Sequence


def _xla_reduce_window(ctx, operands, inits, jaxpr, consts, window, strides, padding,
                       base_dilation, window_dilation):
  from tensorflow.compiler.tf2xla.python import xla as tfxla
  if len(operands) != 1:
    raise NotImplementedError(
        "reduce_window with several operands has no graph-serialization rule; use "
        "native serialization (native_serialization=True).")
  x, init = operands[0], inits[0]
  spec = tf.TensorSpec((), x.dtype)

  def reducer(a, b):
    return ctx.lower_jaxpr(_Closed(getattr(jaxpr, "jaxpr", jaxpr), consts), [a, b])[0]

  fn = tf.function(reducer, autograph=False).get_concrete_function(spec, spec)
  pads = [[ctx.dim(lo), ctx.dim(hi)] for lo, hi in padding]
  if not all(isinstance(p, int) for pair in pads for p in pair):
    pads = tf.reshape(_to_tensor_list([p for pair in pads for p in pair]), [-1, 2])
  res = tfxla.reduce_window(x, init, fn, list(window), list(strides), list(base_dilation),
                            list(window_dilation), pads)
  return [res]


# ---------------------------------------- gradients of max/min pooling ---

def _select_fn(select_prim):
  if select_prim is lax.ge_p:
    return tf.greater_equal, "max"
  if select_prim is lax.le_p:
    return tf.less_equal, "min"
  raise NotImplementedError(f"select_prim {select_prim} is not ge or le")


@register(lax.select_and_gather_add_p)
def _select_and_gather_add(ctx, tangents, operand, *, select_prim, window_dimensions,
                           window_strides, padding, base_dilation, window_dilation):
  """For each window, the tangent at the position the select picks (first max/min)."""
  select, kind = _select_fn(select_prim)
  _, pad_value, dt = _monoid(kind, operand.dtype.as_numpy_dtype)
  shape = list(ctx.avals_in[1].shape)
  x = tf.cast(operand, dt)
  x, xs = dilate(ctx, x, shape, base_dilation, pad_value)
  x, _ = pad_or_crop(ctx, x, xs, padding, pad_value)
  t, ts = dilate(ctx, tangents, shape, base_dilation, 0)
  t, _ = pad_or_crop(ctx, t, ts, padding, 0)
  best_x = best_t = None
  out_shape = ctx.aval_out.shape
  for (_, xk), (_, tk) in zip(
      window_slices(ctx, x, window_dimensions, window_strides, window_dilation, out_shape),
      window_slices(ctx, t, window_dimensions, window_strides, window_dilation, out_shape)):
    if best_x is None:
      best_x, best_t = xk, tk
      continue
    keep = select(best_x, xk)
    best_x = tf.where(keep, best_x, xk)
    best_t = tf.where(keep, best_t, tk)
  return best_t


@register(lax.select_and_scatter_add_p)
def _select_and_scatter_add(ctx, source, operand, *, select_prim, window_dimensions,
                            window_strides, padding):
  """Adds each window's source value at the position the select picks."""
  select, kind = _select_fn(select_prim)
  _, pad_value, dt = _monoid(kind, operand.dtype.as_numpy_dtype)
  in_shape = list(ctx.avals_in[1].shape)
  out_shape = list(ctx.avals_in[0].shape)   # the source has the windows' shape
  rank = len(in_shape)
  ones = [1] * rank
  x, padded_shape = pad_or_crop(ctx, tf.cast(operand, dt), in_shape, padding, pad_value)
  pieces = list(window_slices(ctx, x, window_dimensions, window_strides, ones, out_shape))
  best = None
  for _, xk in pieces:
    best = xk if best is None else tf.where(select(best, xk), best, xk)
  taken = None
  total = None
  zero = tf.zeros_like(source)
  for offsets, xk in pieces:
    hit = tf.equal(xk, best) if taken is None else tf.logical_and(
        tf.equal(xk, best), tf.logical_not(taken))
    taken = hit if taken is None else tf.logical_or(taken, hit)
    contrib = tf.where(hit, source, zero)
    # Put window w's value at offset + w * stride of the padded operand.
    spread, spread_shape = dilate(ctx, contrib, out_shape, window_strides, 0)
    placed, _ = pad_or_crop(ctx, spread, spread_shape, [
        (k, p - k - s) for k, p, s in zip(offsets, padded_shape, spread_shape)], 0)
    total = placed if total is None else total + placed
  if total is None:
    return tf.zeros(ctx.shape(in_shape), ctx.tf_dtype())
  res, _ = pad_or_crop(ctx, total, padded_shape, [(-lo, -hi) for lo, hi in padding], 0)
  return res


# ---------------------------------------------------------- cumulative ---

def _cumulative_scan(ctx, x, axis, reverse, op, identity):
  """Inclusive scan by doubling (Hillis-Steele): log2(n) shifted combines."""
  n = ctx.avals_in[0].shape[axis]
  rank = len(ctx.avals_in[0].shape)
  if reverse:
    x = tf.reverse(x, [axis])
  shape = list(ctx.avals_in[0].shape)

  def shifted(v, shift):
    pads = [(0, 0)] * rank
    pads[axis] = (shift, 0)
    padded, _ = pad_or_crop(ctx, v, shape, pads, identity)
    end = [ctx.dim(d) for d in shape]
    return tf.strided_slice(padded, [0] * rank, _to_tensor_list(end))

  if isinstance(n, int):
    shift = 1
    while shift < n:
      x = op(x, shifted(x, shift))
      shift *= 2
  else:
    n_tf = ctx.dim(n)
    # The symbolic length fixes only the number of steps: a While of doubling
    # shifts, written as a gather so that XLA sees no data-dependent shapes.
    positions = tf.range(n_tf)
    bcast = [1] * rank
    bcast[axis] = -1
    fill = tf.constant(identity, x.dtype)

    def body(shift, v):
      src = positions - shift
      piece = tf.gather(v, tf.maximum(src, 0), axis=axis)
      piece = tf.where(tf.reshape(src >= 0, bcast), piece, fill)
      return shift * 2, op(v, piece)
    _, x = tf.while_loop(lambda shift, v: shift < n_tf, body,
                         [tf.constant(1, tf.int32), x])
  if reverse:
    x = tf.reverse(x, [axis])
  return x


@register(lax.cumsum_p)
def _cumsum(ctx, x, *, axis, reverse):
  if x.dtype.is_complex:
    # XLA has no complex Cumsum kernel; complex sums are componentwise.
    parts = [tf.math.cumsum(p, axis=axis, reverse=reverse)
             for p in (tf.math.real(x), tf.math.imag(x))]
    return tf.complex(*parts)
  dt = dot_rules.compute_dtype(ctx.aval_out.dtype)
  return tf.cast(tf.math.cumsum(tf.cast(x, dt), axis=axis, reverse=reverse), x.dtype)


@register(lax.cumprod_p)
def _cumprod(ctx, x, *, axis, reverse):
  dt = dot_rules.compute_dtype(ctx.aval_out.dtype)
  return tf.cast(tf.math.cumprod(tf.cast(x, dt), axis=axis, reverse=reverse), x.dtype)


def _cum_minmax(kind):
  def rule(ctx, x, *, axis, reverse):
    op, identity, dt = _monoid(kind, ctx.aval_out.dtype)
    res = _cumulative_scan(ctx, tf.cast(x, dt), axis, reverse, op, identity)
    return tf.cast(res, x.dtype) if x.dtype != tf.bool else res
  return rule


register(lax.cummax_p)(_cum_minmax("max"))
register(lax.cummin_p)(_cum_minmax("min"))


@register(lax.cumlogsumexp_p)
def _cumlogsumexp(ctx, x, *, axis, reverse):
  dt = tf.float32 if x.dtype in (tf.float16, tf.bfloat16) else x.dtype
  res = tf.math.cumulative_logsumexp(tf.cast(x, dt), axis=axis, reverse=reverse)
  return tf.cast(res, x.dtype)
