"""to_tflite_signatures: several named signatures in one `.tflite`, sharing weights."""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="to_tflite_signatures needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import cli, lite  # noqa: E402
from jax2tf.lite import api as lite_api  # noqa: E402
from jax2tf.lite import inspect as lite_inspect  # noqa: E402
from jax2tf.lite import litert_converter  # noqa: E402

# A decoder-only language model: 2 layers, each one attention block (2
# heads) and an MLP, with a KV cache of MAX_LEN positions per layer.
VOCAB, WIDTH, HEADS, LAYERS, MAX_LEN, HIDDEN = 256, 64, 2, 2, 16, 128
HEAD = WIDTH // HEADS
PROMPT = 6
CACHE = (LAYERS, MAX_LEN, HEADS, HEAD)
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def lm_params(seed=0):
  rng = np.random.default_rng(seed)

  def dense(*shape):
    return (rng.normal(size=shape) / np.sqrt(shape[0])).astype(np.float32)

  def layer():
    return {
      "norm1": np.ones(WIDTH, np.float32),
      "q": dense(WIDTH, WIDTH),
      "k": dense(WIDTH, WIDTH),
      "v": dense(WIDTH, WIDTH),
      "o": dense(WIDTH, WIDTH),
      "norm2": np.ones(WIDTH, np.float32),
      "up": dense(WIDTH, HIDDEN),
      "down": dense(HIDDEN, WIDTH),
    }

  return {
    "embed": dense(VOCAB, WIDTH),
    "position": dense(MAX_LEN, WIDTH),
    "layers": [layer() for _ in range(LAYERS)],
    "unembed": dense(WIDTH, VOCAB),
  }


def _rms_norm(x, scale):
  return x * lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * scale


def _layer(p, x, positions, k_cache, v_cache):
  """x: [T, WIDTH] at `positions` (consecutive); caches [MAX_LEN, HEADS, HEAD]."""
  t = x.shape[0]
  h = _rms_norm(x, p["norm1"])
  q, k, v = ((h @ p[w]).reshape(t, HEADS, HEAD) for w in "qkv")
  k_cache = lax.dynamic_update_slice(k_cache, k, (positions[0], 0, 0))
  v_cache = lax.dynamic_update_slice(v_cache, v, (positions[0], 0, 0))
  scores = jnp.einsum("thd,lhd->htl", q, k_cache) / np.sqrt(HEAD)
  visible = jnp.arange(MAX_LEN)[None, :] <= positions[:, None]
  weights = jax.nn.softmax(jnp.where(visible[None], scores, -1e9), axis=-1)
  attended = jnp.einsum("htl,lhd->thd", weights, v_cache).reshape(t, WIDTH)
  x = x + attended @ p["o"]
  x = x + jax.nn.gelu(_rms_norm(x, p["norm2"]) @ p["up"]) @ p["down"]
  return x, k_cache, v_cache


def _forward(params, tokens, start, k_cache, v_cache):
  positions = start + jnp.arange(tokens.shape[0])
  x = jnp.take(params["embed"], tokens, axis=0) + jnp.take(params["position"], positions, axis=0)
  ks, vs = [], []
  for i, p in enumerate(params["layers"]):
    x, k, v = _layer(p, x, positions, k_cache[i], v_cache[i])
    ks.append(k)
    vs.append(v)
  return x @ params["unembed"], jnp.stack(ks), jnp.stack(vs)


def prefill(params, tokens):
  empty = jnp.zeros(CACHE, jnp.float32)
  return _forward(params, tokens, 0, empty, empty)


def decode(params, token, pos, k_cache, v_cache):
  logits, k_cache, v_cache = _forward(params, token[None], pos, k_cache, v_cache)
  return logits[0], k_cache, v_cache


def _prompt():
  return np.random.default_rng(1).integers(0, VOCAB, PROMPT).astype(np.int32)


