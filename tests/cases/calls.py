"""Cases of the calls family (calls.py): jit, remat, custom_jvp/vjp, custom_vmap,
linear_call and composite bodies inlined."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.ad_checkpoint import checkpoint_name
from jax.experimental import compute_on
from jax.experimental.custom_partitioning import custom_partitioning
from jax.experimental.scheduling_groups import xla_metadata_call

from tests.support import recorded
from tests.support.case import A, Cases, case, gaps, rand, refused

CASES = Cases()


@jax.custom_jvp
def _softplus(x):
  return jnp.logaddexp(x, 0.0)


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] * jax.nn.sigmoid(p[0])))


@jax.custom_vjp
def _clip_grad(x):
  return jnp.sin(x)


_clip_grad.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (jnp.clip(g * c, -1, 1),))


@functools.partial(lax.composite, name="jax2tf_test.softplus")
def _composite_softplus(x):
  return jnp.log1p(jnp.exp(x))


@jax.custom_batching.custom_vmap
def _twice_sin(x):
  return jnp.sin(x) * 2


_twice_sin.def_vmap(lambda axis_size, in_batched, x: (jnp.sin(x) * 2, in_batched[0]))


def _scale_linear(x, y):
  # A linear function of y, with x as a residual, given its transpose.
  return jax.custom_derivatives.linear_call(lambda r, t: t * r, lambda r, t: t * r, x, y)


CASES.add("custom_jvp", _softplus, A(5))
CASES.add("custom_vjp", _clip_grad, A(5))
CASES.add("grad_custom_jvp", jax.grad(lambda x: _softplus(x).sum()), A(5))
CASES.add("grad_custom_vjp", jax.grad(lambda x: _clip_grad(x * 3).sum()), A(5))
CASES.add("nn_softmax", jax.nn.softmax, A(2, 6), tol=(1e-5, 1e-6))
CASES.add("custom_vmap", lambda x: _twice_sin(x) + 1, A(5))
CASES.add("linear_call", _scale_linear, A(5), A(5))
# Native modules carry it as stablehlo.composite, which the converter inlines.
CASES.add("composite", lambda x: _composite_softplus(x) * 2., A(6))


@jax.custom_vjp
def _clip_gradient(x):
  return x


_clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))


def _remat_saving_names(x):
  # checkpoint_name labels what a remat policy may keep for the backward pass.
  def body(v):
    h = checkpoint_name(jnp.sin(v) * 2.0, "h")
    return jnp.sum(jnp.cos(h) * v)
  policy = jax.checkpoint_policies.save_only_these_names("h")
  return jax.checkpoint(body, policy=policy)(x)


CASES += [
    case("jit_inner", lambda x: jax.jit(lambda v: v * 2 + 1)(x), rand((3,))),
    case("remat", lambda x: jax.checkpoint(lambda v: jnp.sin(v) * v)(x), rand((3,))),
    case("remat_named_policy", jax.grad(_remat_saving_names), rand((4,)), tol=(1e-5, 1e-6)),
    case("custom_jvp_relu", jax.nn.relu, rand((5,)), exact=True),
    case("custom_vjp_clip_gradient", lambda x: _clip_gradient(x) * 2, rand((5,)), exact=True),
]


# compute_on, xla_metadata_call and custom_partitioning say where or how XLA
# runs a body; on one device their value is the body's.
# jax 0.10 names the form that binds the primitive compute_on2, 0.12 compute_on.
_compute_on = getattr(compute_on, "compute_on2", compute_on.compute_on)


def _on_host(x):
  body = _compute_on(compute_type="device_host", out_memory_spaces=jax.memory.Space.Device)
  return body(lambda v: jnp.sin(v) * v)(x) + 1


@custom_partitioning
def _partitioned_sin(x):
  return jnp.sin(x) * 2


_partitioned_sin.def_partition(
    partition=lambda mesh, arg_shapes, result_shape: (mesh, jnp.sin, arg_shapes[0].sharding,
                                                      (arg_shapes[0].sharding,)),
    sharding_rule="i j -> i j")

CASES += [
    case("compute_on", _on_host, rand((2, 3)),
         gaps=gaps("XlaCallModule on TF's CPU has no kernel for the host-placement custom "
                   "call JAX emits", ["native"], error="annotate_device_placement")),
    case("xla_metadata_call",
         lambda x: xla_metadata_call(lambda v: jnp.cos(v) + v, scheduling_group="g")(x) * 2,
         rand((2, 3))),
    case("custom_partitioning", lambda x: _partitioned_sin(x) + 1, rand((2, 3))),
]


@functools.cache
def _exported_sin():
  return jax.export.export(jax.jit(lambda x: jnp.sin(x) * 2))(
      jax.ShapeDtypeStruct((2, 3), np.float32))


# Exported.call runs StableHLO: an XlaCallModule op with enable_xla=True.
CASES.add("call_exported", lambda x: _exported_sin().call(x) + 1, A(2, 3),
          graph_ops={"graph": ["XlaCallModule"]},
          refuse=refused("call_exported", "an Exported holds StableHLO, which only XLA runs",
                         "graph_no_xla"))


# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/calls.json.
CASES[:] = recorded.apply(CASES, "tflite_native", "calls")
CASES[:] = recorded.apply(CASES, "tflite_litert", "calls")
CASES[:] = recorded.apply(CASES, "tfjs", "calls")
