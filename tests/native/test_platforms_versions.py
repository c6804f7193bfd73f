"""Lowering platforms and serialization versions ("Native serialization
versions", "Natively serialized JAX modules are platform specific")."""

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax.extend.mlir import ir
from jax.interpreters import mlir

import jax2tf
from jax2tf.internals import jax_private, tf_private
from jax2tf.native import exporting
from tests.tf_modes import TF_MODES, in_mode

X = np.float32([0.5, 1., -2.])


def xla_call_module_op(f_tf, *specs):
  graph = tf.function(f_tf, autograph=False).get_concrete_function(*specs).graph
  ops = [op for op in graph.get_operations() if op.type == "XlaCallModule"]
  assert len(ops) == 1
  return ops[0]


def only_module(f_tf):
  entries = list(f_tf._jax2tf_converted._by_avals.values())
  assert len(entries) == 1
  return entries[0].module


@pytest.fixture(scope="module")
def multi_platform():
  return jax2tf.convert(jnp.sin, native_serialization_platforms=("cpu", "cuda", "tpu"))


@pytest.mark.parametrize("mode", TF_MODES)
def test_multi_platform_runs_on_cpu(multi_platform, mode):
  np.testing.assert_allclose(in_mode(multi_platform, mode)(X).numpy(), jnp.sin(X), rtol=1e-6)


def test_multi_platform_op_attributes(multi_platform):
  op = xla_call_module_op(multi_platform, tf.TensorSpec([3], tf.float32))
  assert [p.decode() for p in op.get_attr("platforms")] == ["CPU", "CUDA", "TPU"]


def test_default_platform_is_jax_default_backend():
  f = jax2tf.convert(jnp.sin)
  f(X)
  assert only_module(f).platforms == (jax.default_backend(),) == ("cpu",)


@pytest.fixture(scope="module")
def tpu_only():
  return jax2tf.convert(jnp.sin, native_serialization_platforms=("tpu",))


@pytest.mark.parametrize("mode", TF_MODES)
def test_tpu_only_module_fails_on_cpu(tpu_only, mode):
  # NotFoundError (not InvalidArgumentError) in every mode, with the spec's text.
  with pytest.raises(tf.errors.NotFoundError,
                     match=r"The current platform CPU is not among the platforms required "
                           r"by the module: \[TPU\]"):
    in_mode(tpu_only, mode)(X)


@pytest.mark.parametrize("mode", TF_MODES)
def test_disabled_platform_check_runs_foreign_module(mode):
  # A TPU module of an elementwise op is plain StableHLO that CPU can run:
  # with the check disabled it runs and computes what JAX computes.
  f = jax2tf.convert(jnp.sin, native_serialization_platforms=("tpu",),
                     native_serialization_disabled_checks=[jax2tf.DisabledSafetyCheck.platform()])
  np.testing.assert_allclose(in_mode(f, mode)(X).numpy(), jnp.sin(X), rtol=1e-6)


def test_disabled_platform_check_recorded_in_op():
  f = jax2tf.convert(jnp.sin, native_serialization_platforms=("cuda",),
                     native_serialization_disabled_checks=[jax2tf.DisabledSafetyCheck.platform()])
  op = xla_call_module_op(f, tf.TensorSpec([3], tf.float32))
  assert [c.decode() for c in op.get_attr("disabled_checks")] == ["platform"]
  assert [p.decode() for p in op.get_attr("platforms")] == ["CUDA"]


@pytest.fixture(scope="module")
def default_module():
  f = jax2tf.convert(lambda x: jnp.cos(x) * 2.)
  f(X)
  return only_module(f), f


def test_module_at_tf_stablehlo_version(default_module):
  module, _ = default_module
  tf_version = str(tf_private.stablehlo_current_version())
  assert module.stablehlo_version == tf_version
  # The portable artifact carries its producer version in its header.
  assert module.serialized.startswith(b"ML\xefR")
  assert b"StableHLO_v" + tf_version.encode() in module.serialized[:64]


