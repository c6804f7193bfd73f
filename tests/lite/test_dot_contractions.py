"""dot_general with several contracting dimensions listed in another order
on each side: both TFLite converters pair them wrongly, with no error, so
every StableHLO pipeline lists them in one order
(module_patterns.DOT_CONTRACTIONS_IN_ORDER). A matrix contracted on its
first dimension against an array's last one is written as a FULLY_CONNECTED
that fails to run, so every pipeline swaps the operands."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from tests.support import compare, google_recipe  # noqa: E402

_RNG = np.random.default_rng(0)
_CASES = {
  # lhs dimension 1 meets rhs 3, lhs 3 meets rhs 2.
  "batched": (
    lambda a, b: lax.dot_general(a, b, (((1, 3), (3, 2)), ((0,), (1,)))),
    (_RNG.normal(size=(2, 3, 4, 5)), _RNG.normal(size=(6, 2, 5, 3))),
  ),
  "three_pairs": (
    lambda a, b: lax.dot_general(a, b, (((0, 1, 2), (2, 0, 1)), ((), ()))),
    (_RNG.normal(size=(3, 4, 5, 2)), _RNG.normal(size=(4, 5, 3, 6))),
  ),
  "lhs_descending": (
    lambda a, b: lax.dot_general(a, b, (((2, 0), (0, 1)), ((), ()))),
    (_RNG.normal(size=(3, 4, 5)), _RNG.normal(size=(5, 3, 2))),
  ),
  # A matrix contracted on its first dimension against the last of an
  # array: einsum("bij,jk->bki") (module_patterns.SWAP_OPERANDS_FOR_TRAILING_RHS_CONTRACTIONS).
  "matrix_first_against_array_last": (
    lambda a, b: jnp.einsum("bij,jk->bki", a, b),
    (_RNG.normal(size=(2, 3, 4)), _RNG.normal(size=(4, 5))),
  ),
}


@pytest.mark.parametrize("route", ["litert", "native", "recipe", "tf_xla"])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_contractions_pair_as_jax_pairs_them(name, route):
  if route != "litert":
    pytest.importorskip("tensorflow")
  fun, args = _CASES[name]
  args = tuple(a.astype(np.float32) for a in args)
  if route == "recipe":
    got = google_recipe.run_by_recipe(fun, *args)
  elif route == "tf_xla":
    import tensorflow as tf

    got = tf.function(jax2tf.convert(fun), autograph=False, jit_compile=True)(*args).numpy()
  else:
    (got,) = lite.run(jax2tf.to_tflite(fun, *args, route=route, verify=False), *args)
  compare.assert_same(np.asarray(jax.jit(fun)(*args)), np.asarray(got), tol=(1e-5, 1e-5))
