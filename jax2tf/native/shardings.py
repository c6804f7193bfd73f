"""The shardings an exported module declares for its arguments and results.

XlaCallModule carries the shardings inside its module, but TF's own SPMD
partitioner (TPU serving) reads them from XlaSharding ops around the call, so
they are also kept here as serialized `xla.OpSharding` protos (built by
jax2tf/sharding.py, which also wraps the tensors). They are kept as JAX
shardings too, for the `jax.jit` that lowers the function's VJP.
"""

from collections.abc import Sequence
from typing import Any

from jax2tf import sharding as tf_sharding
from jax2tf.dtypes import is_differentiable


def _declared(exp, named_field: str, hlo_field: str, avals: Sequence[Any]) -> tuple:
  # Exports record either JAX shardings (newer) or HloShardings (older).
  shardings = getattr(exp, named_field, None)
  if shardings is None:
    shardings = getattr(exp, hlo_field, None)
  if shardings is None:
    return (None,) * len(avals)
  return tuple(
    tf_sharding.serialized_op_sharding(s, len(a.shape)) for s, a in zip(shardings, avals)
  )


def argument_shardings(exp) -> tuple:
  return _declared(exp, "_in_named_shardings", "in_shardings_hlo", exp.in_avals)


def result_shardings(exp) -> tuple:
  return _declared(exp, "_out_named_shardings", "out_shardings_hlo", exp.out_avals)


def _declared_jax(exp, named_field: str, n: int) -> tuple:
  # Exports without JAX shardings (older JAX) give the VJP none either.
  if not getattr(exp, "_has_named_shardings", False):
    return (None,) * n
  return tuple(getattr(exp, named_field))


def argument_jax_shardings(exp) -> tuple:
  """The JAX sharding of each argument (None where unspecified)."""
  return _declared_jax(exp, "_in_named_shardings", len(exp.in_avals))


def result_jax_shardings(exp) -> tuple:
  """The JAX sharding of each result (None where unspecified)."""
  return _declared_jax(exp, "_out_named_shardings", len(exp.out_avals))


def vjp_jit_kwargs(module) -> dict:
  """`jax.jit` keyword arguments for the VJP of `module`'s function
  (jax2tf/autodiff/gradients.py `vjp_of`: the primal arguments and the
  cotangents of the differentiable results, to the cotangents of the
  differentiable arguments), as JAX shards it: each cotangent like its
  primal. Without them the VJP's arguments and results are left to XLA,
  which replicates them, and TF's partitioner reads those annotations.
  Empty where the module declares no shardings."""
  ins = tuple(getattr(module, "in_jax_shardings", ()))
  outs = tuple(getattr(module, "out_jax_shardings", ()))
  if not any(s is not None for s in ins + outs):
    return {}
  out_diff = [is_differentiable(a.dtype) for a in module.out_avals]
  in_diff = [is_differentiable(a.dtype) for a in module.in_avals]
  return dict(
    in_shardings=ins + tuple(s for s, d in zip(outs, out_diff) if d),
    # The VJP returns a list, and shardings match it as a pytree prefix.
    out_shardings=[s for s, d in zip(ins, in_diff) if d],
  )
