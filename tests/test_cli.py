"""`jax2tf inspect`: reports on SavedModels (native and graph serialization) and
.tflite files, checked against what the artifacts themselves record."""

import importlib
import json
import logging
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

import jax2tf
from jax2tf import cli
from jax2tf.cli import arguments, inspect_cmd, logs, portable_artifact, releases
from jax2tf.lite import inspect as lite_inspect
from jax2tf.native import versions
from tests.support import children

W = np.arange(12, dtype=np.float32).reshape(4, 3) / 10


def f_jax(x):
  return jnp.sin(x) @ W


def _save(path, **convert_kwargs):
  module = tf.Module()
  module.f = tf.function(
    jax2tf.convert(f_jax, polymorphic_shapes=["(b, 4)"], **convert_kwargs),
    autograph=False,
    input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")],
  )
  tf.saved_model.save(module, str(path))
  return str(path)


@pytest.fixture(scope="module")
def native_dir(tmp_path_factory):
  return _save(tmp_path_factory.mktemp("native") / "model")


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory):
  return _save(
    tmp_path_factory.mktemp("graph") / "model", native_serialization=False, enable_xla=False
  )


@pytest.fixture(scope="module")
def tflite_path(tmp_path_factory):
  model = jax2tf.to_tflite(
    lambda x: jnp.sin(x) * 2, np.zeros((3,), np.float32), polymorphic_shapes=["(b,)"]
  )
  path = tmp_path_factory.mktemp("tflite") / "sin.tflite"
  path.write_bytes(bytes(model))
  return str(path)


@pytest.fixture(scope="module")
def flex_path(tmp_path_factory):
  # jax2tf itself keeps to builtin operators, so the Flex model comes from
  # TF's converter directly: Cumprod has no TFLite builtin.
  module = tf.Module()
  module.f = tf.function(
    lambda x: tf.math.cumprod(x, axis=1), input_signature=[tf.TensorSpec([None, 3], tf.float32)]
  )
  converter = tf.lite.TFLiteConverter.from_concrete_functions(
    [module.f.get_concrete_function()], module
  )
  converter.target_spec.supported_ops = [
    tf.lite.OpsSet.TFLITE_BUILTINS,
    tf.lite.OpsSet.SELECT_TF_OPS,
  ]
  path = tmp_path_factory.mktemp("flex") / "cumprod.tflite"
  path.write_bytes(converter.convert())
  return str(path)


def _run(capsys, *argv):
  status = cli.main(list(argv))
  out, err = capsys.readouterr()
  return status, out, err


def _report(capsys, path):
  status, out, err = _run(capsys, "inspect", path, "--json")
  assert status == 0, err
  return json.loads(out)


def _xla_call_module_nodes(path):
  """(function name, node) for every XlaCallModule in the saved graph."""
  proto = saved_model_pb2.SavedModel()
  with open(os.path.join(path, "saved_model.pb"), "rb") as f:
    proto.ParseFromString(f.read())
  return [
    (fn.signature.name, node)
    for fn in proto.meta_graphs[0].graph_def.library.function
    for node in fn.node_def
    if node.op == "XlaCallModule"
  ]


def _expected_releases(calling_convention, stablehlo_version):
  parse = versions.parse_version
  return sorted(
    (
      r
      for r, c in versions.KNOWN_RELEASES.items()
      if c.calling_convention_max >= calling_convention
      and parse(c.stablehlo_version) >= parse(stablehlo_version)
    ),
    key=parse,
  )


def test_native_saved_model_reports_each_xla_call_module_as_the_graph_records_it(
  capsys, native_dir
):
  report = _report(capsys, native_dir)
  assert report["kind"] == "saved_model" and report["serialization"] == "native"
  assert report["written_by"] == tf.__version__
  nodes = _xla_call_module_nodes(native_dir)
  assert len(nodes) == 2  # the function and its gradient
  modules = {m["function"]: m for m in report["xla_call_modules"]}
  assert set(modules) == {fn for fn, _ in nodes}
  installed = versions.installed_tensorflow()
  for fn, node in nodes:
    module = modules[fn]
    assert module["version"] == node.attr["version"].i
    assert module["platforms"] == [p.decode() for p in node.attr["platforms"].list.s]
    assert module["platforms"] == [jax.default_backend().upper()]
    assert module["module_bytes"] == len(node.attr["module"].s)
    # Written for the installed TensorFlow, at the StableHLO version it reads.
    assert module["stablehlo_version"] == installed.stablehlo_version
    assert module["disabled_checks"] == [] and module["has_token_input_output"] is False
  forward = next(m for fn, m in modules.items() if "grad" not in fn)
  assert [i["shape"] for i in forward["module_inputs"]] == [[None, 4]]
  assert forward["polymorphic_inputs"] == 1
  assert forward["output_shapes"] == [[None, 3]] and forward["polymorphic_outputs"] == 1
  want = _expected_releases(forward["version"], installed.stablehlo_version)
  got = report["tf_releases"]
  assert got["releases"] == want
  assert (got["oldest"], got["newest"]) == (want[0], want[-1])
  assert got["newest"] == ".".join(tf.__version__.split(".")[:2]) == "2.21"
  assert report["converters"] == "needs XLA ops: XlaCallModule"


