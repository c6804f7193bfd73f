"""16-bit floats in float32 lanes, for graphs that TFLite runs.

TFLite's builtin kernels compute in float32 (they take float16 only as
weights to dequantize), but its CAST converts float32 to float16 and bfloat16
and back, rounding to nearest even. So where TFLite runs the graph, a
primitive on 16-bit floats computes on float32 copies of its operands, and
each of its 16-bit results is rounded back to its own dtype. Every value is
rounded where JAX rounds it, so overflow to infinity, subnormals and signed
zeros come out as in JAX; for +, -, *, / and sqrt the float32 result rounded
again is the correctly rounded 16-bit one (float32 carries more than twice
their precision plus two bits), and elsewhere it is as close as float32
computes it.

Not widened: rules registered with `float16_in_float32=False` (those that read or
make a value's bits, whose float32 bits are other bits, those that refuse
16-bit floats as JAX does, and exp2, whose intermediate JAX rounds to the
16-bit dtype), and conversions from values float32 cannot hold
exactly (float64, 32- and 64-bit integers), which would round twice. A
widened primitive's sub-computations (a loop body, a scatter's combiner) take
their 16-bit operands rounded back and give float32, and their own equations
compute in the lanes one by one.

TF's TFLite converter moves a float16-to-float32 cast below a gather or a
broadcast that reads it, and then has no float16 kernel for either: rules
that know they compute in the lanes (`RuleContext.in_wide_lanes`) emit
ops it leaves alone instead (GatherNd, Tile).
"""

import numpy as np

from jax2tf.graph import lanes
from jax2tf.graph import semantics as sem

# semantics.SMALL_FLOATS, as the numpy dtypes of avals.
NARROW = tuple(np.dtype(t.as_numpy_dtype) for t in sem.SMALL_FLOATS)
_LANES = lanes.Lanes(NARROW, np.dtype(np.float32))
is_narrow = _LANES.is_narrow
widened_aval = _LANES.widened_aval
widened_params = _LANES.widened_params
widen = _LANES.widen
narrow = _LANES.narrow  # rounds to the 16-bit dtype


def widens(eqn, rule) -> bool:
  """Whether `eqn` computes in float32 lanes with its `rule` (registry.Rule)."""
  if not rule.accepts.allows("float16_in_float32", eqn):
    return False
  if eqn.primitive.name == "convert_element_type" and not _float32_holds(eqn.invars[0].aval):
    return False
  return any(is_narrow(v.aval) for v in (*eqn.invars, *eqn.outvars))


def _float32_holds(aval) -> bool:
  """Whether float32 holds every value of `aval`'s dtype exactly."""
  dtype = np.dtype(aval.dtype)
  small = dtype.kind in "fiu" and dtype.itemsize <= 2
  return dtype.kind == "b" or small or dtype in NARROW or dtype == np.float32
