"""The scripts of examples/, run through their main() on small sizes; what they
wrote and returned is checked here again against JAX and TensorFlow."""

import base64
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from examples import (
  call_keras_from_jax,
  keras_finetune,
  reuse_savedmodel,
  serving_savedmodel,
  tfjs_drawing,
)
from jax2tf.deploy import headless
from jax2tf.tfjs import browser as tfjs_browser
from jax2tf.tfjs import runtime as tfjs_runtime

TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def _normal(shape, seed=7):
  return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


@pytest.mark.subprocess
def test_serving_savedmodel(tmp_path):
  ran = serving_savedmodel.main(["--out", str(tmp_path), "--batch", "3"])
  path = tmp_path / "classifier" / "1"
  assert ran["path"] == str(path)
  params = serving_savedmodel.classifier()["params"]
  predict = jax.jit(serving_savedmodel.predict)
  # What saved_model_cli printed.
  np.testing.assert_allclose(ran["outputs"], predict(params, ran["inputs"]), **TOLERANCE)
  with open(f"{path}.report.json") as f:
    assert json.load(f)["verification"]["ok"]

  serving = tf.saved_model.load(str(path)).signatures["serving_default"]
  (name, spec), = serving.structured_input_signature[1].items()
  assert name == "features" and spec.shape.as_list() == [None, serving_savedmodel.FEATURES]
  x = _normal((5, serving_savedmodel.FEATURES))
  np.testing.assert_allclose(serving(features=tf.constant(x))["output_0"], predict(params, x),
                             **TOLERANCE)
  # The parameters are the checkpoint's variables, not constants of the graph.
  stored = sorted(tuple(shape) for key, shape in tf.train.list_variables(str(path / "variables" / "variables"))
                  if not key.startswith("_CHECKPOINTABLE_OBJECT_GRAPH"))
  assert stored == sorted(p.shape for p in jax.tree_util.tree_leaves(params))


def test_keras_finetune(tmp_path):
  ran = keras_finetune.main(["--out", str(tmp_path), "--samples", "64", "--batch", "16",
                             "--epochs", "2"])
  assert ran["loss_after"] < ran["loss_before"]
  layer, model = ran["layer"], ran["model"]
  trained = dict(np.load(tmp_path / "finetuned_params.npz"))
  start = keras_finetune.initial_params()
  assert set(trained) == set(start)
  for key, weight in layer.params().items():
    np.testing.assert_array_equal(trained[key], weight.numpy())
    assert not np.array_equal(trained[key], start[key]), key

  x = _normal((5, keras_finetune.FEATURES))
  features = jax.jit(keras_finetune.features)(trained, x)
  np.testing.assert_allclose(layer(x), features, **TOLERANCE)
  kernel, bias = model.layers[-1].get_weights()
  np.testing.assert_allclose(model(x), features @ kernel + bias, **TOLERANCE)

  # What model.fit trained with: the gradient of the layer is JAX's.
  with tf.GradientTape() as tape:
    total = tf.reduce_sum(tf.sin(layer(x)))
  got = tape.gradient(total, layer.params())
  want = jax.grad(lambda p: jnp.sum(jnp.sin(keras_finetune.features(p, x))))(trained)
  for key in want:
    np.testing.assert_allclose(got[key], want[key], **TOLERANCE)


def test_reuse_savedmodel(tmp_path):
  ran = reuse_savedmodel.main(["--out", str(tmp_path), "--batch", "3"])
  assert ran["path"] == str(tmp_path / "scorer")
  params = ran["params"]
  apply = reuse_savedmodel.Scorer().apply
  restored = tf.saved_model.load(ran["path"])
  x = _normal((5, reuse_savedmodel.FEATURES))  # another batch size than main's
  want = jax.jit(apply)(params, x)
  got = restored.signatures["serving_default"](x=tf.constant(x))["output_0"]
  np.testing.assert_allclose(got, want, **TOLERANCE)
  np.testing.assert_allclose(ran["model"](x), jax.nn.softmax(want), **TOLERANCE)
  assert len(ran["layer"].weights) == len(jax.tree_util.tree_leaves(params))

  x_tf = tf.constant(x)
  with tf.GradientTape() as tape:
    tape.watch(x_tf)
    total = tf.reduce_sum(restored.score(x_tf) ** 2)
  want_grad = jax.grad(lambda x: jnp.sum(apply(params, x) ** 2))(x)
  np.testing.assert_allclose(tape.gradient(total, x_tf), want_grad, **TOLERANCE)