def test_saved_model_signature_has_none_for_the_polymorphic_batch(capsys, native_dir):
  (sig,) = _report(capsys, native_dir)["signatures"].values()
  assert sig["inputs"] == [{"name": "x", "dtype": "float32", "shape": [None, 4]}]
  assert sig["outputs"] == [{"name": "output_0", "dtype": "float32", "shape": [None, 3]}]


def test_module_for_an_older_release_runs_from_that_release_on(capsys, tmp_path):
  module = tf.Module()
  module.f = tf.function(
    jax2tf.convert(
      jnp.sin,
      target_tf_version="2.18",
      native_serialization_platforms=("cpu", "cuda"),
      with_gradient=False,
    ),
    autograph=False,
    input_signature=[tf.TensorSpec([2], tf.float32)],
  )
  tf.saved_model.save(module, str(tmp_path))
  # The proto itself may be named instead of its directory.
  report = _report(capsys, str(tmp_path / "saved_model.pb"))
  (m,) = report["xla_call_modules"]
  target = versions.KNOWN_RELEASES["2.18"]
  assert m["version"] <= target.calling_convention_max
  assert m["stablehlo_version"] == target.stablehlo_version
  assert m["platforms"] == ["CPU", "CUDA"]
  # Lowered for two platforms, the module takes the platform index first.
  assert [i["shape"] for i in m["module_inputs"]] == [[], [2]]
  assert report["tf_releases"]["oldest"] == "2.18"
  assert report["tf_releases"]["releases"] == _expected_releases(m["version"], target.stablehlo_version)


def test_text_report_and_json_hold_the_same_facts(capsys, native_dir):
  status, text, _ = _run(capsys, "inspect", native_dir)
  assert status == 0
  report = _report(capsys, native_dir)
  assert report == json.loads(json.dumps(inspect_cmd.inspect(native_dir)))
  assert f"SavedModel  {os.path.abspath(native_dir)}" in text
  assert "input   x         float32  [None, 4]" in text
  module = report["xla_call_modules"][0]
  assert f"calling convention  {module['version']}" in text
  assert f"StableHLO           {module['stablehlo_version']}" in text
  assert report["tf_releases"]["summary"] in text
  assert "only (the newest release this package knows)" in report["tf_releases"]["summary"]
  assert "needs XLA ops: XlaCallModule" in text


def test_graph_serialized_saved_model_has_no_xla_ops(capsys, graph_dir):
  report = _report(capsys, graph_dir)
  assert report["serialization"] == "graph" and report["xla_call_modules"] == []
  assert report["tf_releases"] is None
  histogram = report["ops"]["histogram"]
  assert {"Sin", "MatMul"} <= set(histogram)
  assert not [op for op in histogram if op.startswith("Xla")]
  # Only what the signature runs: not the checkpoint save/restore functions.
  assert "SaveV2" not in histogram and "RestoreV2" not in histogram
  assert report["ops"]["functions_counted"] < report["ops"]["functions_total"]
  assert report["converters"] == "no XLA ops"
  status, text, _ = _run(capsys, "inspect", graph_dir)
  assert status == 0 and "no XLA ops" in text and "Graph serialization" in text


def test_tflite_report_matches_the_flatbuffer_and_litert(capsys, tflite_path):
  from ai_edge_litert import interpreter

  report = _report(capsys, tflite_path)
  with open(tflite_path, "rb") as f:
    model = f.read()
  assert report["kind"] == "tflite"
  assert report["ops"] == dict(lite_inspect.op_counts(model))
  assert {"SIN", "MUL"} <= set(report["ops"])
  assert report["flex_ops"] == [] and report["needs"] == []
  assert report["file_bytes"] == os.path.getsize(tflite_path)
  # The constant 2.0, and the 0.0 that SIN's argument is compared with (to
  # keep the sign of -0.0, which LiteRT's SIN loses).
  assert report["weight_bytes"] == 2 * np.dtype(np.float32).itemsize
  runner = interpreter.Interpreter(model_path=tflite_path).get_signature_runner("serving_default")
  for side, details in (
    ("inputs", runner.get_input_details()),
    ("outputs", runner.get_output_details()),
  ):
    got = {t["name"]: t for t in report["signatures"]["serving_default"][side]}
    assert set(got) == set(details)
    for name, d in details.items():
      assert got[name]["shape_signature"] == d["shape_signature"].tolist() == [-1]
      assert got[name]["dtype"] == np.dtype(d["dtype"]).name
  status, text, _ = _run(capsys, "inspect", tflite_path)
  assert status == 0
  assert "builtin operators only" in text and "input   x         float32  [-1]" in text


