"""TF.js latency in Node and model size: jax2tf.to_tfjs against jax.jit and TF.

Each model of the model set (default sizes, static shapes) is written by
`jax2tf.to_tfjs` and run by TF.js 4.22 in Node on its cpu backend (plain
JavaScript) and its wasm backend (WebAssembly with SIMD). Node times the
calls itself (`jax2tf.tfjs.Runner.timed`: the median of a few calls after a
first one, outputs read back each time), so neither Python nor the pipe to
Node is counted. Beside them, in this process, `jax.jit` and the same
no-XLA graph in TF (`tf.function`, parameters as variables), timed
round-robin; and the model's size on disk (model.json and weight shards).
"""

import os
import tempfile

import numpy as np

from benchmarks import models, paths, timing

BACKENDS = ("cpu", "wasm")
# Timed calls in Node per backend: ResNet-50 takes seconds per call in plain
# JavaScript.
CALLS = {"cpu": 3, "wasm": 5}


def _directory_bytes(folder: str) -> dict:
  sizes = {name: os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder)}
  return {"model_json": sizes.pop("model.json"), "shards": sum(sizes.values()),
          "files": len(sizes) + 1}


def measure_model(name: str, cfg: timing.Settings) -> dict:
  import jax  # pylint: disable=import-outside-toplevel

  import jax2tf  # pylint: disable=import-outside-toplevel
  from jax2tf import tfjs  # pylint: disable=import-outside-toplevel

  m = models.get(name)
  inputs = tuple(m.inputs)
  want = [np.asarray(x) for x in jax.tree_util.tree_leaves(m.fn(m.params, *inputs))]
  row = {"model": name, "seconds": {}, "errors": {}}
  with tempfile.TemporaryDirectory(prefix="bench-tfjs-") as folder:
    try:
      model = jax2tf.to_tfjs(m.fn, *inputs, params=m.params, path=os.path.join(folder, "m"))
    except tfjs.TFJSConversionError as e:
      row["errors"]["to_tfjs"] = str(e).splitlines()[1].strip()
      return row
    row["bytes"] = _directory_bytes(model.path)
    for backend in BACKENDS:
      timing.progress(f"tfjs {name} on the {backend} backend")
      try:
        with tfjs.Runner(backend) as runner:
          (got,), times = runner.timed(model, [inputs], calls=CALLS[backend])
      except tfjs.TFJSRuntimeError as e:
        row["errors"][backend] = str(e).splitlines()[1][:120]
        continue
      for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=10 * m.rtol, atol=10 * m.atol,
                                   err_msg=f"{name} on TF.js {backend}")
      row["seconds"][f"tfjs_{backend}"] = times["runs"][0]["steady_ms"] / 1e3
      row["seconds"][f"tfjs_{backend}_first"] = times["runs"][0]["first_ms"] / 1e3
  tf_call, _ = paths.build(paths.PATH["noxla"], m.fn, m.params, inputs)
  jax_call, _ = paths.build_jax(m.fn, m.params, inputs)
  timing.progress(f"tfjs {name}: jax.jit and TF beside it")
  row["seconds"].update(timing.round_robin({"jax.jit": jax_call, "tf_noxla": tf_call}, cfg))
  return row


def measure(names, cfg: timing.Settings) -> list:
  return [measure_model(n, cfg) for n in models.REGISTRY if names is None or n in names]