def _lm_signatures(**kw):
  cache = np.random.default_rng(2).normal(size=CACHE).astype(np.float32)
  return jax2tf.to_tflite_signatures(
    {
      "prefill": (prefill, _prompt()),
      "decode": (decode, np.int32(3), np.int32(PROMPT), cache, cache),
    },
    params=lm_params(),
    **kw,
  )


@pytest.fixture(scope="module")
def lm_model(tmp_path_factory):
  path = tmp_path_factory.mktemp("lm") / "lm.tflite"
  model = _lm_signatures(path=str(path))
  assert path.read_bytes() == bytes(model)
  return model


def test_prefill_and_decode_are_named_signatures(lm_model):
  assert isinstance(lm_model, bytes) and lm_model.route == "litert"
  outputs = ("output_0", "output_1", "output_2")
  assert list(lm_model.signatures) == ["prefill", "decode"]
  assert lm_model.signatures["prefill"].input_names == ("tokens",)
  assert lm_model.signatures["decode"].input_names == ("token", "pos", "k_cache", "v_cache")
  for s in lm_model.signatures.values():
    assert s.output_names == outputs
    assert s.max_error is not None and s.max_error < 1e-4
  found = lite_inspect.signatures(lm_model)
  assert list(found) == ["prefill", "decode"]
  prefill_sig, decode_sig = found["prefill"], found["decode"]
  assert [(t["name"], t["dtype"], t["shape"]) for t in prefill_sig["inputs"]] == [
    ("tokens", "int32", [PROMPT])
  ]
  assert sorted((t["name"], t["dtype"], t["shape"]) for t in decode_sig["inputs"]) == [
    ("k_cache", "float32", list(CACHE)),
    ("pos", "int32", []),
    ("token", "int32", []),
    ("v_cache", "float32", list(CACHE)),
  ]
  assert [(t["name"], t["shape"]) for t in prefill_sig["outputs"]] == [
    ("output_0", [PROMPT, VOCAB]),
    ("output_1", list(CACHE)),
    ("output_2", list(CACHE)),
  ]
  assert [(t["name"], t["shape"]) for t in decode_sig["outputs"]] == [
    ("output_0", [VOCAB]),
    ("output_1", list(CACHE)),
    ("output_2", list(CACHE)),
  ]


def test_prefill_then_decode_steps_match_jax(lm_model):
  params = lm_params()
  tokens = _prompt()
  expected = jax.jit(prefill)(params, tokens)
  logits, k_cache, v_cache = lite.run(lm_model, tokens, signature="prefill")
  for e, a in zip(expected, (logits, k_cache, v_cache)):
    np.testing.assert_allclose(a, e, **TOLERANCE)
  _, jax_k, jax_v = expected
  jax_decode = jax.jit(decode)
  token = np.int32(np.argmax(expected[0][-1]))
  for pos in range(PROMPT, PROMPT + 5):
    # Both continue from their own caches with the token JAX chose.
    logits, k_cache, v_cache = lite.run(
      lm_model, token, np.int32(pos), k_cache, v_cache, signature="decode"
    )
    jax_logits, jax_k, jax_v = jax_decode(params, token, np.int32(pos), jax_k, jax_v)
    np.testing.assert_allclose(logits, jax_logits, **TOLERANCE)
    np.testing.assert_allclose(k_cache, jax_k, **TOLERANCE)
    np.testing.assert_allclose(v_cache, jax_v, **TOLERANCE)
    token = np.int32(np.argmax(jax_logits))
  # Named inputs reach a signature too.
  named = lite.run(
    lm_model, signature="decode", token=token, pos=np.int32(pos + 1), k_cache=jax_k, v_cache=jax_v
  )
  np.testing.assert_allclose(
    named[0], jax_decode(params, token, np.int32(pos + 1), jax_k, jax_v)[0], **TOLERANCE
  )


