"""A reduction with any body, folded as XLA's CPU backend folds it, at
polymorphic sizes.

Where the sizes are static, the module rewrite jax2tf/native/reduce_folds.py
unrolls XLA's fold into elementwise ops; a polymorphic size fixes only the
fold's length, so here the fold is a loop: each output element starts from
the init values and takes in its elements one at a time, in row-major order
of the reduced positions (jax2tf/targets/xla_fold.py says when XLA folds so:
always for several operands, for one operand where no reduced axis is longer
than a tree window), the body applied to all output elements at once. A
fold of one position is XLA's reshape of the operand (neither init nor body
applied).
"""

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend import core as jax_core


@dataclasses.dataclass(frozen=True)
class SequentialFold:
  """lax.reduce of operands and inits (as reduce_p binds them) along
  `dimensions`, with `body` a function of (accumulators..., elements...) of
  scalars returning the accumulators."""

  body: Any
  dimensions: tuple

  @classmethod
  def of_jaxpr(cls, closed_jaxpr, dimensions):
    return cls(jax_core.jaxpr_as_fun(closed_jaxpr), tuple(sorted(dimensions)))

  def __call__(self, *operands):
    n = len(operands) // 2
    xs, inits = operands[:n], operands[n:]
    shape = xs[0].shape
    axes = self.dimensions
    kept = [d for d in range(len(shape)) if d not in axes]
    kept_shape = tuple(shape[d] for d in kept)
    length = math.prod(shape[d] for d in axes)
    count = math.prod(kept_shape)
    # (positions, output elements): one row per reduced position, row-major.
    rows = [
      jnp.reshape(jnp.transpose(x, (*axes, *kept)), (length, count)) for x in xs
    ]  # fmt: skip
    combine = jax.vmap(lambda *args: list(self.body(*args)))

    def step(i, accumulators):
      elements = [lax.dynamic_index_in_dim(r, i, 0, keepdims=False) for r in rows]
      return combine(*accumulators, *elements)

    start = [jnp.broadcast_to(init, (count,)) for init in inits]
    folded = lax.fori_loop(0, jnp.asarray(length, np.int32), step, start)
    if isinstance(length, int):
      if length == 1:
        folded = [r[0] for r in rows]
    else:
      # XLA reshapes a reduction of one position (only the run time says).
      one = jnp.asarray(length, np.int32) == 1
      folded = [jnp.where(one, r[0], f) for r, f in zip(rows, folded)]
    return [jnp.reshape(f, kept_shape) for f in folded]
