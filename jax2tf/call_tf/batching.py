"""vmap of call_tf: the TF function mapped with `tf.vectorized_map`.

Calling the TF function directly on the batched operands would be faster when
the function happens to be batch-polymorphic, but nothing available proves
that it is: tracing it with a leading None dimension and checking the output
shapes accepts functions that mix examples, e.g. `x - tf.reduce_mean(x, 0)`
has the right output shape for any batch and is wrong for every batch of more
than one. `tf.vectorized_map` (pfor) is correct for every function: it
rewrites each TF op into its batched form (elementwise ops and matmuls become
the same ops on the batch, so batch-polymorphic functions cost about the
direct call), and falls back to a `tf.while_loop` for ops pfor does not know.
Both forms are XLA-compilable when the function is, so the result works
eagerly and under jit.
"""

import jax.numpy as jnp
from jax.interpreters import batching

from jax2tf.call_tf.primitive import bind, call_tf_p


def _batch(args, dims, *, fn, has_side_effects, ordered, call_tf_graph):
  batched = tuple(d is not None for d in dims)
  moved = [jnp.moveaxis(a, d, 0) if d is not None and d != 0 else a for a, d in zip(args, dims)]
  outs = bind(
    moved,
    fn.batched_function(batched),
    has_side_effects=has_side_effects,
    ordered=ordered,
    call_tf_graph=call_tf_graph,
  )
  return outs, [0] * len(outs)


batching.primitive_batchers[call_tf_p] = _batch
