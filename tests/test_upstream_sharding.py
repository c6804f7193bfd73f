"""Sharding cases of upstream's jax2tf sharding_test.py, checked against JAX.

* A sharding constraint (`with_sharding_constraint`, or a nested jit with
  shardings) under `polymorphic_shapes` runs in every TF mode with JAX's
  values, and keeps its annotation in the module TF compiles.
* The gradient of a jit with `in_shardings`/`out_shardings`, taken in TF to
  second order, is lowered with the shardings JAX gives its VJP (each
  cotangent sharded like its primal), not replicated.

Both need 2 JAX devices, which XLA creates only at backend start-up, so the
checks run in a subprocess (this file, run as a script with 8 host devices),
which prints one JSON object; the tests assert on it.
"""

import json
import os
import re

import pytest

from tests.support import children

CONSTRAINT_CASES = [
  (nested_jit, constraint, poly)
  for nested_jit in (True, False)
  for constraint in (None, "P")
  for poly in (None, "2*b1,_", "_,b2", "2*b1,b2")
]
SHARDINGS = ("missing", None, "P")
MODES = ("eager", "graph", "compiled")


def _key(*parts) -> str:
  return "|".join(str(p) for p in parts)


# -- the subprocess ------------------------------------------------------------


def _child() -> dict:
  import functools
  import warnings

  import jax
  import jax.numpy as jnp
  import numpy as np
  import tensorflow as tf
  from jax.experimental import pjit
  from jax.sharding import Mesh, NamedSharding
  from jax.sharding import PartitionSpec as P

  import jax2tf

  warnings.filterwarnings("ignore", category=DeprecationWarning)
  tf.get_logger().setLevel("ERROR")

  mesh = Mesh(np.array(jax.devices()[:2]), ("x",))

  def tf_hlo(f_tf, *args) -> str:
    # TF's HLO before optimization, where XlaCallModule's module is inlined
    # with the shardings it declares.
    f = tf.function(f_tf, autograph=False, jit_compile=True)
    hlo = f.experimental_get_compiler_ir(*args)(stage="hlo", platform_name="CPU")
    return re.sub(r"metadata=.*", "", hlo)

  def run(f_tf, x, poly, mode):
    if mode == "graph" and poly is not None:
      # Unknown dimensions in the signature: the module is refined at run time.
      spec = tf.TensorSpec([None if "b" in d else s for d, s in zip(poly.split(","), x.shape)])
      return tf.function(f_tf, autograph=False, input_signature=[spec])(x)
    f = {"eager": f_tf, "graph": tf.function(f_tf, autograph=False),
         "compiled": tf.function(f_tf, autograph=False, jit_compile=True)}[mode]
    return f(x)

  def constraint_case(nested_jit, constraint, poly) -> dict:
    # As upstream writes it: pjit under the mesh's context, where a
    # PartitionSpec (or None, replicated) names a sharding over that mesh.
    spec = P("x", None) if constraint == "P" else None

    @functools.partial(pjit.pjit, in_shardings=None, out_shardings=None)
    def f_jax(x):  # f32[10, 20] -> f32[10, 80]
      y = jnp.concatenate([x, x], axis=1)
      if nested_jit:
        y = pjit.pjit(lambda y: y, in_shardings=spec, out_shardings=spec)(y)
      else:
        y = jax.lax.with_sharding_constraint(y, spec)
      return jnp.concatenate([y, y], axis=1)

    x = np.arange(200, dtype=np.float32).reshape(10, 20)
    out = {}
    with mesh:
      want = np.asarray(f_jax(x))
      f_tf = jax2tf.convert(f_jax, polymorphic_shapes=poly)
      for mode in MODES:
        try:
          got = np.asarray(run(f_tf, x, poly, mode))
          out[mode] = {"shape": list(got.shape), "equal": bool(np.array_equal(got, want))}
        except Exception as e:  # recorded for the parent to assert on
          out[mode] = {"error": f"{type(e).__name__}: {str(e)[:1500]}"}
      try:
        hlo = tf_hlo(f_tf, x)
      except Exception as e:  # recorded for the parent to assert on
        out["inner_tiled"] = f"{type(e).__name__}: {str(e)[:1500]}"
        return out
    out["inner_tiled"] = len(
      re.findall(r"f32\[10,40\].*custom_call_target.*\"Sharding.*sharding.*devices=\[2,1\]", hlo)
    )
    return out

  def grad_case(in_shardings, out_shardings) -> dict:
    kwargs = {}
    if in_shardings != "missing":
      kwargs["in_shardings"] = NamedSharding(mesh, P(None, "x")) if in_shardings == "P" else None
    if out_shardings != "missing":
      kwargs["out_shardings"] = NamedSharding(mesh, P("x", None)) if out_shardings == "P" else None
    f_jax = jax.jit(lambda x: jnp.sin(x.T), **kwargs)  # f32[10, 20] -> f32[20, 10]
    x = np.arange(200, dtype=np.float32).reshape(10, 20)
    ct = np.ones((20, 10), np.float32) * 0.5

    # JAX's own VJP, as jax.export shards it.
    jax_vjp = jax.export.export(f_jax)(x).vjp()
    # JAX's second-order gradient: d/dx of <vjp(x, ct), 1>.
    want = jax.grad(lambda x: jnp.sum(jax.vjp(f_jax, x)[1](ct)[0]))(x)

    f_tf = jax2tf.convert(f_jax)

    def f_grad_tf(x_v, ct_v):
      with tf.GradientTape() as tape:
        tape.watch(x_v)
        with tf.GradientTape() as tape2:
          tape2.watch(x_v)
          res = f_tf(x_v)
        dy_dx = tape2.gradient(res, x_v, output_gradients=ct_v)
      return tape.gradient(dy_dx, x_v)

    got = tf.function(f_grad_tf, autograph=False, jit_compile=True)(x, ct)
    hlo = tf_hlo(f_grad_tf, x, ct)
    (lowered,) = f_tf._jax2tf_converted._by_avals.values()
    ours = lowered.vjp().module

    def specs(shardings):
      return [None if s is None else str(s.spec) for s in shardings]

    return {
      "max_abs_err": float(np.max(np.abs(np.asarray(got) - np.asarray(want)))),
      "jax_vjp_in": specs(jax_vjp._in_named_shardings),
      "jax_vjp_out": specs(jax_vjp._out_named_shardings),
      "ours_vjp_in": specs(ours.in_jax_shardings),
      "ours_vjp_out": specs(ours.out_jax_shardings),
      "in_tiled": len(re.findall(r"f32\[10,20\].*\"Sharding.*sharding.*devices=\[1,2\]", hlo)),
      "in_replicated": len(re.findall(r"f32\[10,20\].*\"Sharding.*sharding.*replicated", hlo)),
      "out_tiled": len(re.findall(r"f32\[20,10\].*\"Sharding.*sharding.*devices=\[2,1\]", hlo)),
    }

  results = {
    "constraint": {_key(*c): constraint_case(*c) for c in CONSTRAINT_CASES},
    "grad": {_key(i, o): grad_case(i, o) for i in SHARDINGS for o in SHARDINGS},
  }
  # The same constraint when JAX partitions with GSPMD: custom calls with
  # HLO shardings instead of Shardy ops, which TF refines as they are.
  jax.config.update("jax_use_shardy_partitioner", False)
  results["constraint_gspmd"] = constraint_case(False, "P", "2*b1,b2")
  return results


