"""Gathers whose starts fall outside the operand, on LiteRT as in JAX.

StableHLO clamps a gather's starts so that each slice fits, and JAX's
"fill" and "clip" modes rely on it; LiteRT's GATHER_ND refuses them
instead. Each StableHLO route writes the clamp out
(module_patterns.GATHER_STARTS_CLAMPED): `to_tflite`'s native and litert
routes, and `convert`'s module, which Google's recipe hands TF's converter.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from tests.support import compare, google_recipe  # noqa: E402

_X = np.arange(24, dtype=np.float32).reshape(6, 4) - 7.5
# In range, past the end, far past it, and negative (which "fill" and
# "clip" treat differently from NumPy's wrap-around).
_ROWS = np.array([0, 5, 6, 9, -1, -7, 2], np.int32)
_PAIRS = np.array([[0, 0], [5, 3], [6, 1], [-1, 2], [2, 9], [-8, -8]], np.int32)

_FUNCTIONS = {
  "take_fill": lambda x, i: jnp.take(x, i, axis=0),
  "take_clip": lambda x, i: jnp.take(x, i, axis=1, mode="clip"),
  "at_get_fill_value": lambda x, i: x.at[i].get(mode="fill", fill_value=-3.0),
  "take_along_axis": lambda x, i: jnp.take_along_axis(
    x, jnp.broadcast_to(i[:4, None], (4, 4)), axis=0, mode="clip"
  ),
  "pairs_fill": lambda x, p: x.at[p[:, 0], p[:, 1]].get(mode="fill", fill_value=np.nan),
  "pairs_clip": lambda x, p: x.at[p[:, 0], p[:, 1]].get(mode="clip"),
}
_INDICES = {"pairs_fill": _PAIRS, "pairs_clip": _PAIRS}


@pytest.mark.parametrize("route", ["litert", "native", "recipe"])
@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_starts_out_of_range_give_jax_values(name, route):
  if route != "litert":
    pytest.importorskip("tensorflow")
  fun, indices = _FUNCTIONS[name], _INDICES.get(name, _ROWS)
  if route == "recipe":
    got = google_recipe.run_by_recipe(fun, _X, indices)
  else:
    (got,) = lite.run(jax2tf.to_tflite(fun, _X, indices, route=route, verify=False), _X, indices)
  compare.assert_same(np.asarray(jax.jit(fun)(_X, indices)), np.asarray(got), exact=True)


@pytest.mark.parametrize("route", ["litert", "native"])
def test_starts_clamp_into_a_polymorphic_operand(route):
  if route == "native":
    pytest.importorskip("tensorflow")
  fun = _FUNCTIONS["take_fill"]
  model = jax2tf.to_tflite(
    fun, _X, _ROWS, polymorphic_shapes=["(r, 4)", None], route=route, verify=False
  )
  for rows in (3, 6):
    x = _X[:rows]
    (got,) = lite.run(model, x, _ROWS)
    compare.assert_same(np.asarray(jax.jit(fun)(x, _ROWS)), np.asarray(got), exact=True)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_convert_keeps_jax_values_under_tf(jit_compile):
  tf = pytest.importorskip("tensorflow")
  for name, fun in sorted(_FUNCTIONS.items()):
    indices = _INDICES.get(name, _ROWS)
    got = tf.function(jax2tf.convert(fun), autograph=False, jit_compile=jit_compile)(_X, indices)
    compare.assert_same(np.asarray(jax.jit(fun)(_X, indices)), got.numpy(), exact=True)