def _loss_tf(model, x):
  return -tf.reduce_mean(tf.nn.log_softmax(model(x))[:, 0])


def test_call_keras_from_jax(tmp_path):
  ran = call_keras_from_jax.main(["--out", str(tmp_path), "--batch", "4", "--steps", "3"])
  model, x = ran["model"], ran["x"]
  np.testing.assert_allclose(ran["logits"], model(x), **TOLERANCE)
  x_tf = tf.constant(x)
  with tf.GradientTape() as tape:
    tape.watch(x_tf)
    loss = _loss_tf(model, x_tf)
  np.testing.assert_allclose(ran["grad"], tape.gradient(loss, x_tf), **TOLERANCE)
  assert _loss_tf(model, np.asarray(ran["moved"])) < loss
  # The Keras model is inlined in JAX's module, forward and backward.
  text = (tmp_path / "grad.stablehlo.mlir").read_text()
  assert "func.func private @call_tf_" in text and "call @call_tf_vjp_" in text


try:
  _CHROMIUM, _NO_CHROMIUM = tfjs_browser.chromium(), ""
except FileNotFoundError as e:
  _CHROMIUM, _NO_CHROMIUM = None, str(e)

_CIRCLE = [[140 + 80 * np.cos(a), 140 + 80 * np.sin(a)] for a in np.linspace(0, 2 * np.pi, 40)]


@pytest.mark.skipif(_CHROMIUM is None, reason=f"no Chromium: {_NO_CHROMIUM}")
def test_tfjs_drawing_classifies_a_drawn_stroke_in_chromium(tmp_path):
  ran = tfjs_drawing.main(["--out", str(tmp_path), "--steps", "300"])
  assert ran["accuracy"] > 0.95 and ran["node_error"] < 1e-4
  assert ran["tflite_error"] < 1e-4, ran["tflite_route"]
  predict = jax.jit(tfjs_drawing.predict)
  strokes = (("horizontal line", [[40, 140], [240, 146]]), ("circle", _CIRCLE))
  with tfjs_browser.serve(tmp_path) as url, headless.Session(
      modules=tfjs_runtime.node_modules(), error=tfjs_runtime.TFJSRuntimeError) as session:
    for runtime in ("tfjs", "litert"):
      for label, stroke in strokes:
        shot = tmp_path / f"{runtime}-{label}.png"
        page = session.open(f"{url}index.html?runtime={runtime}", screenshot=shot,
                            actions=[{"selector": "#pad", "stroke": stroke}])
        assert page["error"] is None, page
        result = page["result"]
        assert result["runtime"] == runtime and result["label"] == label, result
        if runtime == "litert":
          assert result["backend"] == "litert-wasm", result
        # The page's input to the model is the drawing, and TF.js or
        # LiteRT.js computed on it what JAX computes.
        pixels = np.frombuffer(base64.b64decode(result["pixels"]), "<f4").reshape(1, 28, 28, 1)
        assert (pixels > 0.5).sum() > 20, "the stroke did not reach the model's input"
        want = predict(ran["params"], pixels)[0]
        np.testing.assert_allclose(result["probabilities"], want, atol=1e-3,
                                   err_msg=f"{runtime} on the {result['backend']} backend")
        assert int(np.argmax(result["probabilities"])) == int(np.argmax(want))
        # The screenshot shows the page with the stroke: not blank.
        gray = np.asarray(Image.open(shot).convert("L"), np.float32)
        assert gray.std() > 20 and (gray < 64).sum() > 2000, (shot, gray.std())