# -- the tests -----------------------------------------------------------------


@pytest.fixture(scope="module")
def results():
  return children.last_json(
    children.run_python(
      os.path.abspath(__file__), extra_env=children.EIGHT_CPU_DEVICES, timeout=600
    )
  )


@pytest.mark.subprocess
@pytest.mark.parametrize(("nested_jit", "constraint", "poly"), CONSTRAINT_CASES)
def test_sharding_constraint_with_polymorphic_shapes_matches_jax(
  results, nested_jit, constraint, poly
):
  r = results["constraint"][_key(nested_jit, constraint, poly)]
  for mode in MODES:
    assert r[mode] == {"shape": [10, 80], "equal": True}, (mode, r[mode])
  # The constraint reaches TF's HLO: once for with_sharding_constraint, on
  # the nested jit's argument and result otherwise (as with JAX's module).
  assert r["inner_tiled"] == ((2 if nested_jit else 1) if constraint == "P" else 0)


@pytest.mark.subprocess
def test_sharding_constraint_with_polymorphic_shapes_under_gspmd(results):
  r = results["constraint_gspmd"]
  for mode in MODES:
    assert r[mode] == {"shape": [10, 80], "equal": True}, (mode, r[mode])
  assert r["inner_tiled"] == 1


@pytest.mark.subprocess
@pytest.mark.parametrize("out_shardings", SHARDINGS)
@pytest.mark.parametrize("in_shardings", SHARDINGS)
def test_second_order_gradient_keeps_jax_vjp_shardings(results, in_shardings, out_shardings):
  r = results["grad"][_key(in_shardings, out_shardings)]
  assert r["max_abs_err"] <= 1e-5
  # The VJP is lowered with the shardings jax.export gives it.
  assert r["ours_vjp_in"] == r["jax_vjp_in"]
  assert r["ours_vjp_out"] == r["jax_vjp_out"]
  if in_shardings == "P":
    # The primal argument and every gradient of it: tiled, never replicated.
    assert r["in_tiled"] >= 2
    assert r["in_replicated"] == 0
  if out_shardings == "P":
    assert r["out_tiled"] >= 1


if __name__ == "__main__":
  print(json.dumps(_child()))
