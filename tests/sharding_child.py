"""Run by tests/test_sharding_and_effects.py in a process with 8 host devices.

XLA reads --xla_force_host_platform_device_count when the CPU backend starts,
which in the test process has long happened, hence a separate process. It
prints one JSON object on the last line of stdout; the parent asserts on it.
"""

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import json  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from jax.extend import mlir as jex_mlir  # noqa: E402
from jax.interpreters import mlir  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P

import jax2tf  # noqa: E402
from jax2tf.internals import tf_private  # noqa: E402

MODES = {"eager": None, "graph": False, "compiled": True}


def _wrap(f, mode):
  jit_compile = MODES[mode]
  return f if jit_compile is None else tf.function(f, autograph=False, jit_compile=jit_compile)


def _run_modes(f_tf, args, ref) -> dict:
  out = {}
  for mode in MODES:
    try:
      res = _wrap(f_tf, mode)(*args)
      out[mode] = {"ok": True, "shape": list(res.shape),
                   "max_abs_err": float(np.max(np.abs(res.numpy() - ref)))}
    except Exception as e:  # recorded for the parent to assert on
      out[mode] = {"ok": False, "error_type": type(e).__name__,
                   "error_bases": [c.__name__ for c in type(e).__mro__],
                   "error": str(e)[:2000]}
  return out


def _graph_info(f_tf, specs) -> dict:
  graph_def = tf.function(f_tf, autograph=False).get_concrete_function(*specs).graph.as_graph_def()
  nodes = [n for n in graph_def.node]
  call_nodes = [n for n in nodes if n.op == "XlaCallModule"]
  module_bytes = call_nodes[0].attr["module"].s if call_nodes else b""
  shardings = []
  for n in nodes:
    if n.op == "XlaSharding":
      proto = tf_private.OpSharding.FromString(n.attr["sharding"].s)
      shardings.append({"input": n.input[0].split(":")[0],
                        "tile_dims": list(proto.tile_assignment_dimensions),
                        "replicate_last": bool(proto.replicate_on_last_tile_dim),
                        "proto": n.attr["sharding"].s.hex()})
  return {"ops": [n.op for n in nodes], "module_text": _module_text(module_bytes),
          "shardings": shardings,
          "use_shardy_partitioner": bool(call_nodes[0].attr["use_shardy_partitioner"].b)
          if call_nodes else None}


def _module_text(module_bytes: bytes) -> str:
  """The serialized module as MLIR text, without locations."""
  if not module_bytes:
    return ""
  with mlir.make_ir_context():
    return str(jex_mlir.deserialize_portable_artifact(module_bytes))


def _nr_devices(f_tf) -> list[int]:
  return [e.module.nr_devices for e in f_tf._jax2tf_converted._by_avals.values()]


def _sharded_jit():
  """A jit over a 4x2 mesh with sharded arguments and result, and its arguments."""
  mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))

  def f(a, b):
    return jnp.sin(a) @ b + 1.0

  f_jit = jax.jit(f, in_shardings=(NamedSharding(mesh, P("x", "y")),
                                   NamedSharding(mesh, P("y", None))),
                  out_shardings=NamedSharding(mesh, P("x", None)))
  a = np.linspace(-2.0, 2.0, 8 * 4, dtype=np.float32).reshape(8, 4)
  b = np.linspace(0.5, 1.5, 4 * 6, dtype=np.float32).reshape(4, 6)
  return f_jit, a, b


def check_jit_with_shardings() -> dict:
  f_jit, a, b = _sharded_jit()
  ref_arr = f_jit(a, b)
  f_tf = jax2tf.convert(f_jit)
  info = _graph_info(f_tf, [tf.TensorSpec(a.shape, tf.float32), tf.TensorSpec(b.shape, tf.float32)])
  return {"jax_devices": len(jax.devices()),
          "jax_out_sharding_devices": len(ref_arr.sharding.device_set),
          "runs": _run_modes(f_tf, (a, b), np.asarray(ref_arr)),
          "nr_devices": _nr_devices(f_tf), **info}


