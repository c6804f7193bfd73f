"""LiteRT latency and flatbuffer size: jax2tf.to_tflite against Keras -> TFLite.

For each model with a Keras twin (benchmarks/keras_reference.py: the MLP, the
CNN, ResNet-50 and the Transformer LM, each the same network with the Flax
weights copied, outputs checked equal), the model is written by
`jax2tf.to_tflite` (each route, dynamic batch; the LM's sequence length is
static) and by TF's converter from the Keras model (`model.export`, then the
converter, as Keras 3 documents; the same dynamic and static sizes), and both
run on the LiteRT interpreter with its default XNNPack delegate at 1 and 2
threads, on a batch of 1 (the phone case) and of 8.
"""

import numpy as np

from benchmarks import keras_reference, models, timing

MODELS = ("mlp", "cnn", "resnet50", "transformer_lm")
ROUTES = ("graph", "native")
BATCHES = (1, 8)
THREADS = (1, 2)


def _runner(content: bytes, threads: int, x: np.ndarray):
  from ai_edge_litert import interpreter  # pylint: disable=import-outside-toplevel

  runner = interpreter.Interpreter(model_content=content, num_threads=threads)
  signature = runner.get_signature_runner("serving_default")
  (name,) = signature.get_input_details()
  signature(**{name: x})  # sizes and plans the tensors for this batch
  return lambda: signature(**{name: x})


def _checked(who: str, content: bytes, threads: int, x, want, m):
  call = _runner(content, threads, x)
  got = list(call().values())[0]
  np.testing.assert_allclose(
    got, want, rtol=10 * m.rtol, atol=10 * m.atol, err_msg=f"{who} {m.name} on LiteRT"
  )
  return call


def measure_model(name: str, cfg: timing.Settings) -> list:
  """One row per route of `to_tflite`, each timed beside the Keras flatbuffer."""
  import jax2tf  # pylint: disable=import-outside-toplevel

  m = models.get(name)
  v = m.variant("batch")
  keras_model = keras_reference.build(name, m.params, m.inputs, m.rtol, m.atol)
  keras_content = keras_reference.to_tflite(keras_model)
  rows = []
  for route in ROUTES:
    jax_model = jax2tf.to_tflite(
      m.fn, *m.inputs, params=m.params, polymorphic_shapes=list(v.specs), route=route
    )
    row = {
      "model": name,
      "route": route,
      "latency": {},
      "bytes": {"jax2tf": len(jax_model), "keras": len(keras_content)},
    }
    for batch in BATCHES:
      (x,) = m.inputs_for(v, batch)
      want = np.asarray(m.fn(m.params, x))
      timing.progress(f"tflite {name} ({route} route) batch {batch}")
      for threads in THREADS:
        # Like against like: an interpreter with more threads than another
        # leaves workers spinning into the next one's calls.
        times = timing.round_robin(
          {
            who: _checked(who, content, threads, x, want, m)
            for who, content in (("jax2tf", bytes(jax_model)), ("keras", keras_content))
          },
          cfg,
        )
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
