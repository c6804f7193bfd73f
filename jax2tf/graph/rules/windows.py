"""Windowed reductions (pooling), their gradients' select primitives and cumulative ops.

Pooling becomes MaxPool / AvgPool where those are exact. Everything else is
a reduction over the window's strided slices of the padded operand (one
StridedSlice per window position), which has XLA's semantics for any window,
stride, dilation and padding, with ordinary TF ops only: a monoid combines the
slices, and folds in an init that is not its identity once; any other body
(several operands too) folds them in one at a time (windowing.window_fold).

Cases: tests/cases/windows.py
"""

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf
from jax import lax

from jax2tf.graph import int_lanes, registry
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register
from jax2tf.graph.windowing import (
  body_at,
  dilate,
  fold_in_init,
  is_identity,
  monoid,
  pad_or_crop,
  recognise_body,
  window_fold,
  window_reduce,
  window_slices,
)
from jax2tf.internals import tf_private
from jax2tf.jax_forms import selected_windows
from jax2tf.shapes import dim_eval

# ------------------------------------------------------- reduce_window ---


def _spatial_axes(window, strides, padding, base_dilation, window_dilation):
  return [
    i
    for i, (w, s, p, b, d) in enumerate(
      zip(window, strides, padding, base_dilation, window_dilation)
    )
    if w != 1 or s != 1 or tuple(p) != (0, 0) or b != 1 or d != 1
  ]


def _pool_layout(rank, spatial):
  """True when the operand is already (batch, spatial..., channel) for tf.nn.pool."""
  return 1 <= len(spatial) <= 3 and rank == len(spatial) + 2 and spatial == list(range(1, rank - 1))


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
  if (
    kind not in ("max", "sum")
    or dtype != np.float32
    or not _pool_layout(rank, spatial)
    or any(b != 1 for b in base_dilation)
    or any(d != 1 for d in window_dilation)
    or not all(isinstance(p, int) and p >= 0 for pair in padding for p in pair)
    or not all(isinstance(w, int) for w in window)
  ):
    return None
  ksize = list(window[1:-1])
  st = list(strides[1:-1])
  _, pad_value, _ = monoid(kind, dtype)
  if kind == "max":
    # TF's SAME max pooling ignores the padding, as -inf padding does.
    if _is_tf_same(ctx.avals_in[0].shape, window, strides, padding):
      xp, tf_padding = x, "SAME"
    else:
      xp, _ = pad_or_crop(ctx, x, ctx.avals_in[0].shape, padding, pad_value)
      tf_padding = "VALID"
    res = tf.nn.pool(xp, ksize, "MAX", strides=st, padding=tf_padding)
    # MaxPool skips NaNs and returns whichever zero it meets; JAX's max
    # propagates NaN and puts +0.0 above -0.0. One more pool finds both: it
    # marks NaN with 2 and +0.0 with 1.
    marks = tf.where(
      tf.math.is_nan(xp),
      2.0,
      tf.cast(sem.is_decisive_zero(xp, True, signed_zeros=ctx.target.signed_zeros), tf.float32),
    )
    mark = tf.nn.pool(marks, ksize, "MAX", strides=st, padding=tf_padding)
    return sem.fix_extremum_zeros_and_nans(res, True, zero_found=mark > 0, nan_found=mark > 1)
  xp, _ = pad_or_crop(ctx, x, ctx.avals_in[0].shape, padding, pad_value)
  # AvgPool over VALID windows divides by the full window size, so multiplying
  # back gives the sum (up to one rounding).
  res = tf.nn.pool(xp, ksize, "AVG", strides=st, padding="VALID")
  return res * float(np.prod(ksize))


