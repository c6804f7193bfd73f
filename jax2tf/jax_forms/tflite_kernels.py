"""JAX functions that call TFLite's own operators, for a target whose
converter reads them in the module (`Target.tflite_ops_in_module`:
litert-converter). Each is a custom call named after the operator
(`tfl.cumsum`), which jax2tf/native/tflite_ops.py turns into the operator
itself; its attributes are the operator's. Nothing else runs them: JAX's
own backends have no such custom call.
"""

import jax
import numpy as np

PREFIX = "tfl."


def cumsum(x, axis: int, reverse: bool):
  """LiteRT's CUMSUM of `x` along `axis`: each element the sum of those up
  to it (from the end if `reverse`), added in order."""
  call = jax.ffi.ffi_call(f"{PREFIX}cumsum", jax.ShapeDtypeStruct(x.shape, x.dtype))
  return call(x, np.array(axis, np.int32), exclusive=False, reverse=bool(reverse))
