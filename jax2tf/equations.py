"""Evaluating a jaxpr's equation again, on new operands.

Code that re-traces a jaxpr with some equations replaced (a rewritten
convolution's VJP, key data, fused matmuls) binds the others as they stand,
as `jax.core.eval_jaxpr` does: a higher-order primitive (custom_jvp_call,
closed_call, ...) first turns its jaxpr parameters into the functions its
`bind` takes, through `get_bind_params`.
"""

from collections.abc import Sequence


def bind(eqn, args: Sequence) -> list:
  """The results of equation `eqn` on `args`, as a list."""
  prim = eqn.primitive
  out = prim.bind(*args, **prim.get_bind_params(eqn.params))
  return list(out) if prim.multiple_results else [out]
