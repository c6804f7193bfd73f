"""The model set's MLP and CNN written in Keras 3, with the Flax weights copied.

The reference for the TFLite benchmark: the same network as a Keras user would
write it, converted by TF's own TFLite converter. `build(name)` returns the
Keras model after checking that it computes what the Flax model computes.
"""

import numpy as np


def _keras():
  import keras  # pylint: disable=import-outside-toplevel

  return keras


def _mlp(params):
  keras = _keras()
  p = params["params"]
  layers = [keras.Input((64,))]
  for i, width in enumerate((128, 128)):
    layers.append(keras.layers.Dense(width, activation="relu", name=f"Dense_{i}"))
  layers.append(keras.layers.Dense(10, name="Dense_2"))
  model = keras.Sequential(layers)
  for i in range(3):
    model.get_layer(f"Dense_{i}").set_weights([p[f"Dense_{i}"]["kernel"], p[f"Dense_{i}"]["bias"]])
  return model


def _cnn(params):
  keras = _keras()
  p = params["params"]
  model = keras.Sequential([
    keras.Input((28, 28, 1)),
    keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="Conv_0"),
    keras.layers.AveragePooling2D(2),
    keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="Conv_1"),
    keras.layers.AveragePooling2D(2),
    keras.layers.Flatten(),
    keras.layers.Dense(64, activation="relu", name="Dense_0"),
    keras.layers.Dense(10, name="Dense_1"),
  ])
  for name in ("Conv_0", "Conv_1", "Dense_0", "Dense_1"):
    # Flax and Keras share the layouts: HWIO kernels, (in, out) dense kernels.
    model.get_layer(name).set_weights([p[name]["kernel"], p[name]["bias"]])
  return model


BUILDERS = {"mlp": _mlp, "cnn": _cnn}


def build(name: str, params, inputs, rtol: float = 1e-5, atol: float = 1e-5):
  """The Keras model for `name`, checked against the Flax outputs on `inputs`."""
  import jax  # pylint: disable=import-outside-toplevel

  from benchmarks import models  # pylint: disable=import-outside-toplevel

  model = BUILDERS[name](params)
  want = np.asarray(jax.jit(models.get(name).fn)(params, *inputs))
  got = np.asarray(model(*inputs))
  np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"keras {name}")
  return model


def to_tflite(model) -> bytes:
  """TF's TFLite converter on the Keras model, the way Keras 3 documents it:
  `model.export` to a SavedModel, then `TFLiteConverter.from_saved_model`."""
  import tempfile  # pylint: disable=import-outside-toplevel

  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  with tempfile.TemporaryDirectory() as tmp:
    model.export(tmp, format="tf_saved_model", verbose=False)
    return tf.lite.TFLiteConverter.from_saved_model(tmp).convert()
