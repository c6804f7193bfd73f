"""The small Flax CNN used by `python -m jax2tf.demo` and by benchmarks/.

Flax is an optional dependency (the `examples` extra), so it is imported only
when a model is built.
"""

IMAGE_SHAPE = (28, 28, 1)
NUM_CLASSES = 10


def import_flax_linen():
  try:
    from flax import linen
  except ImportError as e:
    raise SystemExit(
      "The jax2tf demo needs Flax, which is an optional dependency: "
      "pip install 'jax2tf[examples]'  (or: pip install flax)"
    ) from e
  return linen


def make_cnn():
  """Returns an (untrained) Flax linen CNN for 28x28x1 images and 10 classes."""
  nn = import_flax_linen()

  class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
      x = nn.relu(nn.Conv(features=16, kernel_size=(3, 3))(x))
      x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
      x = nn.relu(nn.Conv(features=32, kernel_size=(3, 3))(x))
      x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
      x = x.reshape((x.shape[0], -1))
      x = nn.relu(nn.Dense(features=64)(x))
      return nn.Dense(features=NUM_CLASSES)(x)

  return CNN()


def init_cnn(seed: int = 0):
  """The CNN and its parameters, deterministic for a given seed."""
  import jax
  import jax.numpy as jnp

  model = make_cnn()
  params = model.init(jax.random.key(seed), jnp.zeros((1,) + IMAGE_SHAPE, jnp.float32))
  return model, params


def count_params(params) -> int:
  import jax

  return sum(int(x.size) for x in jax.tree_util.tree_leaves(params))


def cnn():
  """The demo CNN as `jax2tf export` takes it (docs/cli.md):

  jax2tf export jax2tf.demo_model:cnn --out /tmp/cnn
  """
  import numpy as np

  model, params = init_cnn(seed=0)
  images = np.random.default_rng(2024).uniform(0.0, 1.0, (8,) + IMAGE_SHAPE).astype(np.float32)
  return {
    "fn": model.apply,
    "params": params,
    "inputs": [images],
    "polymorphic_shapes": ["(b, 28, 28, 1)"],
  }
