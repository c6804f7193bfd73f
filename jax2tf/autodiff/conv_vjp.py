"""A VJP for convolutions whose transposed padding depends on symbolic dimensions.

JAX transposes conv_general_dilated by calling conv_general_dilated again with
a padding it computes from the shapes. Over symbolic spatial dimensions that
a stride does not divide (padding "SAME" with strides 2 over `(b, h, w, c)`),
that padding depends on the dimensions modulo the stride, and
conv_general_dilated accepts only integer paddings (jax 0.10 and 0.12), so
the VJP cannot be traced. The primitive itself, and its lowering, take
symbolic paddings: the forward pass of such a convolution binds one.

`with_symbolic_conv_vjp` re-evaluates a function's jaxpr with each such
convolution wrapped in a `jax.custom_vjp` whose backward pass binds the
primitive directly, with the transposed paddings as dimension expressions.
Convolutions inside `jax.jit` are reached; inside other higher-order
primitives (scan, cond, remat, custom derivatives) they are left to JAX.
"""

from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend import core as jax_core
from jax.extend.core import primitives as core_primitives

from jax2tf import equations
from jax2tf.shapes import dim_eval

_CONV = core_primitives.conv_general_dilated_p


def needs_symbolic_vjp(eqn) -> bool:
  """Whether JAX's transpose of this convolution would need a symbolic padding:
  a symbolic padding, or a symbolic spatial size that a stride does not
  divide, leaves a symbolic remainder there."""
  if eqn.primitive is not _CONV:
    return False
  lhs_spatial = eqn.params["dimension_numbers"].lhs_spec[2:]
  shape = eqn.invars[0].aval.shape
  spatial_symbolic = any(not dim_eval.is_constant(shape[d]) for d in lhs_spatial)
  padding_symbolic = any(
    not dim_eval.is_constant(p) for pair in eqn.params["padding"] for p in pair
  )
  strided = any(s != 1 for s in eqn.params["window_strides"])
  return padding_symbolic or (spatial_symbolic and strided)


def _supported(params) -> bool:
  # The transposes below cover grouped features, not grouped batches nor
  # dilated inputs (transposed convolutions), which JAX keeps handling.
  return params["batch_group_count"] == 1 and all(d == 1 for d in params["lhs_dilation"])


def with_symbolic_conv_vjp(fun: Callable, in_avals: Sequence) -> Callable | None:
  """`fun` (flat arguments, a list of results) with the convolutions that need
  it given the VJP above; None when it has none that this module handles."""
  closed = jax.make_jaxpr(fun)(*in_avals)
  if not _has_rewrite(closed.jaxpr):
    return None

  def rewritten(*args):
    return _evaluate(closed.jaxpr, closed.consts, args)

  return rewritten


def _has_rewrite(jaxpr) -> bool:
  for eqn in jaxpr.eqns:
    if needs_symbolic_vjp(eqn) and _supported(eqn.params):
      return True
    if eqn.primitive is core_primitives.jit_p and _has_rewrite(eqn.params["jaxpr"].jaxpr):
      return True
  return False


def _evaluate(jaxpr, consts, args) -> list:
  env: dict = {}

  def read(v):
    return v.val if isinstance(v, jax_core.Literal) else env[v]

  env.update(zip(jaxpr.constvars, consts))
  env.update(zip(jaxpr.invars, args))
  for eqn in jaxpr.eqns:
    invals = [read(v) for v in eqn.invars]
    if needs_symbolic_vjp(eqn) and _supported(eqn.params):
      outs = [_conv_with_vjp(eqn.params)(*invals)]
    elif eqn.primitive is core_primitives.jit_p and _has_rewrite(eqn.params["jaxpr"].jaxpr):
      inner = eqn.params["jaxpr"]
      outs = _evaluate(inner.jaxpr, inner.consts, invals)
    else:
      outs = equations.bind(eqn, invals)
    for v, out in zip(eqn.outvars, outs):
      if not isinstance(v, jax_core.DropVar):
        env[v] = out
  return [read(v) for v in jaxpr.outvars]


def _conv_with_vjp(params: dict) -> Callable:
  @jax.custom_vjp
  def conv(lhs, rhs):
    return _CONV.bind(lhs, rhs, **params)

  def fwd(lhs, rhs):
    return conv(lhs, rhs), (lhs, rhs)

  def bwd(residuals, ct):
    lhs, rhs = residuals
    return _lhs_cotangent(ct, lhs, rhs, params), _rhs_cotangent(ct, lhs, rhs, params)

  conv.defvjp(fwd, bwd)
  return conv


