"""A small Vision Transformer: 4x4 patches by a strided convolution.

Position information is a fixed 2-D sinusoidal code computed from the patch
grid, not a learned table, and the classifier reads the mean of the tokens;
so the image size is not baked into the parameters and the spatial variants
are possible.
"""

import jax
import jax.numpy as jnp

from benchmarks.models import base

PATCH, D_MODEL, HEADS, LAYERS, CLASSES = 4, 32, 4, 2, 10


def sincos_2d(height, width, dim: int):
  """A (height*width, dim) code: sin/cos of the row and of the column."""
  quarter = dim // 4
  freqs = 1.0 / (100.0 ** (jnp.arange(quarter, dtype=jnp.float32) / quarter))
  rows = jnp.arange(height, dtype=jnp.float32)[:, None, None] * freqs
  cols = jnp.arange(width, dtype=jnp.float32)[None, :, None] * freqs
  rows = jnp.broadcast_to(rows, (height, width, quarter))
  cols = jnp.broadcast_to(cols, (height, width, quarter))
  code = jnp.concatenate([jnp.sin(rows), jnp.cos(rows), jnp.sin(cols), jnp.cos(cols)],
                         axis=-1)
  return code.reshape(height * width, dim)


def make_vit():
  from flax import linen as nn

  class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
      y = nn.LayerNorm()(x)
      x = x + nn.MultiHeadDotProductAttention(num_heads=HEADS, deterministic=True)(y, y)
      y = nn.LayerNorm()(x)
      return x + nn.Dense(D_MODEL)(nn.gelu(nn.Dense(2 * D_MODEL)(y)))

  class ViT(nn.Module):
    @nn.compact
    def __call__(self, images):
      x = nn.Conv(D_MODEL, (PATCH, PATCH), strides=(PATCH, PATCH), padding="VALID",
                  name="patch_embed")(images)
      n, h, w, d = x.shape
      x = x.reshape(n, h * w, d) + sincos_2d(h, w, d)
      for _ in range(LAYERS):
        x = Block()(x)
      return nn.Dense(CLASSES)(nn.LayerNorm()(x).mean(axis=1))

  return ViT()


# An image holds at least one patch: without saying so, newer JAX cannot
# decide the sign of the patch count (floordiv(b - 4, 4) + 1)^2 when tracing.
VARIANTS = base.image_variants(multiple=PATCH, small_sizes=(9, 14),
                               multiple_sizes=(2, 5),
                               spatial_constraints=(f"b >= {PATCH}",))


def build() -> base.Model:
  model = make_vit()

  def make_inputs(batch: int, size: int):
    return (base.normal((batch, size, size, 3), seed=13),)

  params = model.init(jax.random.key(0), *make_inputs(1, 16))
  return base.Model(
      name="vit", description=f"ViT, {PATCH}x{PATCH} patches, {LAYERS} layers, d={D_MODEL}",
      fn=model.apply, params=base.to_numpy(params), make_inputs=make_inputs,
      default_dims=dict(batch=2, size=16),
      # For sizes that are not multiples of the patch the VALID convolution
      # drops the last rows and columns, which is well defined.
      variants=VARIANTS,
      rtol=1e-4, atol=1e-4,
      tolerance_why="softmax, LayerNorm and GELU are computed with different "
                    "approximations by TF and XLA")
