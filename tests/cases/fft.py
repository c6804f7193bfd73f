"""Cases of the FFT family (fft.py): complex and real FFTs over 1 to 3 dimensions."""

import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import (
  C64,
  C128,
  F16,
  F64,
  A,
  Cases,
  case,
  fast_representatives,
  rand,
)

CASES = Cases()

_FFT_TOL = (1e-4, 1e-4)
CASES.add("fft", jnp.fft.fft, A(3, 8, dtype=C64), tol=_FFT_TOL)
CASES.add("ifft", jnp.fft.ifft, A(3, 8, dtype=C64), tol=_FFT_TOL)
CASES.add("rfft", jnp.fft.rfft, A(3, 10), tol=_FFT_TOL)
CASES.add("irfft", lambda x: jnp.fft.irfft(x, n=10), A(3, 6, dtype=C64), tol=_FFT_TOL)
CASES.add("fft2", jnp.fft.fft2, A(2, 4, 6, dtype=C64), tol=_FFT_TOL)
CASES.add("rfftn_3d", lambda x: jnp.fft.rfftn(x), A(4, 4, 6), tol=_FFT_TOL, slow=True)
CASES.add("fft_complex128", jnp.fft.fft, A(16, dtype=C128), tol=(1e-10, 1e-10), slow=True)
CASES[:] = fast_representatives(CASES, ["fft_complex128"])


def all_ffts(c, r):
  fft = lambda x, t, n: lax.fft(x, t, n)  # noqa: E731
  return [fft(c, "fft", c.shape[-1:]), fft(c, "ifft", c.shape[-2:]), fft(c, "fft", c.shape[-3:]),
          fft(c, "ifft", c.shape[-3:]), fft(r, "rfft", r.shape[-1:]), fft(r, "rfft", r.shape[-2:]),
          fft(r, "rfft", r.shape[-3:]), fft(c, "irfft", (2 * c.shape[-1] - 2,)),
          fft(c, "irfft", (c.shape[-2], 2 * c.shape[-1] - 2)),
          fft(c, "irfft", (c.shape[-3], c.shape[-2], 2 * c.shape[-1] - 1)),
          jnp.fft.fftn(c, axes=(0, 1)), jnp.fft.irfft2(c, s=(3, 6))]


LA_TOL = (2e-4, 2e-4)
CASES += [
    case("fft_all_types_c64", all_ffts, rand((4, 5, 6), C64), rand((4, 5, 6), seed=1),
         tol=LA_TOL, graph_ops=["FFT", "IFFT3D", "RFFT2D", "IRFFT3D"]),
    case("fft_jnp_c64_f16_input",
         lambda x: (jnp.fft.fft(x), jnp.fft.rfft(x.astype(np.float32))), rand((3, 8), F16),
         tol=(1e-2, 1e-2), slow=True),
    case("poly_fft_batch", lambda c, r: (jnp.fft.fft2(c), jnp.fft.irfft(c), jnp.fft.rfft(r)),
         rand((2, 4, 6), C64), rand((3, 8), seed=1), polymorphic_shapes=["(b, 4, 6)", "(a, 8)"],
         tol=LA_TOL, slow=True),
    case("fft_c128_f64", all_ffts, rand((4, 5, 6), C128), rand((4, 5, 6), F64, seed=1),
         tol=(1e-12, 1e-12)),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/fft.json.
CASES[:] = recorded.apply(CASES, "tflite", "fft")
CASES[:] = recorded.apply(CASES, "tflite_native", "fft")
CASES[:] = recorded.apply(CASES, "tflite_litert", "fft")
CASES[:] = recorded.apply(CASES, "tfjs", "fft")
