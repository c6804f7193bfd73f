"""A drawing classifier in the browser: a small Flax CNN trained here on strokes
the script draws itself (no downloads), exported with jax2tf.to_tfjs and
jax2tf.to_tflite, and a page where a person draws on a canvas and sees the
predicted class, computed by TF.js or LiteRT.js (a select on the page).

    python examples/tfjs_drawing.py [--out DIR] [--steps N] [--serve]

writes DIR/model/ (the TF.js graph model), DIR/model.tflite (for LiteRT.js),
DIR/index.html (the page), and links TF.js's browser build under DIR/tfjs/
and LiteRT.js's under DIR/litert/; --serve then serves DIR on
http://127.0.0.1:8000/ until Ctrl-C. The script checks the TF.js model in
Node, and the .tflite model on LiteRT, against jax.jit before it returns.
"""

import argparse
import pathlib
import tempfile
import time

import flax.linen as nn
import jax
import numpy as np
import optax

import jax2tf
from jax2tf import lite, tfjs
from jax2tf.deploy import headless
from jax2tf.lite import browser as lite_browser
from jax2tf.tfjs import browser

CLASSES = ("horizontal line", "vertical line", "diagonal line", "circle")
SIZE = 28  # the model's input: SIZE x SIZE pixels, 1.0 where the ink is
PAGE = pathlib.Path(__file__).with_name("tfjs_drawing.html")


# --------------------------------------------------------------------------
# Strokes, drawn as the page draws them: a round pen on a 280-pixel canvas,
# scaled down to SIZE pixels (ink 1.0, paper 0.0).


def _stroke_points(kind: int, rng) -> np.ndarray:
  center = rng.uniform(9, 19, size=2)
  length = rng.uniform(10, 20)
  t = np.linspace(-0.5, 0.5, 64)[:, None]
  if kind == 0:  # horizontal
    direction = np.array([1.0, rng.normal(0, 0.08)])
  elif kind == 1:  # vertical
    direction = np.array([rng.normal(0, 0.08), 1.0])
  elif kind == 2:  # diagonal, either way
    direction = np.array([1.0, rng.choice([-1.0, 1.0]) * rng.uniform(0.6, 1.6)])
  else:  # circle (an ellipse, roughly)
    angle = np.linspace(0, 2 * np.pi * rng.uniform(0.9, 1.05), 96)
    radius = length / 2 * np.array([rng.uniform(0.7, 1.0), rng.uniform(0.7, 1.0)])
    return center + np.stack([np.cos(angle), np.sin(angle)], 1) * radius
  direction = direction / np.linalg.norm(direction)
  return center + t * length * direction


def draw(kind: int, rng) -> np.ndarray:
  """One stroke of class `kind`, as a [SIZE, SIZE] float32 image."""
  points = _stroke_points(kind, rng)
  ys, xs = np.mgrid[0:SIZE, 0:SIZE] + 0.5
  grid = np.stack([xs, ys], -1).reshape(-1, 1, 2)
  distance = np.min(np.linalg.norm(grid - points[None], axis=-1), axis=1)
  width = rng.uniform(0.8, 1.3)  # the pen's radius, in model pixels
  ink = np.clip(width + 0.5 - distance, 0, 1)
  return ink.reshape(SIZE, SIZE).astype(np.float32)


def dataset(n: int, seed: int):
  rng = np.random.default_rng(seed)
  labels = rng.integers(0, len(CLASSES), size=n)
  images = np.stack([draw(k, rng) for k in labels])[..., None]
  return images, labels.astype(np.int32)


# --------------------------------------------------------------------------
# The model


class Classifier(nn.Module):
  @nn.compact
  def __call__(self, x):
    x = nn.relu(nn.Conv(16, (3, 3))(x))
    x = nn.max_pool(x, (2, 2), (2, 2))
    x = nn.relu(nn.Conv(32, (3, 3))(x))
    x = nn.max_pool(x, (2, 2), (2, 2))
    x = nn.relu(nn.Dense(64)(x.reshape(x.shape[0], -1)))
    return nn.Dense(len(CLASSES))(x)


def predict(params, images):
  """Class probabilities of a batch of [b, SIZE, SIZE, 1] images."""
  return jax.nn.softmax(Classifier().apply(params, images))


