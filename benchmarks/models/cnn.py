"""The demo CNN (28x28x1 images, 10 classes) from jax2tf.demo_model."""

from benchmarks.models import base
from jax2tf import demo_model

VARIANTS = [base.batch_variant(("(b, 28, 28, 1)",))]


def build() -> base.Model:
  model, params = demo_model.init_cnn(seed=0)

  def make_inputs(batch: int):
    return (base.normal((batch,) + demo_model.IMAGE_SHAPE, seed=1),)

  return base.Model(
      name="cnn", description="demo CNN: 2 conv + avg-pool, 2 dense",
      fn=model.apply, params=base.to_numpy(params), make_inputs=make_inputs,
      default_dims=dict(batch=2),
      variants=VARIANTS,
      rtol=1e-5, atol=1e-5,
      tolerance_why="two convolutions and two matmuls in float32; TF's and "
                    "XLA's kernels sum in different orders",
      impossible={
          "spatial": "the first Dense layer sees the flattened 7x7x32 feature map, "
                     "so the image size is fixed by the parameters",
          "spatial4": "as spatial"})