def test_module_deserializes_with_tf_stablehlo(default_module):
  module, _ = default_module
  # TF's reader gives back (current-version) MLIR bytecode of the module.
  bytecode = tf_private.stablehlo_deserialize_portable_artifact_str(module.serialized)
  with mlir.make_ir_context():
    text = str(ir.Module.parse(bytecode))
  assert "stablehlo.cosine" in text and "func.func public @main" in text


def test_calling_convention_within_tf_maximum(default_module):
  module, f = default_module
  tf_max = int(tf_private.call_module_maximum_supported_version())
  assert 9 <= module.calling_convention_version <= tf_max
  op = xla_call_module_op(f, tf.TensorSpec([3], tf.float32))
  assert op.get_attr("version") == module.calling_convention_version


def test_calling_convention_follows_jax_setting():
  with jax_private.export_calling_convention_version(9):
    f = jax2tf.convert(jnp.sin)
    np.testing.assert_allclose(f(X).numpy(), jnp.sin(X), rtol=1e-6)
    assert only_module(f).calling_convention_version == 9
    op = xla_call_module_op(f, tf.TensorSpec([3], tf.float32))
    assert op.get_attr("version") == 9


def test_calling_convention_above_tf_maximum_is_lowered():
  # JAX may be newer than TF; the module is made for TF, never above its max.
  tf_max = int(tf_private.call_module_maximum_supported_version())
  jax_max = jax.export.maximum_supported_calling_convention_version
  with jax_private.export_calling_convention_version(jax_max):
    f = jax2tf.convert(jnp.sin)
    f(X)
    assert only_module(f).calling_convention_version == min(jax_max, tf_max)


def test_target_tf_version_installed_release():
  release = ".".join(tf.__version__.split(".")[:2])
  f = jax2tf.convert(jnp.sin, target_tf_version=release)
  np.testing.assert_allclose(f(X).numpy(), jnp.sin(X), rtol=1e-6)
  assert release == "2.21"


@pytest.mark.parametrize("native", [True, False])
def test_target_tf_version_unknown_fails_at_convert(native):
  with pytest.raises(ValueError, match=r"target_tf_version='1.0' is older than the oldest "
                                       r"release this package can target.*"
                                       r"known releases: \[.*'2.21'.*\]"):
    jax2tf.convert(jnp.sin, target_tf_version="1.0", native_serialization=native)


def test_target_tf_version_from_environment(monkeypatch):
  monkeypatch.setenv("JAX2TF_TARGET_TF_VERSION", "1.0")
  with pytest.raises(ValueError, match="known releases"):
    jax2tf.convert(jnp.sin)(X)


def test_large_constants_warning(monkeypatch):
  monkeypatch.setenv(exporting.LARGE_MODULE_ENV_VAR, "8000")
  big = np.random.default_rng(0).random(4096).astype(np.float32)

  def closes_over_constant(x):
    return x + big

  with pytest.warns(UserWarning, match="tf.Variable") as record:
    res = jax2tf.convert(closes_over_constant)(np.ones(4096, np.float32))
  np.testing.assert_allclose(res.numpy(), 1. + big)
  assert any("closes_over_constant" in str(w.message) for w in record)


def test_no_warning_for_small_modules(monkeypatch):
  monkeypatch.setenv(exporting.LARGE_MODULE_ENV_VAR, "1000000")
  with warnings.catch_warnings():
    warnings.simplefilter("error", UserWarning)
    jax2tf.convert(lambda x: x + np.ones(4096, np.float32))(np.ones(4096, np.float32))


def test_parameters_as_arguments_avoid_the_warning(monkeypatch):
  # The remedy the warning gives: pass the array, as a tf.Variable.
  monkeypatch.setenv(exporting.LARGE_MODULE_ENV_VAR, "8000")
  big = tf.Variable(np.random.default_rng(0).random(4096).astype(np.float32))
  with warnings.catch_warnings():
    warnings.simplefilter("error", UserWarning)
    res = tf.function(lambda x: jax2tf.convert(lambda p, x: x + p)(big, x),
                      autograph=False)(np.ones(4096, np.float32))
  np.testing.assert_allclose(res.numpy(), 1. + big.numpy())


