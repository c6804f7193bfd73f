"""Differentiation of call_tf by TensorFlow's own autodiff.

JVP: the primal call plus a call of `JvpFunction` (TF forward mode,
`tf.autodiff.ForwardAccumulator`) on the primals and the tangents of the
float inputs. That second call is linear in the tangents; JAX transposes it
(for grad/vjp) into a call of `VjpFunction`, which runs the TF function under
`tf.GradientTape`, so TF custom gradients are respected. Both are themselves
call_tf calls, so they work eagerly, under jit, under convert, and can be
differentiated again.

Integer and boolean inputs get float0 tangents/cotangents, integer outputs
symbolic-zero tangents, as in JAX.
"""

import jax
from jax.interpreters import ad

from jax2tf.call_tf.functions import JvpFunction
from jax2tf.call_tf.primitive import bind, call_tf_p
from jax2tf.dtypes import is_differentiable


def _aval(x):
  return jax.typeof(x)


def _jvp(primals, tangents, *, fn, has_side_effects, ordered, call_tf_graph):
  outs = call_tf_p.bind(
    *primals, fn=fn, has_side_effects=has_side_effects, ordered=ordered, call_tf_graph=call_tf_graph
  )
  out_avals = [_aval(o) for o in outs]
  diff_in = [i for i, p in enumerate(primals) if is_differentiable(_aval(p).dtype)]
  all_zero = all(type(tangents[i]) is ad.Zero for i in diff_in)
  if not diff_in or all_zero:
    return outs, [ad.Zero(a.to_tangent_aval()) for a in out_avals]
  tans = [ad.instantiate_zeros(tangents[i]) for i in diff_in]
  jvp_fn = fn.jvp_function(len(primals))
  tan_outs = iter(bind(list(primals) + tans, jvp_fn, call_tf_graph=call_tf_graph))
  return outs, [
    next(tan_outs) if is_differentiable(a.dtype) else ad.Zero(a.to_tangent_aval())
    for a in out_avals
  ]


def _transpose(cts, *args, fn, has_side_effects, ordered, call_tf_graph):
  del has_side_effects, ordered
  if not isinstance(fn, JvpFunction):
    raise NotImplementedError(
      f"call_tf: {fn.name} is not linear in any of its arguments, so JAX cannot "
      "transpose it; only the tangent part of a call_tf JVP is transposable."
    )
  n = fn.n_in
  primals = args[:n]
  if any(ad.is_undefined_primal(p) for p in primals):
    raise NotImplementedError(
      f"call_tf: cannot transpose {fn.name} with respect to its primal inputs "
      "(it is linear only in the tangents)"
    )
  cts = [ad.instantiate_zeros(ct) for ct in cts]
  vjp_fn = fn.base.vjp_function(n)
  in_cts = bind(list(primals) + cts, vjp_fn, call_tf_graph=call_tf_graph)
  return [None] * n + list(in_cts)


ad.primitive_jvps[call_tf_p] = _jvp
ad.primitive_transposes[call_tf_p] = _transpose
