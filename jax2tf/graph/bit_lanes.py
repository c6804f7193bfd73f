"""uint32 carried as int32 tensors of the same bits, for TF.js, which holds
no unsigned tensors.

Unlike the other lanes (float_lanes.py, int_lanes.py, ordered_lanes.py),
which a rule opts into and which last for that rule, these carry every uint32
value of the graph, constants, arguments and PRNG keys (whose data is uint32)
included. A rule registered with `uint32_as_int32_bits` computes on those
bits (its avals still say uint32; `ctx.tf_dtype` says int32), or registers a
form of its own for them (`registry.register_in_lanes`). Any other rule gets
real uint32 tensors (`narrow`) and gives its results back as int32 bits
(`widen`): it never reads the bits as signed numbers, and the uint32 ops it
emits make TF.js refuse the graph at conversion, naming its primitive. The
sub-computations such a rule lowers take and give int32 bits again.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from jax2tf.graph import key_data, lanes


class _Int32Bits(lanes.Lanes):
  def is_narrow(self, aval) -> bool:
    """Whether `aval` holds uint32 values (a PRNG key's data too)."""
    if key_data.is_key(aval):
      aval = key_data.physical_aval(aval)
    return super().is_narrow(aval)

  def widen(self, x):
    """A uint32 tensor as int32 of the same bits; anything else as it is."""
    if isinstance(x, tf.Tensor) and x.dtype == tf.uint32:
      return tf.cast(x, tf.int32)  # same bits: TF's Cast wraps
    return x

  def narrow(self, x, aval):
    """int32 bits of a uint32 value (`aval`), as the uint32 tensor."""
    if self.is_narrow(aval) and isinstance(x, tf.Tensor) and x.dtype == tf.int32:
      return tf.cast(x, tf.uint32)
    return x

  def constant(self, value: np.ndarray) -> np.ndarray:
    """A uint32 constant's bits as int32."""
    return value.view(np.int32) if value.dtype == np.uint32 else value


LANES = _Int32Bits((np.dtype(np.uint32),), np.dtype(np.int32))


def takes_real_uint32(eqn, rule) -> bool:
  """Whether `eqn`'s rule (registry.Rule) takes real uint32 tensors."""
  return not rule.accepts.allows("uint32_as_int32_bits", eqn)


def env_taking_real_uint32(env):
  """`env` (a LoweringEnv) for a rule that takes real uint32 tensors: the
  sub-computations it lowers still take and give int32 bits."""

  def lower_sub(closed_jaxpr, args) -> list:
    jaxpr = getattr(closed_jaxpr, "jaxpr", closed_jaxpr)
    args = [LANES.widen(a) for a in args]
    outs = env.lower_jaxpr(closed_jaxpr, args)
    return [LANES.narrow(o, v.aval) for o, v in zip(outs, jaxpr.outvars)]

  return dataclasses.replace(env, lower_jaxpr=lower_sub, uint32_in_lanes=False)
