"""Linear algebra under graph serialization (rules/linalg.py), beyond its cases.

The family's cases are in tests/cases/linalg.py.
"""

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf
from tests import tf_modes
from tests.tf_modes import TF_MODES

FLAVOURS = ("xla", "no_xla")


def test_refusal_names_primitive_and_reason():
  f = jax2tf.convert(lambda x: jsl.schur(x)[0], native_serialization=False)
  with pytest.raises(NotImplementedError, match=r"'schur'.*LAPACK's gees.*no Schur decomposition op"):
    f(np.eye(3, dtype=np.float32))


def _spd(n):
  x = np.random.default_rng(0).uniform(-3, 3, (n, n)).astype(np.float32)
  return (x @ x.T + n * np.eye(n)).astype(np.float32)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_subset_by_index(flavour):
  # JAX's CPU lowering has no subset_by_index; the rules slice the full
  # decomposition, checked against NumPy.
  x = _spd(6)

  def f(x):
    v, w = lax.linalg.eigh(x, subset_by_index=(2, 5))
    s = lax.linalg.svd(x[:, :4], full_matrices=False, compute_uv=False, subset_by_index=(1, 3))
    return (v * w) @ jnp.conj(jnp.swapaxes(v, -1, -2)), w, s
  g = jax2tf.convert(f, native_serialization=False, enable_xla=flavour == "xla")
  for mode in TF_MODES:
    proj, w, s = tf_modes.to_numpy(tf_modes.run_in_mode(g, mode, x))
    ew, ev = np.linalg.eigh(x.astype(np.float64))
    np.testing.assert_allclose(w, ew[2:5], rtol=1e-4)
    np.testing.assert_allclose(proj, (ev[:, 2:5] * ew[2:5]) @ ev[:, 2:5].T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(s, np.linalg.svd(x[:, :4], compute_uv=False)[1:3], rtol=1e-4)


def test_eig_refused_while_tracing_for_xla_also_when_nested():
  # TF's Eig has no XLA kernel: the rule refuses while the graph is traced for
  # jit_compile=True, also from a tf.function nested in one, instead of TF
  # failing later in its XLA compilation.
  x = np.array([[0., -3., 3.], [2., 3., -3.], [2., -1., 0.]], np.float32)
  f = jax2tf.convert(jnp.linalg.eigvals, native_serialization=False)
  inner = tf.function(f, autograph=False)
  outer = tf.function(lambda x: inner(x) * 2, jit_compile=True, autograph=False)
  with pytest.raises(NotImplementedError, match=r"'eig'.*jit_compile=True.*without jit_compile"):
    outer(x)
  # The same function outside XLA computes JAX's eigenvalues (up to order).
  np.testing.assert_allclose(np.sort_complex(inner(x).numpy() * 2),
                             np.sort_complex(np.asarray(jnp.linalg.eigvals(x)) * 2), rtol=1e-5)
