"""Complex numbers of a real part only on the TFLite routes from StableHLO
(jax2tf/native/kernel_forms.py): both converters write `stablehlo.complex`
as TF's Complex, which LiteRT runs only through the Flex delegate, and
litert-converter leaves a complex iota to a STABLEHLO_IOTA LiteRT cannot run.
A complex of a real and +0.0 is the real converted (LiteRT's CAST)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from jax2tf.lite import inspect as lite_inspect  # noqa: E402
from tests.support import compare  # noqa: E402

_RNG_Z = np.random.default_rng(0)
_X = np.array([[1.5, -0.0, np.inf], [np.nan, -2.25, 0.0]], np.float32)

_FUNCTIONS = {
  "conj_of_a_real": lax.conj,
  "complex_with_zeros": lambda x: lax.complex(x, jnp.zeros_like(x)),
  "complex_iota": lambda x: lax.broadcasted_iota(np.complex64, x.shape, 1) * lax.conj(x),
}


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_complex_of_a_real_is_a_cast(name, route):
  if route == "native":
    pytest.importorskip("tensorflow")
  fun = _FUNCTIONS[name]
  model = jax2tf.to_tflite(fun, _X, route=route)
  assert "CAST" in lite_inspect.op_counts(model)
  want = np.asarray(jax.jit(fun)(_X))
  compare.assert_same(want, lite.run(model, _X)[0], exact=True, where=name)


def test_a_complex_of_two_reals_is_still_refused():
  # No LiteRT builtin adds or assembles complex numbers: the refusal names
  # the primitive, as before.
  y = _X * 2.0
  with pytest.raises(lite.TFLiteConversionError, match="primitive complex"):
    jax2tf.to_tflite(lax.complex, _X, y, route="litert")


@pytest.mark.parametrize("route", ["litert", "native"])
def test_a_complex_square_is_the_complex_product(route):
  # JAX builds its square of a complex number from the parts; LiteRT cannot
  # build one, so the square is LiteRT's complex MUL, as the graph route's
  # Square: its real part re*re - im*im rounds otherwise than JAX's
  # (re - im)(re + im), by ulps of |z|**2.
  if route == "native":
    pytest.importorskip("tensorflow")
  z = (_RNG_Z.normal(size=(3, 4)) + 1j * _RNG_Z.normal(size=(3, 4))).astype(np.complex64)
  model = jax2tf.to_tflite(lax.square, z, route=route)
  assert lite_inspect.op_counts(model) == {"MUL": 1}
  want = np.asarray(jax.jit(lax.square)(z))
  got = lite.run(model, z)[0]
  scale = np.abs(want)
  np.testing.assert_array_less(np.abs(got - want), 4 * np.finfo(np.float32).eps * scale + 1e-30)
