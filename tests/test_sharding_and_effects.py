"""Partitioning (meshes, shard_map, split_to_logical_devices) and effects.

The partitioning checks need 8 JAX CPU devices, which XLA only creates at
backend start-up, so tests/sharding_child.py runs them in a subprocess and the
tests here assert on the JSON it prints. Observed behaviour is written up in
docs/effects_and_sharding.md.
"""

import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax.experimental import io_callback

import jax2tf
from tests.support import children
from tests.tf_modes import TF_MODES, in_mode


@pytest.fixture(scope="module")
def sharding_results():
  return children.last_json(
    children.run_python(
      os.path.join(children.ROOT, "tests", "sharding_child.py"), extra_env=children.EIGHT_CPU_DEVICES
    )
  )


# -- jax.jit with in/out shardings over an 8-device mesh ---------------------

@pytest.mark.subprocess
def test_sharded_jit_exports_for_eight_devices(sharding_results):
  r = sharding_results["jit_with_shardings"]
  assert r["jax_devices"] == 8
  assert r["jax_out_sharding_devices"] == 8  # JAX itself really partitions it
  assert r["nr_devices"] == [8]
  assert r["ops"].count("XlaCallModule") == 1
  # XlaCallModule partitions with Shardy here (use_shardy_partitioner), and
  # the module keeps Shardy's mesh and shardings as JAX's own export does.
  assert r["use_shardy_partitioner"]
  text = r["module_text"]
  assert 'sdy.mesh @mesh = <["x"=4, "y"=2]>' in text
  assert "mhlo.num_partitions = 8" in text
  assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>' in text  # a: P("x", "y")
  assert 'sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>' in text  # b: P("y", None)
  assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>' in text  # result: P("x", None)


@pytest.mark.subprocess
def test_sharded_jit_wraps_arguments_and_results_in_xla_sharding_ops(sharding_results):
  # TF's SPMD partitioner (TPU serving) reads shardings from XlaSharding ops
  # around the call: one per argument (a: P("x", "y"), b: P("y", None)) and
  # one for the result (P("x", None)).
  shardings = sharding_results["jit_with_shardings"]["shardings"]
  on_args = [s for s in shardings if s["input"] != "XlaCallModule"]
  on_results = [s for s in shardings if s["input"] == "XlaCallModule"]
  assert [(s["tile_dims"], s["replicate_last"]) for s in on_args] == [
      ([4, 2], False), ([2, 1, 4], True)]
  assert [(s["tile_dims"], s["replicate_last"]) for s in on_results] == [([4, 1, 2], True)]


@pytest.mark.subprocess
@pytest.mark.parametrize("mode", TF_MODES)
def test_sharded_jit_runs_on_tf_single_cpu_device(sharding_results, mode):
  # TF has one CPU device, and XlaCallModule compiles the 8-way module for it
  # as a single-device computation: the shardings are dropped and the numbers
  # are JAX's.
  assert sharding_results["tf_cpu_devices"] == 1
  run = sharding_results["jit_with_shardings"]["runs"][mode]
  assert run["ok"], run
  assert run["shape"] == [8, 6]
  assert run["max_abs_err"] <= 1e-5


# -- the same jit under graph serialization ----------------------------------

@pytest.mark.subprocess
def test_graph_serialization_annotates_like_native(sharding_results):
  # One XlaSharding op per argument and one for the result, carrying the
  # very OpSharding protos that native serialization puts around its
  # XlaCallModule (whose module declares {devices=[4,2]<=[8]} for a).
  native = sharding_results["jit_with_shardings"]["shardings"]
  graph = sharding_results["jit_with_shardings_graph"]["enable_xla=True"]["shardings"]
  assert [s["proto"] for s in graph] == [s["proto"] for s in native]
  assert [(s["tile_dims"], s["replicate_last"]) for s in graph] == [
      ([4, 2], False), ([2, 1, 4], True), ([4, 1, 2], True)]
  # The first two wrap the arguments (named as upstream names them: their
  # shape checks), the last the result of the body.
  assert [s["input"] for s in graph[:2]] == ["jax2tf_arg_0", "jax2tf_arg_1"]


@pytest.mark.subprocess
def test_graph_serialization_annotates_polymorphic_arguments(sharding_results):
  r = sharding_results["jit_with_shardings_graph"]["polymorphic"]
  native = sharding_results["jit_with_shardings"]["shardings"]
  assert [s["proto"] for s in r["shardings"]] == [s["proto"] for s in native]
  assert all(run["ok"] and run["max_abs_err"] <= 1e-5 for run in r["runs"].values()), r["runs"]


@pytest.mark.subprocess
def test_graph_serialization_without_xla_has_no_sharding_ops(sharding_results):
  # XlaSharding is an XLA op; the enable_xla=False graphs (TFLite, TF.js)
  # run on one device, so the shardings are dropped (as documented).
  r = sharding_results["jit_with_shardings_graph"]["enable_xla=False"]
  assert "XlaSharding" not in r["ops"]
  assert r["shardings"] == []


@pytest.mark.subprocess
@pytest.mark.parametrize("flavour", ["enable_xla=True", "enable_xla=False"])
@pytest.mark.parametrize("mode", TF_MODES)
def test_graph_serialization_of_sharded_jit_runs(sharding_results, flavour, mode):
  run = sharding_results["jit_with_shardings_graph"][flavour]["runs"][mode]
  assert run["ok"], run
  assert run["shape"] == [8, 6]
  assert run["max_abs_err"] <= 1e-5


