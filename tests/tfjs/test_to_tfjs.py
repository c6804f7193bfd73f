"""jax2tf.to_tfjs: graph models run by the pure JavaScript TF.js in Node, against jax.jit.

Models are converted once per module and each Node process runs several
input sets (`run_many`), so the file runs in seconds.
"""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from jax2tf import tfjs
from jax2tf.tfjs import graph_model
from tests.lite.test_to_tflite import _params, mlp  # matmul + bias + relu, with params

NO_SHAPE_CHECKS = [jax2tf.DisabledSafetyCheck.shape_assertions()]


def _assert_matches_jax(fun, input_sets, got, rtol=1e-5, atol=1e-5):
  assert len(got) == len(input_sets)
  for args, outputs in zip(input_sets, got):
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(fun)(*args))]
    assert len(outputs) == len(want)
    for i, (g, w) in enumerate(zip(outputs, want)):
      assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
      np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")


def elementwise(x, y):
  return jnp.tanh(x) * y + jnp.exp(-x * x) - jnp.where(x > y, x, y) / (1 + jnp.abs(y))


def _mlp_inputs(batch, seed):
  rng = np.random.default_rng(seed)
  return rng.normal(size=(batch, 6)).astype(np.float32), np.float32(1.5)


def _floats(shape, seed):
  return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


@pytest.fixture(scope="module")
def elementwise_model():
  return jax2tf.to_tfjs(elementwise, _floats((3, 4), 0), _floats((3, 4), 1))


@pytest.fixture(scope="module")
def mlp_model(tmp_path_factory):
  params = _params()
  path = tmp_path_factory.mktemp("tfjs") / "mlp"
  return params, jax2tf.to_tfjs(mlp, *_mlp_inputs(4, 0), params=params, path=path)


@pytest.fixture(scope="module")
def batch_polymorphic_mlp():
  params = _params(seed=3)
  model = jax2tf.to_tfjs(
    mlp,
    *_mlp_inputs(4, 0),
    params=params,
    polymorphic_shapes=["(b, 6)", None],
    disabled_checks=NO_SHAPE_CHECKS,
  )
  return params, model


@pytest.mark.parametrize("backend", ["cpu", "wasm"])
def test_elementwise_matches_jax(elementwise_model, backend):
  input_sets = [(_floats((3, 4), s), _floats((3, 4), s + 10)) for s in range(2)]
  input_sets.append((np.zeros((3, 4), np.float32), np.full((3, 4), -2.0, np.float32)))
  got = tfjs.run_many(elementwise_model, input_sets, backend=backend)
  _assert_matches_jax(elementwise, input_sets, got)
  assert elementwise_model.input_names == ("x", "y")


def test_mlp_with_params_from_its_directory(mlp_model):
  params, model = mlp_model
  assert model.input_names == ("images", "scale") and model.output_names == ("output_0",)
  input_sets = [_mlp_inputs(4, seed) for seed in (1, 2)]
  # From the directory alone: the input order comes from model.json.
  got = tfjs.run_many(model.path, input_sets)
  _assert_matches_jax(lambda *xs: mlp(params, *xs), input_sets, got)


@pytest.mark.parametrize("backend", ["cpu", "wasm"])
def test_polymorphic_batch_runs_at_two_sizes(batch_polymorphic_mlp, backend):
  params, model = batch_polymorphic_mlp
  dims = model.model_json["signature"]["inputs"]["images"]["tensorShape"]["dim"]
  assert [d["size"] for d in dims] == ["-1", "6"]
  input_sets = [_mlp_inputs(1, seed=5), _mlp_inputs(7, seed=6)]
  got = tfjs.run_many(model, input_sets, backend=backend)
  _assert_matches_jax(lambda *xs: mlp(params, *xs), input_sets, got)


