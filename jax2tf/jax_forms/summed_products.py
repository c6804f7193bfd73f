"""An integer dot_general as the products of every pair, summed.

TFLite's FULLY_CONNECTED and BATCH_MATMUL take integers only quantized; its
MUL and SUM wrap modulo 2**n as XLA's dot does. The products are all held at
once (memory for batch x free x free x contracted elements), so this is the
form of the dots a target has no kernel for, not a fast one.
"""

import dataclasses
import math

import jax.numpy as jnp
import numpy as np
from jax import lax


@dataclasses.dataclass(frozen=True)
class SummedProducts:
  """dot_general(lhs, rhs, dimension_numbers) computed in `compute` (an
  integer type of 32 bits or more) and given as `dtype` (the result's)."""

  dimension_numbers: tuple
  compute: np.dtype
  dtype: np.dtype

  def __call__(self, lhs, rhs):
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = self.dimension_numbers
    lhs_free = _free_dims(lhs.ndim, lhs_contract, lhs_batch)
    rhs_free = _free_dims(rhs.ndim, rhs_contract, rhs_batch)
    batch = [lhs.shape[d] for d in lhs_batch]
    lhs_sizes = [lhs.shape[d] for d in lhs_free]
    rhs_sizes = [rhs.shape[d] for d in rhs_free]
    # XLA converts the operands to the result's type and wraps there, the
    # same bits as wrapping in a type at least as wide.
    lhs, rhs = _converted(lhs, self.compute), _converted(rhs, self.compute)
    # Each kind of dimension merged into one, so that the products are 4-D
    # whatever the ranks (TFLite's integer MUL broadcasts up to 4-D):
    # [batch, lhs free, 1, contracted] times [batch, 1, rhs free, contracted].
    b, m, n, k = (
      math.prod(d) for d in (batch, lhs_sizes, rhs_sizes, [lhs.shape[d] for d in lhs_contract])
    )
    a = _laid_out(lhs, [*lhs_batch, *lhs_free, *lhs_contract], (b, m, 1, k))
    c = _laid_out(rhs, [*rhs_batch, *rhs_free, *rhs_contract], (b, 1, n, k))
    shape, dims = (b, m, n, k), (0, 1, 2, 3)
    products = lax.broadcast_in_dim(a, shape, dims) * lax.broadcast_in_dim(c, shape, dims)
    res = jnp.sum(products, axis=3, dtype=self.compute)
    res = lax.reshape(res, (*batch, *lhs_sizes, *rhs_sizes))
    if self.dtype == np.bool_:  # a dot of booleans is an `or` of `and`s
      return res != 0
    return _converted(res, self.dtype)


def _converted(x, dtype):
  """`x` as `dtype`; an integer of the same width by its bits (TFLite casts
  no integer to or from uint32)."""
  src = np.dtype(x.dtype)
  if src != np.bool_ and src.itemsize == np.dtype(dtype).itemsize and src.kind in "iu":
    return lax.bitcast_convert_type(x, dtype) if src != dtype else x
  return lax.convert_element_type(x, dtype)


def _free_dims(rank: int, contract, batch) -> list[int]:
  return [d for d in range(rank) if d not in (*contract, *batch)]


def _laid_out(x, order, shape):
  if list(order) != list(range(len(order))):
    x = lax.transpose(x, tuple(order))
  return lax.reshape(x, tuple(shape))
