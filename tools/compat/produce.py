"""Produce jax2tf artifacts for older TensorFlow consumers.

Run with the producer environment (jax + TF 2.21 + jax2tf):
  python produce.py [OUT_DIR]

For each target in TARGETS (a target_tf_version string, or "default" meaning
no target_tf_version, i.e. the installed TF) it writes, under
OUT_DIR/artifacts_<target>/:
  <name>.bin          serialized StableHLO module bytes
  <name>.json         XlaCallModule attributes (version, Tout, Sout, platforms,
                      disabled_checks, kept_var_idx, plus metadata)
  <name>.input_<i>.npy  test inputs (the kept ones are selected by kept_var_idx)
  <name>.expected_<i>.npy  JAX outputs on those inputs
and a SavedModel of function (a) to OUT_DIR/sm_<target>.
"""
import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf

import jax2tf

OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["2.16", "2.19", "default"]


def f_poly(x):
  return jnp.sum(jnp.sin(x), axis=0) / x.shape[0]


def f_composite(x):
  return jnp.arccos(x) + jax.scipy.special.erf(x)


def f_cholesky(a):
  return jnp.linalg.cholesky(a)


rng = np.random.default_rng(0)
_m = rng.standard_normal((5, 5)).astype(np.float32)
CASES = {
    # name: (function, polymorphic_shapes, test inputs)
    "poly_sin_mean": (f_poly, ["(b, 4)"],
                      [rng.standard_normal((6, 4)).astype(np.float32)]),
    "arccos_erf": (f_composite, None,
                   [rng.uniform(-0.9, 0.9, (3, 5)).astype(np.float32)]),
    "cholesky": (f_cholesky, None,
                 [(_m @ _m.T + 5 * np.eye(5)).astype(np.float32)]),
}


def dtype_name(d) -> str:
  return np.dtype(d).name


def dim_or_none(d):
  return int(d) if isinstance(d, (int, np.integer)) else None


def dump_one(outdir, name, f_tf, inputs, fun):
  conv = f_tf._jax2tf_converted
  assert len(conv._by_avals) == 1, conv._by_avals.keys()
  (entry,) = conv._by_avals.values()
  mod = entry.module
  with open(os.path.join(outdir, f"{name}.bin"), "wb") as fh:
    fh.write(mod.serialized)
  expected = fun(*inputs)
  expected = expected if isinstance(expected, (list, tuple)) else [expected]
  attrs = {
      "version": int(mod.calling_convention_version),
      "Tout": [dtype_name(a.dtype) for a in mod.out_avals],
      "Sout": [[dim_or_none(d) for d in a.shape] for a in mod.out_avals],
      "platforms": [p.upper() for p in mod.platforms],
      "disabled_checks": [str(c) for c in mod.disabled_checks],
      "kept_var_idx": [int(i) for i in mod.kept_var_idx],
      "stablehlo_version": str(mod.stablehlo_version),
      "in_avals": [str(a) for a in mod.in_avals],
      "out_avals": [str(a) for a in mod.out_avals],
      "n_inputs": len(inputs),
      "n_outputs": len(expected),
  }
  with open(os.path.join(outdir, f"{name}.json"), "w") as fh:
    json.dump(attrs, fh, indent=1)
  for i, x in enumerate(inputs):
    np.save(os.path.join(outdir, f"{name}.input_{i}.npy"), np.asarray(x))
  for i, y in enumerate(expected):
    np.save(os.path.join(outdir, f"{name}.expected_{i}.npy"), np.asarray(y))
  return attrs


def save_model(path, target):
  kw = {} if target == "default" else {"target_tf_version": target}
  f_tf = jax2tf.convert(f_poly, polymorphic_shapes=["(b, 4)"], **kw)
  m = tf.Module()
  m.f = tf.function(f_tf, autograph=False,
                    input_signature=[tf.TensorSpec([None, 4], tf.float32)])
  tf.saved_model.save(m, path)
  # reference outputs for the consumer to check the SavedModel against
  for b in (1, 3, 7):
    x = np.arange(b * 4, dtype=np.float32).reshape(b, 4) / 10.0
    np.save(os.path.join(path, f"check_input_b{b}.npy"), x)
    np.save(os.path.join(path, f"check_expected_b{b}.npy"), np.asarray(f_poly(x)))


def main():
  print("jax", jax.__version__, "tf", tf.__version__)
  for target in TARGETS:
    outdir = os.path.join(OUT, f"artifacts_{target}")
    os.makedirs(outdir, exist_ok=True)
    kw = {} if target == "default" else {"target_tf_version": target}
    for name, (fun, poly, inputs) in CASES.items():
      f_tf = jax2tf.convert(fun, polymorphic_shapes=poly, **kw)
      got = f_tf(*[tf.constant(x) for x in inputs])  # triggers the export
      attrs = dump_one(outdir, name, f_tf, inputs, fun)
      err = float(np.max(np.abs(np.asarray(got) - np.asarray(fun(*inputs)))))
      print(f"[{target}] {name}: version={attrs['version']} "
            f"stablehlo={attrs['stablehlo_version']} Sout={attrs['Sout']} "
            f"platforms={attrs['platforms']} in-producer err={err:.2e}")
    save_model(os.path.join(OUT, f"sm_{target}"), target)
    print(f"[{target}] saved model -> {os.path.join(OUT, f'sm_{target}')}")


if __name__ == "__main__":
  main()
