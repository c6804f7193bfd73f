"""Shapes and layouts: reshapes, broadcasts, transposes, slices, concatenation, padding.

Cases: tests/cases/structural.py
"""

import tensorflow as tf
from jax import lax

from jax2tf.graph import registry
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register
from jax2tf.internals import jax_private
from jax2tf.shapes import dim_eval


def _no_dynamic_shapes(primitive, dyn):
  if dyn:
    raise registry.unsupported_params_error(
      primitive,
      {"dynamic-shape operands": len(dyn)},
      "operands with dynamic shapes have no TF form; make the dimensions symbolic "
      "with polymorphic_shapes instead",
    )


def _max0(v):
  """max(v, 0) for a dimension value that is an int or an int32 TF scalar."""
  return max(v, 0) if isinstance(v, int) else tf.maximum(v, 0)


def _neg(v):
  return -v if isinstance(v, int) else tf.negative(v)


def _is_zero(v) -> bool:
  """Whether a dimension or padding amount (an int, or a TF value) is a static 0."""
  return isinstance(v, int) and v == 0


@register(jax_private.dim_as_value_p)
def _dim_as_value(ctx, *, dim):
  return tf.cast(ctx.dim(dim), ctx.tf_dtype())


@register(lax.iota_p, uint32_as_int32_bits=True)
def _iota(ctx, *dyn, dtype, shape, dimension, sharding):
  del sharding  # a placement hint, not part of the value
  _no_dynamic_shapes(ctx.primitive, dyn)
  # tf.range lacks kernels for small, unsigned, bool and complex types; int32
  # values cast to the target type give the same numbers (rounded as JAX does
  # for narrow floats).
  res = tf.range(ctx.dim(shape[dimension]), dtype=tf.int32)
  res = tf.cast(res, ctx.tf_dtype())
  if len(shape) > 1:
    inter = [1] * len(shape)
    inter[dimension] = shape[dimension]
    res = ctx.reshape(res, inter)
    res = tf.broadcast_to(res, ctx.shape(shape))
  return res


