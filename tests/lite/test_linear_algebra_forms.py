"""Linear algebra as loops of whole-matrix steps, the lowerings of `lu`,
`triangular_solve` and `cholesky` for the targets without XLA
(jax2tf/native/target_lowerings.py; jax2tf/jax_forms/lu.py and
triangular.py): against JAX's own results, and on both TFLite routes from
StableHLO. There JAX's rules cannot run: its blocked LU needs a triangular
solve and, for a batch, scatters the converters refuse, and static sizes;
StableHLO's triangular_solve and cholesky have no LiteRT kernel."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.lax import linalg as lax_linalg

from jax2tf.jax_forms import lu as lu_form
from jax2tf.jax_forms import triangular


def _matrix(shape, seed=0):
  return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def _special(shape, nan=True):
  # A zero column (a step with nothing to eliminate), tied magnitudes (the
  # first is the pivot) and a NaN (the largest, as in JAX's argmax).
  a = _matrix(shape, seed=1)
  a[..., :, 1] = 0.0
  a[..., 2, 2] = -a[..., 3, 2]
  if nan:
    a[..., 4, 3] = np.nan
  return a


def _assert_same_lu(want, got, where):
  lu_w, piv_w, perm_w = (np.asarray(x) for x in want)
  lu_g, piv_g, perm_g = (np.asarray(x) for x in got)
  np.testing.assert_array_equal(piv_g, piv_w, err_msg=f"{where}: pivots")
  np.testing.assert_array_equal(perm_g, perm_w, err_msg=f"{where}: permutation")
  np.testing.assert_allclose(lu_g, lu_w, rtol=2e-5, atol=2e-6, err_msg=f"{where}: factors")


def _converter(route):
  """(jax2tf, jax2tf.lite), skipping where `route` cannot run: the litert
  route needs litert-converter, the others TensorFlow."""
  if route == "litert":
    pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")
  else:
    pytest.importorskip("tensorflow")
  import jax2tf
  from jax2tf import lite

  return jax2tf, lite


_SHAPES = {
  "square": (_matrix((4, 4)),),
  "batched_tall_and_wide": (_matrix((2, 3, 6, 4)), _matrix((3, 4, 6), seed=2)),
  "zero_column_ties_nan": (_special((5, 5)), _special((2, 6, 5))),
  "no_columns": (_matrix((3, 0)), np.zeros((2, 0, 0), np.float32)),
}


@pytest.mark.parametrize("name", sorted(_SHAPES))
def test_the_form_gives_jax_s_lu(name):
  for a in _SHAPES[name]:
    _assert_same_lu(jax.jit(lax_linalg.lu)(a), jax.jit(lu_form.lu)(a), where=f"{name} {a.shape}")


@pytest.mark.parametrize("route", ["litert", "native"])
def test_lu_of_batched_wide_and_tall_matrices_on_the_tflite_routes(route):
  jax2tf, lite = _converter(route)
  # The native route's ARG_MAX passes over a NaN (the case table's
  # argmax_ties_nan): there the pivots after a NaN are not JAX's.
  for a in (_matrix((2, 3, 5)), _special((2, 6, 5), nan=route == "litert")):
    model = jax2tf.to_tflite(lax_linalg.lu, a, route=route, verify=False)
    _assert_same_lu(jax.jit(lax_linalg.lu)(a), lite.run(model, a), where=f"{route} {a.shape}")


@pytest.mark.parametrize("route", ["litert", "native"])
def test_lu_of_a_polymorphic_size_on_the_tflite_routes(route):
  jax2tf, lite = _converter(route)
  model = jax2tf.to_tflite(
    lax_linalg.lu, _matrix((4, 4)), route=route, polymorphic_shapes=["(n, n)"], verify=False
  )
  for n in (3, 7):
    a = _matrix((n, n), seed=n)
    _assert_same_lu(jax.jit(lax_linalg.lu)(a), lite.run(model, a), where=f"{route} n={n}")


_FLAGS = [
  dict(left_side=left, lower=lower, transpose_a=transpose, unit_diagonal=unit)
  for left, lower, transpose, unit in itertools.product([True, False], repeat=4)
]


def _flags_id(flags):
  return "-".join(k for k, v in flags.items() if v) or "none"


def _triangle_and_right_side(left_side, lower, batch=(2,)):
  # The other triangle holds NaN and inf: never read.
  a = _matrix((*batch, 4, 4)) + 4 * np.eye(4, dtype=np.float32)
  other = np.triu(np.ones((4, 4), bool), 1) if lower else np.tril(np.ones((4, 4), bool), -1)
  a[..., other] = np.where(np.arange(other.sum()) % 2, np.nan, np.inf)
  b = _matrix((*batch, 4, 3) if left_side else (*batch, 3, 4), seed=5)
  return a, b


@pytest.mark.parametrize("flags", _FLAGS, ids=_flags_id)
def test_the_triangular_solve_form_gives_jax_s_solution(flags):
  a, b = _triangle_and_right_side(flags["left_side"], flags["lower"])
  solve = lambda f: lambda a, b: f(a, b, conjugate_a=False, **flags)  # noqa: E731
  want = jax.jit(solve(lax_linalg.triangular_solve))(a, b)
  assert np.isfinite(want).all()
  np.testing.assert_allclose(
    jax.jit(solve(triangular.triangular_solve))(a, b), want, rtol=2e-5, atol=2e-6
  )


def _positive_definite(batch):
  x = _matrix((*batch, 5, 5), seed=3)
  return x @ np.swapaxes(x, -1, -2) + 0.1 * np.eye(5, dtype=np.float32)


def test_the_cholesky_form_gives_jax_s_factor_and_its_nan():
  a = _positive_definite((3,))
  a[1] = np.eye(5)
  a[1, :2, :2] = [[1, 2], [2, 1]]  # not positive definite: NaN on and below the diagonal
  want, got = jax.jit(lax_linalg.cholesky)(a), jax.jit(triangular.cholesky)(a)
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  assert np.isnan(want[1]).any()
  np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


_SOLVERS = {
  "triangular_solve_lower_left": lambda a, b: lax_linalg.triangular_solve(
    a, b, left_side=True, lower=True
  ),
  "triangular_solve_upper_right_transposed": lambda a, b: lax_linalg.triangular_solve(
    a, jnp.swapaxes(b, -1, -2), left_side=False, lower=False, transpose_a=True
  ),
  "cholesky": lambda a, b: lax_linalg.cholesky(a @ jnp.swapaxes(a, -1, -2)),
  "solve": jnp.linalg.solve,
  "inv": lambda a, b: jnp.linalg.inv(a),
}


@pytest.mark.parametrize("route", ["litert", "native", "graph"])
@pytest.mark.parametrize("name", sorted(_SOLVERS))
def test_solvers_on_the_tflite_routes(name, route):
  # TFLite has no Cholesky or MatrixTriangularSolve either: the graph route
  # lowers the same loops.
  jax2tf, lite = _converter(route)
  from jax2tf.lite import inspect as lite_inspect

  a = np.tril(_matrix((2, 4, 4))) + 4 * np.eye(4, dtype=np.float32)
  b = _matrix((2, 4, 3), seed=5)
  fun = _SOLVERS[name]
  model = jax2tf.to_tflite(fun, a, b, route=route, verify=False)
  assert not [op for op in lite_inspect.op_counts(model) if op.startswith("STABLEHLO_")]
  np.testing.assert_allclose(lite.run(model, a, b)[0], jax.jit(fun)(a, b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("route", ["litert", "native"])
def test_cholesky_of_a_polymorphic_batch_on_the_tflite_routes(route):
  jax2tf, lite = _converter(route)
  model = jax2tf.to_tflite(
    jnp.linalg.cholesky,
    _positive_definite((2,)),
    route=route,
    polymorphic_shapes=["(b, 5, 5)"],
    verify=False,
  )
  for batch in (1, 3):
    a = _positive_definite((batch,))
    np.testing.assert_allclose(
      lite.run(model, a)[0], jax.jit(jnp.linalg.cholesky)(a), rtol=2e-5, atol=2e-6
    )