def test_shape_checks_run_in_tfjs_and_name_the_failed_spec():
  f = lambda x, y: x * y  # noqa: E731
  x = _floats((3, 2), 20)
  model = jax2tf.to_tfjs(f, x, x, polymorphic_shapes=["(b, 2)", "(b, 2)"])
  checks = model.model_json["userDefinedMetadata"]["jax2tf"]["shape_checks"]
  assert len(checks) == 2 and all(c["message"] for c in checks), checks
  ops = {n["op"] for n in model.model_json["modelTopology"]["node"]}
  assert not ops & {"Assert", "AsString", "StringJoin"}, ops
  good = [(_floats((b, 2), b), _floats((b, 2), b + 1)) for b in (1, 5)]
  _assert_matches_jax(f, good, tfjs.run_many(model, good))
  with pytest.raises(tfjs.TFJSRuntimeError) as info:
    tfjs.run(model, _floats((3, 2), 0), _floats((4, 2), 1))
  message = str(info.value)
  assert "x: [3,2], y: [4,2]" in message, message
  assert "inconsistency between dimension size args[1].shape[0]" in message, message
  with pytest.raises(tfjs.TFJSRuntimeError, match="Expected value >= 1 for dimension variable 'b'"):
    tfjs.run(model, _floats((0, 2), 0), _floats((0, 2), 1))


def test_disabled_shape_checks_leave_no_check_in_the_model(batch_polymorphic_mlp):
  _, model = batch_polymorphic_mlp
  assert model.model_json["userDefinedMetadata"]["jax2tf"]["shape_checks"] == []


def test_runner_runs_many_models_in_one_process(elementwise_model, mlp_model, tmp_path):
  params, mlp_tfjs = mlp_model
  saved = elementwise_model.save(tmp_path / "elementwise")
  broken = json.loads((tmp_path / "elementwise" / "model.json").read_text())
  (tanh,) = [n for n in broken["modelTopology"]["node"] if n["op"] == "Tanh"]
  tanh["op"] = "NoSuchOp"
  broken_dir = tmp_path / "broken"
  broken_dir.mkdir()
  for name in saved.files:
    (broken_dir / name).write_bytes((tmp_path / "elementwise" / name).read_bytes())
  (broken_dir / "model.json").write_text(json.dumps(broken))
  x, y = _floats((3, 4), 30), _floats((3, 4), 31)
  with tfjs.Runner() as runner:
    _assert_matches_jax(elementwise, [(x, y)], [runner.run(saved.path, x, y)])
    process = runner._proc
    with pytest.raises(tfjs.TFJSRuntimeError, match="NoSuchOp"):
      runner.run(broken_dir, x, y)
    inputs = _mlp_inputs(4, 32)
    _assert_matches_jax(lambda *a: mlp(params, *a), [inputs], [runner.run(mlp_tfjs, *inputs)])
    assert runner._proc is process  # one Node process for all three
  assert runner._proc is None


def test_pytree_outputs_in_jax_order():
  def f(x):
    return {"b": x * 2, "a": (jnp.sum(x), x - 1), "c": [jnp.argmax(x, axis=1), x > 0]}

  x = _floats((2, 5), 7)
  model = jax2tf.to_tfjs(f, x)
  assert model.output_names == tuple(f"output_{i}" for i in range(5))
  _assert_matches_jax(f, [(x,)], [tfjs.run(model, x)])


def test_loops_and_conditionals_run():
  def f(x):
    x = jax.lax.fori_loop(0, 3, lambda i, c: c * 0.5 + jnp.sin(c), x)
    x = jax.lax.cond(jnp.sum(x) > 0, lambda a: a + 1, lambda a: a - 1, x)
    return jax.lax.scan(lambda c, row: (c + row, c * row), jnp.zeros(4, x.dtype), x)

  input_sets = [(_floats((3, 4), 8),), (-np.abs(_floats((3, 4), 9)),)]
  model = jax2tf.to_tfjs(f, *input_sets[0])
  _assert_matches_jax(f, input_sets, tfjs.run_many(model, input_sets))


