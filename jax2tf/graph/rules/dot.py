"""dot_general as MatMul / BatchMatMul, with Transposes and Reshapes where the
layout needs them; ragged_dot, and scaled_dot as its block-scaled expansion.

Both are ordinary TF ops, so no flavour needs XLA. TF's CPU kernels cover only
some dtypes: the rule computes in a type whose arithmetic gives JAX's result
bit for bit (integers modulo 2**n; bool as int32 then != 0) and casts back.

Cases: tests/cases/dot.py
"""

import math

import jax.numpy as jnp
import numpy as np
import tensorflow as tf
from jax import lax

from jax2tf.graph import int32_bits, registry
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register
from jax2tf.internals import jax_private
from jax2tf.jax_forms import summed_products as summed_products_form
from jax2tf.shapes import dim_eval


def _matmul_flags(lhs_rank, rhs_rank, lhs_contract, rhs_contract, lhs_batch, rhs_batch):
  """(transpose_a, transpose_b) when MatMul/BatchMatMul computes this dot, else None."""
  nb = len(lhs_batch)
  if (
    lhs_rank != nb + 2
    or rhs_rank != nb + 2
    or len(lhs_contract) != 1
    or tuple(lhs_batch) != tuple(range(nb))
    or tuple(rhs_batch) != tuple(range(nb))
  ):
    return None
  return lhs_contract[0] == nb, rhs_contract[0] == nb + 1


def _grouped_operand(ctx, x, shape, batch, first, second):
  """`x` laid out as [batch..., first, second] (each group's dims merged into
  one), and False; or as [batch..., second, first] and True (to transpose in
  the MatMul) when that is how `x` already lies; a Transpose only when
  neither is."""
  identity = list(range(len(shape)))
  transposed = list(batch) + list(second) + list(first) == identity
  if transposed:
    groups = (second, first)
  else:
    groups = (first, second)
    order = [*batch, *first, *second]
    if order != identity:
      x = tf.transpose(x, order)
  merged = [shape[d] for d in batch] + [math.prod(shape[d] for d in g) for g in groups]
  # Equal ranks do not mean equal shapes: (2, 1) read as [no free dims, two
  # merged] is (1, 2).
  if tuple(merged) != tuple(shape):
    x = ctx.reshape(x, merged)
  return x, transposed


def _free_dims(shape, contract, batch) -> list[int]:
  """The dimensions of an operand that are neither contracted nor batch."""
  return [d for d in range(len(shape)) if d not in (*contract, *batch)]


def _batched_matmul(ctx, lhs, rhs, dims):
  """Any dot_general as one MatMul/BatchMatMul between Transposes and
  Reshapes: the ops every runtime has fast kernels for (TF.js's wasm backend
  has no Einsum)."""
  lhs_contract, rhs_contract, lhs_batch, rhs_batch = dims
  lhs_shape, rhs_shape = ctx.avals_in[0].shape, ctx.avals_in[1].shape
  lhs_free = _free_dims(lhs_shape, lhs_contract, lhs_batch)
  rhs_free = _free_dims(rhs_shape, rhs_contract, rhs_batch)
  a, transpose_a = _grouped_operand(ctx, lhs, lhs_shape, lhs_batch, lhs_free, lhs_contract)
  b, transpose_b = _grouped_operand(ctx, rhs, rhs_shape, rhs_batch, rhs_contract, rhs_free)
  res = tf.linalg.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
  # The MatMul gives [batch..., lhs free merged, rhs free merged]: the result's
  # shape only when each side has one free dimension (the ranks can agree
  # while the shapes do not: two free dimensions on one side, none on the other).
  if len(lhs_free) != 1 or len(rhs_free) != 1:
    res = ctx.reshape(res, ctx.aval_out.shape)
  return res


