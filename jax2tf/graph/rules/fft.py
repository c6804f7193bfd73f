"""fft: complex and real FFTs over the 1 to 3 innermost dimensions, as tf.signal ops.

TF's FFT ops transform the innermost 1, 2 or 3 dimensions, as XLA's FFT does,
and their real variants take the same `fft_length` (IRFFT reads only the
first fft_length // 2 + 1 entries of the last dimension and, like XLA, needs
Hermitian symmetry on that dimension alone). They are ordinary TF ops with
XLA kernels, so the rule works in every flavour and TF mode.

Cases: tests/cases/fft.py
"""

import tensorflow as tf
from jax import lax

from jax2tf.graph import registry
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register

_FftType = lax.FftType

_COMPLEX = {
  _FftType.FFT: (tf.signal.fft, tf.signal.fft2d, tf.signal.fft3d),
  _FftType.IFFT: (tf.signal.ifft, tf.signal.ifft2d, tf.signal.ifft3d),
}
_REAL = {
  _FftType.RFFT: (tf.signal.rfft, tf.signal.rfft2d, tf.signal.rfft3d),
  _FftType.IRFFT: (tf.signal.irfft, tf.signal.irfft2d, tf.signal.irfft3d),
}


@register(lax.fft_p)
def _fft(ctx, x, *, fft_type, fft_lengths):
  fft_type = _FftType(fft_type)
  rank = len(fft_lengths)
  if rank not in (1, 2, 3):
    # JAX's fft primitive is XLA's, which takes 1 to 3 dimensions.
    raise registry.unsupported_params_error(
      ctx.primitive,
      {"fft_type": fft_type, "fft_lengths": fft_lengths},
      f"an FFT over {rank} dimensions; XLA's FFT, which this primitive is, takes 1 to 3",
    )
  if fft_type in _COMPLEX:
    return _COMPLEX[fft_type][rank - 1](x)
  lengths = [ctx.dim(d) for d in fft_lengths]
  lengths = sem.stack_dims(lengths)
  out = _REAL[fft_type][rank - 1](x, fft_length=lengths)
  return tf.cast(out, ctx.tf_dtype()) if out.dtype != ctx.tf_dtype() else out
