"""TF.js models in a real browser: headless Chromium (Debian's `chromium`,
driven by puppeteer-core) opens a page served from 127.0.0.1 that loads TF.js
and the converted model, runs it, and reports the outputs, compared here with
`jax.jit`.

The page asks for the WebGL backend (headless Chromium has WebGL through
SwiftShader, with float32 textures) and falls back to the cpu backend where
it cannot start; each test records which ran (`-rA` shows it). Needs
Chromium: `make install` installs it with apt where it can; where it is
missing these tests are skipped, saying so.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax2tf
from benchmarks import models
from jax2tf.tfjs import browser

try:
  CHROMIUM, _MISSING = browser.chromium(), ""
except FileNotFoundError as e:
  CHROMIUM, _MISSING = None, str(e)

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=f"no Chromium: {_MISSING}")


@functools.cache
def _model(name: str):
  m = models.get(name)
  v = models.variants_of(name)[0]  # the batch variant: a dynamic batch in the page too
  return jax2tf.to_tfjs(m.fn, *m.inputs_for(v, v.sizes[0]), params=m.params,
                        polymorphic_shapes=list(v.specs)), v


# Each starts Chromium and takes half a minute. The fast tier runs the CNN
# (convolutions, pooling) and the transformer (attention, softmax, layer norm);
# the ViT, made of both, runs in `make test-all`.
@needs_chromium
@pytest.mark.parametrize("name", ["cnn", "transformer_lm",
                                  pytest.param("vit", marks=pytest.mark.slow)])
def test_model_in_headless_chromium(name, record_property):
  m = models.get(name)
  model, variant = _model(name)
  inputs = m.inputs_for(variant, variant.sizes[1])
  run = browser.run(model, *inputs, backend="webgl", fallback="cpu")
  record_property("tfjs_backend", run.backend)
  print(f"{name}: ran on the TF.js {run.backend} backend in Chromium ({run.details})")
  assert run.backend in ("webgl", "cpu")
  expected = jax.tree_util.tree_leaves(jax.jit(m.fn)(m.params, *inputs))
  assert len(run.outputs) == len(expected)
  # The model's own tolerance, on WebGL too (float32 textures).
  for i, (got, want) in enumerate(zip(run.outputs, expected)):
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (i, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=m.rtol, atol=m.atol,
                               err_msg=f"{name} output {i} on {run.backend}")


@needs_chromium
def test_page_errors_come_back():
  model, variant = _model("cnn")
  m = models.get("cnn")
  with pytest.raises(ValueError, match="backend: expected one of"):
    browser.run(model, *m.inputs_for(variant, 1), backend="webgl2")
  wrong = np.zeros((1, 3, 3, 1), np.float32)
  with pytest.raises(ValueError, match="the model takes shape"):
    browser.run(model, wrong)


@needs_chromium
def test_the_page_calls_models_as_nodes_runner_does():
  # Synchronously where the graph allows it: through executeAsync each call
  # costs Chromium about 0.4 ms more, which would swamp a small model's time.
  # A loop whose trip count depends on the data needs executeAsync.
  def halve_until_small(x):
    return jax.lax.while_loop(lambda v: jnp.max(v) > 1.0, lambda v: v / 2, x)

  x = np.array([3.0, 40.0], np.float32)
  for fn, called in ((jnp.sin, "execute"), (halve_until_small, "executeAsync")):
    run = browser.run(jax2tf.to_tfjs(fn, x), x, backend="wasm", fallback="cpu", repeats=1)
    assert run.details["called"] == called, fn
    assert run.details["steady_ms"] > 0
    np.testing.assert_allclose(run.outputs[0], jax.jit(fn)(x), rtol=1e-6)


def test_missing_chromium_says_how_to_install(monkeypatch, tmp_path):
  monkeypatch.delenv(browser.CHROMIUM_ENV, raising=False)
  monkeypatch.setenv("PATH", str(tmp_path))
  with pytest.raises(FileNotFoundError, match="apt-get install chromium"):
    browser.chromium()
  monkeypatch.setenv(browser.CHROMIUM_ENV, str(tmp_path / "nothing"))
  with pytest.raises(FileNotFoundError, match="is not an executable"):
    browser.chromium()


@needs_chromium
def test_bit_arithmetic_exact_on_wasm_and_refused_on_webgl():
  # WebGL holds int32 in float32 textures: the PRNG's 32-bit words would
  # come out wrong there, without an error.
  def sample(key_data):
    key = jax.random.wrap_key_data(key_data, impl="threefry2x32")
    return jax.random.bits(key, (4, 8), np.uint32), jax.random.normal(key, (8,))

  key_data = np.array([0, 2**31 - 1], np.uint32)
  model = jax2tf.to_tfjs(sample, key_data)
  inexact = model.model_json["userDefinedMetadata"]["jax2tf"]["webgl_inexact"]
  assert {"threefry2x32", "xor"} <= set(inexact)
  with pytest.raises(ValueError, match="WebGL backend holds in float32"):
    browser.run(model, key_data, backend="webgl")
  run = browser.run(model, key_data, backend="wasm", fallback="cpu")
  bits, normal = jax.jit(sample)(key_data)
  np.testing.assert_array_equal(run.outputs[0], bits)
  np.testing.assert_allclose(run.outputs[1], normal, rtol=1e-6, atol=1e-6)


def test_models_without_bit_arithmetic_are_not_flagged_for_webgl():
  model, _ = _model("transformer_lm")
  assert model.model_json["userDefinedMetadata"]["jax2tf"]["webgl_inexact"] == []