def test_weights_are_stored_once(lm_model):
  params = lm_params()
  prefill_only = jax2tf.to_tflite(prefill, _prompt(), params=params, route="litert", verify=False)
  # Two copies of the weights would make it about twice as large.
  assert len(lm_model) < 1.3 * len(prefill_only)
  weight_bytes = lite_api._param_bytes(params)
  _, constant_bytes = lite_inspect.constants(lm_model)
  assert weight_bytes <= constant_bytes < 1.1 * weight_bytes


def test_run_names_the_signatures_a_model_has(lm_model):
  with pytest.raises(ValueError, match=r"signature: the model has \['decode', 'prefill'\]"):
    lite.run(lm_model, _prompt(), signature="generate")


def test_functions_without_params_and_a_polymorphic_signature():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)

  def add(x, y):
    return x + y

  def scale(x):
    return {"doubled": 2 * x, "halved": x / 2}

  model = jax2tf.to_tflite_signatures(
    {"add": (add, x, x), "scale": (scale, x)},
    polymorphic_shapes={"scale": ["(b, 3)"]},
  )
  assert model.signatures["add"].input_names == ("x", "y")
  assert lite_inspect.signatures(model)["scale"]["inputs"][0]["shape_signature"] == [-1, 3]
  np.testing.assert_array_equal(lite.run(model, x, x + 1, signature="add")[0], 2 * x + 1)
  big = np.ones((5, 3), np.float32)
  doubled, halved = lite.run(model, big, signature="scale")
  np.testing.assert_array_equal(doubled, 2 * big)
  np.testing.assert_array_equal(halved, big / 2)


def _loop(x):
  return lax.fori_loop(0, 3, lambda i, v: v * 2 + i, x)


def test_a_refusal_names_the_signature():
  def spectrum(x):
    return jnp.abs(jnp.fft.fft(x))

  x = np.ones(4, np.float32)
  with pytest.raises(litert_converter.LiteRTConversionError, match=r"^signature 'spectrum': "):
    jax2tf.to_tflite_signatures(
      {"double": (lambda x: 2 * x, x), "spectrum": (spectrum, x)}, verify=False
    )


def test_loops_of_several_signatures_each_run_like_jax():
  x = np.arange(4, dtype=np.float32)
  model = jax2tf.to_tflite_signatures(
    {"loop": (_loop, x), "twice": (lambda x: _loop(_loop(x)), x)}, verify=False
  )
  for name, fun in (("loop", _loop), ("twice", lambda x: _loop(_loop(x)))):
    np.testing.assert_allclose(lite.run(model, x, signature=name)[0], jax.jit(fun)(x))


def _two(x, y):
  return x + y


@pytest.mark.parametrize(
  "signatures, kw, message",
  [
    ({}, {}, r"signatures: expected at least one"),
    ([("f", (_two, 1, 2))], {}, r"signatures: expected a mapping"),
    ({"9lives": (_two, 1, 2)}, {}, r"signatures: the name '9lives' is not a letter"),
    ({"": (_two, 1, 2)}, {}, r"signatures: the name '' "),
    ({"f": _two}, {}, r"signatures\['f'\]: expected \(function, \*input_specs\)"),
    ({"f": (1, 2)}, {}, r"signatures\['f'\]: expected \(function, \*input_specs\)"),
    ({"f": (_two, 1)}, {}, r"signatures\['f'\]: _two takes 2 inputs \(x, y\), got 1 input specs"),
    (
      {"f": (_two, 1, 2)},
      {"params": {}},
      r"signatures\['f'\]: _two takes 1 inputs after params \(y\), got 2",
    ),
    ({"f": (_two, 1, 2)}, {"polymorphic_shapes": {"g": ["(b,)"]}}, r"polymorphic_shapes: \['g'\]"),
    ({"f": (_two, 1, 2)}, {"polymorphic_shapes": ["(b,)"]}, r"polymorphic_shapes: expected a"),
    ({"f": (_two, 1, 2)}, {"route": "graph"}, r"route: only 'litert' writes several"),
    ({"f": (_two, 1, 2)}, {"tolerance": (1e-4,)}, r"tolerance: expected \(rtol, atol\)"),
  ],
)
def test_bad_arguments_are_named(signatures, kw, message):
  with pytest.raises(ValueError, match=message):
    jax2tf.to_tflite_signatures(signatures, **kw)


