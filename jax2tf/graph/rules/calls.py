"""Call-like primitives: their bodies are inlined into the surrounding TF graph.

Custom derivative rules only matter for differentiation, which goes through
JAX's VJP of the whole function (jax2tf/gradients.py); the forward pass here is
the primal computation.

A body that handles PRNG key arrays is first rewritten to work on key data
(rules/random.py), so that structural primitives applied to keys see the
trailing key-data dimensions.
"""

from jax._src import ad_checkpoint
from jax._src.lax import eval_jaxpr as lax_eval_jaxpr
from jax._src.lax import lax as lax_internal
from jax.extend.core import primitives as core_primitives

from jax2tf.graph.registry import register
from jax2tf.graph.rules.random import key_data_jaxpr


@register(core_primitives.jit_p)
def _jit(ctx, *args, jaxpr, **_):
  return ctx.lower_jaxpr(key_data_jaxpr(jaxpr), args)


@register(core_primitives.closed_call_p, core_primitives.call_p)
def _call(ctx, *args, call_jaxpr, **_):
  return ctx.lower_jaxpr(key_data_jaxpr(call_jaxpr), args)


# JAX 0.10's eval_jaxpr primitive, which JAX stages as closed_call; from 0.12
# on it is call_p itself, ruled above.
if lax_eval_jaxpr.eval_jaxpr_p not in (core_primitives.call_p, core_primitives.closed_call_p):
  @register(lax_eval_jaxpr.eval_jaxpr_p)
  def _eval_jaxpr(ctx, *args, jaxpr):
    return ctx.lower_jaxpr(key_data_jaxpr(jaxpr), args)


@register(ad_checkpoint.remat_p)
def _remat(ctx, *args, jaxpr, **_):
  return ctx.lower_jaxpr(key_data_jaxpr(jaxpr), args)


@register(ad_checkpoint.name_p)
def _checkpoint_name(ctx, x, *, name):
  # jax.ad_checkpoint.checkpoint_name: a label for remat policies, the value
  # passes through.
  del name
  return x


@register(core_primitives.custom_jvp_call_p, core_primitives.custom_vjp_call_p)
def _custom_derivative_call(ctx, *args, call_jaxpr, **_):
  return ctx.lower_jaxpr(key_data_jaxpr(call_jaxpr), args)


# A composite is a named group of ops with a reference decomposition; TF has
# no such grouping, so the decomposition is emitted.
@register(lax_internal.composite_p)
def _composite(ctx, *args, **params):
  # JAX 0.10 calls the decomposition `jaxpr`, 0.12 `call_jaxpr`.
  body = params["jaxpr"] if "jaxpr" in params else params["call_jaxpr"]
  return ctx.lower_jaxpr(key_data_jaxpr(body), args)