def test_flex_ops_are_reported_with_the_delegate_they_need(capsys, flex_path):
  report = _report(capsys, flex_path)
  assert report["flex_ops"] == ["Cumprod"]
  assert report["needs"] == ["the Flex delegate (TF ops: Cumprod)"]
  (sig,) = report["signatures"].values()
  assert sig["inputs"][0]["shape_signature"] == [-1, 3]


@pytest.mark.parametrize("kind", ["missing", "directory", "text file", "fake tflite"])
def test_bad_paths_exit_2_naming_the_path(capsys, tmp_path, kind):
  path = tmp_path / "artifact"
  if kind == "directory":
    path.mkdir()
  elif kind == "text file":
    path.write_text("not a model")
  elif kind == "fake tflite":
    path = tmp_path / "model.tflite"
    path.write_bytes(b"\x00" * 16)
  status, out, err = _run(capsys, "inspect", str(path))
  assert status == 2 and out == ""
  assert str(path) in err and err.startswith("jax2tf inspect: error:")
  want = "not a TFLite model" if kind == "fake tflite" else "expected a SavedModel directory"
  assert want in err


def test_no_subcommand_is_a_usage_error(capsys):
  status, _, err = _run(capsys)
  assert status == 2 and "COMMAND" in err


def test_release_range_from_known_releases():
  known = sorted(versions.KNOWN_RELEASES, key=versions.parse_version)
  oldest = versions.KNOWN_RELEASES[known[0]]
  every = releases.readers(oldest.calling_convention_max, oldest.stablehlo_version)
  assert every == known
  assert releases.summary(every)["summary"].startswith(f"TensorFlow {known[0]} to {known[-1]}")
  middle = versions.KNOWN_RELEASES[known[3]]
  want = _expected_releases(middle.calling_convention_max, middle.stablehlo_version)
  assert releases.readers(middle.calling_convention_max, middle.stablehlo_version) == want
  newest = versions.KNOWN_RELEASES[known[-1]]
  assert releases.readers(newest.calling_convention_max, newest.stablehlo_version) == [known[-1]]
  none = releases.summary(releases.readers(99, None), releases.requirement(99, None))
  assert none["releases"] == [] and none["oldest"] is None
  assert none["summary"].startswith("no known TensorFlow release")
  assert "calling convention >= 99" in none["summary"]


def test_stablehlo_version_is_read_from_the_bytecode_header():
  text = jax.jit(jnp.sin).lower(np.float32(1)).as_text()
  from jax.extend import mlir as jex_mlir

  for target in ("1.1.1", versions.installed_tensorflow().stablehlo_version):
    serialized = jex_mlir.serialize_portable_artifact(text, target, False)
    assert portable_artifact.stablehlo_version(serialized) == target
  with pytest.raises(portable_artifact.NotBytecodeError, match="expected MLIR bytecode"):
    portable_artifact.header(b"HloModule m")


@pytest.mark.subprocess
def test_python_m_jax2tf_inspect_help():
  out = _python_with("-m", "jax2tf", "inspect", "--help")
  assert "--json" in out and "SavedModel" in out


def _python(code, *args, env=None):
  """`python -c code args` in a fresh process on this checkout: its stdout."""
  return _python_with("-c", code, *args, env=env)


def _python_with(*argv, env=None):
  """`python argv` in a fresh process on this checkout: its stdout."""
  return children.run_python(*argv, env=env)


_HELP = """
import json, sys
from jax2tf import cli
status = cli.main(sys.argv[1:])
print(json.dumps({"status": status, "loaded": [m for m in ("tensorflow", "jax") if m in sys.modules]}))
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("command", [[], ["export"], ["verify"], ["inspect"]], ids=str)
def test_help_imports_neither_tensorflow_nor_jax(command):
  out = _python(_HELP, *command, "--help")
  usage, result = out.rstrip().rsplit("\n", 1)
  assert json.loads(result) == {"status": 0, "loaded": []}
  assert usage.startswith(f"usage: {' '.join(['jax2tf', *command])} ") and "--verbose" in usage


_LOG_LEVELS = """
import json, logging, os, sys, types
from jax2tf import cli

