"""A JAX program that calls a Keras 3 model through `jax2tf.call_tf`.

    python examples/call_keras_from_jax.py [--out DIR] [--batch N]

`jax2tf.call_tf(model)` makes a Keras model (TensorFlow backend) callable from
JAX. Under `jax.jit`, TensorFlow compiles the model with XLA and JAX inlines
the result in its own module; `jax.grad` asks TensorFlow for the model's
gradient. Here a JAX loss around the model is jitted and differentiated with
respect to its input, then a few steps of gradient descent move a batch of
inputs towards class 0. main() compares the outputs with the Keras model run
directly, the gradient with `tf.GradientTape`, and raises if one differs.
With --out it writes the StableHLO of the jitted gradient, in which the Keras
model is a private function of JAX's module.
"""

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax
import jax.numpy as jnp
import keras
import numpy as np
import tensorflow as tf

import jax2tf

FEATURES, CLASSES = 6, 3
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def keras_model() -> keras.Model:
  seeded = lambda seed: keras.initializers.GlorotUniform(seed=seed)
  return keras.Sequential(
    [
      keras.Input((FEATURES,)),
      keras.layers.Dense(16, activation="gelu", kernel_initializer=seeded(0)),
      keras.layers.LayerNormalization(),
      keras.layers.Dense(CLASSES, kernel_initializer=seeded(1)),
    ]
  )


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", help="also write the StableHLO of the jitted gradient there")
  parser.add_argument("--batch", type=int, default=8)
  parser.add_argument("--steps", type=int, default=20, help="gradient descent steps on the inputs")
  args = parser.parse_args(argv)

  model = keras_model()
  # The model's weights are read once, as constants of the compiled call: pass
  # them as arguments instead to train them from JAX (docs/call_tf.md).
  logits = jax2tf.call_tf(model)

  def loss(x):
    """Cross-entropy towards class 0, averaged over the batch."""
    return -jnp.mean(jax.nn.log_softmax(logits(x))[:, 0])

  x = np.random.default_rng(0).normal(size=(args.batch, FEATURES)).astype(np.float32)
  got = jax.jit(logits)(x)
  np.testing.assert_allclose(got, model(x), **TOLERANCE)
  print(f"jax.jit(call_tf(model)) matches the Keras model on a batch of {args.batch}")

  grad = jax.jit(jax.grad(loss))
  x_tf = tf.constant(x)
  with tf.GradientTape() as tape:
    tape.watch(x_tf)
    loss_tf = -tf.reduce_mean(tf.nn.log_softmax(model(x_tf))[:, 0])
  np.testing.assert_allclose(grad(x), tape.gradient(loss_tf, x_tf), **TOLERANCE)
  print("jax.grad of the JAX loss matches tf.GradientTape's gradient")

  step = jax.jit(lambda x: x - 0.5 * grad(x))
  moved = jnp.asarray(x)
  for _ in range(args.steps):
    moved = step(moved)
  print(
    f"loss {float(loss(x)):.4f} -> {float(loss(moved)):.4f} after {args.steps} steps on the inputs"
  )
  if args.steps and not loss(moved) < loss(x):
    raise SystemExit("gradient descent on the inputs did not lower the loss")

  if args.out:
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "grad.stablehlo.mlir")
    with open(path, "w") as f:
      f.write(grad.lower(x).as_text())
    print(f"wrote the StableHLO of the jitted gradient to {path}")
  return {"model": model, "x": x, "logits": got, "grad": grad(x), "moved": moved}


if __name__ == "__main__":
  main()
