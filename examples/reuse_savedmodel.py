"""A SavedModel written from JAX, reused in TensorFlow and in Keras 3.

    python examples/reuse_savedmodel.py [--out DIR] [--batch N]

A Flax model is converted with `jax2tf.convert` (dynamic batch, parameters as
`tf.Variable`s) and saved to DIR/scorer with
`SaveOptions(experimental_custom_gradients=True)`, so that the SavedModel
carries JAX's gradient next to the function. The rest is TensorFlow code that
knows nothing of JAX: it loads the model with `tf.saved_model.load`, calls it,
differentiates it with `tf.GradientTape` (with respect to the input and to the
restored variables), and wraps it with `keras.layers.TFSMLayer` in a Keras 3
functional model. main() compares each with `jax.jit` or `jax.grad` of the Flax
model and raises if one differs.
"""

import argparse
import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax
import jax.numpy as jnp
import keras
import numpy as np
import tensorflow as tf
from flax import linen as nn

import jax2tf

FEATURES, CLASSES = 6, 4
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


class Scorer(nn.Module):
  @nn.compact
  def __call__(self, x):
    x = nn.gelu(nn.Dense(32)(nn.LayerNorm()(x)))
    return nn.Dense(CLASSES)(x)


def save(params, path: str) -> None:
  """Writes Scorer with `params` as a SavedModel: `score(x)` and `serving_default`."""
  params_vars = tf.nest.map_structure(tf.Variable, params)
  score = jax2tf.convert(Scorer().apply, polymorphic_shapes=[None, f"(b, {FEATURES})"])
  module = tf.Module()
  # Tracked by the module, the parameters are saved as variables (not graph
  # constants) and come back as `restored.params`. A flat list (in JAX's
  # order): tracking a dict would wrap its nested dicts in place, in a type
  # that JAX's pytrees do not know.
  module.params = jax.tree_util.tree_leaves(params_vars)
  module.score = tf.function(
    lambda x: score(params_vars, x),
    autograph=False,
    input_signature=[tf.TensorSpec([None, FEATURES], tf.float32, name="x")],
  )
  tf.saved_model.save(
    module,
    path,
    signatures={"serving_default": module.score},
    options=tf.saved_model.SaveOptions(experimental_custom_gradients=True),
  )


def log_likelihood_jax(params, x):
  return jnp.sum(jax.nn.log_softmax(Scorer().apply(params, x))[:, 0])


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", help="where to write scorer/ (default: a new temporary folder)")
  parser.add_argument("--batch", type=int, default=8)
  args = parser.parse_args(argv)
  path = os.path.join(args.out or tempfile.mkdtemp(prefix="jax2tf-reuse-"), "scorer")

  x = np.random.default_rng(0).normal(size=(args.batch, FEATURES)).astype(np.float32)
  params = Scorer().init(jax.random.key(0), x)
  save(params, path)
  print(f"saved the JAX model to {path}")

  # TensorFlow only from here on. Loading warns that the saved gradient has
  # no gradient of its own: first derivatives work, second ones do not.
  restored = tf.saved_model.load(path)
  scores = restored.score(x)
  np.testing.assert_allclose(scores, jax.jit(Scorer().apply)(params, x), **TOLERANCE)
  print(f"restored.score(x) matches jax.jit on a batch of {args.batch}")

  x_tf = tf.constant(x)
  with tf.GradientTape() as tape:
    tape.watch(x_tf)
    log_likelihood = tf.reduce_sum(tf.nn.log_softmax(restored.score(x_tf))[:, 0])
  grad_x, grad_params = tape.gradient(log_likelihood, (x_tf, restored.params))
  want_params, want_x = jax.grad(log_likelihood_jax, argnums=(0, 1))(params, x)
  np.testing.assert_allclose(grad_x, want_x, **TOLERANCE)
  for got, want in zip(grad_params, jax.tree_util.tree_leaves(want_params), strict=True):
    np.testing.assert_allclose(got, want, **TOLERANCE)
  print("tf.GradientTape gradients (input and restored variables) match jax.grad")

  # TF Hub's hub.KerasLayer installs beside Keras 3 (with tf-keras) but is a
  # Keras 2 layer: it refuses a Keras 3 functional model's symbolic inputs
  # ("A KerasTensor cannot be used as input to a TensorFlow function").
  layer = keras.layers.TFSMLayer(path, call_endpoint="serving_default")
  inputs = keras.Input((FEATURES,))
  probabilities = keras.layers.Softmax()(layer(inputs)["output_0"])
  model = keras.Model(inputs, probabilities)
  got = model(x)
  np.testing.assert_allclose(got, jax.nn.softmax(Scorer().apply(params, x)), **TOLERANCE)
  print(
    f"a Keras functional model around TFSMLayer ({len(layer.weights)} restored weights) matches JAX"
  )
  return {"path": path, "params": params, "x": x, "model": model, "layer": layer}


if __name__ == "__main__":
  main()