def _dilated_cotangent(ct, params):
  """The cotangent with stride - 1 zeros between its spatial elements.

  Dilating with lax.pad rather than through the convolution's own dilation
  gives a size whose dimension expression the paddings below can cancel;
  JAX writes a dilated size as max((n - 1) * s + 1, 0), which it cannot
  prove equal to (n - 1) * s + 1 for an n that might be 0.
  """
  out_spec = params["dimension_numbers"].out_spec
  config = [(0, 0, 0)] * ct.ndim
  for d, stride in zip(out_spec[2:], params["window_strides"]):
    config[d] = (0, 0, stride - 1)
  return lax.pad(ct, jnp.zeros((), ct.dtype), config)


def _lhs_cotangent(ct, lhs, rhs, params):
  # The cotangent spread back over the input: a convolution of the dilated
  # cotangent with the spatially reversed kernel, whose input and output
  # features trade places.
  lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
  groups = params["feature_group_count"]
  dilated = _dilated_cotangent(ct, params)
  padding = []
  for i, (rhs_dil, (low, _)) in enumerate(zip(params["rhs_dilation"], params["padding"])):
    window = (rhs.shape[rhs_spec[2 + i]] - 1) * rhs_dil + 1
    before = window - 1 - low
    # The output size, cotangent + before + after - window + 1, is the input's.
    after = lhs.shape[lhs_spec[2 + i]] + window - 1 - before - dilated.shape[out_spec[2 + i]]
    padding.append((before, after))
  kernel = lax.rev(rhs, tuple(rhs_spec[2:]))
  if groups > 1:
    kernel = _groups_into_input_features(kernel, rhs_spec, groups)
  dnums = type(params["dimension_numbers"])(
    lhs_spec=out_spec, rhs_spec=(rhs_spec[1], rhs_spec[0], *rhs_spec[2:]), out_spec=lhs_spec
  )
  res = _CONV.bind(
    dilated,
    kernel.astype(ct.dtype),
    **dict(
      params,
      window_strides=(1,) * len(padding),
      padding=tuple(padding),
      dimension_numbers=dnums,
    ),
  )
  return res.astype(lhs.dtype)


def _groups_into_input_features(kernel, rhs_spec, groups):
  """The kernel of a grouped convolution, its output features (group-major)
  split by group and the groups moved into its input features."""
  out_dim, in_dim = rhs_spec[0], rhs_spec[1]
  shape = list(kernel.shape)
  split = shape[:out_dim] + [groups, shape[out_dim] // groups] + shape[out_dim + 1 :]
  kernel = jnp.reshape(kernel, split)
  # Axes after the split out_dim moved one to the right.
  group_axis, in_axis = out_dim, in_dim + (in_dim > out_dim)
  kernel = jnp.moveaxis(kernel, group_axis, in_axis - (group_axis < in_axis))
  merged = list(shape)
  merged[out_dim] = shape[out_dim] // groups
  merged[in_dim] = shape[in_dim] * groups
  return jnp.reshape(kernel, merged)


def _rhs_cotangent(ct, lhs, rhs, params):
  # The kernel's cotangent correlates the input with the dilated cotangent:
  # batch becomes the contracted feature, input features the batch.
  lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
  dilated = _dilated_cotangent(ct, params)
  padding = []
  for i, (rhs_dil, (low, _)) in enumerate(zip(params["rhs_dilation"], params["padding"])):
    span = (rhs.shape[rhs_spec[2 + i]] - 1) * rhs_dil
    # The output size, (input + low + high - cotangent) // rhs_dil + 1, is
    # the kernel's.
    high = span + dilated.shape[out_spec[2 + i]] - lhs.shape[lhs_spec[2 + i]] - low
    padding.append((low, high))
  dnums = type(params["dimension_numbers"])(
    lhs_spec=(lhs_spec[1], lhs_spec[0], *lhs_spec[2:]),
    rhs_spec=(out_spec[1], out_spec[0], *out_spec[2:]),
    out_spec=(rhs_spec[1], rhs_spec[0], *rhs_spec[2:]),
  )
  res = _CONV.bind(
    lhs.astype(ct.dtype),
    dilated,
    **dict(
      params,
      window_strides=tuple(params["rhs_dilation"]),
      padding=tuple(padding),
      rhs_dilation=(1,) * len(padding),
      dimension_numbers=dnums,
      feature_group_count=1,
      batch_group_count=params["feature_group_count"],
    ),
  )
  return res.astype(rhs.dtype)
