"""LiteRT latency and flatbuffer size: jax2tf.to_tflite against Keras -> TFLite.

For each model with a Keras twin (benchmarks/keras_reference.py: the MLP, the
CNN, ResNet-50 and the Transformer LM, each the same network with the Flax
weights copied, outputs checked equal), the model is written by
`jax2tf.to_tflite` (each route, dynamic batch; the LM's sequence length is
static) and by TF's converter from the Keras model (`model.export`, then the
converter, as Keras 3 documents; the same dynamic and static sizes), and both
run on the LiteRT interpreter with its default XNNPack delegate at 1 and 2
threads, on a batch of 1 (the phone case) and of 8. Outputs are checked here;
the timing runs in a process of its own (benchmarks/litert_timer.py), away
from JAX, TF and the converters.
"""

import json
import os
import tempfile

import numpy as np

from benchmarks import children, keras_reference, litert_timer, models, timing

MODELS = ("mlp", "cnn", "resnet50", "transformer_lm")
ROUTES = ("graph", "native", "litert")
BATCHES = (1, 8)
THREADS = (1, 2)


def _check(who: str, content: bytes, x, want, m) -> None:
  got = list(litert_timer.runner(content, 1, x)().values())[0]
  np.testing.assert_allclose(
    got, want, rtol=10 * m.rtol, atol=10 * m.atol, err_msg=f"{who} {m.name} on LiteRT"
  )


def _timed_apart(flatbuffers: dict, x, threads: int, cfg: timing.Settings, folder: str) -> dict:
  """{name: median s per call} of the flatbuffers (name -> path), timed
  round-robin in a fresh process."""
  np.save(os.path.join(folder, "input.npy"), x)
  request = os.path.join(folder, "request.json")
  with open(request, "w") as f:
    json.dump(
      {
        "flatbuffers": flatbuffers,
        "input": os.path.join(folder, "input.npy"),
        "threads": threads,
        "settings": cfg.__dict__,
      },
      f,
    )
  return children.run("benchmarks.litert_timer", request)


def measure_model(name: str, cfg: timing.Settings) -> list:
  """One row per route of `to_tflite`, each timed beside the Keras flatbuffer."""
  import jax2tf  # pylint: disable=import-outside-toplevel

  m = models.get(name)
  v = m.variant("batch")
  keras_model = keras_reference.build(name, m.params, m.inputs, m.rtol, m.atol)
  keras_content = keras_reference.to_tflite(keras_model)
  rows = []
  with tempfile.TemporaryDirectory(prefix="jax2tf-bench-tflite-") as folder:
    keras_path = os.path.join(folder, "keras.tflite")
    with open(keras_path, "wb") as f:
      f.write(keras_content)
    for route in ROUTES:
      jax_model = jax2tf.to_tflite(
        m.fn, *m.inputs, params=m.params, polymorphic_shapes=list(v.specs), route=route
      )
      jax_path = os.path.join(folder, f"{route}.tflite")
      with open(jax_path, "wb") as f:
        f.write(jax_model)
      row = {
        "model": name,
        "route": route,
        "latency": {},
        "bytes": {"jax2tf": len(jax_model), "keras": len(keras_content)},
      }
      for batch in BATCHES:
        (x,) = m.inputs_for(v, batch)
        want = np.asarray(m.fn(m.params, x))
        _check("jax2tf", bytes(jax_model), x, want, m)
        _check("keras", keras_content, x, want, m)
        timing.progress(f"tflite {name} ({route} route) batch {batch}")
        for threads in THREADS:
          # Like against like: an interpreter with more threads than another
          # leaves workers spinning into the next one's calls.
          times = _timed_apart({"jax2tf": jax_path, "keras": keras_path}, x, threads, cfg, folder)
          row["latency"][f"batch {batch}, {threads} thread{'s' if threads > 1 else ''}"] = {
            "jax2tf": times["jax2tf"],
            "keras": times["keras"],
          }
      rows.append(row)
  return rows


def measure(names, cfg: timing.Settings) -> list:
  return [row for n in MODELS if names is None or n in names for row in measure_model(n, cfg)]


def label(row) -> str:
  """How reports name a row: the model and the route of `to_tflite`."""
  return f"{row['model']} ({row.get('route', 'graph')})"
