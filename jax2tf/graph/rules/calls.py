"""Call-like primitives: their bodies are inlined into the surrounding TF graph.

Custom derivative rules only matter for differentiation, which goes through
JAX's VJP of the whole function (jax2tf/gradients.py); the forward pass here is
the primal computation.

A body that handles PRNG key arrays is first rewritten to work on key data
(rules/random.py), so that structural primitives applied to keys see the
trailing key-data dimensions.

Cases: calls_cases.py
"""

from jax._src import ad_checkpoint
from jax._src.lax import eval_jaxpr as lax_eval_jaxpr
from jax._src.lax import lax as lax_internal
from jax.extend.core import primitives as core_primitives

from jax2tf.graph.registry import register
from jax2tf.graph.rules.random import key_data_jaxpr


# JAX 0.10's eval_jaxpr primitive (JAX stages it as closed_call); from 0.12 on
# it is call_p itself.
_EVAL_JAXPR_P = (None if lax_eval_jaxpr.eval_jaxpr_p in (core_primitives.call_p,
                                                         core_primitives.closed_call_p)
                 else lax_eval_jaxpr.eval_jaxpr_p)


# Every call-like primitive runs its body in place. A composite is a named
# group of ops with a reference decomposition; TF has no such grouping, so the
# decomposition is emitted.
@register(core_primitives.jit_p, core_primitives.closed_call_p, core_primitives.call_p,
          _EVAL_JAXPR_P, ad_checkpoint.remat_p, core_primitives.custom_jvp_call_p,
          core_primitives.custom_vjp_call_p, lax_internal.composite_p)
def _inline_body(ctx, *args, **params):
  # The body is `jaxpr` for jit, remat and eval_jaxpr, `call_jaxpr` for the
  # others (and for composites from JAX 0.12 on).
  body = params["jaxpr"] if "jaxpr" in params else params["call_jaxpr"]
  return ctx.lower_jaxpr(key_data_jaxpr(body), args)


@register(ad_checkpoint.name_p)
def _checkpoint_name(ctx, x, *, name):
  # jax.ad_checkpoint.checkpoint_name: a label for remat policies, the value
  # passes through.
  del name
  return x
