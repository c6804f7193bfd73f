"""The shardings an exported module declares for its arguments and results.

XlaCallModule carries the shardings inside its module, but TF's own SPMD
partitioner (TPU serving) reads them from XlaSharding ops around the call, so
they are also kept here as serialized `xla.OpSharding` protos (built by
jax2tf/sharding.py, which also wraps the tensors).
"""

from collections.abc import Sequence
from typing import Any

from jax2tf import sharding as tf_sharding


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
