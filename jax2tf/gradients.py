"""TF gradients of converted functions: JAX's VJP, itself converted.

A converted call is wrapped in `tf.custom_gradient`; its backward pass is the
VJP of the same JAX function, exported the same way (so `custom_vjp` rules
and symbolic shapes carry over) and wrapped again, which gives higher-order
gradients. Integer and boolean inputs get `None` (JAX's float0), unused
float inputs get zeros, as JAX computes them.
"""

from collections.abc import Callable, Sequence

import jax
import numpy as np
import tensorflow as tf

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

  def vjp_fun(*primals_and_cts):
    primals, given = primals_and_cts[:n_in], iter(primals_and_cts[n_in:])
    _, pullback = jax.vjp(flat_fun, *primals)
    cts = [
      next(given) if d else np.zeros(a.shape, jax.dtypes.float0)
      for d, a in zip(out_is_diff, out_avals)
    ]
    in_cts = pullback(cts)
    return [ct for ct, d in zip(in_cts, in_is_diff) if d]

  vjp_avals = list(in_avals) + [a for a, d in zip(out_avals, out_is_diff) if d]
  return vjp_fun, vjp_avals


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


def prevent_gradient(outs: Sequence[tf.Tensor], fun_name: str) -> list:
  message = (
    f"Gradient requested for {fun_name}, which was converted with "
    "with_gradient=False; convert it with with_gradient=True."
  )
  return [tf.raw_ops.PreventGradient(input=o, message=message) for o in outs]
