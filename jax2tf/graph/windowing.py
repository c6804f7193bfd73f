"""Window machinery shared by pooling, convolution and reductions.

Windows are taken as strided slices of the padded (and base-dilated) operand,
one slice per window position, which has XLA's reduce_window semantics for any
window, stride, dilation and padding with ordinary TF ops only. Symbolic
dimensions come through `ctx.dim`.
"""

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np
import tensorflow as tf
from jax import lax

from jax2tf.graph import semantics as sem
from jax2tf.shapes import dim_eval


def _nonneg(d) -> bool:
  """Whether pad amount `d` is known to be >= 0 (symbolic pads come from SAME)."""
  if isinstance(d, (int, np.integer)):
    return bool(d >= 0)
  try:
    return bool(d >= 0)
  except jax.errors.InconclusiveDimensionOperation:
    return True


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
    x = tf.strided_slice(
      x, sem.stack_dims([ctx.dim(b) for b in begin]), sem.stack_dims([ctx.dim(e) for e in end])
    )
    shape = [e - b for b, e in zip(begin, end)]
    pads = [(lo if _nonneg(lo) else 0, hi if _nonneg(hi) else 0) for lo, hi in pads]
  if any(not (isinstance(p, int) and p == 0) for pair in pads for p in pair):
    tf_pads = [[ctx.dim(lo), ctx.dim(hi)] for lo, hi in pads]
    if not all(isinstance(p, int) for pair in tf_pads for p in pair):
      tf_pads = tf.reshape(sem.stack_dims([p for pair in tf_pads for p in pair]), [-1, 2])
    x = tf.pad(x, tf_pads, constant_values=_scalar(value, x.dtype))
    shape = [d + lo + hi for d, (lo, hi) in zip(shape, pads)]
  # Padding or cropping by computed amounts leaves TF's shape inference (and
  # the TFLite converter's) no static dimension, not even those known here
  # (channels, say), which TFLite's CONV_2D needs static. A Reshape to the
  # shape with those as constants restores them (EnsureShape would too, but
  # TFLite has no kernel for it).
  static = [d if isinstance(d, int) else None for d in shape]
  if x.shape.rank is not None and any(
    s is not None and d is None for s, d in zip(static, x.shape.as_list())
  ):
    x = ctx.reshape(x, shape)
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
    flat = shape[:axis] + [n * f] + shape[axis + 1 :]
    y = ctx.reshape(y, flat)
    # Symbolic dimensions are >= 1, so only constants can be empty.
    new_n = max(n * f - f + 1, 0) if isinstance(n, int) else n * f - f + 1
    end = [ctx.dim(d) for d in flat]
    end[axis] = ctx.dim(new_n)
    x = tf.strided_slice(y, [0] * len(shape), sem.stack_dims(end))
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
    yield offsets, tf.strided_slice(x, begin, sem.stack_dims(end), list(strides))


def _bool_or(a, b):
  return tf.logical_or(a, b)


def _bool_and(a, b):
  return tf.logical_and(a, b)


def _plain_max(a, b):
  return tf.maximum(a, b)


def _plain_min(a, b):
  return tf.minimum(a, b)


class Monoid(NamedTuple):
  """How a window reduction combines values, the identity it pads with, and
  the TF dtype it computes in."""

  op: Callable
  identity: Any
  dtype: tf.DType


def monoid(kind: str, dtype, *, signed_zeros: bool = True) -> Monoid:
  """The monoid of reduction `kind` ("sum", "prod", "max", "min") on `dtype`.

  Float max/min combine with XLA's order (NaN propagates, -0.0 < +0.0, or
  every zero +0.0 without `signed_zeros`).
  """
  dtype = np.dtype(dtype)
  is_bool = dtype == np.bool_
  if kind == "sum":
    return (
      Monoid(_bool_or, False, tf.bool) if is_bool else Monoid(tf.add, 0, sem.compute_dtype(dtype))
    )
  if kind == "prod":
    return (
      Monoid(_bool_and, True, tf.bool)
      if is_bool
      else Monoid(tf.multiply, 1, sem.compute_dtype(dtype))
    )
  if kind == "max":
    return (
      Monoid(_bool_or, False, tf.bool)
      if is_bool
      else Monoid(
        functools.partial(sem.maximum, signed_zeros=signed_zeros),
        sem.lowest(dtype),
        sem.widened(dtype),
      )
    )
  if kind == "min":
    return (
      Monoid(_bool_and, True, tf.bool)
      if is_bool
      else Monoid(
        functools.partial(sem.minimum, signed_zeros=signed_zeros),
        sem.highest(dtype),
        sem.widened(dtype),
      )
    )
  raise ValueError(f"unknown reduction {kind!r}")