@register(lax.broadcast_in_dim_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _broadcast_in_dim(ctx, operand, *dyn, shape, broadcast_dimensions, sharding):
  del sharding
  _no_dynamic_shapes(ctx.primitive, dyn)
  if any(_is_zero(d) for d in shape):
    # Nothing to repeat; TF.js's BroadcastTo returns its input for a target
    # with no elements.
    return tf.zeros(ctx.shape(shape), operand.dtype)
  in_shape = tuple(ctx.avals_in[0].shape)
  bdims = list(broadcast_dimensions)
  order = sorted(range(len(bdims)), key=lambda i: bdims[i])
  if order != list(range(len(bdims))):
    operand = tf.transpose(operand, order)
    in_shape = tuple(in_shape[i] for i in order)
    bdims = [bdims[i] for i in order]
  inter = [1] * len(shape)
  for i, d in enumerate(bdims):
    inter[d] = in_shape[i]
  if not dim_eval.same_dims(inter, in_shape):
    operand = ctx.reshape(operand, inter)
  if not dim_eval.same_dims(inter, shape) and not ctx.broadcast_by_users:
    if ctx.in_wide_lanes:
      # Repeats what BroadcastTo would, in an op TFLite's converter keeps
      # in the wide lanes (float_lanes.py).
      repeats = [
        ctx.dim(d) if dim_eval.is_constant(i) and int(i) == 1 else 1 for i, d in zip(inter, shape)
      ]
      return tf.tile(operand, sem.stack_dims(repeats))
    operand = tf.broadcast_to(operand, ctx.shape(shape))
  return operand


@register(lax.reshape_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _reshape(ctx, operand, *dyn, new_sizes, dimensions, sharding):
  del sharding
  _no_dynamic_shapes(ctx.primitive, dyn)
  # `dimensions` is the order in which the operand is read (e.g. order="F").
  if dimensions is not None and tuple(dimensions) != tuple(range(len(dimensions))):
    operand = tf.transpose(operand, list(dimensions))
  return ctx.reshape(operand, new_sizes)


@register(lax.squeeze_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _squeeze(ctx, operand, *, dimensions):
  if not dimensions:  # tf.squeeze with no axis would drop every size-1 axis
    return operand
  return tf.squeeze(operand, axis=list(dimensions))


@register(lax.transpose_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _transpose(ctx, operand, *, permutation):
  if tuple(permutation) == tuple(range(len(permutation))):
    return operand
  return tf.transpose(operand, list(permutation))


@register(lax.rev_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _rev(ctx, operand, *, dimensions):
  # JAX's shape rather than TF's says which arrays have no elements: a
  # polymorphic slice leaves TF's dimensions unknown.
  return ctx.reverse(operand, ctx.avals_in[0].shape, dimensions)


@register(lax.concatenate_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _concatenate(ctx, *operands, dimension):
  if len(operands) == 1:
    return operands[0]
  return tf.concat(list(operands), axis=dimension)


@register(lax.split_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _split(ctx, operand, *, sizes, axis):
  sizes = [ctx.dim(s) for s in sizes]
  return tf.split(operand, sem.stack_dims(sizes), axis=axis, num=len(sizes))


@register(lax.pad_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _pad(ctx, operand, padding_value, *, padding_config):
  if _adds_elements(padding_config) and sem.is_negative_zero_scalar(padding_value):
    pad = ctx.kernel_or("PadV2", _pad_values, _pad_negative_zero, operand.dtype)
    return pad(ctx, operand, padding_value, padding_config=padding_config)
  return _pad_values(ctx, operand, padding_value, padding_config=padding_config)


def _pad_negative_zero(ctx, operand, padding_value, *, padding_config):
  """A pad with -0.0 where the target's pads write +0.0 for it (LiteRT's
  and TF.js's): -x padded with +0.0 and negated back, exact for NaN and
  zeros. (Only where the pad writes any: TF's XLA turns convert(p) * -1
  into select(p, -1, 0), a +0.0 for false.)"""
  zero = tf.zeros_like(padding_value)
  if sem.producer(operand) == "Cast" and operand.op.inputs[0].dtype == tf.bool:
    # For that reason, a converted boolean's zeros keep their +0.0 this
    # way: the padding's +0.0 negated, chosen where a padded one is 0.
    padded = _pad_values(ctx, operand, zero, padding_config=padding_config)
    ones = _pad_values(ctx, tf.ones_like(operand), zero, padding_config=padding_config)
    return tf.where(tf.greater(ones, zero), padded, sem.negate_float(padded))
  padded = _pad_values(ctx, sem.negate_float(operand), zero, padding_config=padding_config)
  return sem.negate_float(padded)


def _pad_values(ctx, operand, padding_value, *, padding_config):
  shape = list(ctx.avals_in[0].shape)
  if any(_is_zero(d) for d in shape):
    # Only padding is left (and TF.js's kernels mishandle empty operands).
    return tf.fill(ctx.shape(ctx.aval_out.shape), padding_value)
  for axis, (_, _, interior) in enumerate(padding_config):
    if not dim_eval.is_constant(interior):
      raise registry.unsupported_params_error(
        ctx.primitive,
        {"padding_config": padding_config},
        f"the interior padding {interior} of axis {axis} is symbolic; TF's ops take "
        "interior padding only as a constant",
      )
    if int(interior) > 0:
      operand, shape[axis] = _interior_pad(ctx, operand, padding_value, axis, shape, int(interior))
  lows = [ctx.dim(lo) for lo, _, _ in padding_config]
  highs = [ctx.dim(hi) for _, hi, _ in padding_config]
  grow = [(_max0(lo), _max0(hi)) for lo, hi in zip(lows, highs)]
  if not all(_is_zero(lo) and _is_zero(hi) for lo, hi in grow):
    paddings = sem.stack_dims([v for pair in grow for v in pair])
    paddings = tf.reshape(paddings, [len(shape), 2])
    operand = tf.pad(operand, paddings, constant_values=padding_value)
  # Negative padding removes elements: a slice of what the positive part left.
  trim_lo = [_max0(_neg(lo)) for lo in lows]
  trim_hi = [_max0(_neg(hi)) for hi in highs]
  if not all(_is_zero(lo) and _is_zero(hi) for lo, hi in zip(trim_lo, trim_hi)):
    operand = tf.slice(operand, sem.stack_dims(trim_lo), ctx.shape(ctx.aval_out.shape))
  return operand


def _adds_elements(padding_config) -> bool:
  return any(not dim_eval.is_constant(d) or int(d) > 0 for config in padding_config for d in config)


def _interior_pad(ctx, operand, padding_value, axis, shape, interior):
  """Inserts `interior` padding elements between neighbours along `axis`."""
  n = shape[axis]
  # [.., n, ..] -> [.., n, 1 + interior, ..] -> [.., n * (1 + interior), ..], then
  # drop the padding after the last element.
  expanded = tf.expand_dims(operand, axis + 1)
  fill_shape = list(shape[: axis + 1]) + [interior] + list(shape[axis + 1 :])
  fill = tf.broadcast_to(tf.cast(padding_value, operand.dtype), ctx.shape(fill_shape))
  joined = tf.concat([expanded, fill], axis=axis + 1)
  flat_shape = list(shape)
  flat_shape[axis] = n * (1 + interior)
  joined = ctx.reshape(joined, flat_shape)
  new_n = n + (n - 1) * interior  # n >= 1: the caller handles empty operands
  size = list(shape)
  size[axis] = new_n
  return tf.slice(joined, [0] * len(shape), ctx.shape(size)), new_n


@register(lax.tile_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _tile(ctx, operand, *, reps):
  reps = [ctx.dim(r) for r in reps]
  if ctx.tf_dtype() != tf.uint16:
    return tf.tile(operand, sem.stack_dims(reps))
  # No Tile kernel for uint16: interleave unit axes and broadcast instead.
  in_shape = ctx.avals_in[0].shape
  inter = [x for d in in_shape for x in (1, d)]
  big = [x for r, d in zip(reps, in_shape) for x in (r, ctx.dim(d))]
  res = ctx.reshape(operand, inter)
  res = tf.broadcast_to(res, sem.stack_dims(big))
  return ctx.reshape(res, ctx.aval_out.shape)


@register(lax.stack_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _stack(ctx, *operands, axis):
  return tf.stack(list(operands), axis=axis)


@register(lax.unstack_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _unstack(ctx, operand, *, axis):
  return tf.unstack(operand, num=len(ctx.avals_out), axis=axis)


@register(lax.copy_p, uint32_as_int32_bits=True, uint32_as_order_keys=True)
def _copy(ctx, operand):
  # TF values are immutable: a copy is only a new name for the same value.
  return tf.identity(operand)
