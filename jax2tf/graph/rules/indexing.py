"""Indexing: static and dynamic slices, gathers and scatters, with JAX's index semantics.

JAX never fails on out-of-bounds indices: dynamic slices and CLIP / PROMISE_IN_BOUNDS
gathers clamp start indices so the whole window is in bounds, FILL_OR_DROP gathers
return `fill_value` for windows that are not, and scatters drop such windows (CLIP
scatters clamp). TF's gather/scatter kernels fail (CPU) or zero-fill (GPU) instead,
so every rule here first makes its indices in-bounds, the way JAX would.

Cases: tests/cases/indexing.py
"""

import math
import types

import numpy as np
import tensorflow as tf
from jax import lax

from jax2tf.graph import int_lanes, ordered_lanes, registry
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register
from jax2tf.internals import tf_private
from jax2tf.shapes import dim_eval

_Mode = lax.GatherScatterMode


def _tensor(v, dtype=tf.int32):
  return tf.cast(v, dtype) if isinstance(v, tf.Tensor) else tf.constant(v, dtype)


def _is_one(d) -> bool:
  return dim_eval.is_constant(d) and int(d) == 1


def _clamp(ctx, start, upper, valid=None):
  """Clamps an integer index tensor into [0, upper]; also returns, when `valid` is
  not None, `valid` and-ed with whether it was already in range."""
  start = tf.cast(start, tf.int64)  # exact for every index type but huge uint64
  hi = _tensor(ctx.dim(upper), tf.int64)
  if valid is not None:
    ok = tf.logical_and(tf.greater_equal(start, 0), tf.less_equal(start, hi))
    valid = ok if valid is True else tf.logical_and(valid, ok)
  # Not ClipByValue: TF's TFLite converter makes it RELU6 where `hi` is 6,
  # which has no int64 kernel.
  clamped = tf.minimum(tf.maximum(start, tf.constant(0, tf.int64)), hi)
  return tf.cast(clamped, tf.int32), valid


# --- static and dynamic slices ---------------------------------------------------


