"""The lowerings of primitives a target has no kernel for, as JAX forms.

A native module for a target without XLA (TF's TFLite converter, the
standalone litert-converter) would carry `stablehlo.sort`, an integer
`convolution` or `dot_general`, which those converters refuse or LiteRT
cannot run. Exported for such a target, those primitives lower to the JAX
forms of jax2tf/jax_forms, chosen by the kernel lists the graph route reads
(`Target.lacks_kernel`):
  - sort, top_k and approx_top_k: TopK passes over integer order keys, where
    the target lacks `XlaSort` (no sort op but XLA's), as the graph route's
    sort rule writes them in TF ops;
  - integer convolutions, and real ones with an input dilation (transposed
    convolutions) or batch groups: one dot_general of the input's windows,
    where it lacks `XlaConv` (the graph route lowers the same form for
    integers);
  - integer dot_general: the products summed, where it lacks an int32
    `MatMul` (the graph route lowers the same form);
  - select_and_scatter of max and min pooling gradients: strided slices,
    selects and pads, where it lacks `XlaSelectAndScatter` (the graph route
    lowers the same form);
  - rng_bit_generator: XLA's counter-based hashes in uint32 words, where it
    lacks `XlaRngBitGenerator` (the graph route lowers the same form);
  - mulhi of 32-bit integers: the high word from 16-bit halves, where it
    lacks a uint64 `Mul` (as the graph route's rule computes it);
  - comparisons of floats in IEEE's total order (lt_to, le_to, eq_to): of
    the sort's integer order keys, where it takes no XLA ops (only XLA's
    compare has a TOTALORDER type).
"""

import functools

import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import primitives as core_primitives
from jax.interpreters import mlir

from jax2tf.jax_forms import (
  conv_as_dot,
  high_products,
  rng_bits,
  selected_windows,
  sorting,
  summed_products,
)
from jax2tf.native import portable_lowering
from jax2tf.shapes import dim_eval
from jax2tf.targets import Target


def _rule(primitive, form_of):
  """A lowering of `primitive` as the JAX function `form_of(ctx, **params)`
  returns (a function of the operands returning a list of results), or as
  JAX lowers it where that returns None."""
  # Every export that takes these rules is for the CPU platform.
  jax_rule = portable_lowering.jax_rule(primitive, "cpu")

  def rule(ctx, *operands, **params):
    form = form_of(ctx, **params)
    if form is None:
      return jax_rule(ctx, *operands, **params)
    return mlir.lower_fun(form, multiple_results=True)(ctx, *operands)

  return primitive, rule


def _is_static(*dims) -> bool:
  return all(dim_eval.is_constant(d) for d in dims)


# The forms gather along the sorted axis, which the converters refuse on
# operands of a symbolic shape; and TopK takes no symbolic k.
def _sort_form(ctx, *, dimension, num_keys, **_):
  shape = ctx.avals_in[0].shape
  if not _is_static(*shape) or shape[dimension] == 0:
    return None
  return sorting.Sort(dimension, num_keys)


def _top_k_form(ctx, *, k, axis=-1, **_):
  (aval,) = ctx.avals_in
  if sorting.is_own_key(aval.dtype) or not _is_static(k, *aval.shape):
    return None  # TopK's kernel orders it as JAX does
  return sorting.TopK(int(k), axis % len(aval.shape))


def _approx_top_k_form(ctx, *, reduction_dimension, is_max_k, **_):
  axis = reduction_dimension % len(ctx.avals_in[0].shape)
  size = ctx.avals_out[0].shape[axis]
  if not _is_static(size, *ctx.avals_in[0].shape):
    return None
  return sorting.ApproxTopK(int(size), axis, is_max_k)


def _is_integer(dtype) -> bool:
  return np.dtype(dtype).kind in "iub" and np.dtype(dtype).itemsize <= 4


def _conv_form(ctx, *, lhs_dilation, batch_group_count, **params):
  out = ctx.avals_out[0]
  spatial = ctx.avals_in[1].shape
  if not _is_static(*spatial, *out.shape):
    return None
  if any(d == 0 for d in out.shape):
    # No result to compute (a window larger than the input), which the
    # converters refuse to write as a convolution.
    return lambda lhs, rhs: [jnp.zeros(out.shape, out.dtype)]
  if not _is_integer(out.dtype):
    # Real convolutions keep the converters' CONV_2D and its kin, except
    # those with an input dilation (a transposed convolution) or batch
    # groups, which they refuse or write as a TRANSPOSE_CONV that LiteRT
    # sizes wrongly.
    if not jnp.issubdtype(out.dtype, jnp.floating):
      return None
    if all(d == 1 for d in lhs_dilation) and batch_group_count == 1:
      return None
  return conv_as_dot.ConvAsDot.of(
    out, lhs_dilation=lhs_dilation, batch_group_count=batch_group_count, **params
  )


