"""The functions every producer exports: small, but each exercises a different
part of a consumer (dense layers, convolution and pooling, symbolic shapes,
StableHLO composites, a LAPACK custom call, a gradient, scatter with integer
outputs, a data-dependent while loop).

Needs jax and numpy only. Each case lists several input sets; a polymorphic
case's sets differ in shape, so that a consumer runs the one artifact at
several sizes.
"""

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

_rng = np.random.default_rng(0)


def _normal(*shape, scale=1.0):
  return (scale * _rng.standard_normal(shape)).astype(np.float32)


@dataclasses.dataclass(frozen=True)
class Case:
  name: str
  fun: Callable
  input_sets: list  # of lists of arrays, one per argument
  polymorphic_shapes: list | None = None
  # JAX has no reverse mode for a while loop with a data-dependent trip count,
  # so its SavedModel is saved without the TF gradient.
  with_gradient: bool = True
  # False: SavedModels only (no .tflite or TF.js model), for functions that
  # exercise what XlaCallModule reads (composites, custom calls).
  deploy: bool = True


_W1, _B1 = _normal(8, 16, scale=0.3), _normal(16, scale=0.1)
_W2, _B2 = _normal(16, 5, scale=0.3), _normal(5, scale=0.1)


def mlp(x):
  h = jax.nn.relu(x @ _W1 + _B1)
  return jax.nn.softmax(h @ _W2 + _B2, axis=-1)


_KERNEL = _normal(3, 3, 3, 4, scale=0.3)
_HEAD = _normal(4 * 4 * 4, 3, scale=0.2)


def cnn(images):
  y = lax.conv_general_dilated(
    images, _KERNEL, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
  )
  y = jax.nn.relu(y)
  y = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
  return jnp.tanh(y.reshape(y.shape[0], -1) @ _HEAD)


def standardize(x):
  # Both dimensions symbolic: the divisor is a dimension expression.
  centred = x - jnp.mean(x, axis=1, keepdims=True)
  return centred / (1.0 + jnp.sqrt(jnp.sum(centred * centred, axis=1, keepdims=True))), jnp.sum(
    x, axis=0
  ) / x.shape[0]


def arccos_erf(x):
  # JAX writes these chlo ops as stablehlo.composite, which the StableHLO of
  # TF 2.17 and older cannot read as such.
  return jnp.arccos(x) + jax.scipy.special.erf(x)


def cholesky(a):
  # A LAPACK custom call on CPU, which the consumer's XLA must know.
  return jnp.linalg.cholesky(a)


def loss_gradient(w, x):
  return jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)


def scatter_argmax(values, segments):
  sums = jnp.zeros(4, jnp.float32).at[segments].add(values)
  return sums, jnp.argmax(values.reshape(2, -1), axis=1).astype(jnp.int32), jnp.cumsum(values)


def halvings(x):
  """How many halvings bring each element to at most 1: an int32 count from a
  while loop whose trip count depends on the data."""

  def cond(carry):
    return jnp.any(carry[1] > 1.0)

  def body(carry):
    count, y = carry
    big = y > 1.0
    return count + big.astype(jnp.int32), jnp.where(big, y / 2.0, y)

  return lax.while_loop(cond, body, (jnp.zeros(x.shape, jnp.int32), x))


_SPD = _normal(5, 5)

CASES = [
  Case("mlp", mlp, [[_normal(4, 8)], [_normal(4, 8)]]),
  Case("cnn", cnn, [[_normal(b, 8, 8, 3)] for b in (1, 3)], ["(b, 8, 8, 3)"]),
  Case(
    "standardize", standardize, [[_normal(b, n)] for b, n in ((1, 3), (4, 5), (7, 2))], ["(b, n)"]
  ),
  Case(
    "arccos_erf", arccos_erf, [[_rng.uniform(-0.9, 0.9, (3, 5)).astype(np.float32)]], deploy=False
  ),
  Case("cholesky", cholesky, [[(_SPD @ _SPD.T + 5 * np.eye(5)).astype(np.float32)]], deploy=False),
  Case("loss_gradient", loss_gradient, [[_normal(4, 3), _normal(5, 4)]]),
  Case(
    "scatter_argmax",
    scatter_argmax,
    [[_normal(6), np.array([0, 3, 1, 3, 2, 0], np.int32)]],
  ),
  Case(
    "halvings",
    halvings,
    [[np.array([0.5, 3.0, 17.0, 100.0, 1.0], np.float32)]],
    with_gradient=False,
  ),
]