# A generic reduce_window whose body is one of these binary primitives is that monoid.
_BODY_KINDS = {
  lax.add_p: "sum",
  lax.mul_p: "prod",
  lax.max_p: "max",
  lax.min_p: "min",
  lax.or_p: "max",
  lax.and_p: "min",
}


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
  is_bool = np.dtype(jaxpr.invars[0].aval.dtype) == np.bool_
  if is_bool and kind in ("sum", "prod"):
    return None
  # On integers `or` and `and` are bitwise, not max and min.
  if not is_bool and eqn.primitive in (lax.or_p, lax.and_p):
    return None
  return kind


def is_identity(init, kind, dtype) -> bool:
  """Whether the (TF) init value is known to be the identity of the monoid."""
  value = tf.get_static_value(init)
  if value is None:
    return False
  identity = monoid(kind, dtype).identity
  return bool(np.all(np.asarray(value) == identity))


def window_reduce(
  ctx,
  x,
  kind,
  window,
  strides,
  padding,
  base_dilation,
  window_dilation,
  *,
  shape=None,
  out_shape=None,
):
  """The reduction `kind` over every window, with XLA's reduce_window semantics
  (padding and base-dilation holes hold the monoid's identity)."""
  shape = list(ctx.avals_in[0].shape if shape is None else shape)
  out_shape = list(ctx.aval_out.shape if out_shape is None else out_shape)
  signed_zeros = ctx.target.signed_zeros
  op, pad_value, dt = monoid(kind, x.dtype.as_numpy_dtype, signed_zeros=signed_zeros)
  out_dtype = x.dtype
  x = tf.cast(x, dt)
  x, shape = dilate(ctx, x, shape, base_dilation, pad_value)
  x, shape = pad_or_crop(ctx, x, shape, padding, pad_value)
  pieces = window_slices(ctx, x, window, strides, window_dilation, out_shape)
  if kind in ("max", "min") and dt.is_floating:
    res = _float_extremum_of(pieces, kind == "max", signed_zeros)
  else:
    res = None
    for _, piece in pieces:
      res = piece if res is None else op(res, piece)
  if res is None:  # an empty window: every output is the identity
    res = tf.fill(ctx.shape(out_shape), tf.constant(pad_value, dt))
  if out_dtype == tf.bool:
    return res
  return tf.cast(res, out_dtype)


def _float_extremum_of(pieces, is_max: bool, signed_zeros: bool):
  """XLA's max/min over the window pieces: TF's Maximum/Minimum per piece,
  with NaN and the zero that decides a tie looked for alongside, and one
  correction at the end (as for reduce_max/min)."""
  res = zero_found = nan_found = None
  for _, piece in pieces:
    zero = sem.is_decisive_zero(piece, is_max, signed_zeros=signed_zeros)
    nan = tf.math.is_nan(piece)
    if res is None:
      res, zero_found, nan_found = piece, zero, nan
      continue
    res = tf.maximum(res, piece) if is_max else tf.minimum(res, piece)
    zero_found = tf.logical_or(zero_found, zero)
    nan_found = tf.logical_or(nan_found, nan)
  if res is None:
    return None
  return sem.fix_extremum_zeros_and_nans(res, is_max, zero_found=zero_found, nan_found=nan_found)


def average_pool_of(x, divisor):
  """The AvgPool behind `x`, when `x` is a window sum that pooling rules
  built as AvgPool * n and `divisor` is n: the division of a sum pool by its
  window size (Flax's avg_pool) is then the AvgPool itself, one TF op (and
  one TFLite AVERAGE_POOL_2D) instead of three. Else None. Graph mode only:
  eager tensors keep no producing op."""
  op = getattr(x, "op", None)
  if op is None or tf.executing_eagerly() or op.type != "Mul":
    return None
  pooled, scale = op.inputs
  if pooled.op.type != "AvgPool":
    return None
  n, d = tf.get_static_value(scale), tf.get_static_value(divisor)
  if n is None or d is None or np.size(n) != 1 or np.size(d) != 1:
    return None
  return pooled if float(n) == float(np.reshape(d, ())) else None


# ------------------------------------------------ folds with any body ---

# Window positions folded in one TF op chain each up to this many; more go
# through a tf.while_loop (the graph then has one copy of the body).
_UNROLLED_POSITIONS = 16


def body_at(ctx, jaxpr, consts, shape) -> Callable[[list, list], list]:
  """A reduction body, a jaxpr of scalars (accumulators..., elements...) ->
  accumulators, applied elementwise to tensors of JAX shape `shape`.

  The body is traced again, vmapped to `shape`, so that each of its rules
  sees the avals of the tensors it gets (a rule may read its shapes)."""
  open_jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
  consts = list(getattr(jaxpr, "consts", consts or ()))

  def scalars(*args):
    return jax.core.eval_jaxpr(open_jaxpr, consts, *args)

  fn = scalars
  for _ in shape:
    fn = jax.vmap(fn)
  specs = [jax.ShapeDtypeStruct(tuple(shape), v.aval.dtype) for v in open_jaxpr.invars]
  closed = jax.make_jaxpr(fn)(*specs)
  return lambda accs, elems: ctx.lower_jaxpr(closed, [*accs, *elems])