def _integer_dot_form(ctx, *, dimension_numbers, **_):
  out = ctx.avals_out[0]
  if not _is_integer(out.dtype):
    return None
  products = summed_products.SummedProducts(dimension_numbers, np.dtype(np.int32), out.dtype)
  return lambda lhs, rhs: [products(lhs, rhs)]


def _scatter_to_selected_form(ctx, *, select_prim, **params):
  form = selected_windows.ScatterToSelected.of(select_prim, **params)
  return None if form is None or not _is_static(*ctx.avals_in[1].shape) else form


def _select_and_scatter_form(ctx, *, select_jaxpr, select_consts, scatter_jaxpr, scatter_consts,
                             padding, **params):  # fmt: skip
  boolean = ctx.avals_out[0].dtype == np.bool_
  select_prim = selected_windows.only_primitive(select_jaxpr, select_consts, (lax.ge_p, lax.le_p))
  combine = lax.or_p if boolean else lax.add_p
  if selected_windows.only_primitive(scatter_jaxpr, scatter_consts, (combine,)) is None:
    return None
  # XLA's padding here keeps its positions out of every window's pick.
  if any(p != (0, 0) for p in padding):
    return None
  form = selected_windows.ScatterToSelected.of(select_prim, padding=padding, **params)
  if form is None or not _is_static(*ctx.avals_in[0].shape):
    return None

  def scatter(operand, source, init):
    (added,) = form(source, operand)
    return [added | init if boolean else added + init]

  return scatter


def _rng_bits_form(ctx, *, shape, dtype, algorithm, **_):
  # LiteRT's own RNG_BIT_GENERATOR gives XLA's 64-bit bits, and nothing for
  # an empty shape; the form computes in uint32 words alone, and its 64-bit
  # words (a uint64 state or 64-bit bits) would need uint64 shifts.
  state_dtype = np.dtype(ctx.avals_in[0].dtype)
  if state_dtype.itemsize != 4 or np.dtype(dtype).itemsize > 4:
    return None
  if any(dim_eval.is_zero(d) for d in shape):
    return None
  fn = rng_bits.generator(shape, dtype, algorithm, state_dtype)
  return lambda state: list(fn(state))


def _high_product_form(ctx, **_):
  if np.dtype(ctx.avals_in[0].dtype).itemsize > 4:
    return None
  return lambda x, y: [high_products.multiply_high(x, y)]


def _total_order_form(compare):
  def form_of(ctx, **_):
    if not jnp.issubdtype(ctx.avals_in[0].dtype, jnp.floating):
      return None  # integers' total order is their order

    def compare_keys(x, y):
      (x_key,) = sorting.order_keys(x, total_order=True)
      (y_key,) = sorting.order_keys(y, total_order=True)
      return [compare(x_key, y_key)]

    return compare_keys

  return form_of


def lowering_rules(target: Target) -> tuple:
  """(primitive, rule) pairs for `jax.export.export(_override_lowering_rules=...)`
  for a module for `target`: the portable rules (portable_lowering.py), then
  the forms of what `target` has no kernel for."""
  return portable_lowering.portable_lowering_rules() + _forms(target)


@functools.cache
def _forms(target: Target) -> tuple:
  rules = []
  if target.lacks_kernel("XlaSort"):
    rules += [
      _rule(lax.sort_p, _sort_form),
      _rule(lax.top_k_p, _top_k_form),
      _rule(lax.approx_top_k_p, _approx_top_k_form),
    ]
  if target.lacks_kernel("XlaConv"):
    rules.append(_rule(lax.conv_general_dilated_p, _conv_form))
  if target.lacks_kernel("MatMul", "int32"):
    rules.append(_rule(lax.dot_general_p, _integer_dot_form))
  if target.lacks_kernel("XlaSelectAndScatter"):
    rules += [
      _rule(lax.select_and_scatter_add_p, _scatter_to_selected_form),
      _rule(lax.select_and_scatter_p, _select_and_scatter_form),
    ]
  if target.lacks_kernel("Mul", "uint64") and hasattr(lax, "mulhi_p"):
    rules.append(_rule(lax.mulhi_p, _high_product_form))
  if not target.xla_ops:
    rules += [
      _rule(core_primitives.lt_to_p, _total_order_form(lax.lt)),
      _rule(core_primitives.le_to_p, _total_order_form(lax.le)),
      _rule(core_primitives.eq_to_p, _total_order_form(lax.eq)),
    ]
  if target.lacks_kernel("XlaRngBitGenerator"):
    rules.append(_rule(core_primitives.rng_bit_generator_p, _rng_bits_form))
  return tuple(rules)