def test_model_json_holds_the_graph_and_the_shards_the_weights(mlp_model):
  params, model = mlp_model
  with open(os.path.join(model.path, "model.json"), encoding="utf-8") as f:
    written = json.load(f)
  assert written == model.model_json
  assert written["format"] == "graph-model"
  assert written["convertedBy"] == f"jax2tf {jax2tf.__version__}"
  assert written["generatedBy"] == tf.__version__
  assert set(written["signature"]["inputs"]) == {"images", "scale"}
  for node in written["modelTopology"]["node"]:
    assert not node["op"].startswith(("ReadVariableOp", "VarHandle")), node
    if node["op"] == "Const":
      assert set(node["attr"]["value"]["tensor"]) <= {"dtype", "tensorShape"}, node
  (group,) = written["weightsManifest"]
  shards = [os.path.join(model.path, p) for p in group["paths"]]
  assert sorted(os.listdir(model.path)) == sorted(["model.json", *group["paths"]])
  sizes = {"float32": 4, "int32": 4, "bool": 1}
  total = sum(sizes[w["dtype"]] * int(np.prod(w["shape"])) for w in group["weights"])
  assert sum(os.path.getsize(s) for s in shards) == total
  param_bytes = sum(p.nbytes for p in params.values())
  assert total >= param_bytes


def test_weights_beyond_one_shard_load_across_shards():
  w = _floats((1024, 1100), 11)  # 4.3 MiB of float32
  f = lambda p, x: jnp.tanh(x @ p["w"])  # noqa: E731
  x = _floats((2, 1024), 12)
  model = jax2tf.to_tfjs(f, x, params={"w": w})
  (group,) = model.model_json["weightsManifest"]
  assert group["paths"] == ["group1-shard1of2.bin", "group1-shard2of2.bin"]
  assert len(model.files["group1-shard1of2.bin"]) == graph_model.SHARD_BYTES
  _assert_matches_jax(lambda x: f({"w": w}, x), [(x,)], [tfjs.run(model, x)], rtol=1e-4)


def test_refusal_names_primitive_tf_op_line_and_remedies(tmp_path):
  def f(x):
    return jax.lax.bitcast_convert_type(x, jnp.int32)  # the line the error must point at

  path = tmp_path / "model"
  with pytest.raises(tfjs.TFJSConversionError) as info:
    jax2tf.to_tfjs(f, np.ones((3,), np.float32), path=path)
  assert isinstance(info.value, NotImplementedError)
  message = str(info.value)
  assert "TF op Bitcast, emitted for the JAX primitive bitcast_convert_type" in message, message
  assert "test_to_tfjs.py:" in message, message
  assert "jax2tf.to_tflite" in message, message
  assert not path.exists()


def test_dtypes_tfjs_lacks_are_refused():
  with pytest.raises(tfjs.TFJSConversionError, match="dtype float16 .* convert_element_type"):
    jax2tf.to_tfjs(lambda x: (x.astype(jnp.float16) * 3).astype(jnp.float32), np.ones(2, np.float32))
  with pytest.raises(tfjs.TFJSConversionError, match="input 'x' is float16"):
    jax2tf.to_tfjs(lambda x: x, np.ones(2, np.float16))


def test_complex64_arithmetic_runs_with_scalar_operands():
  def f(x, y):  # Complex, Mul, AddV2, Sub, Real, Imag, ComplexAbs, Reshape, ConcatV2
    z = jax.lax.complex(x, y)
    w = (z * z + z - 1j).reshape(2, 3)  # TF.js read the scalar 1j past its end
    w = jnp.concatenate([w, z.reshape(2, 3) * (2 + 1j)], axis=0)
    return jnp.real(w), jnp.imag(w), jnp.abs(w), jnp.abs(z.astype(jnp.complex64) * x)

  x, y = _floats((6,), 10), _floats((6,), 11)
  _assert_matches_jax(f, [(x, y)], [tfjs.run(jax2tf.to_tfjs(f, x, y), x, y)])


def test_complex64_is_refused_where_tfjs_kernels_refuse_it():
  # TF.js's Prod (as its Sum, Neg, Transpose, Slice, ...) asserts that no
  # input is complex when the model runs: refused at conversion instead.
  with pytest.raises(tfjs.TFJSConversionError, match="TF op Prod on complex64, emitted for the JAX primitive reduce_prod"):
    jax2tf.to_tfjs(lambda x: jnp.abs(jnp.prod(x.astype(jnp.complex64))), _floats((3,), 12))


