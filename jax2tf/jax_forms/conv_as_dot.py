"""A convolution as one dot_general of the input's windows.

TF's integer Conv kernels are missing for most dtypes and ranks, and
LiteRT's take integers only quantized; the TFLite converters refuse a real
convolution with an input dilation or batch groups, or write one LiteRT
sizes wrongly. Padding, dilation and strides become JAX's own pad and
strided slices, one per kernel position, and the sum over channels and
kernel positions one dot_general, which wraps modulo 2**n as XLA's integer
convolution does.
"""

import dataclasses
import itertools
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax


@dataclasses.dataclass(frozen=True)
class ConvAsDot:
  """conv_general_dilated as a JAX function of pad, slice and dot_general
  (`out_shape` and `dtype` are the result's)."""

  strides: tuple
  padding: tuple
  lhs_dilation: tuple
  rhs_dilation: tuple
  dimension_numbers: Any
  groups: int
  batch_groups: int
  dtype: np.dtype
  out_shape: tuple

  @classmethod
  def of(cls, out_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
         dimension_numbers, feature_group_count, batch_group_count, **_):  # fmt: skip
    """The form of a conv_general_dilated with these parameters and result."""
    return cls(
      tuple(window_strides),
      tuple(tuple(p) for p in padding),
      tuple(lhs_dilation),
      tuple(rhs_dilation),
      dimension_numbers,
      feature_group_count,
      batch_group_count,
      np.dtype(out_aval.dtype),
      tuple(out_aval.shape),
    )

  def __call__(self, lhs, rhs):
    lhs_spec, rhs_spec, out_spec = self.dimension_numbers
    # (N, C, spatial...) and (O, I, kernel spatial...), in the result's dtype:
    # XLA converts the operands to it and wraps there.
    x = lax.convert_element_type(lax.transpose(lhs, tuple(lhs_spec)), self.dtype)
    w = lax.convert_element_type(lax.transpose(rhs, tuple(rhs_spec)), self.dtype)
    res = self._dot(self._windows(x, w.shape[2:]), w)  # (N, O, out spatial...)
    return [lax.transpose(res, tuple(int(i) for i in np.argsort(out_spec)))]

  def _windows(self, x, kernel):
    """(N, C, K, out spatial...): for each of the K kernel positions
    (row-major), the slice of the padded, dilated input it meets."""
    zero = np.zeros((), self.dtype)
    edges = [(0, 0, 0)] * 2 + [
      (lo, hi, d - 1) for (lo, hi), d in zip(self.padding, self.lhs_dilation)
    ]
    x = lax.pad(x, zero, edges)
    out_spatial = [self.out_shape[d] for d in self.dimension_numbers.out_spec[2:]]
    pieces = []
    for position in itertools.product(*[range(int(k)) for k in kernel]):
      start = [0, 0] + [p * d for p, d in zip(position, self.rhs_dilation)]
      limit = list(x.shape[:2]) + [
        b + (n - 1) * s + 1 for b, n, s in zip(start[2:], out_spatial, self.strides)
      ]
      pieces.append(lax.slice(x, start, limit, (1, 1, *self.strides)))
    return jnp.stack(pieces, axis=2)

  def _dot(self, patches, w):
    """Sums over (C, K) per feature group (and batch group): channel block g
    meets output block g, batch block b output block b."""
    n, c, k, *spatial = patches.shape
    o = w.shape[0]
    g, b = self.groups, self.batch_groups
    groups = g * b
    w = jnp.reshape(w, (groups, o // groups, c // g, k))
    if b > 1:  # batch blocks against output blocks (no feature groups then)
      patches = jnp.reshape(patches, (b, n // b, c, k, *spatial))
    else:
      patches = jnp.moveaxis(jnp.reshape(patches, (n, g, c // g, k, *spatial)), 1, 0)
    # (groups, rows, C/g, K, spatial...) . (groups, O/groups, C/g, K)
    res = lax.dot_general(patches, w, (((2, 3), (2, 3)), ((0,), (0,))))
    # (groups, rows, spatial..., O/groups) -> (rows, groups * O/groups, spatial...)
    rows = res.shape[1]
    res = jnp.moveaxis(res, -1, 2)
    res = jnp.reshape(jnp.moveaxis(res, 0, 1), (rows, o, *spatial))
    return res