# -- Targeting an older TensorFlow ----------------------------------------------

@pytest.fixture(scope="module")
def tf217_module():
  f = jax2tf.convert(lambda x: jnp.cos(x) * 2., target_tf_version="2.17")
  f(X)
  return only_module(f), f


def test_target_tf_217_versions(tf217_module):
  module, f = tf217_module
  assert module.calling_convention_version == 9
  assert module.stablehlo_version == "1.1.1"
  # The portable artifact's header names the version it was written at.
  assert b"StableHLO_v1.1.1\x00" in module.serialized[:64]
  op = xla_call_module_op(f, tf.TensorSpec([3], tf.float32))
  assert op.get_attr("version") == 9


@pytest.mark.parametrize("mode", TF_MODES)
def test_target_tf_217_runs_on_installed_tf(tf217_module, mode):
  # TensorFlow reads older StableHLO and calling conventions than its own.
  _, f = tf217_module
  np.testing.assert_allclose(in_mode(f, mode)(X).numpy(), jnp.cos(X) * 2., rtol=1e-6)


def test_target_tf_217_is_what_tf_217_reads():
  # The table row is what the converter uses, not the installed TF's numbers.
  from jax2tf.native import versions
  assert versions.consumer("2.17") == versions.KNOWN_RELEASES["2.17"]
  assert versions.consumer("2.17.1") == versions.KNOWN_RELEASES["2.17"]
  assert versions.consumer("2.17").stablehlo_version != str(tf_private.stablehlo_current_version())


def test_target_tf_215_refused_naming_versions():
  f = jax2tf.convert(jnp.sin, target_tf_version="2.15")
  lowest = jax.export.minimum_supported_calling_convention_version
  with pytest.raises(ValueError) as e:
    f(X)
  msg = str(e.value)
  assert "TensorFlow 2.15 reads XlaCallModule calling conventions up to version 8" in msg
  assert f"the installed JAX exports versions {lowest}.." in msg
  assert "target_tf_version='2.16' or newer" in msg


def test_newer_type_than_target_refused_naming_versions_and_remedy():
  # float8_e4m3 (IEEE-style, unlike float8_e4m3fn) arrived after StableHLO 1.1.1.
  def f8_round_trip(x):
    return x.astype(jnp.float8_e4m3).astype(jnp.float32)

  with pytest.raises(ValueError) as e:
    jax2tf.convert(f8_round_trip, target_tf_version="2.17")(X)
  msg = str(e.value)
  assert ("cannot be expressed in StableHLO 1.1.1, the newest version TensorFlow 2.17 "
          "reads") in msg
  assert "f8E4M3" in msg  # MLIR's reason, without the module dump
  assert "vhlo.func_v1" not in msg
  assert "target TensorFlow 2.18 or newer (target_tf_version='2.18'" in msg
  # The suggested target does convert it, and computes what JAX computes.
  res = jax2tf.convert(f8_round_trip, target_tf_version="2.18")(X)
  np.testing.assert_array_equal(res.numpy(), jax.jit(f8_round_trip)(X))


@functools.partial(jax.lax.composite, name="jax2tf_test.softplus")
def _composite_softplus(x):
  return jnp.log1p(jnp.exp(x))


def test_composites_are_inlined_for_releases_without_them():
  # StableHLO 0.17.7 (TF 2.16) has no composite op: without inlining the
  # module could not be written for that target at all.
  f = lambda x: _composite_softplus(x) * 2.
  assert "stablehlo.composite" in jax.jit(f).lower(X).as_text()  # what JAX writes
  f_tf = jax2tf.convert(f, target_tf_version="2.16")
  np.testing.assert_allclose(f_tf(X).numpy(), jax.jit(f)(X), rtol=1e-6)