def run(args):
  # The command's run, stubbed: what it finds when it starts.
  seen.append({
    "level": os.environ.get("TF_CPP_MIN_LOG_LEVEL"),
    "absl": logging.getLogger("absl").getEffectiveLevel(),
    "tensorflow": logging.getLogger("tensorflow").getEffectiveLevel(),
  })
  return 0

sys.modules["jax2tf.cli.inspect_cmd"] = types.SimpleNamespace(run=run)
cases = json.loads(sys.argv[1])
seen, after = [], []
for user_level, argv in cases:
  os.environ.pop("TF_CPP_MIN_LOG_LEVEL", None)
  if user_level is not None:
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = user_level
  assert cli.main(argv) == 0
  after.append(os.environ.get("TF_CPP_MIN_LOG_LEVEL"))
print(json.dumps({"seen": seen, "after": after}))
"""


@pytest.mark.subprocess
def test_tensorflow_logs_are_hidden_unless_verbose_or_set_by_the_user():
  cases = [
    (None, ["inspect", "m"]),
    (None, ["--verbose", "inspect", "m"]),
    (None, ["inspect", "m", "--verbose"]),
    ("1", ["inspect", "m"]),
    ("0", ["inspect", "m", "--verbose"]),
  ]
  env = {k: v for k, v in os.environ.items() if k != logs.LEVEL_VARIABLE}
  result = json.loads(_python(_LOG_LEVELS, json.dumps(cases), env=env).splitlines()[-1])
  quiet, verbose = logging.ERROR, logging.WARNING
  assert [(s["level"], s["absl"], s["tensorflow"]) for s in result["seen"]] == [
    (logs.QUIET_LEVEL, quiet, quiet),
    (None, verbose, verbose),
    (None, verbose, verbose),
    ("1", quiet, quiet),  # the user's level, kept
    ("0", verbose, verbose),
  ]
  # The environment of the calling process is left as it was.
  assert result["after"] == [None, None, None, "1", "0"]


def test_verbose_is_taken_before_and_after_the_command():
  assert not cli.parse(["inspect", "m"]).verbose
  assert cli.parse(["--verbose", "inspect", "m"]).verbose
  assert cli.parse(["inspect", "m", "--verbose"]).verbose


def test_log_lines_under_the_level_are_dropped_and_the_rest_kept():
  preamble = (
    b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
  )
  info = b"I0000 00:00:1795901685.139055   14277 port.cc:153] a notice\n"
  warning = b"W0102 10:11:12.123456   14277 loader.cc:7] a warning\n"
  error = b"E0000 00:00:1795901685.2   14277 x.cc:1] an error\n"
  other = b"Traceback (most recent call last):\n"
  written = preamble + info + warning + other + error
  assert logs.kept(written, 0) == written
  assert logs.kept(written, 1) == warning + other + error
  assert logs.kept(written, 3) == other
  assert logs.kept(preamble + warning, 1) == preamble + warning  # nothing of absl's dropped


def test_parser_choices_match_what_export_implements():
  from jax2tf.cli import export_cmd

  assert set(arguments.SERIALIZATIONS) == set(export_cmd.SERIALIZATIONS)
  assert set(export_cmd.TFLITE_ROUTES) <= set(arguments.SERIALIZATIONS)
  assert set(export_cmd.TFLITE_ROUTES.values()) <= set(arguments.TFLITE_ROUTES)
  assert set(arguments.TFLITE_ROUTES) == {"auto", *jax2tf.lite.api.ROUTES}
  assert set(arguments.TARGETS) == set(export_cmd.DEFAULT_TOLERANCE)
  # Told apart without TensorFlow, read with it.
  from jax2tf.cli import tfjs_info
  from jax2tf.tfjs import graph_model

  assert tfjs_info.MODEL_JSON == graph_model.MODEL_JSON
  assert [c.name for c in cli.COMMANDS] == ["export", "verify", "inspect"]
  for command in cli.COMMANDS:
    assert callable(importlib.import_module(command.module).run)


def test_public_names_of_the_package_resolve():
  # Imported on first use (jax2tf/__init__.py), so a moved module shows here.
  for name in jax2tf.__all__:
    assert getattr(jax2tf, name) is getattr(importlib.import_module(jax2tf._PUBLIC[name]), name)
  assert set(jax2tf.__all__) <= set(dir(jax2tf))
  # The function, though graph serialization imports the subpackage of its name.
  importlib.import_module("jax2tf.call_tf.primitive")
  assert callable(jax2tf.call_tf) and jax2tf.call_tf.__name__ == "call_tf"