def check_jit_with_shardings_graph() -> dict:
  # The same sharded jit under graph serialization, with and without XLA ops.
  f_jit, a, b = _sharded_jit()
  ref = np.asarray(f_jit(a, b))
  specs = [tf.TensorSpec(a.shape, tf.float32), tf.TensorSpec(b.shape, tf.float32)]
  out = {}
  for enable_xla in (True, False):
    f_tf = jax2tf.convert(f_jit, native_serialization=False, enable_xla=enable_xla)
    info = _graph_info(f_tf, specs)
    out[f"enable_xla={enable_xla}"] = {"ops": info["ops"], "shardings": info["shardings"],
                                       "runs": _run_modes(f_tf, (a, b), ref)}
  # A polymorphic batch dimension: the shardings depend on ranks only.
  f_poly = jax2tf.convert(f_jit, native_serialization=False, polymorphic_shapes=["(8*n, 4)", None])
  out["polymorphic"] = _graph_info(f_poly, [tf.TensorSpec([None, 4], tf.float32), specs[1]])
  out["polymorphic"]["runs"] = _run_modes(f_poly, (a, b), ref)
  return out


def check_shard_map_psum() -> dict:
  mesh = Mesh(np.array(jax.devices()), ("i",))

  def body(x):
    return jax.lax.psum(jnp.sum(x, axis=0, keepdims=True), "i")

  f_jit = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P()))
  x = np.arange(16 * 3, dtype=np.float32).reshape(16, 3)
  ref = np.asarray(f_jit(x))
  f_tf = jax2tf.convert(f_jit)
  try:
    info = _graph_info(f_tf, [tf.TensorSpec(x.shape, tf.float32)])
    info["conversion_error"] = None
  except Exception as e:
    info = {"conversion_error": f"{type(e).__name__}: {e}"}
  return {"ref": ref.tolist(), "expected_ref": np.sum(x, axis=0, keepdims=True).tolist(),
          "runs": _run_modes(f_tf, (x,), ref), "nr_devices": _nr_devices(f_tf), **info}


def check_split_to_logical_devices() -> dict:
  x = tf.constant(np.arange(2 * 4, dtype=np.float32).reshape(2, 4))

  def annotate(t):
    return jax2tf.split_to_logical_devices(t, [1, 2]) * 1.0

  graph_def = tf.function(annotate, autograph=False).get_concrete_function(
      tf.TensorSpec(x.shape, tf.float32)).graph.as_graph_def()
  sharding_nodes = [n for n in graph_def.node if n.op == "XlaSharding"]
  runs = _run_modes(annotate, (x,), x.numpy())
  return {"ops": [n.op for n in graph_def.node], "runs": runs,
          "sharding_attr": sharding_nodes[0].attr["sharding"].s.hex() if sharding_nodes else None,
          "expected_attr": _expected_tile_sharding([1, 2]).hex()}


def _expected_tile_sharding(dims) -> bytes:
  # The serialized xla.OpSharding proto of an OTHER (tiled) sharding over
  # devices 0..n-1, built independently of the code under test.
  op_sharding = tf_private.OpSharding
  proto = op_sharding(type=op_sharding.OTHER, tile_assignment_dimensions=dims,
                      tile_assignment_devices=list(range(int(np.prod(dims)))))
  return proto.SerializeToString()


def main():
  results = {"tf_cpu_devices": len(tf.config.list_logical_devices("CPU")),
             "jit_with_shardings": check_jit_with_shardings(),
             "jit_with_shardings_graph": check_jit_with_shardings_graph(),
             "shard_map_psum": check_shard_map_psum(),
             "split_to_logical_devices": check_split_to_logical_devices()}
  print(json.dumps(results))


if __name__ == "__main__":
  main()
