"""Models that tests name on the command line (`tests.cli_models:NAME`)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

W = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)


def _mlp(params, x):
  return {"logits": jax.nn.relu(x @ params["w"]) * 2.0, "norm": jnp.sum(x * x, axis=1)}


def mlp():
  return {
    "fn": _mlp,
    "params": {"w": W},
    "inputs": [np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)],
    "polymorphic_shapes": ["(b, 4)"],
  }


def mlp_drifted():
  """mlp, off by a little: what a check must catch."""
  made = mlp()
  made["fn"] = lambda p, x: jax.tree_util.tree_map(lambda y: y + 1e-3, _mlp(p, x))
  return made


def igamma_only():
  """No params, two inputs; TF's Igamma has no TFLite kernel (graph route)."""
  a, x = np.full((3,), 2.0, np.float32), np.array([0.5, 1.0, 3.0], np.float32)
  return {"fn": lax.igamma, "inputs": [a, x]}


def _scaled_shift(zeta, alpha):
  return zeta * 3.0 - alpha


def two_inputs_out_of_name_order():
  """Inputs whose names do not sort in the function's order, of different
  values: a check that pairs them by sorted name computes something else."""
  return {
    "fn": _scaled_shift,
    "inputs": [np.arange(4, dtype=np.float32), np.full((4,), 10.0, np.float32)],
  }


def not_a_model():
  return {"fn": 3, "inputs": []}


def linen_dense():
  """A Flax linen module: parameters from its init, or from --checkpoint."""
  from flax import linen as nn

  return {"module": nn.Dense(3), "inputs": [np.ones((2, 4), np.float32)],
          "polymorphic_shapes": ["(b, 4)"]}
