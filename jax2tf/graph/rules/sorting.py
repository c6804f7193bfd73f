"""sort (any number of operands and keys), top_k and approx_top_k, with JAX's orders.

TF's TopKV2 is the one ordinary sorting op: it orders descending and puts the
lower index first among equal values. Sorting integer keys derived from the
operands gives every order JAX uses, NaNs included:
  - sort: -0.0 == +0.0 and every NaN after +inf (stable among themselves);
  - top_k: IEEE total order (-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < NaN).
Ascending order is TopKV2 of the bitwise complement of the key (no overflow).

Cases: tests/cases/sorting.py
"""

import numpy as np
import tensorflow as tf
from jax import lax

from jax2tf.graph import portable_bits
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register


def sort_keys(x, total_order=False) -> list:
  """Integer tensors whose lexicographic ascending order is JAX's order of `x`."""
  dt = x.dtype
  if dt.is_complex:
    return sort_keys(tf.math.real(x), total_order) + sort_keys(tf.math.imag(x), total_order)
  if dt.is_floating:
    # 16-bit keys widened: TopKV2 sorts int32 keys on every backend.
    return [sem.float_order_key(tf.cast(x, sem.widened(dt)), total_order=total_order)]
  if dt in (tf.bool, tf.int8, tf.uint8, tf.int16, tf.uint16):
    return [tf.cast(x, tf.int32)]
  if dt == tf.uint32:
    return [tf.cast(x, tf.int64)]
  if dt == tf.uint64:
    flip = tf.constant(np.iinfo(np.int64).min, tf.int64)
    return [tf.bitwise.bitwise_xor(tf.bitcast(x, tf.int64), flip)]
  return [x]


def _gather_last(x, idx):
  return tf.gather(x, idx, axis=-1, batch_dims=len(x.shape) - 1)


def _argsort_last(key, n, descending=False):
  """Stable argsort of an integer key along its last axis (length n)."""
  _, idx = tf.math.top_k(key if descending else portable_bits.invert(key), k=n, sorted=True)
  return idx


def _move_last(x, axis, rank):
  if axis == rank - 1:
    return x
  perm = [i for i in range(rank) if i != axis] + [axis]
  return tf.transpose(x, perm)


def _move_back(x, axis, rank):
  if axis == rank - 1:
    return x
  perm = list(range(rank - 1))
  perm.insert(axis, rank - 1)
  return tf.transpose(x, perm)


@register(lax.sort_p, uint32_as_order_keys=True)
def _sort(ctx, *operands, dimension, is_stable, num_keys):
  del is_stable  # the sort below is always stable, which an unstable sort may be
  rank = len(ctx.avals_in[0].shape)
  n = ctx.dim(ctx.avals_in[0].shape[dimension])
  ops = [_move_last(x, dimension, rank) for x in operands]
  keys = [k for x in ops[:num_keys] for k in sort_keys(x)]
  perm = None
  # Least significant key first: each stable pass keeps the order of the later keys.
  for key in reversed(keys):
    if perm is None:
      perm = _argsort_last(key, n)
    else:
      perm = _gather_last(perm, _argsort_last(_gather_last(key, perm), n))
  return [_move_back(_gather_last(x, perm), dimension, rank) for x in ops]


@register(lax.top_k_p, uint32_as_order_keys=True)
def _top_k(ctx, x, *, k, axis=None, is_stable=True):
  del is_stable  # ties always come lowest index first, a valid unstable order too
  rank = len(ctx.avals_in[0].shape)
  axis = rank - 1 if axis is None else axis % rank
  xs = _move_last(x, axis, rank)
  keys = sort_keys(xs, total_order=True)
  if len(keys) == 1:
    _, idx = tf.math.top_k(keys[0], k=ctx.dim(k), sorted=True)
  else:
    n = ctx.dim(ctx.avals_in[0].shape[axis])
    perm = None
    for key in reversed(keys):
      if perm is None:
        perm = _argsort_last(key, n, descending=True)
      else:
        perm = _gather_last(perm, _argsort_last(_gather_last(key, perm), n, descending=True))
    idx = perm[..., : ctx.dim(k)]
  values = _gather_last(xs, idx)
  return [_move_back(values, axis, rank), _move_back(tf.cast(idx, tf.int32), axis, rank)]


@register(lax.approx_top_k_p)
def _approx_top_k(
  ctx,
  x,
  *,
  k,
  reduction_dimension,
  recall_target,
  is_max_k,
  reduction_input_size_override,
  aggregate_to_topk,
):
  # Off TPU, XLA computes approx_top_k exactly: a sort along the reduction
  # dimension (-0.0 == +0.0) cut to the output size, which is k with
  # aggregate_to_topk and otherwise the size JAX chose for the TPU algorithm.
  # The recall parameters only tune that TPU algorithm. XLA's sort there is
  # unstable, so the order of equal values is unspecified (here: lowest index
  # first), as is the place of NaNs (here: above +inf).
  del k, recall_target, reduction_input_size_override, aggregate_to_topk
  rank = len(ctx.avals_in[0].shape)
  axis = reduction_dimension % rank
  size = ctx.dim(ctx.avals_out[0].shape[axis])
  xs = _move_last(x, axis, rank)
  (key,) = sort_keys(xs)
  if not is_max_k:
    key = portable_bits.invert(key)
  _, idx = tf.math.top_k(key, k=size, sorted=True)
  values = _gather_last(xs, idx)
  return [_move_back(values, axis, rank), _move_back(tf.cast(idx, tf.int32), axis, rank)]