def window_fold(
  ctx, xs, inits, body, window, strides, padding, base_dilation, window_dilation, shape, out_shape
):
  """XLA's reduce_window of operands `xs` (of JAX shape `shape`) with any
  body (`body(accumulators, elements)`, elementwise on `out_shape`), as
  XLA's CPU backend computes it (measured against jax.jit): each output
  element starts from the init values and folds in the elements of its
  window one at a time, in row-major order of the window positions,
  skipping padding and base-dilation holes. (XLA leaves the order open; its
  CPU loop emitter takes another one in windows of several axes padded along
  a later axis, which only a body neither associative nor commutative sees.)"""
  padded = [_padded(ctx, x, shape, padding, base_dilation, init)[0] for x, init in zip(xs, inits)]
  valid = None
  if any(b != 1 for b in base_dilation) or not all(
    _is_zero_pad(p) for pair in padding for p in pair
  ):
    ones = tf.ones(ctx.shape(shape), tf.int32)
    valid = _padded(ctx, ones, shape, padding, base_dilation, 0)[0]
  accs = [tf.broadcast_to(init, ctx.shape(out_shape)) for init in inits]
  if any(dim_eval.is_zero(d) for d in list(out_shape) + list(window)):
    return accs  # no output, or windows of no position: the inits

  def step(accs, pieces, valid_piece):
    new = body(accs, pieces)
    if valid_piece is None:
      return list(new)
    keep = tf.greater(valid_piece, 0)
    return [tf.where(keep, n, a) for n, a in zip(new, accs)]

  if all(isinstance(w, int) for w in window) and math.prod(window) <= _UNROLLED_POSITIONS:
    grids = [window_slices(ctx, x, window, strides, window_dilation, out_shape) for x in padded]
    if valid is not None:
      grids.append(window_slices(ctx, valid, window, strides, window_dilation, out_shape))
    for pieces in zip(*grids):
      pieces = [p for _, p in pieces]
      accs = step(accs, pieces[: len(xs)], pieces[len(xs)] if valid is not None else None)
    return accs
  return _window_fold_loop(
    ctx, padded, valid, accs, step, window, strides, window_dilation, out_shape
  )


def _is_zero_pad(p) -> bool:
  return dim_eval.is_constant(p) and int(p) == 0


def _padded(ctx, x, shape, padding, base_dilation, value):
  x, shape = dilate(ctx, x, shape, base_dilation, value)
  return pad_or_crop(ctx, x, shape, padding, value)


def _window_fold_loop(ctx, padded, valid, accs, step, window, strides, window_dilation, out_shape):
  """The fold of window_fold as a tf.while_loop over the window positions."""
  sizes = [ctx.dim(w) for w in window]
  count = functools.reduce(lambda a, b: a * b, sizes, 1)
  spans = [ctx.dim((n - 1) * s + 1) for n, s in zip(out_shape, strides)]

  def piece(x, begin):
    # A slice at a computed offset, then strided at offset 0: XLA takes
    # strides only where the offset is a constant.
    x = tf.slice(x, tf.stack(begin), sem.stack_dims(spans))
    if any(s != 1 for s in strides):
      x = tf.strided_slice(x, [0] * len(spans), sem.stack_dims(spans), list(strides))
    return ctx.reshape(x, out_shape)

  def loop_body(k, *accs):
    # Window position k (row-major) as one offset per axis.
    begin, rest = [], k
    for size, dilation in reversed(list(zip(sizes, window_dilation))):
      begin.append(tf.math.floormod(rest, size) * dilation)
      rest = tf.math.floordiv(rest, size)
    begin = begin[::-1]
    pieces = [piece(x, begin) for x in padded]
    new = step(list(accs), pieces, None if valid is None else piece(valid, begin))
    return (k + 1, *new)

  out = tf.while_loop(lambda k, *_: k < count, loop_body, (tf.constant(0, tf.int32), *accs))
  return list(out[1:])


def fold_in_init(kind: str, res: tf.Tensor, init, *, signed_zeros: bool) -> tf.Tensor:
  """`res`, a reduction by the monoid `kind` from its identity, with `init`
  folded in once: XLA's fold starts from the init value, and a monoid's
  fold may start from the identity and take the init in last."""
  op, _, dt = monoid(kind, res.dtype.as_numpy_dtype, signed_zeros=signed_zeros)
  out = op(tf.cast(init, dt), tf.cast(res, dt))
  return out if out.dtype == res.dtype else tf.cast(out, res.dtype)
