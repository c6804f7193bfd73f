"""Call-like primitives: their bodies are inlined into the surrounding TF graph.

Custom derivative rules only matter for differentiation, which goes through
JAX's VJP of the whole function (jax2tf/autodiff/gradients.py); the forward pass here is
the primal computation.

A body that handles PRNG key arrays is first rewritten to work on key data
(jax2tf/graph/key_data.py), so that structural primitives applied to keys see the
trailing key-data dimensions.

Cases: tests/cases/calls.py
"""

from jax.extend.core import primitives as core_primitives

from jax2tf.graph import registry
from jax2tf.graph.key_data import CALL_LIKE_PRIMITIVES, call_body, key_data_jaxpr
from jax2tf.graph.registry import register
from jax2tf.internals import jax_private
from jax2tf.native import call_module, exporting, versions


# Every call-like primitive runs its body in place. A composite is a named
# group of ops with a reference decomposition; TF has no such grouping, so the
# decomposition is emitted.
@register(*CALL_LIKE_PRIMITIVES, uint32_as_int32_bits=True)
def _inline_body(ctx, *args, **params):
  return ctx.lower_jaxpr(key_data_jaxpr(call_body(params)), args)


@register(core_primitives.name_p, uint32_as_int32_bits=True)
def _checkpoint_name(ctx, x, *, name):
  # jax.ad_checkpoint.checkpoint_name: a label for remat policies, the value
  # passes through.
  del name
  return x


# A high-level primitive (jnp.searchsorted, jnp.nonzero on newer JAX) is one
# operation object that knows its expansion into ordinary primitives: the
# expansion is traced at the operands' avals and lowered in place.
@register(jax_private.call_hi_primitive_p)
def _expand_hi_primitive(ctx, *args, _prim):
  return ctx.lower_fun(lambda *xs: jax_private.call_hi_primitive_p.to_lojax(*xs, _prim=_prim), args)


# Exported.call: the Exported holds StableHLO, not a jaxpr, so there is no
# body to lower to TF ops; with enable_xla=True an XlaCallModule op runs the
# module itself (at TF's StableHLO version), as native serialization does.
@register(jax_private.call_exported_p, without_xla_ops=False)
def _call_exported(ctx, *args, exported):
  if not set(exported.platforms) & {"cpu", "cuda", "rocm", "tpu"}:
    raise registry.unsupported_params_error(
      ctx.primitive,
      {"exported": exported},
      f"the Exported was lowered for {exported.platforms}, which XlaCallModule does not run",
    )
  module = exporting.native_module_of(
    exported,
    fun_name=f"Exported {exported.fun_name}",
    consumer=versions.consumer(None),
  )
  return call_module.call_native_module(module, args)