def train(steps: int, seed: int = 0):
  images, labels = dataset(4096, seed)
  params = Classifier().init(jax.random.PRNGKey(seed), images[:1])
  optimizer = optax.adam(3e-3)
  state = optimizer.init(params)

  @jax.jit
  def step(params, state, x, y):
    def loss(p):
      logits = Classifier().apply(p, x)
      return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    grads = jax.grad(loss)(params)
    updates, state = optimizer.update(grads, state)
    return optax.apply_updates(params, updates), state

  rng = np.random.default_rng(seed + 1)
  for _ in range(steps):
    batch = rng.integers(0, len(images), size=64)
    params, state = step(params, state, images[batch], labels[batch])
  return params


def accuracy(params, n: int = 512, seed: int = 99) -> float:
  images, labels = dataset(n, seed)
  return float(np.mean(np.argmax(jax.jit(predict)(params, images), -1) == labels))


# --------------------------------------------------------------------------
# Export, check, serve


def link_litertjs(out: pathlib.Path) -> None:
  """LiteRT.js's browser build under out/litert/ (core/dist and core/wasm,
  wasm-utils/dist), from the pinned npm packages, where the page's import
  map and loadLiteRt look for them."""
  modules = headless.node_modules(*lite_browser.PACKAGES)
  (out / "litert").mkdir(exist_ok=True)
  for package in lite_browser.PACKAGES:  # "@litertjs/core" -> out/litert/core
    link = out / "litert" / package.split("/")[1]
    if link.is_symlink():
      link.unlink()
    link.symlink_to(modules / package)


def export(params, out: pathlib.Path) -> tuple[tfjs.TFJSModel, lite.LiteModel]:
  """The model into out/model (TF.js) and out/model.tflite (LiteRT.js), the
  page into out/index.html, TF.js and LiteRT.js under out/."""
  example = np.zeros((1, SIZE, SIZE, 1), np.float32)
  model = jax2tf.to_tfjs(
    predict,
    example,
    params=params,
    polymorphic_shapes=["(b, 28, 28, 1)"],
    path=out / "model",
    overwrite=True,
  )
  # LiteRT.js runs static shapes only: a batch of one, as the page draws.
  # to_tflite checks it on LiteRT (ai-edge-litert) against jax.jit.
  tflite = jax2tf.to_tflite(predict, example, params=params, path=out / "model.tflite")
  page = PAGE.read_text().replace("__CLASSES__", repr(list(CLASSES)).replace("'", '"'))
  (out / "index.html").write_text(page)
  for name in ("tfjs", "tfjs-wasm"):
    if (out / name).is_symlink() or (out / name).exists():
      (out / name).unlink()
  browser.link_tfjs(out)
  link_litertjs(out)
  return model, tflite


def check_in_node(params, model, seed: int = 5) -> float:
  """The largest difference between TF.js in Node and jax.jit on new strokes."""
  images, _ = dataset(8, seed)
  (got,) = tfjs.run(model, images)
  want = np.asarray(jax.jit(predict)(params, images))
  error = float(np.max(np.abs(got - want)))
  if error > 1e-4:
    raise AssertionError(f"TF.js in Node differs from jax.jit by {error}")
  return error


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument(
    "--out", help="where to write the model and the page (default: a new temporary folder)"
  )
  parser.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
  parser.add_argument(
    "--serve", action="store_true", help="serve the page on http://127.0.0.1:8000/ afterwards"
  )
  options = parser.parse_args(argv)
  out = pathlib.Path(options.out or tempfile.mkdtemp(prefix="tfjs-drawing-"))
  out.mkdir(parents=True, exist_ok=True)
  started = time.perf_counter()
  params = train(options.steps)
  acc = accuracy(params)
  print(
    f"trained {options.steps} steps in {time.perf_counter() - started:.0f} s: "
    f"accuracy {acc:.3f} on new strokes"
  )
  model, tflite = export(params, out)
  error = check_in_node(params, model)
  print(
    f"wrote {out}/index.html, {out}/model and {out}/model.tflite; TF.js in Node matches "
    f"jax.jit (max difference {error:.1e}), and LiteRT too (route {tflite.route!r}, "
    f"max difference {tflite.max_error:.1e})"
  )
  if options.serve:
    with browser.serve(out) as url:
      print(f"draw at {url}index.html (Ctrl-C to stop)")
      try:
        while True:
          time.sleep(3600)
      except KeyboardInterrupt:
        pass
  return {
    "out": str(out),
    "params": params,
    "accuracy": acc,
    "node_error": error,
    "tflite_route": tflite.route,
    "tflite_error": tflite.max_error,
  }


if __name__ == "__main__":
  main()
