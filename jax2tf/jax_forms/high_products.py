"""mulhi, the high half of a double-width product, without a double-width
product.

JAX lowers `lax.mulhi` of 32-bit integers (Philox's rounds) through a
64-bit product, which TFLite has no kernel for (no MUL on 64-bit integers).
The high word comes from the operands' 16-bit halves in uint32 arithmetic
(jax2tf/targets/uint32_words.py, which the graph route's rule reads
too), signed ones corrected there. Narrower operands have an exact product
in 32 bits.
"""

import numpy as np
from jax import lax

from jax2tf.targets import uint32_words

_U32 = np.dtype(np.uint32)


class _JaxWords:
  """uint32 JAX arrays for the formulas in uint32 words: a Python int is a
  constant."""

  def add(self, x, y):
    return lax.add(x, _U32.type(y) if isinstance(y, int) else y)

  def mul(self, x, y):
    return lax.mul(x, _U32.type(y) if isinstance(y, int) else y)

  def xor(self, x, y):
    return lax.bitwise_xor(x, _U32.type(y) if isinstance(y, int) else y)

  def shr(self, x, n: int):
    return lax.shift_right_logical(x, _U32.type(n))


_WORDS = _JaxWords()


def multiply_high(x, y):
  """The high half of the double-width product of integers of 8 to 32 bits
  (`x` and `y` of one dtype), as lax.mulhi computes it."""
  dtype = np.dtype(x.dtype)
  width = dtype.itemsize * 8
  signed = dtype.kind == "i"
  if width < 32:
    wide = np.dtype(np.int32 if signed else np.uint32)
    product = lax.mul(x.astype(wide), y.astype(wide))  # below 2**31 (2**32 unsigned)
    shift = wide.type(width)
    high = (
      lax.shift_right_arithmetic(product, shift)
      if signed
      else lax.shift_right_logical(product, shift)
    )
    return high.astype(dtype)
  if not signed:
    return uint32_words.multiply_high(_WORDS, x, y)
  a, b = (lax.bitcast_convert_type(v, _U32) for v in (x, y))
  return lax.bitcast_convert_type(uint32_words.multiply_high_signed(_WORDS, a, b), dtype)
