"""A JAX function as a Keras 3 layer, fine-tuned with `model.fit`.

    python examples/keras_finetune.py [--out DIR] [--samples N] [--batch N] [--epochs N]

`JaxLayer` wraps any `fn(params, x)` written in JAX: the parameters become the
layer's trainable weights (`tf.Variable`s under Keras's TensorFlow backend), and
`jax2tf.convert(..., with_gradient=True)` gives TensorFlow JAX's own gradient of
`fn`, so Keras's optimizer trains them like the weights of any other layer.
Here a small JAX MLP (standing in for a model trained in JAX) gets a new Keras
head and both are fine-tuned together on synthetic data. main() checks that the
loss went down and that the layer computes what `jax.jit(fn)` computes with the
trained weights, then writes those weights to DIR/finetuned_params.npz for JAX.
"""

import argparse
import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax
import jax.numpy as jnp
import keras
import numpy as np

import jax2tf

FEATURES, HIDDEN = 4, 16


def features(params, x):
  """The JAX model: a two-layer MLP whose last hidden layer feeds the Keras head."""
  h = jnp.tanh(x @ params["w1"] + params["b1"])
  return jnp.tanh(h @ params["w2"] + params["b2"])


def initial_params(seed: int = 0) -> dict:
  rng = np.random.default_rng(seed)
  scale = lambda n: 1.0 / np.sqrt(n)
  return {
    "w1": (rng.normal(size=(FEATURES, HIDDEN)) * scale(FEATURES)).astype(np.float32),
    "b1": np.zeros(HIDDEN, np.float32),
    "w2": (rng.normal(size=(HIDDEN, HIDDEN)) * scale(HIDDEN)).astype(np.float32),
    "b2": np.zeros(HIDDEN, np.float32),
  }


class JaxLayer(keras.layers.Layer):
  """`fn(params, x)` with `params` held as trainable weights of this layer."""

  def __init__(self, fn, params, **kwargs):
    super().__init__(**kwargs)
    paths_and_leaves, self.treedef = jax.tree_util.tree_flatten_with_path(params)
    self.leaves = [
      self.add_weight(
        shape=leaf.shape,
        dtype=leaf.dtype,
        initializer=keras.initializers.Constant(np.asarray(leaf)),
        name=jax.tree_util.keystr(path, simple=True, separator="."),
      )
      for path, leaf in paths_and_leaves
    ]
    # The batch size is left symbolic: Keras calls the layer with an unknown batch.
    self.fn = jax2tf.convert(fn, polymorphic_shapes=[None, "(b, ...)"], with_gradient=True)

  def params(self):
    """The weights as the pytree `fn` takes (tf.Variables; `.numpy()` them for JAX)."""
    return jax.tree_util.tree_unflatten(self.treedef, [w.value for w in self.leaves])

  def call(self, x):
    return self.fn(self.params(), x)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument(
    "--out", help="where to write finetuned_params.npz (default: a new temporary folder)"
  )
  parser.add_argument("--samples", type=int, default=512)
  parser.add_argument("--batch", type=int, default=32)
  parser.add_argument("--epochs", type=int, default=5)
  args = parser.parse_args(argv)
  out = args.out or tempfile.mkdtemp(prefix="jax2tf-finetune-")
  os.makedirs(out, exist_ok=True)

  rng = np.random.default_rng(1)
  x = rng.normal(size=(args.samples, FEATURES)).astype(np.float32)
  y = np.sin(x @ rng.normal(size=(FEATURES, 1))).astype(np.float32)

  start = initial_params()
  layer = JaxLayer(features, start, name="jax_features")
  model = keras.Sequential(
    [
      keras.Input((FEATURES,)),
      layer,
      keras.layers.Dense(1, kernel_initializer=keras.initializers.GlorotUniform(seed=0)),
    ]
  )
  model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
  model.summary()

  loss_before = model.evaluate(x, y, batch_size=args.batch, verbose=0)
  model.fit(x, y, batch_size=args.batch, epochs=args.epochs, verbose=2)
  loss_after = model.evaluate(x, y, batch_size=args.batch, verbose=0)
  print(f"loss: {loss_before:.4f} before fine-tuning, {loss_after:.4f} after")
  if not loss_after < loss_before:
    raise SystemExit("fine-tuning did not lower the loss")

  trained = jax.tree_util.tree_map(lambda v: v.numpy(), layer.params())
  moved = {k: float(np.max(np.abs(trained[k] - start[k]))) for k in start}
  print(f"largest change of each JAX parameter: {moved}")
  if min(moved.values()) == 0.0:
    raise SystemExit(f"a JAX parameter got no gradient: {moved}")
  got = layer(x).numpy()
  want = jax.jit(features)(trained, x)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  print("the layer computes jax.jit(features) with the trained weights")

  path = os.path.join(out, "finetuned_params.npz")
  np.savez(path, **trained)
  print(f"wrote the fine-tuned JAX parameters to {path}")
  return {
    "model": model,
    "layer": layer,
    "x": x,
    "loss_before": loss_before,
    "loss_after": loss_after,
    "path": path,
  }


if __name__ == "__main__":
  main()