@register(lax.slice_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _slice(ctx, operand, *, start_indices, limit_indices, strides):
  if not start_indices:
    # A scalar (the transpose of a pad of one, say): TF would read the empty
    # begin list as float32 and refuse it.
    return tf.identity(operand)
  if strides is None or all(_is_one(s) for s in strides):
    return tf.slice(operand, ctx.shape(start_indices), ctx.shape(ctx.aval_out.shape))
  return tf.strided_slice(
    operand, ctx.shape(start_indices), ctx.shape(limit_indices), ctx.shape(strides)
  )


def _clamped_starts(ctx, starts, operand_shape, sizes):
  return [_clamp(ctx, s, d - z)[0] for s, d, z in zip(starts, operand_shape, sizes)]


@register(lax.dynamic_slice_p, uint32_as_order_keys=ordered_lanes.slice_starts_are_not_uint32)
def _dynamic_slice(ctx, operand, *start_indices, slice_sizes):
  op_shape = ctx.avals_in[0].shape
  if len(start_indices) != len(op_shape):
    raise registry.unsupported_params_error(
      ctx.primitive,
      {"slice_sizes": slice_sizes, "start indices": len(start_indices)},
      "operands with dynamic shapes have no TF form; make the dimensions "
      "symbolic with polymorphic_shapes instead",
    )
  if not op_shape:
    return operand
  begin = tf.stack(_clamped_starts(ctx, start_indices, op_shape, slice_sizes))
  return tf.slice(operand, begin, ctx.shape(slice_sizes))


@register(
  lax.dynamic_update_slice_p, uint32_as_order_keys=ordered_lanes.update_starts_are_not_uint32
)
def _dynamic_update_slice(ctx, operand, update, *start_indices):
  op_shape, upd_shape = ctx.avals_in[0].shape, ctx.avals_in[1].shape
  if not op_shape:
    return update
  if any(dim_eval.is_zero(z) for z in upd_shape):
    return operand  # nothing to write
  starts = _clamped_starts(ctx, start_indices, op_shape, upd_shape)
  # Spread the update over an operand-sized frame with gathers along the
  # axes it does not span, and select it where it lands. Every shape stays
  # static: padding by the starts made XLA (jit_compile) bound the padded
  # shape by evaluating the starts' computation, which it cannot do through
  # some ops (a bitcast, a narrow integer cast).
  rank = len(op_shape)
  placed, mask = update, None
  for axis, (start, d, z) in enumerate(zip(starts, op_shape, upd_shape)):
    if dim_eval.same_dims([d], [z]):
      continue  # the start clamps to 0: the update spans the axis
    offset = tf.range(ctx.dim(d)) - start
    size = _tensor(ctx.dim(z))
    placed = tf.gather(placed, tf.minimum(tf.maximum(offset, 0), size - 1), axis=axis)
    lands = tf.logical_and(offset >= 0, offset < size)
    lands = tf.reshape(lands, [-1 if i == axis else 1 for i in range(rank)])
    mask = lands if mask is None else tf.logical_and(mask, lands)
  return placed if mask is None else tf.where(mask, placed, operand)


# --- gather ------------------------------------------------------------------------


def _fill_value(dtype: np.dtype, fill_value):
  if fill_value is not None:
    return fill_value
  if np.issubdtype(dtype, np.inexact):
    return np.nan
  if np.issubdtype(dtype, np.signedinteger):
    return np.iinfo(dtype).min
  if np.issubdtype(dtype, np.unsignedinteger):
    return np.iinfo(dtype).max
  return True


def _iota_along(ctx, shape, axis, dtype=tf.int32):
  """An iota along `axis` with unit dimensions elsewhere (for broadcasting)."""
  r = tf.range(ctx.dim(shape[axis]), dtype=dtype)
  inter = [1] * len(shape)
  inter[axis] = shape[axis]
  return ctx.reshape(r, inter)


def _gather_starts(ctx, indices, dnums, slice_sizes, mode):
  """Start indices per indexed operand dim (batching dims folded in as iotas),
  clamped so each window is in bounds, and the validity mask for FILL_OR_DROP."""
  op_shape, idx_shape = ctx.avals_in[0].shape, ctx.avals_in[1].shape
  batch_shape = idx_shape[:-1]
  start_map = list(dnums.start_index_map)
  valid = True if mode == _Mode.FILL_OR_DROP else None
  starts = []
  for k, d in enumerate(start_map):
    s, valid = _clamp(ctx, indices[..., k], op_shape[d] - slice_sizes[d], valid)
    starts.append(s)
  for od, ib in zip(
    getattr(dnums, "operand_batching_dims", ()), getattr(dnums, "start_indices_batching_dims", ())
  ):
    starts.append(tf.broadcast_to(_iota_along(ctx, batch_shape, ib), ctx.shape(batch_shape)))
    start_map.append(od)
  return starts, start_map, (None if valid is True else valid)


def _gather_ordinary(ctx, operand, starts, start_map, slice_sizes):
  """The gathered windows with axes labelled ('b', i) for batch dims and ('op', d)
  for operand dims; missing labels are size-1 axes."""
  op_shape = ctx.avals_in[0].shape
  rank = len(op_shape)
  nb = len(ctx.avals_in[1].shape) - 1
  rest = [d for d in range(rank) if d not in start_map]
  # Non-indexed dims start at 0: a static slice of the operand.
  if any(not _same(slice_sizes[d], op_shape[d]) for d in rest):
    operand = tf.slice(
      operand,
      [0] * rank,
      ctx.shape([op_shape[d] if d in start_map else slice_sizes[d] for d in range(rank)]),
    )
  windowed = [k for k, d in enumerate(start_map) if not _is_one(slice_sizes[d])]
  if len(start_map) == 1 and not windowed and not ctx.in_wide_lanes:
    d = start_map[0]
    res = tf.gather(operand, starts[0], axis=d)
    labels = (
      [("op", e) for e in range(d)]
      + [("b", i) for i in range(nb)]
      + [("op", e) for e in range(d + 1, rank)]
    )
    return res, labels
  if start_map:
    operand = tf.transpose(operand, start_map + rest)
  if windowed:
    # Every element of a window is indexed: start + offset along each window axis.
    grid = [slice_sizes[d] for d in start_map]
    batch_shape = list(ctx.avals_in[1].shape[:-1])
    shape = ctx.shape(batch_shape + grid)
    full = []
    for k, s in enumerate(starts):
      s = ctx.reshape(s, batch_shape + [1] * len(grid))
      s = s + _iota_along(ctx, [1] * nb + grid, nb + k)
      full.append(tf.broadcast_to(s, shape))
    idx = tf.stack(full, axis=-1)
    labels = [("b", i) for i in range(nb)] + [("op", d) for d in start_map]
  else:
    idx = tf.stack(starts, axis=-1) if starts else None
    labels = [("b", i) for i in range(nb)]
  res = tf.gather_nd(operand, idx, batch_dims=0) if idx is not None else operand
  return res, labels + [("op", d) for d in rest]


def _same(a, b) -> bool:
  if dim_eval.is_constant(a) != dim_eval.is_constant(b):
    return False
  try:
    return bool(a == b)
  except Exception:
    return False


def _to_output_layout(ctx, res, labels, dnums):
  """Squeezes collapsed axes, inserts kept size-1 axes, and orders the axes as
  JAX's gather does: offset dims at `offset_dims`, batch dims elsewhere."""
  out_rank = len(ctx.aval_out.shape)
  collapsed = set(dnums.collapsed_slice_dims) | set(getattr(dnums, "operand_batching_dims", ()))
  rank = len(ctx.avals_in[0].shape)
  kept = iter([("op", d) for d in range(rank) if d not in collapsed])
  batch = iter([("b", i) for i in range(out_rank - len(dnums.offset_dims))])
  target = [next(kept) if p in dnums.offset_dims else next(batch) for p in range(out_rank)]
  drop = [i for i, lab in enumerate(labels) if lab not in target]
  if drop:
    res = tf.squeeze(res, axis=drop)
    labels = [lab for lab in labels if lab in target]
  inserted = [lab for lab in target if lab not in labels]
  for lab in inserted:
    res = tf.expand_dims(res, -1)
    labels.append(lab)
  perm = [labels.index(lab) for lab in target]
  if perm != list(range(len(perm))):
    res = tf.transpose(res, perm)
  if any(lab[0] == "b" for lab in inserted):
    # Without indexed dims the window is the same for every batch element.
    res = tf.broadcast_to(res, ctx.shape(ctx.aval_out.shape))
  return res


def _gather_xla(ctx, operand, starts, start_map, dnums, slice_sizes, indices_are_sorted):
  nb = len(ctx.avals_in[1].shape) - 1
  proto = tf_private.GatherDimensionNumbers()
  proto.offset_dims.extend(dnums.offset_dims)
  proto.collapsed_slice_dims.extend(
    sorted(set(dnums.collapsed_slice_dims) | set(getattr(dnums, "operand_batching_dims", ())))
  )
  proto.start_index_map.extend(start_map)
  proto.index_vector_dim = nb
  idx = tf.stack(starts, axis=-1)
  return tf_private.xla_gather(
    operand,
    idx,
    dimension_numbers=proto,
    slice_sizes=ctx.shape(slice_sizes),
    indices_are_sorted=indices_are_sorted,
  )


@register(
  lax.gather_p,
  narrow_ints_in_int32=int_lanes.gather_fill_is_given,
  uint32_as_order_keys=ordered_lanes.gather_takes_no_fill,
)
def _gather(
  ctx,
  operand,
  indices,
  *,
  dimension_numbers,
  slice_sizes,
  mode,
  fill_value,
  indices_are_sorted,
  unique_indices,
):
  del unique_indices  # a promise that only matters for the gradient (a scatter)
  dnums = dimension_numbers
  mode = _Mode.from_any(mode)
  starts, start_map, valid = _gather_starts(ctx, indices, dnums, slice_sizes, mode)
  windowed = any(not _is_one(slice_sizes[d]) for d in start_map)

  def in_ordinary_ops(ctx, operand, starts, start_map, dnums, slice_sizes, indices_are_sorted):
    res, labels = _gather_ordinary(ctx, operand, starts, start_map, slice_sizes)
    return _to_output_layout(ctx, res, labels, dnums)

  gather = in_ordinary_ops
  if windowed:
    # Windows of several elements per index: XLA's gather avoids building the
    # index of every element, which the ordinary-op form needs.
    gather = ctx.kernel_or("XlaGather", _gather_xla, gather)
  res = gather(ctx, operand, starts, start_map, dnums, slice_sizes, indices_are_sorted)
  if valid is not None:
    out_shape = ctx.aval_out.shape
    batch_shape = iter(ctx.avals_in[1].shape[:-1])
    mask_shape = [1 if p in dnums.offset_dims else next(batch_shape) for p in range(len(out_shape))]
    mask = ctx.reshape(valid, mask_shape)
    dtype = np.dtype(ctx.aval_out.dtype)
    fill = tf.constant(np.array(_fill_value(dtype, fill_value)).astype(dtype))
    res = tf.where(mask, res, fill)
  return res


# --- scatter -----------------------------------------------------------------------


def _scatter_linear_indices(ctx, indices, dnums, mode):
  """The flat operand position of every update element, or N (one past the end)
  for elements of windows that JAX drops."""
  op_shape, idx_shape, upd_shape = (a.shape for a in ctx.avals_in[:3])
  rank, upd_rank = len(op_shape), len(upd_shape)
  window_upd = list(dnums.update_window_dims)
  scatter_upd = [i for i in range(upd_rank) if i not in window_upd]
  batching = list(getattr(dnums, "operand_batching_dims", ()))
  inserted = set(dnums.inserted_window_dims) | set(batching)
  window_op = [d for d in range(rank) if d not in inserted]
  window_size = {d: upd_shape[window_upd[j]] for j, d in enumerate(window_op)}
  batch_shape = idx_shape[:-1]
  # Index batch dims sit at the update's scatter dims; size 1 at its window dims.
  to_upd = [1] * upd_rank
  for i, p in enumerate(scatter_upd):
    to_upd[p] = batch_shape[i]
  to_upd_shape = ctx.shape(to_upd)

  valid = None if mode == _Mode.CLIP else True
  start = {}
  for k, d in enumerate(dnums.scatter_dims_to_operand_dims):
    s, valid = _clamp(ctx, indices[..., k], op_shape[d] - window_size.get(d, 1), valid)
    start[d] = tf.reshape(s, to_upd_shape)
  for od, ib in zip(batching, getattr(dnums, "scatter_indices_batching_dims", ())):
    start[od] = _iota_along(ctx, to_upd, scatter_upd[ib])
  linear = tf.constant(0, tf.int64)
  for d in range(rank):
    pos = start.get(d)
    if d in window_size:
      off = _iota_along(ctx, upd_shape, window_upd[window_op.index(d)])
      pos = off if pos is None else pos + off
    if pos is None:
      continue
    stride = _tensor(ctx.dim(math.prod(op_shape[d + 1 :])), tf.int64)
    linear = linear + tf.cast(pos, tf.int64) * stride
  linear = tf.broadcast_to(linear, ctx.shape(upd_shape))
  size = _tensor(ctx.dim(math.prod(op_shape)), tf.int64)
  if valid is not None and valid is not True:
    linear = tf.where(tf.reshape(valid, to_upd_shape), linear, size)
  return tf.reshape(linear, [-1, 1]), size


def _scatter_rule(kind):
  def rule(
    ctx,
    operand,
    indices,
    updates,
    *,
    dimension_numbers,
    indices_are_sorted,
    unique_indices,
    mode,
    update_jaxpr,
    update_consts,
  ):
    # Sortedness and uniqueness are promises about `indices`; the TF ops are
    # correct without them.
    del indices_are_sorted, unique_indices
    if kind == "set" and update_jaxpr is not None:
      return _scatter_apply_xla(
        ctx,
        operand,
        indices,
        updates,
        dimension_numbers,
        _Mode.from_any(mode),
        update_jaxpr,
        update_consts,
      )
    dtype = np.dtype(ctx.aval_out.dtype)
    if kind in ("min", "max") and np.issubdtype(dtype, np.complexfloating):
      raise registry.unsupported_params_error(
        ctx.primitive,
        {"combiner": kind, "operand dtype": dtype.name},
        "TF has no scatter min/max of complex numbers",
      )
    linear, size = _scatter_linear_indices(ctx, indices, dimension_numbers, _Mode.from_any(mode))
    flat_upd = tf.reshape(updates, [-1])
    # Dropped windows land on one extra slot past the end, cut off afterwards.
    flat = tf.concat([tf.reshape(operand, [-1]), tf.zeros([1], operand.dtype)], 0)
    if kind in ("add", "sub"):
      # ScatterNd sums the updates of duplicate indices in TF, TFLite and
      # TF.js alike; TensorScatterAdd has no TF.js kernel. The duplicates are
      # summed before they meet the operand, a rounding XLA's order may not
      # make.
      shape = tf.reshape(size + 1, [1])
      summed = tf.scatter_nd(linear, flat_upd, shape)
      res = flat + summed if kind == "add" else flat - summed
      if kind == "add" and (sem.is_float(dtype) or sem.is_complex(dtype)):
        # -0.0 + 0.0 is +0.0: the positions no update reaches keep the operand.
        ones = tf.ones_like(linear[:, 0])
        res = tf.where(tf.scatter_nd(linear, ones, shape) > 0, res, flat)
    elif kind == "mul":
      # There is no multiplying scatter in TF; the product per position is
      # exact for integers, and rounds once per duplicate index otherwise.
      prod = tf.math.unsorted_segment_prod(flat_upd, linear[:, 0], size + 1)
      res = flat * prod
    else:
      op = {
        "set": tf.tensor_scatter_nd_update,
        "min": tf.tensor_scatter_nd_min,
        "max": tf.tensor_scatter_nd_max,
      }[kind]
      res = op(flat, linear, flat_upd)
      if kind in ("min", "max") and np.issubdtype(dtype, np.floating):
        # JAX's min/max propagate NaN from either side; TF's scatters keep the
        # operand when an update is NaN.
        hit = tf.tensor_scatter_nd_max(
          tf.zeros_like(flat, tf.int32), linear, tf.cast(tf.math.is_nan(flat_upd), tf.int32)
        )
        nan = tf.logical_or(tf.greater(hit, 0), tf.math.is_nan(flat))
        res = tf.where(nan, tf.constant(np.nan, res.dtype), res)
    res = tf.slice(res, [0], tf.reshape(tf.cast(size, tf.int32), [1]))
    return ctx.reshape(res, ctx.aval_out.shape)

  return rule


for _p, _kind in [
  (lax.scatter_p, "set"),
  (lax.scatter_add_p, "add"),
  (lax.scatter_sub_p, "sub"),
  (lax.scatter_mul_p, "mul"),
  (lax.scatter_min_p, "min"),
  (lax.scatter_max_p, "max"),
]:
  register(
    _p,
    without_xla_ops=(
      (lambda ctx, update_jaxpr=None, **_: update_jaxpr is None) if _kind == "set" else True
    ),
    # Setting, max and min only order and place the values.
    uint32_as_order_keys=_kind in ("set", "min", "max")
    and ordered_lanes.scatter_indices_are_not_uint32,
  )(_scatter_rule(_kind))


def _scatter_apply_xla(ctx, operand, indices, updates, dnums, mode, update_jaxpr, update_consts):
  """A scatter whose combiner is an arbitrary JAX function (`.at[].apply`)."""
  op_shape, upd_shape = ctx.avals_in[0].shape, ctx.avals_in[2].shape
  if mode == _Mode.CLIP:
    batching = set(getattr(dnums, "operand_batching_dims", ()))
    inserted = set(dnums.inserted_window_dims) | batching
    window_op = [d for d in range(len(op_shape)) if d not in inserted]
    wsize = {d: upd_shape[dnums.update_window_dims[j]] for j, d in enumerate(window_op)}
    cols = [
      _clamp(ctx, indices[..., k], op_shape[d] - wsize.get(d, 1))[0]
      for k, d in enumerate(dnums.scatter_dims_to_operand_dims)
    ]
    indices = tf.stack(cols, axis=-1)
  proto = tf_private.ScatterDimensionNumbers()
  proto.update_window_dims.extend(dnums.update_window_dims)
  proto.inserted_window_dims.extend(dnums.inserted_window_dims)
  proto.scatter_dims_to_operand_dims.extend(dnums.scatter_dims_to_operand_dims)
  proto.input_batching_dims.extend(getattr(dnums, "operand_batching_dims", ()))
  proto.scatter_indices_batching_dims.extend(getattr(dnums, "scatter_indices_batching_dims", ()))
  proto.index_vector_dim = len(ctx.avals_in[1].shape) - 1
  dtype = operand.dtype
  consts = list(update_consts)

  jaxpr = update_jaxpr
  if consts:
    # The combiner's constants travel beside its jaxpr; ClosedJaxpr's
    # constructor differs across JAX versions, so pair them by attribute.
    jaxpr = types.SimpleNamespace(jaxpr=getattr(update_jaxpr, "jaxpr", update_jaxpr), consts=consts)

  @tf.function(autograph=False)
  def combiner(x, y):
    return ctx.lower_jaxpr(jaxpr, [x, y])[0]

  computation = combiner.get_concrete_function(tf.TensorSpec([], dtype), tf.TensorSpec([], dtype))
  return tf_private.xla_scatter(operand, indices, updates, computation, proto)