@register(lax.dot_general_p)
def _dot_general(
  ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type, out_sharding=None
):
  # Precision only selects TPU/GPU algorithms; sharding has no TF meaning here.
  del precision, out_sharding, preferred_element_type  # the result aval has the dtype
  (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
  out_dtype = ctx.aval_out.dtype
  dt = sem.compute_dtype(out_dtype)
  operands = lhs, rhs
  lhs, rhs = tf.cast(lhs, dt), tf.cast(rhs, dt)
  lhs_rank, rhs_rank = len(ctx.avals_in[0].shape), len(ctx.avals_in[1].shape)
  flags = _matmul_flags(lhs_rank, rhs_rank, lhs_contract, rhs_contract, lhs_batch, rhs_batch)
  dims = tuple(tuple(d) for d in (lhs_contract, rhs_contract, lhs_batch, rhs_batch))

  def dot(lhs, rhs):
    if _contracts_one_element(ctx, lhs_contract):
      return _products(ctx, lhs, rhs, dims)
    if flags is not None:
      return tf.linalg.matmul(lhs, rhs, transpose_a=flags[0], transpose_b=flags[1])
    return _batched_matmul(ctx, lhs, rhs, dims)

  if any(dim_eval.is_zero(d) for aval in ctx.avals_in for d in aval.shape):
    # Sums of no products, or no result at all. (TF's graph optimizer can
    # crash the process, dividing by zero, on matmuls of empty operands.)
    res = tf.zeros(ctx.shape(ctx.aval_out.shape), dt)
  else:

    def exact_products(lhs, rhs):
      # TF.js sums int32 products in JavaScript numbers, which drop low bits
      # past 2**53; from 16-bit halves every product and sum stays exact.
      return int32_bits.bilinear(dot, lhs, rhs)

    def summed_products(lhs, rhs):
      # TFLite has no int32 MatMul (FULLY_CONNECTED and BATCH_MATMUL take
      # integers only quantized): the form a native module for it gets too.
      if _contracts_one_element(ctx, lhs_contract):
        return dot(lhs, rhs)
      form = summed_products_form.SummedProducts(
        dimension_numbers, np.dtype(dt.as_numpy_dtype), np.dtype(dt.as_numpy_dtype)
      )
      return ctx.lower_fun(lambda a, b: [form(a, b)], operands)[0]

    products = ctx.kernel_or("Mul", dot, exact_products, dt)
    res = ctx.kernel_or("MatMul", products, summed_products, dt)(lhs, rhs)
  return sem.cast_result(res, out_dtype)


def _contracts_one_element(ctx, lhs_contract) -> bool:
  shape = ctx.avals_in[0].shape
  return all(isinstance(shape[d], int) and shape[d] == 1 for d in lhs_contract)


def _laid_out(ctx, x, order, out_shape):
  """`x` transposed to `order`, then reshaped to `out_shape`."""
  if order != list(range(len(order))):
    x = tf.transpose(x, order)
  return ctx.reshape(x, out_shape)


def _products(ctx, lhs, rhs, dims):
  """A dot_general that sums one product per result element (an outer product,
  or contracted dimensions of size 1) as that product: XLA does so, keeping
  -0.0 and inf * 0 = NaN, where a MatMul would add the product to +0.0."""
  lhs_contract, rhs_contract, lhs_batch, rhs_batch = dims
  lhs_shape, rhs_shape = ctx.avals_in[0].shape, ctx.avals_in[1].shape
  lhs_free = _free_dims(lhs_shape, lhs_contract, lhs_batch)
  rhs_free = _free_dims(rhs_shape, rhs_contract, rhs_batch)

  batch = [lhs_shape[d] for d in lhs_batch]
  a = _laid_out(
    ctx,
    lhs,
    [*lhs_batch, *lhs_free, *lhs_contract],
    batch + [lhs_shape[d] for d in lhs_free] + [1] * len(rhs_free),
  )
  b = _laid_out(
    ctx,
    rhs,
    [*rhs_batch, *rhs_contract, *rhs_free],
    batch + [1] * len(lhs_free) + [rhs_shape[d] for d in rhs_free],
  )
  return tf.multiply(a, b)


# lax.ragged_dot: rows of `lhs` fall into consecutive groups of the given
# sizes, and group g is multiplied by rhs[g]. Rows past the last group are 0.
def _is_ragged_rows_layout(rdn, lhs_rank: int) -> bool:
  (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = rdn.dot_dimension_numbers
  return (
    lhs_rank == 2
    and tuple(lhs_contract) == (1,)
    and tuple(rhs_contract) == (1,)
    and not lhs_batch
    and not rhs_batch
    and tuple(rdn.lhs_ragged_dimensions) == (0,)
    and tuple(rdn.rhs_group_dimensions) == (0,)
  )


@register(jax_private.ragged_dot_general_p)
def _ragged_dot_general(
  ctx, lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, group_offset=None, **params
):
  rdn = ragged_dot_dimension_numbers
  if group_offset is not None or not _is_ragged_rows_layout(rdn, len(ctx.avals_in[0].shape)):
    raise registry.unsupported_params_error(
      ctx.primitive,
      dict(params, ragged_dot_dimension_numbers=rdn, group_offset=group_offset),
      "only lax.ragged_dot's layout (lhs [m, k] ragged in m, rhs [g, k, n]) is supported",
    )
  out_dtype = ctx.aval_out.dtype
  dt = sem.compute_dtype(out_dtype)
  lhs, rhs = tf.cast(lhs, dt), tf.cast(rhs, dt)
  ends = tf.cumsum(tf.cast(group_sizes, tf.int32))
  rows = tf.range(tf.shape(lhs)[0], dtype=tf.int32)
  group = tf.searchsorted(ends, rows, side="right")
  in_a_group = group < tf.shape(ends)[0]
  group = tf.minimum(group, tf.shape(ends)[0] - 1)
  # Each row times its group's matrix: a batch of [1, k] x [k, n] products.
  res = tf.linalg.matmul(tf.expand_dims(lhs, 1), tf.gather(rhs, group))[:, 0, :]
  res = tf.where(in_a_group[:, None], res, tf.zeros_like(res))
  return sem.cast_result(res, out_dtype)


def _scaled_operand(x, scale, contracting):
  """`x * scale` in bfloat16, each scale element covering its block of the
  contracting dimensions (lax.scaled_dot's meaning, scales at least 2x smaller
  there and equal elsewhere)."""
  for d in contracting:
    scale = jnp.repeat(scale, x.shape[d] // scale.shape[d], axis=d)
  return x.astype(jnp.bfloat16) * scale.astype(jnp.bfloat16)


@register(jax_private.scaled_dot_p)
def _scaled_dot(ctx, lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers, preferred_element_type):
  # JAX lowers it to a composite of exactly this (block-scaled bfloat16
  # operands, then dot_general), which XLA may run natively on some GPUs.
  (lhs_contract, rhs_contract), _ = dimension_numbers

  def expand(lhs, rhs, lhs_scale, rhs_scale):
    return lax.dot_general(
      _scaled_operand(lhs, lhs_scale, lhs_contract),
      _scaled_operand(rhs, rhs_scale, rhs_contract),
      dimension_numbers,
      preferred_element_type=preferred_element_type,
    )

  return ctx.lower_fun(expand, (lhs, rhs, lhs_scale, rhs_scale))[0]
