"""XLA's SelectAndScatter of max and min pooling gradients, in strided
slices, selects, pads and reshapes.

Only XLA has a kernel for it (`stablehlo.select_and_scatter`: TF's XLA, no
TFLite or TF.js op). Each window picks the first position of its maximum
(select `ge`) or minimum (`le`), in the order XLA visits a window (row-major
over the window's offsets), and its source value is added there. One
strided slice of the padded operand per window offset holds that offset's
element of every window; a running select finds each window's pick; each
offset's share of the source, spread back by the strides, is added at its
offset.
"""

import dataclasses
import itertools

import jax.numpy as jnp
import numpy as np
from jax import lax

from jax2tf.shapes import dim_eval


def only_primitive(jaxpr, consts, allowed):
  """The primitive of a scalar computation `(a, b) -> p(a, b)` (a select or
  scatter jaxpr of lax.select_and_scatter_p), if it is one of `allowed`
  applied to the arguments in order, else None."""
  if consts or len(jaxpr.eqns) != 1:
    return None
  (eqn,) = jaxpr.eqns
  if (
    eqn.primitive not in allowed
    or list(eqn.invars) != list(jaxpr.invars)
    or list(eqn.outvars) != list(jaxpr.outvars)
  ):
    return None
  return eqn.primitive


@dataclasses.dataclass(frozen=True)
class ScatterToSelected:
  """select_and_scatter_add: `source` (one value per window) added at each
  window's pick of `operand` (padded by `padding`, each side at least 0),
  the sum for bools an or. `picks_max`: select `ge`, else `le`."""

  picks_max: bool
  window_dimensions: tuple
  window_strides: tuple
  padding: tuple

  @classmethod
  def of(cls, select_prim, *, window_dimensions, window_strides, padding):
    """The form for these parameters, or None where it has none: a select
    other than ge and le, negative padding, or a shape that is not static."""
    if select_prim not in (lax.ge_p, lax.le_p):
      return None
    dims = (*window_dimensions, *window_strides, *(p for pair in padding for p in pair))
    if not all(isinstance(d, (int, np.integer)) for d in dims) or min(dims, default=0) < 0:
      return None
    return cls(
      select_prim is lax.ge_p,
      tuple(window_dimensions),
      tuple(window_strides),
      tuple(tuple(p) for p in padding),
    )

  def __call__(self, source, operand):
    boolean = source.dtype == np.bool_
    x = operand
    if x.dtype == np.bool_:
      x = x.astype(np.int32)  # False < True, as JAX orders them
    x = lax.pad(x, self._never_picked(x.dtype), [(lo, hi, 0) for lo, hi in self.padding])
    total = jnp.zeros(x.shape, np.int32 if boolean else source.dtype)
    share_of = source.astype(total.dtype)
    offsets = list(itertools.product(*(range(w) for w in self.window_dimensions)))
    pieces = [self._piece(x, k, source.shape) for k in offsets]
    if not pieces or any(dim_eval.is_zero(d) for d in source.shape):
      return [self._crop(total) != 0 if boolean else self._crop(total)]
    # XLA's visit: the pick moves to an element unless select(pick, element)
    # holds, so a NaN pick moves on and ties keep the first.
    best, pick = pieces[0], jnp.zeros(source.shape, np.int32)
    for i, piece in enumerate(pieces[1:], start=1):
      keep = best >= piece if self.picks_max else best <= piece
      best = jnp.where(keep, best, piece)
      pick = jnp.where(keep, pick, np.int32(i))
    for i, k in enumerate(offsets):
      share = jnp.where(pick == i, share_of, jnp.zeros_like(share_of))
      total = total + self._placed(share, k, x.shape)
    res = self._crop(total)
    return [res != 0 if boolean else res]

  def _never_picked(self, dtype):
    """The padding: below (above) every value for a max (min) pick."""
    if jnp.issubdtype(dtype, jnp.floating):
      return np.array(-np.inf if self.picks_max else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if self.picks_max else info.max, dtype)

  def _piece(self, x, offset, windows):
    """The element at `offset` of every window: shape `windows`."""
    limits = [k + (n - 1) * s + 1 for k, n, s in zip(offset, windows, self.window_strides)]
    return lax.slice(x, offset, limits, self.window_strides)

  def _placed(self, share, offset, padded_shape):
    """`share` (one value per window) where each window's `offset` element
    lies in the padded operand, zeros elsewhere: spread by the strides with
    a reshape (no interior padding, which not every target pads with), then
    padded to place."""
    for axis, stride in enumerate(self.window_strides):
      n = share.shape[axis]
      if stride > 1 and not (dim_eval.is_constant(n) and int(n) == 1):
        spread = jnp.expand_dims(share, axis + 1)
        pad = [(0, 0, 0)] * spread.ndim
        pad[axis + 1] = (0, stride - 1, 0)
        spread = lax.pad(spread, np.array(0, share.dtype), pad)
        shape = list(share.shape)
        shape[axis] = n * stride
        share = lax.slice_in_dim(spread.reshape(shape), 0, (n - 1) * stride + 1, axis=axis)
    pad = [(k, p - k - n, 0) for k, p, n in zip(offset, padded_shape, share.shape)]
    return lax.pad(share, np.array(0, share.dtype), pad)

  def _crop(self, total):
    limits = [n - hi for n, (_, hi) in zip(total.shape, self.padding)]
    return lax.slice(total, [lo for lo, _ in self.padding], limits)
