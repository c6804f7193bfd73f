"""Cube roots, float remainders, signs and float-to-integer conversions on
every TFLite route, from the formulas of jax2tf/targets/float_formulas.py:
the graph route's rules and the native module's forms share them.

litert-converter writes StableHLO's `cbrt` as a power of 1/3 (NaN below
zero) and a float `remainder` from a floored modulo (wrong signs, and an
infinity for `x rem inf`); LiteRT's SIGN of -0.0 is +0.0; its CAST of NaN
or of a float out of the integer's range is not XLA's saturation.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from tests.support import compare  # noqa: E402

_X = np.array(
  [-8, -0.0, 0, 27, np.inf, -np.inf, np.nan, 1e-30, -1e30, 3.5, -7.25, 1e38, 5, -5, 128, -129],
  np.float32,
)
_Y = np.array(
  [3, 2, -2, 5, 2, 3, 1, np.inf, -np.inf, 0.0, 1.5, 3e-38, -0.0, np.inf, 7, -7], np.float32
)
# About the bounds of 32-bit integers, and beyond them.
_BIG = np.array([3e9, -3e9, 2.2e9, -2.2e9, 4.3e9, np.nan, np.inf, -1.5, 0.5, 1e10], np.float32)

_CASES = {
  "cbrt": (lax.cbrt, (_X,), (1e-6, 0)),
  "cbrt_float16": (lambda x: lax.cbrt(x.astype(jnp.float16)), (_X,), (1e-3, 0)),
  "rem": (lax.rem, (_X, _Y), None),
  "sign": (lax.sign, (_X,), None),
  "sign_float16": (lambda x: lax.sign(x.astype(jnp.float16)), (_X,), None),
  "rem_bfloat16": (
    lambda x, y: lax.rem(x.astype(jnp.bfloat16), y.astype(jnp.bfloat16)),
    (_X, _Y),
    None,
  ),
  "to_int8": (lambda x: x.astype(jnp.int8), (_X,), None),
  "to_int32": (lambda x: x.astype(jnp.int32), (_BIG,), None),
  "to_uint32": (lambda x: x.astype(jnp.uint32), (_BIG,), None),
}


@pytest.mark.parametrize("route", ["litert", "native", "graph"])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_formulas_compute_what_jax_computes(name, route):
  if route != "litert":
    pytest.importorskip("tensorflow")
  fun, args, tol = _CASES[name]
  (got,) = lite.run(jax2tf.to_tflite(fun, *args, route=route, verify=False), *args)
  want = np.asarray(jax.jit(fun)(*args))
  compare.assert_same(want, np.asarray(got), tol=tol, exact=tol is None)