# -- shard_map with a collective ---------------------------------------------

@pytest.mark.subprocess
def test_shard_map_psum_converts_with_manual_axes(sharding_results):
  r = sharding_results["shard_map_psum"]
  assert r["ref"] == r["expected_ref"]  # JAX's own psum over 8 devices
  assert r["conversion_error"] is None
  assert r["nr_devices"] == [8]
  assert r["ops"].count("XlaCallModule") == 1
  text = r["module_text"]
  assert 'sdy.mesh @mesh = <["i"=8]>' in text
  assert 'in_shardings=[<@mesh, [{"i"}, {}]>]' in text
  assert 'manual_axes={"i"}' in text


@pytest.mark.subprocess
def test_shard_map_psum_eager_call_explains_tpu_only(sharding_results):
  run = sharding_results["shard_map_psum"]["runs"]["eager"]
  assert not run["ok"], run
  assert run["error_type"] == "NotImplementedError"
  assert "shard_map" in run["error"] and "8 devices" in run["error"]
  assert "only on TPU" in run["error"]


@pytest.mark.subprocess
@pytest.mark.parametrize("mode", ["graph", "compiled"])
def test_shard_map_psum_fails_at_run_time_in_tf_function(sharding_results, mode):
  # Inside a tf.function the device is only known when TF runs the graph (a
  # SavedModel made here may be served on TPU), so TF's XLA reports it: it
  # cannot lower the shard_map boundary (a Shardy custom call) for one CPU.
  run = sharding_results["shard_map_psum"]["runs"][mode]
  assert not run["ok"], run
  assert run["error_type"] == "NotFoundError"
  assert "OpError" in run["error_bases"]
  assert "xla.sdy.GlobalToLocalShape" in run["error"]
  if mode == "graph":
    assert "XlaCallModule" in run["error"]


# -- split_to_logical_devices ------------------------------------------------

@pytest.mark.subprocess
def test_split_to_logical_devices_adds_xla_sharding_op(sharding_results):
  r = sharding_results["split_to_logical_devices"]
  assert r["ops"].count("XlaSharding") == 1
  assert r["sharding_attr"] == r["expected_attr"]


@pytest.mark.subprocess
@pytest.mark.parametrize("mode", ["graph", "compiled"])
def test_split_to_logical_devices_passes_values_through(sharding_results, mode):
  run = sharding_results["split_to_logical_devices"]["runs"][mode]
  assert run["ok"], run
  assert run["shape"] == [2, 4]
  assert run["max_abs_err"] == 0.0


@pytest.mark.subprocess
def test_split_to_logical_devices_eager_error_is_clear(sharding_results):
  run = sharding_results["split_to_logical_devices"]["runs"]["eager"]
  assert not run["ok"]
  assert run["error_type"] == "RuntimeError"
  assert "tf.function" in run["error"]


def test_split_to_logical_devices_validates_partition_dimensions():
  spec = tf.TensorSpec([2, 4], tf.float32)
  with pytest.raises(ValueError, match="has 1 entries but the tensor has rank 2"):
    tf.function(lambda t: jax2tf.split_to_logical_devices(t, [2])).get_concrete_function(spec)
  with pytest.raises(ValueError, match="must be >= 1"):
    tf.function(lambda t: jax2tf.split_to_logical_devices(t, [0, 2])).get_concrete_function(spec)


# -- effects: host callbacks -------------------------------------------------

def _with_debug_print(x):
  jax.debug.print("x = {x}", x=x)
  return x * 2.0


def _with_io_callback(x):
  y = io_callback(lambda v: np.asarray(v) + 1.0, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
  return y * 2.0


EFFECTFUL = {"debug_print": _with_debug_print, "io_callback": _with_io_callback}
HOST_CALLBACK_MESSAGE = re.compile(r"Host callbacks .* run Python inside the JAX process")


@pytest.mark.parametrize("name", sorted(EFFECTFUL))
def test_effectful_functions_run_in_jax(name):
  # Makes sure the refusals below are about conversion, not broken functions.
  x = np.float32(1.5)
  want = 3.0 if name == "debug_print" else 5.0
  np.testing.assert_allclose(jax.jit(EFFECTFUL[name])(x), want)


@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("name", sorted(EFFECTFUL))
def test_host_callbacks_fail_at_conversion(name, mode):
  f_tf = in_mode(jax2tf.convert(EFFECTFUL[name]), mode)
  with pytest.raises(NotImplementedError, match=HOST_CALLBACK_MESSAGE) as info:
    if mode == "eager":
      f_tf(np.float32(1.5))
    else:
      # Tracing is where conversion happens; nothing has run in TF yet.
      f_tf.get_concrete_function(tf.TensorSpec([], tf.float32))
  notes = "\n".join(getattr(info.value, "__notes__", []))
  assert f"while converting {EFFECTFUL[name].__name__} with jax2tf.convert" in notes


def test_host_callback_free_function_still_converts():
  f_tf = jax2tf.convert(lambda x: jnp.sin(x) * 2.0)
  x = np.float32(0.3)
  np.testing.assert_allclose(f_tf(x).numpy(), np.asarray(jnp.sin(x) * 2.0), rtol=1e-6)
