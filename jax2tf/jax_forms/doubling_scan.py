"""Running maxima, minima and products along an axis of polymorphic length,
by doubling (Hillis-Steele): log2(n) steps, each combining every element
with the one `shift` places before it, the shift doubling.

JAX writes cummax, cummin and cumprod as a window as long as the axis, which
along a polymorphic axis is the `stablehlo.dynamic_reduce_window` custom call
no TFLite converter takes. The symbolic length fixes only the number of
steps, so the steps are a while loop, and each step's shifted operand is a
gather of the positions `shift` before (the identity before the start),
which the converters take at any size. The graph route's rule computes the
same steps in TF ops (jax2tf/graph/rules/windows.py).

Maxima and minima come out exactly as XLA's window computes them: the
maximum of a set does not depend on the order it is combined in (the
targets' patterns give each elementwise maximum JAX's NaN and signed
zeros). Integer products wrap as XLA's do; float products are rounded in
another order.
"""

import jax.numpy as jnp
import numpy as np
from jax import lax


def doubling_scan(x, axis: int, reverse: bool, combine, identity):
  """The inclusive scan of `x` along `axis` by `combine` (associative, with
  `identity` its identity), from the end if `reverse`."""
  if any(isinstance(d, int) and d == 0 for d in x.shape):
    return x  # nothing to combine
  if reverse:
    x = lax.rev(x, (axis,))
  n = x.shape[axis]
  positions = lax.iota(np.int32, n)
  along = [1] * x.ndim
  along[axis] = -1
  fill = jnp.asarray(identity, x.dtype)

  def step(state):
    shift, v = state
    source = positions - shift
    piece = jnp.take(v, jnp.maximum(source, 0), axis=axis, mode="clip")
    piece = jnp.where(jnp.reshape(source >= 0, along), piece, fill)
    return shift * 2, combine(v, piece)

  length = jnp.asarray(n, np.int32)
  _, x = lax.while_loop(lambda state: state[0] < length, step, (np.int32(1), x))
  if reverse:
    x = lax.rev(x, (axis,))
  return x