def test_save_is_atomic_and_keeps_an_existing_directory(tmp_path, elementwise_model):
  path = tmp_path / "model"
  saved = elementwise_model.save(path)
  assert saved.path == str(path) and sorted(os.listdir(path)) == sorted(saved.files)
  with pytest.raises(FileExistsError, match="overwrite"):
    elementwise_model.save(path)
  # A write that fails midway leaves neither a partial directory nor a temporary.
  broken = tfjs.TFJSModel({**saved.files, "missing/shard.bin": b"x"}, ("x", "y"), ("output_0",))
  with pytest.raises(FileNotFoundError):
    broken.save(tmp_path / "other")
  with pytest.raises(FileNotFoundError):
    broken.save(path, overwrite=True)
  # The failed replacement left the first write, a plain directory, alone.
  assert sorted(os.listdir(tmp_path)) == ["model"] and not os.path.islink(path)
  assert sorted(os.listdir(path)) == sorted(saved.files)


def test_run_checks_its_inputs(elementwise_model):
  x = np.ones((3, 4), np.float32)
  with pytest.raises(TypeError, match="takes 2 inputs"):
    tfjs.run(elementwise_model, x)
  with pytest.raises(TypeError, match="input 'y': the model takes float32, got int32"):
    tfjs.run(elementwise_model, x, x.astype(np.int32))
  with pytest.raises(ValueError, match=r"input 'x': the model takes shape \[3, 4\], got \[4, 3\]"):
    tfjs.run(elementwise_model, x.T, x)
  with pytest.raises(ValueError, match="backend: expected one of"):
    tfjs.run(elementwise_model, x, x, backend="webgl")


def test_missing_node_or_packages_say_how_to_install(elementwise_model, monkeypatch, tmp_path):
  x = np.ones((3, 4), np.float32)
  monkeypatch.setenv(tfjs.runtime.NODE_MODULES_ENV, str(tmp_path))
  with pytest.raises(FileNotFoundError, match="make install"):
    tfjs.run(elementwise_model, x, x)
  monkeypatch.delenv(tfjs.runtime.NODE_MODULES_ENV)
  monkeypatch.setenv("PATH", str(tmp_path))
  with pytest.raises(FileNotFoundError, match="Node.js"):
    tfjs.run(elementwise_model, x, x)


def test_tfjs_errors_come_back_with_nodes_message(tmp_path, elementwise_model):
  saved = elementwise_model.save(tmp_path / "model")
  model_json = saved.model_json
  (tanh,) = [n for n in model_json["modelTopology"]["node"] if n["op"] == "Tanh"]
  tanh["op"] = "NoSuchOp"
  (tmp_path / "model" / "model.json").write_text(json.dumps(model_json))
  x = np.ones((3, 4), np.float32)
  with pytest.raises(tfjs.TFJSRuntimeError, match="NoSuchOp"):
    tfjs.run(saved.path, x, x)


@pytest.mark.parametrize("backend", ["cpu", "wasm"])
def test_a_zero_batch_of_a_single_argument_fails_in_tfjs_with_jax_s_message(backend):
  # The check of `b >= 1` for one argument reads its size, cast to bool in
  # TF; TF.js's wasm backend keeps an integer's low byte when it casts to
  # bool, so a size of 256 (batch 4 here) must not read as 0.
  x = _floats((3, 64), 21)
  model = jax2tf.to_tfjs(jnp.sin, x, polymorphic_shapes=["(b, 64)"])
  (check,) = model.model_json["userDefinedMetadata"]["jax2tf"]["shape_checks"]
  assert "Expected value >= 1 for dimension variable 'b'" in check["message"], check
  good = [(_floats((b, 64), b),) for b in (1, 4)]
  _assert_matches_jax(jnp.sin, good, tfjs.run_many(model, good, backend=backend))
  with pytest.raises(tfjs.TFJSRuntimeError, match="Expected value >= 1 for dimension variable 'b'"):
    tfjs.run(model, _floats((0, 64), 0), backend=backend)
