"""The judge of tools/jax_harness: it accepts the other valid answers where
JAX's output is implementation-defined, and nothing else."""

import types

import jax
import numpy as np
import pytest
from jax import lax

from tools.jax_harness import defined


def _harness(group, **params):
  return types.SimpleNamespace(group_name=group, params=params)


def _symmetric(n=5, seed=0):
  a = np.random.default_rng(seed).standard_normal((n, n)).astype(np.float32)
  return a + a.T


def test_eigenvectors_of_either_sign_pass_and_wrong_ones_do_not():
  x = _symmetric()
  v, w = (np.asarray(r) for r in jax.jit(lambda a: lax.linalg.eigh(a, lower=True))(x))
  h = _harness("eigh", lower=True)
  flipped = v * np.where(np.arange(5) % 2 == 0, -1, 1)
  assert defined.exact((v, w), (flipped, w)) is not None
  assert defined.check(h, [x], (v, w), (flipped, w)) is None
  assert defined.check(h, [x], (v, w), (v[:, ::-1], w)) is not None


def test_singular_vectors_must_rebuild_the_matrix():
  x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
  # The primitive's order (s, u, vh), as the harness binds it.
  u, s, vh = (np.asarray(r) for r in jax.jit(lambda a: lax.linalg.svd(a, full_matrices=False))(x))
  h = _harness("svd", compute_uv=True)
  assert defined.check(h, [x], (s, u, vh), (s, -u, -vh)) is None
  assert defined.check(h, [x], (s, u, vh), (s, -u, vh)) is not None


def test_eig_takes_eigenvalues_in_any_order_but_not_other_values():
  x = np.random.default_rng(2).standard_normal((4, 4)).astype(np.float32)
  (w,) = (np.asarray(r) for r in jax.jit(
    lambda a: lax.linalg.eig(a, compute_left_eigenvectors=False,
                             compute_right_eigenvectors=False))(x))
  h = _harness("eig", compute_left_eigenvectors=False, compute_right_eigenvectors=False)
  assert defined.check(h, [x], (w,), (w[::-1],)) is None
  assert defined.check(h, [x], (w,), (w + 1,)) is not None


def test_cholesky_compares_the_factor_s_triangle_only():
  x = _symmetric() + 20 * np.eye(5, dtype=np.float32)
  factor = np.asarray(jax.jit(lax.linalg.cholesky)(x))
  h = _harness("cholesky")
  assert defined.check(h, [x], (factor,), (np.tril(factor) + np.triu(x, 1),)) is None
  assert defined.check(h, [x], (factor,), (factor * 1.5,)) is not None


@pytest.mark.parametrize("group", ["transpose", "sin"])
def test_groups_without_implementation_defined_outputs_are_judged_exactly(group):
  x = np.ones((2, 2), np.float32)
  assert defined.check(_harness(group), [x], (x,), (x + 1,)) is not None
