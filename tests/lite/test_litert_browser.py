"""`.tflite` models on LiteRT.js in a real browser: headless Chromium (driven by
puppeteer-core) opens a page served from 127.0.0.1 that loads LiteRT.js
(`@litertjs/core`), compiles the flatbuffer of `jax2tf.to_tflite` (route
"graph") and runs it on XNNPack in WebAssembly; the outputs are compared with
`jax.jit` and with `jax2tf.lite.run` (the LiteRT interpreter in Python).

One Chromium serves the module (`Browser`, module-scoped). Needs Chromium and
the npm packages of package.json; where either is missing these tests are
skipped, saying which. The model set (benchmarks/models) runs in `make
test-all`.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jax2tf
from benchmarks import models
from jax2tf import lite
from jax2tf.deploy import headless
from jax2tf.lite import browser as lite_browser
from tests.model_set import STATIC, assert_runs_like_jax

try:
  headless.chromium()
  headless.node_modules(*lite_browser.PACKAGES)
  _MISSING = ""
except FileNotFoundError as e:
  _MISSING = str(e)

needs_browser = pytest.mark.skipif(bool(_MISSING), reason=f"no LiteRT.js in Chromium: {_MISSING}")
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


@pytest.fixture(scope="module")
def browser():
  with lite_browser.Browser() as b:
    yield b


def _rng(seed):
  return np.random.default_rng(seed)


def elementwise(x):
  return jnp.sin(x) * 2.0 + jnp.exp(-x * x) - jnp.tanh(x)


def mlp(params, x):
  h = jax.nn.relu(x @ params["w1"] + params["b1"])
  return jax.nn.softmax(h @ params["w2"] + params["b2"])


def cnn(params, images):
  dn = ("NHWC", "HWIO", "NHWC")
  h = lax.conv_general_dilated(images, params["k1"], (1, 1), "SAME", dimension_numbers=dn)
  h = lax.reduce_window(
    jax.nn.relu(h + params["b1"]), -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"
  )
  h = lax.conv_general_dilated(h, params["k2"], (1, 1), "SAME", dimension_numbers=dn)
  return jax.nn.log_softmax(jnp.mean(jax.nn.relu(h), axis=(1, 2)) @ params["w"])


def two_in_two_out(x, y):
  return {"sum": x + y.sum(axis=0), "scaled": (x * 3.0, jnp.argmax(y, axis=1).astype(jnp.int32))}


def _mlp_params():
  r = _rng(1)
  return {
    "w1": r.normal(size=(16, 32)).astype(np.float32) / 4,
    "b1": r.normal(size=(32,)).astype(np.float32),
    "w2": r.normal(size=(32, 10)).astype(np.float32) / 6,
    "b2": np.zeros((10,), np.float32),
  }


def _cnn_params():
  r = _rng(2)
  return {
    "k1": r.normal(size=(3, 3, 3, 8)).astype(np.float32) / 3,
    "b1": r.normal(size=(8,)).astype(np.float32) / 10,
    "k2": r.normal(size=(3, 3, 8, 16)).astype(np.float32) / 8,
    "w": r.normal(size=(16, 10)).astype(np.float32) / 4,
  }


# (name, function, params, example inputs): each exported by route "graph".
CASES = [
  ("elementwise", elementwise, None, (_rng(3).normal(size=(4, 33)).astype(np.float32),)),
  ("mlp", mlp, _mlp_params(), (_rng(4).normal(size=(8, 16)).astype(np.float32),)),
  ("cnn", cnn, _cnn_params(), (_rng(5).normal(size=(2, 16, 16, 3)).astype(np.float32),)),
  (
    "two_in_two_out",
    two_in_two_out,
    None,
    (
      _rng(6).normal(size=(3, 5)).astype(np.float32),
      _rng(7).normal(size=(4, 5)).astype(np.float32),
    ),
  ),
]


def _export(fn, params, inputs, **kwargs):
  if params is None:
    return jax2tf.to_tflite(fn, *inputs, route="graph", **kwargs)
  return jax2tf.to_tflite(fn, *inputs, params=params, route="graph", **kwargs)


def _expected(fn, params, inputs):
  result = jax.jit(fn)(*inputs) if params is None else jax.jit(fn)(params, *inputs)
  return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(result)]


def _assert_matches(got, want, where):
  assert len(got) == len(want), (where, len(got), len(want))
  for i, (g, w) in enumerate(zip(got, want)):
    assert g.shape == w.shape and g.dtype == w.dtype, (where, i, g.shape, w.shape, g.dtype)
    np.testing.assert_allclose(g, w, **TOLERANCE, err_msg=f"{where} output {i}")


@needs_browser
@pytest.mark.parametrize("name,fn,params,inputs", CASES, ids=[c[0] for c in CASES])
def test_model_on_litertjs_matches_jax_and_litert(browser, name, fn, params, inputs,
                                                   record_property):
  model = _export(fn, params, inputs)
  run = browser.run(model, *inputs, repeats=5)
  assert run.accelerator == "wasm"
  # The steady runs reuse the first run's input tensors, as TF.js's do.
  assert 0 < run.details["steady_ms"] < 60_000, run.details
  record_property("litertjs_ms", run.details)
  print(f"{name}: LiteRT.js wasm {run.details}")
  want = _expected(fn, params, inputs)
  _assert_matches(run.outputs, want, f"{name} on LiteRT.js")
  _assert_matches(run.outputs, lite.run(model, *inputs), f"{name}, LiteRT.js against LiteRT")


@needs_browser
def test_inputs_by_name_and_outputs_in_jax_order(browser):
  _, fn, _, (x, y) = CASES[3]
  model = _export(fn, None, (x, y))
  assert model.input_names == ("x", "y")
  by_name = browser.run(model, y=y, x=x)
  positional = browser.run(model, x, y)
  want = _expected(fn, None, (x, y))
  _assert_matches(by_name.outputs, want, "by name")
  for a, b in zip(by_name.outputs, positional.outputs):
    np.testing.assert_array_equal(a, b)
  with pytest.raises(TypeError, match="the model takes 2 inputs"):
    browser.run(model, x)
  with pytest.raises(TypeError, match="the model takes float32, got float64"):
    browser.run(model, x.astype(np.float64), y)
  with pytest.raises(ValueError, match=r"the model takes shape \(3, 5\), got \(2, 5\)"):
    browser.run(model, x[:2], y)


@needs_browser
def test_polymorphic_batch_is_refused_and_static_exports_run_at_two_batch_sizes(browser):
  params = _mlp_params()
  x = _rng(8).normal(size=(3, 16)).astype(np.float32)
  polymorphic = _export(mlp, params, (x,), polymorphic_shapes=["(b, 16)"])
  # LiteRT.js 2.5 checks each input against the shape signature, -1 and all:
  # it runs no model with a dynamic dimension.
  with pytest.raises(ValueError, match=r"static shapes only.*'x' \(-1, 16\)"):
    browser.run(polymorphic, x)
  for batch in (2, 5):
    xb = _rng(9 + batch).normal(size=(batch, 16)).astype(np.float32)
    run = browser.run(_export(mlp, params, (xb,)), xb)
    want = _expected(mlp, params, (xb,))
    _assert_matches(run.outputs, want, f"batch {batch}")
    # The polymorphic model on LiteRT, resized to the batch, agrees.
    _assert_matches(run.outputs, lite.run(polymorphic, xb), f"batch {batch} against LiteRT")


@needs_browser
def test_webgpu_runs_on_the_adapter_chromium_offers(browser):
  # With --enable-unsafe-webgpu (lite_browser.FLAGS), Chromium on Linux has
  # an adapter even without a GPU: SwiftShader's, on the CPU. Where it has
  # none, the next test's error is what a run gives, and this test fails.
  (x,) = CASES[0][3]
  model = _export(elementwise, None, (x,))
  run = browser.run(model, x, accelerator="webgpu")
  assert run.accelerator == "webgpu" and run.details["webgpu_adapter"], run.details
  # GPU transcendental functions: float32, yet not to the last bits.
  np.testing.assert_allclose(run.outputs[0], elementwise(x), rtol=1e-3, atol=1e-3)


@needs_browser
def test_webgpu_without_an_adapter_is_an_error_not_a_run_on_wasm(monkeypatch):
  # Without --enable-unsafe-webgpu, Chromium on Linux offers no adapter.
  monkeypatch.setattr(lite_browser, "FLAGS", ())
  (x,) = CASES[0][3]
  model = _export(elementwise, None, (x,))
  with pytest.raises(lite_browser.WebGPUUnavailableError, match="accelerator='webgpu': ") as info:
    lite_browser.run(model, x, accelerator="webgpu")
  assert "run on accelerator='wasm'" in str(info.value)


def test_unsupported_element_types_are_refused_before_the_browser_starts():
  x = np.arange(6, dtype=np.float32)
  model = jax2tf.to_tflite(lambda x: x > 2.0, x, route="graph")
  with pytest.raises(ValueError, match=r"float32, int32, uint8 only.*output 'output_0' \(bool\)"):
    lite_browser.run(model, x)


def test_accelerator_is_checked():
  with pytest.raises(ValueError, match=r"accelerator: expected one of \('wasm', 'webgpu'\), got 'webgl'"):
    lite_browser.run(b"", accelerator="webgl")


def test_missing_node_packages_and_chromium_say_how_to_install(monkeypatch, tmp_path):
  monkeypatch.setenv(headless.NODE_MODULES_ENV, str(tmp_path))
  with pytest.raises(FileNotFoundError, match=r"@litertjs/core.*make node_modules/.installed"):
    headless.node_modules(*lite_browser.PACKAGES)
  monkeypatch.delenv(headless.CHROMIUM_ENV, raising=False)
  monkeypatch.setenv("PATH", str(tmp_path))
  with pytest.raises(FileNotFoundError, match="apt-get install chromium"):
    headless.chromium()


# The model set at its default sizes (LiteRT.js runs static shapes only).
# Rows LiteRT.js cannot take, pinned with what stops them: the VAE samples
# from a PRNG key, a uint32 input, and LiteRT.js makes no uint32 tensors.
REFUSED = {"vae": (ValueError, r"float32, int32, uint8 only; the model has input 'x1' \(uint32\)")}


def _model_set():
  for name in models.REGISTRY:
    yield pytest.param(name, id=name, marks=pytest.mark.slow)


@needs_browser
@pytest.mark.parametrize("name", list(_model_set()))
def test_model_set_on_litertjs(browser, name):
  m = models.get(name)
  model = jax2tf.to_tflite(m.fn, *m.inputs, params=m.params, route="graph", verify=False)

  def check():
    assert_runs_like_jax(m, STATIC, lambda *inputs: browser.run(model, *inputs).outputs,
                         " on LiteRT.js")

  if name not in REFUSED:
    check()
    return
  error, match = REFUSED[name]
  with pytest.raises(error, match=match):
    check()