def test_a_bad_polymorphic_spec_names_the_signature():
  x = np.ones(3, np.float32)
  with pytest.raises(ValueError, match=r"signatures\['f'\]: polymorphic_shapes: expected one"):
    jax2tf.to_tflite_signatures({"f": (_two, x, x)}, polymorphic_shapes={"f": ["(b,)"]})


# `jax2tf export --signature NAME=MODEL ...`: models named on the command line.
def lm_prefill_model():
  return {"fn": prefill, "params": lm_params(), "inputs": [_prompt()]}


def lm_decode_model():
  cache = np.random.default_rng(2).normal(size=CACHE).astype(np.float32)
  return {
    "fn": decode,
    "params": lm_params(),
    "inputs": [np.int32(3), np.int32(PROMPT), cache, cache],
  }


def lm_decode_other_weights():
  return {**lm_decode_model(), "params": lm_params(seed=1)}


_HERE = "tests.lite.test_signatures"
_SIGNATURE_ARGS = [
  "--signature",
  f"prefill={_HERE}:lm_prefill_model",
  "--signature",
  f"decode={_HERE}:lm_decode_model",
]


@pytest.fixture
def _repository_root(monkeypatch):
  # Model references import like `python -m` does: from the current folder.
  monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_cli_exports_and_checks_each_signature(tmp_path, capsys, _repository_root):
  out = tmp_path / "lm.tflite"
  argv = ["export", *_SIGNATURE_ARGS, "--target", "tflite", "--out", str(out), "--quiet", "--json"]
  status = cli.main(argv)
  stdout, err = capsys.readouterr()
  assert status == 0, err
  report = json.loads(stdout)
  assert report["verification"]["ok"]
  assert sorted(report["verification"]["sets"]) == ["decode: example", "prefill: example"]
  assert list(report["artifact"]["signatures"]) == ["prefill", "decode"]
  assert (tmp_path / "lm.tflite.report.md").exists()
  decode_inputs = lite_inspect.signatures(out.read_bytes())["decode"]["inputs"]
  assert sorted(t["name"] for t in decode_inputs) == ["k_cache", "pos", "token", "v_cache"]


@pytest.mark.parametrize(
  "argv, message",
  [
    (["--signature", "prefill"], "--signature: expected NAME=package.module:FACTORY"),
    (["--signature", f"a={_HERE}:lm_prefill_model"] * 2, "--signature: 'a' is given twice"),
    ([], "expected MODEL (package.module:NAME), or --signature NAME=MODEL"),
    ([f"{_HERE}:lm_prefill_model", *_SIGNATURE_ARGS], "with several signatures, give each"),
    ([*_SIGNATURE_ARGS, "--serialization", "native"], "--serialization: not used with"),
    (
      [
        "--signature",
        f"p={_HERE}:lm_prefill_model",
        "--signature",
        f"d={_HERE}:lm_decode_other_weights",
      ],
      "its params differ from those of p",
    ),
  ],
)
def test_cli_signature_usage_errors(argv, message, tmp_path, capsys, _repository_root):
  status = cli.main(
    ["export", *argv, "--target", "tflite", "--out", str(tmp_path / "m"), "--quiet"]
  )
  _, err = capsys.readouterr()
  assert status == 2, err
  assert message in err, err
  assert not (tmp_path / "m").exists()


def test_cli_signatures_are_for_tflite(tmp_path, capsys, _repository_root):
  status = cli.main(["export", *_SIGNATURE_ARGS, "--out", str(tmp_path / "m"), "--quiet"])
  _, err = capsys.readouterr()
  assert status == 2 and "written for --target tflite only, not saved_model" in err, err
