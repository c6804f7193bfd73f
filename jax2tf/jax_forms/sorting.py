"""sort, top_k and approx_top_k as TopK passes over integer order keys.

TopK (TF's TopKV2, LiteRT's TOPK_V2) is the one sorting op every target has:
it orders descending and puts the lower index first among equal values.
Sorting integer keys derived from the operands gives every order JAX uses,
NaNs included:
  - sort: -0.0 == +0.0 and every NaN after +inf (stable among themselves);
  - top_k: IEEE total order (-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < NaN).
Ascending order is TopK of the complement of the key (-1 - key, no overflow);
several keys (complex numbers, several sort keys) are stable passes, least
significant first.
"""

import dataclasses

import jax.numpy as jnp
import numpy as np
from jax import lax


def order_keys(x, *, total_order: bool = False) -> list:
  """Integer arrays whose lexicographic ascending order is JAX's order of
  `x`: a sort's, or with `total_order` IEEE's total order."""
  dt = np.dtype(x.dtype)
  if jnp.issubdtype(dt, jnp.complexfloating):
    return order_keys(lax.real(x), total_order=total_order) + order_keys(
      lax.imag(x), total_order=total_order
    )
  if jnp.issubdtype(dt, jnp.floating):  # bfloat16's kind is not "f"
    if dt.itemsize < 4:  # 16-bit floats widened: TopK takes 32-bit keys everywhere
      x = lax.convert_element_type(x, np.float32)
    if not total_order:
      x = jnp.where(x == 0, jnp.zeros_like(x), x)
      x = jnp.where(jnp.isnan(x), jnp.full_like(x, np.nan), x)
    int_dt = np.int64 if x.dtype == np.float64 else np.int32
    # The bits read as a signed integer, the magnitude bits of negative
    # numbers flipped: the order of the sign-magnitude bit patterns. The
    # flip is arithmetic (b ^ MAX == MIN + ~b for negative b), which every
    # target has for 64 bits too.
    bits = lax.bitcast_convert_type(x, int_dt)
    smallest = np.iinfo(int_dt).min
    flipped = _complement(bits) + np.array(smallest, int_dt)
    return [jnp.where(bits < 0, flipped, bits)]
  if dt == np.bool_ or dt.itemsize < 4:
    return [lax.convert_element_type(x, np.int32)]
  if dt.kind == "u":  # the top bit flipped: the same order as a signed integer
    signed = np.dtype(f"int{8 * dt.itemsize}")
    return [lax.bitcast_convert_type(x ^ np.array(1 << (8 * dt.itemsize - 1), dt), signed)]
  return [x]


def from_order_key(key, dtype):
  """The values of `dtype` whose one total-order key (`order_keys(...,
  total_order=True)`, for a dtype with a single key) is `key`: the keys are
  a bijection, so their top values give the operand's top values, bits and
  all, with no gather."""
  dt = np.dtype(dtype)
  if jnp.issubdtype(dt, jnp.floating):
    smallest = np.array(np.iinfo(key.dtype).min, key.dtype)
    # The flip of the magnitude bits is its own inverse.
    bits = jnp.where(key < 0, _complement(key) + smallest, key)
    wide = np.float64 if key.dtype == np.int64 else np.float32
    return lax.convert_element_type(lax.bitcast_convert_type(bits, wide), dt)
  if dt == np.bool_ or dt.itemsize < 4 or is_own_key(dt):
    return lax.convert_element_type(key, dt)
  top_bit = np.array(1 << (8 * dt.itemsize - 1), dt)
  return lax.bitcast_convert_type(key, dt) ^ top_bit


def _complement(key):
  """~key as -1 - key: the same bits, never overflowing, and a subtraction,
  which every target has for 64-bit integers (bitwise ops it may not)."""
  return np.array(-1, key.dtype) - key


def is_own_key(dtype) -> bool:
  """Whether an array of `dtype` is its own order key (TopK sorts it as it is)."""
  return np.dtype(dtype) in (np.dtype(np.int32), np.dtype(np.int64))


def _take_last(x, idx):
  return jnp.take_along_axis(x, idx, axis=-1, mode="promise_in_bounds")


def _argsort_last(key, descending: bool):
  """A stable argsort of integer `key` along its last axis."""
  _, idx = lax.top_k(key if descending else _complement(key), key.shape[-1])
  return idx


def _stable_order(keys, descending: bool):
  """The permutation along the last axis that orders by `keys`, the first
  most significant, equal keys kept in their order."""
  perm = None
  for key in reversed(keys):
    if perm is None:
      perm = _argsort_last(key, descending)
    else:
      perm = _take_last(perm, _argsort_last(_take_last(key, perm), descending))
  return perm


@dataclasses.dataclass(frozen=True)
class Sort:
  """lax.sort_p along `dimension` by the first `num_keys` operands (always
  stable, which an unstable sort may be)."""

  dimension: int
  num_keys: int

  def __call__(self, *operands):
    ops = [jnp.moveaxis(x, self.dimension, -1) for x in operands]
    keys = [k for x in ops[: self.num_keys] for k in order_keys(x)]
    perm = _stable_order(keys, descending=False)
    return [jnp.moveaxis(_take_last(x, perm), -1, self.dimension) for x in ops]


@dataclasses.dataclass(frozen=True)
class TopK:
  """lax.top_k_p: the `k` largest along `axis` in IEEE's total order, the
  lower index first among equal values (a valid unstable order too). With
  one key (no complex numbers) the values come from the top keys, with no
  gather."""

  k: int
  axis: int

  def __call__(self, x):
    xs = jnp.moveaxis(x, self.axis, -1)
    keys = order_keys(xs, total_order=True)
    if len(keys) == 1:
      top, idx = lax.top_k(keys[0], self.k)
      values = from_order_key(top, xs.dtype)
    else:
      idx = _stable_order(keys, descending=True)[..., : self.k]
      values = _take_last(xs, idx)
    idx = lax.convert_element_type(idx, np.int32)
    return [jnp.moveaxis(values, -1, self.axis), jnp.moveaxis(idx, -1, self.axis)]


@dataclasses.dataclass(frozen=True)
class ApproxTopK:
  """lax.approx_top_k_p off TPU, where XLA computes it exactly: a sort along
  `axis` (-0.0 == +0.0) cut to `size`. The recall parameters only tune the
  TPU algorithm; XLA's sort there is unstable, so the order of equal values
  is unspecified (here: lowest index first), as is the place of NaNs (here:
  above +inf)."""

  size: int
  axis: int
  is_max_k: bool

  def __call__(self, x):
    xs = jnp.moveaxis(x, self.axis, -1)
    (key,) = order_keys(xs)
    _, idx = lax.top_k(key if self.is_max_k else _complement(key), self.size)
    values = _take_last(xs, idx)
    idx = lax.convert_element_type(idx, np.int32)
    return [jnp.moveaxis(values, -1, self.axis), jnp.moveaxis(idx, -1, self.axis)]
