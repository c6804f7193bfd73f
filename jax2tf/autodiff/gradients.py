"""TF gradients of converted functions: JAX's VJP, itself converted.

A converted call is wrapped in `tf.custom_gradient`; its backward pass is the
VJP of the same JAX function, exported the same way (so `custom_vjp` rules
and symbolic shapes carry over) and wrapped again, which gives higher-order
gradients. Integer and boolean inputs get `None` (JAX's float0), unused
float inputs get zeros, as JAX computes them.
"""

from collections.abc import Callable, Sequence
from typing import Any

import jax
import tensorflow as tf

from jax2tf.autodiff import conv_vjp
from jax2tf.deploy import provenance
from jax2tf.dtypes import is_differentiable
from jax2tf.internals import tf_private


def vjp_of(flat_fun: Callable, in_avals: Sequence, out_avals: Sequence):
  """The flat VJP function of `flat_fun` and the avals of its arguments.

  Its arguments are the primal inputs followed by the cotangents of the
  differentiable outputs; its results are the cotangents of the
  differentiable inputs.
  """
  n_in = len(in_avals)
  out_is_diff = [is_differentiable(a.dtype) for a in out_avals]
  in_is_diff = [is_differentiable(a.dtype) for a in in_avals]

  def differentiable_outputs(*primals):
    return [o for o, d in zip(flat_fun(*primals), out_is_diff) if d]

  def vjp_fun(*primals_and_cts):
    primals, cts = primals_and_cts[:n_in], list(primals_and_cts[n_in:])
    # The VJP of the differentiable outputs only: the others (integers,
    # booleans) would need float0 cotangents, which cannot be made for a
    # symbolic shape, and contribute nothing.
    _, pullback = jax.vjp(differentiable_outputs, *primals)
    in_cts = pullback(cts)
    return [ct for ct, d in zip(in_cts, in_is_diff) if d]

  vjp_avals = list(in_avals) + [a for a, d in zip(out_avals, out_is_diff) if d]
  return vjp_fun, vjp_avals


def lower_vjp(
  lower: Callable[[Callable, list], Any],
  fun_name: str,
  flat_fun: Callable,
  in_avals: Sequence,
  out_avals: Sequence,
) -> tuple[Any, Callable]:
  """`lower(vjp_fun, vjp_avals)` for the VJP of `flat_fun`, and that VJP.

  JAX cannot trace the VJP of a convolution whose transposed padding depends
  on symbolic spatial dimensions (jax2tf/autodiff/conv_vjp.py); the VJP is then taken
  of `flat_fun` with those convolutions given a VJP that can. Where that
  cannot reach them either, the error names the function, the convolutions
  and the remedies.
  """
  vjp_avals = vjp_of(flat_fun, in_avals, out_avals)[1]
  failure = None
  for attempt in (lambda: flat_fun, lambda: conv_vjp.with_symbolic_conv_vjp(flat_fun, in_avals)):
    fun = attempt()
    if fun is None:  # no convolution the rewrite reaches
      break
    vjp_fun = vjp_of(fun, in_avals, out_avals)[0]
    try:
      return lower(vjp_fun, vjp_avals), vjp_fun
    except ValueError as e:
      # The message is all that tells this case apart.
      if _CONV_PADDING_ERROR not in str(e):
        raise
      failure = failure or e
  raise ValueError(_symbolic_conv_message(fun_name, flat_fun, in_avals)) from failure


_CONV_PADDING_ERROR = "padding argument to conv_general_dilated should be"


def _symbolic_conv_message(fun_name: str, flat_fun: Callable, in_avals: Sequence) -> str:
  convs = []
  try:
    jaxpr = jax.make_jaxpr(flat_fun)(*in_avals).jaxpr
  except Exception:  # the description is a courtesy; the failure stands without it
    jaxpr = None
  for eqn in provenance.equations(jaxpr) if jaxpr is not None else ():
    if conv_vjp.needs_symbolic_vjp(eqn):
      line = provenance.user_line(eqn)
      convs.append(
        f"conv_general_dilated(window_strides={tuple(eqn.params['window_strides'])}, "
        f"input shape {_shape(eqn.invars[0].aval.shape)}, "
        f"kernel shape {_shape(eqn.invars[1].aval.shape)})" + (f" at {line}" if line else "")
      )
  where = "; ".join(convs[:3]) + ("; ..." if len(convs) > 3 else "") or "conv_general_dilated"
  return (
    f"Cannot lower the gradient of {fun_name} for its symbolic shapes: JAX's VJP of "
    f"{where} needs the padding of the transposed convolution as integers, and with "
    "these strides it depends on the symbolic spatial dimensions (on their remainder "
    "modulo the stride). jax2tf gives such convolutions its own VJP at the top level "
    "of the function and inside jax.jit, but not inside other higher-order primitives "
    "(scan, cond, while_loop, remat, custom_vjp/custom_jvp) nor for batch_group_count > 1 "
    "or lhs_dilation. Remedies: give the spatial dimensions static sizes; or "
    "declare them so that the padding is fixed, e.g. '(b, 2*h, 2*w, c)' instead of "
    "'(b, h, w, c)' for window_strides (2, 2) with padding 'SAME'; or, where no "
    "gradient is needed, convert with with_gradient=False or save with "
    "tf.saved_model.SaveOptions(experimental_custom_gradients=False)."
  )


def _shape(shape) -> str:
  return "(" + ", ".join(str(d) for d in shape) + ")"


def call_with_custom_gradient(
  primal_call: Callable[[Sequence[tf.Tensor]], list],
  vjp_call: Callable[[Sequence[tf.Tensor]], list],
  in_avals: Sequence,
  out_avals: Sequence,
  args: Sequence[tf.Tensor],
) -> list:
  """Calls `primal_call(args)` with a TF gradient given by `vjp_call`."""
  if not out_avals:
    return primal_call(args)
  if tf.executing_eagerly() and not tf_private.could_possibly_record():
    # No tape or forward accumulator can see this call: the custom-gradient
    # wrapper would only add its (large) eager overhead.
    return primal_call(args)
  in_is_diff = [is_differentiable(a.dtype) for a in in_avals]
  out_is_diff = [is_differentiable(a.dtype) for a in out_avals]

  @tf.custom_gradient
  def fun(*xs):
    outs = primal_call(xs)

    def grad(*cts, variables=None):
      diff_cts = []
      for ct, out, d in zip(cts, outs, out_is_diff):
        if d:
          diff_cts.append(tf.zeros_like(out) if ct is None else tf.cast(ct, out.dtype))
      in_cts = iter(vjp_call(list(xs) + diff_cts))
      grads = [next(in_cts) if d else None for d in in_is_diff]
      if variables:
        return grads, [None] * len(variables)
      return grads

    return outs, grad

  res = fun(*args)
  return list(res) if isinstance(res, (list, tuple)) else [res]


def prevent_gradient(outs: Sequence[tf.Tensor], fun_name: str, op_name: str | None = None) -> list:
  """`outs` through PreventGradient ops (named `op_name`, uniquified by TF)."""
  message = (
    f"Gradient requested for {fun_name}, which was converted with "
    "with_gradient=False; convert it with with_gradient=True."
  )
  return [tf.raw_ops.PreventGradient(input=o, message=message, name=op_name) for o in outs]