def _reduce_window_rule(kind):
  def rule(ctx, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    res = _try_pool(
      ctx, x, kind, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    if res is not None:
      return res
    return window_reduce(
      ctx, x, kind, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )

  return rule


register(lax.reduce_window_sum_p)(_reduce_window_rule("sum"))
register(
  lax.reduce_window_max_p,
  narrow_ints_in_int32=int_lanes.windows_hold_operand_values,
  uint32_as_order_keys=True,
)(_reduce_window_rule("max"))
register(
  lax.reduce_window_min_p,
  narrow_ints_in_int32=int_lanes.windows_hold_operand_values,
  uint32_as_order_keys=True,
)(_reduce_window_rule("min"))


@register(
  lax.reduce_window_p,
  narrow_ints_in_int32=int_lanes.windows_hold_operand_values,
)
def _reduce_window(
  ctx,
  *args,
  jaxpr,
  consts,
  window_dimensions,
  window_strides,
  padding,
  base_dilation,
  window_dilation,
):
  n = len(args) // 2
  operands, inits = args[:n], args[n:]
  kind = recognise_body(jaxpr) if n == 1 and not consts else None
  params = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
  if kind is not None:
    res = _try_pool(ctx, operands[0], kind, *params)
    if res is None:
      res = window_reduce(ctx, operands[0], kind, *params)
    if not is_identity(inits[0], kind, ctx.avals_in[0].dtype):
      # XLA folds the init in once per window (measured on CPU), and a
      # monoid may take it last.
      res = fold_in_init(kind, res, inits[0], signed_zeros=ctx.target.signed_zeros)
    return [res]
  if n == 1:
    generic = ctx.kernel_or("XlaReduceWindow", _xla_reduce_window, _reduce_window_fold)
  else:
    generic = _reduce_window_fold  # XlaReduceWindow takes one operand
  return generic(ctx, operands, inits, jaxpr, consts, *params)


def _reduce_window_fold(
  ctx, operands, inits, jaxpr, consts, window, strides, padding, base_dilation, window_dilation
):
  out_shape = ctx.avals_out[0].shape
  body = body_at(ctx, jaxpr, consts, out_shape)
  return window_fold(
    ctx,
    list(operands),
    list(inits),
    body,
    window,
    strides,
    padding,
    base_dilation,
    window_dilation,
    ctx.avals_in[0].shape,
    out_shape,
  )


class _Closed(NamedTuple):
  """A body with its constants, in the shape ctx.lower_jaxpr reads (the
  ClosedJaxpr class differs between JAX versions)."""

  jaxpr: Any
  consts: Sequence


def _xla_reduce_window(
  ctx, operands, inits, jaxpr, consts, window, strides, padding, base_dilation, window_dilation
):
  x, init = operands[0], inits[0]
  spec = tf.TensorSpec((), x.dtype)

  def reducer(a, b):
    return ctx.lower_jaxpr(_Closed(getattr(jaxpr, "jaxpr", jaxpr), consts), [a, b])[0]

  fn = tf.function(reducer, autograph=False).get_concrete_function(spec, spec)
  pads = [[ctx.dim(lo), ctx.dim(hi)] for lo, hi in padding]
  if not all(isinstance(p, int) for pair in pads for p in pair):
    pads = tf.reshape(sem.stack_dims([p for pair in pads for p in pair]), [-1, 2])
  res = tf_private.xla_reduce_window(
    x, init, fn, list(window), list(strides), list(base_dilation), list(window_dilation), pads
  )
  return [res]


# ---------------------------------------- gradients of max/min pooling ---


class _Selection(NamedTuple):
  """How a pooling gradient picks a window's position: `select(a, b)` keeps
  `a`; operands are compared in `dtype`, windows padded with `pad_value`."""

  select: Any
  pad_value: Any
  dtype: tf.DType


def _selection(ctx, select_prim, operand_dtype) -> _Selection:
  if select_prim is lax.ge_p:
    select, kind = tf.greater_equal, "max"
  elif select_prim is lax.le_p:
    select, kind = tf.less_equal, "min"
  else:
    raise registry.unsupported_params_error(
      ctx.primitive,
      {"select_prim": select_prim},
      "TF ops reproduce the selection of JAX's max and min pooling gradients "
      "(select_prim ge or le) only",
    )
  _, pad_value, dt = monoid(kind, operand_dtype.as_numpy_dtype)
  if dt == tf.bool:
    # TF orders no bools; False < True as 0 < 1, as JAX's comparisons do.
    return _Selection(select, int(pad_value), tf.int32)
  return _Selection(select, pad_value, dt)


@register(lax.select_and_gather_add_p, narrow_ints_in_int32=int_lanes.windows_hold_operand_values)
def _select_and_gather_add(
  ctx,
  tangents,
  operand,
  *,
  select_prim,
  window_dimensions,
  window_strides,
  padding,
  base_dilation,
  window_dilation,
):
  """For each window, the tangent at the position the select picks (first max/min)."""
  select, pad_value, dt = _selection(ctx, select_prim, operand.dtype)
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
    window_slices(ctx, t, window_dimensions, window_strides, window_dilation, out_shape),
  ):
    if best_x is None:
      best_x, best_t = xk, tk
      continue
    keep = select(best_x, xk)
    best_x = tf.where(keep, best_x, xk)
    best_t = tf.where(keep, best_t, tk)
  return best_t


@register(lax.select_and_scatter_add_p, narrow_ints_in_int32=int_lanes.windows_hold_operand_values)
def _select_and_scatter_add(
  ctx, source, operand, *, select_prim, window_dimensions, window_strides, padding
):
  """Adds each window's source value at the position the select picks, as
  the JAX form that native modules for targets without XLA lower too."""
  _selection(ctx, select_prim, operand.dtype)  # refuses a select other than ge and le
  form = selected_windows.ScatterToSelected.of(
    select_prim, window_dimensions=window_dimensions, window_strides=window_strides, padding=padding
  )
  if form is None:
    raise registry.unsupported_params_error(
      ctx.primitive, {"padding": padding}, "TF ops reproduce it only without negative padding"
    )
  return ctx.lower_fun(form, [source, operand])[0]


@register(lax.select_and_scatter_p, narrow_ints_in_int32=int_lanes.windows_hold_operand_values)
def _select_and_scatter(
  ctx,
  operand,
  source,
  init_value,
  *,
  select_jaxpr,
  select_consts,
  scatter_jaxpr,
  scatter_consts,
  window_dimensions,
  window_strides,
  padding,
):
  """XLA's SelectAndScatter in the forms of max and min pooling gradients:
  the result starts at `init_value`, and each window's source value is added
  (or-ed, for bool) at the first position of its max (select `ge`) or min
  (`le`). Other selections or combinations have no TF counterpart here."""
  boolean = ctx.aval_out.dtype == bool
  select_prim = selected_windows.only_primitive(select_jaxpr, select_consts, (lax.ge_p, lax.le_p))
  scatter_prim = selected_windows.only_primitive(
    scatter_jaxpr, scatter_consts, (lax.or_p,) if boolean else (lax.add_p,)
  )
  form = selected_windows.ScatterToSelected.of(
    select_prim, window_dimensions=window_dimensions, window_strides=window_strides, padding=padding
  )
  if form is None or scatter_prim is None or any(p != (0, 0) for p in padding):
    raise registry.unsupported_params_error(
      ctx.primitive,
      {"select_jaxpr": select_jaxpr, "scatter_jaxpr": scatter_jaxpr, "padding": padding},
      "graph serialization reproduces select_and_scatter only with a select that is "
      "`ge` or `le` of its two arguments, a scatter that is `add` (`or` for bool), "
      "and no padding (the forms of max and min pooling gradients)",
    )
  (added,) = ctx.lower_fun(lambda o, s, _: form(s, o), [operand, source, init_value])
  if boolean:
    return tf.logical_or(added, init_value)
  return added + init_value


# ---------------------------------------------------------- cumulative ---


def _cumulative_scan(ctx, x, axis, reverse, op, identity):
  """Inclusive scan by doubling (Hillis-Steele): log2(n) shifted combines."""
  n = ctx.avals_in[0].shape[axis]
  if any(dim_eval.is_zero(d) for d in ctx.avals_in[0].shape):
    # Nothing to combine; LiteRT ends the process gathering from an empty
    # operand in the loop below.
    return x
  rank = len(ctx.avals_in[0].shape)
  shape = list(ctx.avals_in[0].shape)
  if reverse:
    x = ctx.reverse(x, shape, [axis])

  def shifted(v, shift):
    pads = [(0, 0)] * rank
    pads[axis] = (shift, 0)
    padded, _ = pad_or_crop(ctx, v, shape, pads, identity)
    end = [ctx.dim(d) for d in shape]
    return tf.strided_slice(padded, [0] * rank, sem.stack_dims(end))

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

    _, x = tf.while_loop(lambda shift, v: shift < n_tf, body, [tf.constant(1, tf.int32), x])
  if reverse:
    x = ctx.reverse(x, shape, [axis])
  return x


@register(lax.cumsum_p)
def _cumsum(ctx, x, *, axis, reverse):
  if ctx.avals_in[0].shape[axis] == 1:
    # One element is its own sum: XLA gives -0.0 back, where TF's kernel adds
    # it to a +0.0. (From two elements on, XLA's sums start from +0.0 too.)
    return x
  if x.dtype.is_complex:
    # XLA has no complex Cumsum kernel; complex sums are componentwise.
    parts = [
      tf.math.cumsum(p, axis=axis, reverse=reverse) for p in (tf.math.real(x), tf.math.imag(x))
    ]
    return tf.complex(*parts)
  dt = sem.compute_dtype(ctx.aval_out.dtype)
  cumsum = ctx.kernel_or("Cumsum", tf.math.cumsum, _cumsum_from_zero, dt)
  res = tf.cast(cumsum(tf.cast(x, dt), axis=axis, reverse=reverse), x.dtype)
  n = ctx.avals_in[0].shape[axis]
  if not dim_eval.is_constant(n) and x.dtype.is_floating:
    # A polymorphic length that is 1 at run time: as for a static 1 above.
    res = tf.where(tf.equal(ctx.dim(n), 1), x, res)
  return res


def _cumsum_from_zero(x, *, axis, reverse):
  # XLA's sums (and TF's kernel) start from +0.0, so that a prefix of -0.0s
  # sums to +0.0; TF.js's start from the first element and keep its -0.0.
  res = tf.math.cumsum(x, axis=axis, reverse=reverse)
  return res + tf.zeros_like(res)


@register(lax.cumprod_p)
def _cumprod(ctx, x, *, axis, reverse):
  dt = sem.compute_dtype(ctx.aval_out.dtype)

  def scan(x, *, axis, reverse):
    # A scan of the target's exact products: without a Cumprod kernel
    # (TFLite), or where int32 products drop low bits past 2**53 (TF.js).
    return _cumulative_scan(ctx, x, axis, reverse, ctx.bits.multiply, 1)

  cumprod = ctx.kernel_or("Cumprod", tf.math.cumprod, scan, dt)
  if dt.is_complex:
    cumprod = scan  # XLA has no complex Cumprod kernel (jit_compile=True)
  return tf.cast(cumprod(tf.cast(x, dt), axis=axis, reverse=reverse), x.dtype)


def _cum_minmax(kind):
  def rule(ctx, x, *, axis, reverse):
    op, identity, dt = monoid(kind, ctx.aval_out.dtype, signed_zeros=ctx.target.signed_zeros)
    res = _cumulative_scan(ctx, tf.cast(x, dt), axis, reverse, op, identity)
    return tf.cast(res, x.dtype) if x.dtype != tf.bool else res

  return rule


register(lax.cummax_p, uint32_as_order_keys=True)(_cum_minmax("max"))
register(lax.cummin_p, uint32_as_order_keys=True)(_cum_minmax("min"))


@register(lax.cumlogsumexp_p)
def _cumlogsumexp(ctx, x, *, axis, reverse):
  dt = sem.widened(x.dtype)
  wide = tf.cast(x, dt)
  res = tf.math.cumulative_logsumexp(wide, axis=axis, reverse=reverse)

  def seen(mask):
    return tf.math.cumsum(tf.cast(mask, dt), axis=axis, reverse=reverse) > 0

  # TF's kernel adds a second +inf as inf - inf (NaN); JAX's sum stays +inf.
  res = tf.where(seen(tf.equal(wide, np.inf)), tf.constant(np.inf, dt), res)
  # Under jit_compile TF's XLA drops a NaN from the running sum; JAX's is
  # NaN from the first NaN on.
  res = tf.where(seen(tf.math.is_nan(wide)), tf.constant(np.nan, dt), res)
  return tf.cast(res, x.dtype)
