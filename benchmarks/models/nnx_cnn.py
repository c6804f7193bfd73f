"""A small CNN written with flax.nnx, converted through nnx.split/merge.

`fn(params, x)` rebuilds the module from a fixed graph definition and a plain
nested dict of arrays, so the parameters are an ordinary pytree that TF can
hold as variables. Global average pooling makes any image size valid.
"""

import jax

from benchmarks.models import base

CLASSES = 10


def make_nnx_cnn(seed: int):
  from flax import nnx

  class NnxCNN(nnx.Module):
    def __init__(self, rngs):
      self.conv1 = nnx.Conv(1, 8, (3, 3), rngs=rngs)
      self.conv2 = nnx.Conv(8, 16, (3, 3), strides=(2, 2), rngs=rngs)
      self.head = nnx.Linear(16, CLASSES, rngs=rngs)

    def __call__(self, x):
      x = nnx.relu(self.conv1(x))
      x = nnx.relu(self.conv2(x))
      return self.head(x.mean(axis=(1, 2)))

  return NnxCNN(nnx.Rngs(seed))


VARIANTS = base.image_variants(multiple=4, small_sizes=(7, 12),
                               multiple_sizes=(2, 3))


def build() -> base.Model:
  from flax import nnx
  graphdef, state = nnx.split(make_nnx_cnn(seed=0))
  params = base.to_numpy(nnx.to_pure_dict(state))

  def fn(params, x):
    # A fresh abstract state each call: replace_by_pure_dict fills it in place.
    st = jax.tree_util.tree_map(lambda v: v, state)
    nnx.replace_by_pure_dict(st, params)
    return nnx.merge(graphdef, st)(x)

  def make_inputs(batch: int, size: int):
    return (base.normal((batch, size, size, 1), seed=15),)

  return base.Model(
      name="nnx_cnn", description="flax.nnx CNN, 2 conv, global mean, linear",
      fn=fn, params=params, make_inputs=make_inputs,
      default_dims=dict(batch=2, size=16),
      variants=VARIANTS,
      rtol=1e-5, atol=1e-5,
      tolerance_why="two small convolutions and a mean in float32")
