"""Quantized .tflite models of the model set, judged against float JAX.

    python -m benchmarks.tflite_quantization [model ...]

Prints the table of docs/tflite.md: per model and quantization, the
flatbuffer size and the accuracy against `jax.jit` in float32 on a fixed
batch of 16, by the model's criterion:
- classifiers (the CNN, ViT, ResNet-50, and the language models' next-token
  logits): top-1 agreement, at least 99% for float16 weights and 90% for
  dynamic-range int8 and full int8;
- the others: the largest error relative to the output's range (max |JAX|),
  at most 1% for float16 weights and 10% for int8.
Full int8 calibrates on 16 samples drawn like the inputs but from other
seeds. tests/lite/test_quantization.py holds the models to these criteria.
"""

import sys

import jax
import numpy as np

from benchmarks import models

CLASSIFIERS = {"cnn", "vit", "resnet50", "transformer_lm", "gpt_rotary"}
TOP1 = {"float16": 0.99, "dynamic_int8": 0.90, "int8": 0.90}
RANGE_ERROR = {"float16": 0.01, "dynamic_int8": 0.10, "int8": 0.10}
QUANTIZATIONS = (None, "float16", "dynamic_int8", "int8")
MODELS = ("mlp", "actor_critic", "cnn", "transformer_lm", "vit", "resnet50")
# Measured shortfalls, pinned by tests/lite/test_quantization.py so that a fix
# shows up: (model, quantize) -> what happens.
MISSES = {
  # log_softmax and the value head through int8 activations: the worst
  # output is off by half its range.
  ("actor_critic", "int8"): "misses the criterion (max error 52% of the range)",
  # The set's ResNet-50 is untrained; its logits over 16 random images.
  ("resnet50", "dynamic_int8"): "misses the criterion (top-1 agreement 87.5%)",
  ("resnet50", "int8"): "misses the criterion (top-1 agreement 81.2%)",
  # Softmax, LayerNorm and GELU on int8 activations calibrated on 16 samples.
  ("transformer_lm", "int8"): "misses the criterion (top-1 agreement 55.5%)",
}
BATCH = 16


def batch_of(m, batch: int, seed_shift: int = 0) -> tuple:
  """The model's inputs at `batch`; with a seed shift, fresh values alike."""
  inputs = m.make_inputs(**{**m.default_dims, "batch": batch})
  if seed_shift == 0:
    return inputs
  rng = np.random.default_rng(seed_shift)
  out = []
  for x in inputs:
    if x.dtype.kind in "iu":
      out.append(rng.integers(0, int(x.max()) + 1, x.shape).astype(x.dtype))
    else:
      out.append(rng.standard_normal(x.shape).astype(x.dtype))
  return tuple(out)


def convert(name: str, quantize):
  import jax2tf  # pylint: disable=import-outside-toplevel

  m = models.get(name)
  calibration = [batch_of(m, 1, seed_shift=100 + i) for i in range(16)]
  return jax2tf.to_tflite(
    m.fn, *batch_of(m, BATCH), params=m.params, route="graph", quantize=quantize,
    polymorphic_shapes=list(m.variant("batch").specs), verify=quantize is None,
    representative_dataset=(lambda: calibration) if quantize == "int8" else None)


def accuracy(name: str, model) -> tuple[str, float, bool | None]:
  """(metric name, value, meets the criterion) on the fixed batch."""
  from jax2tf import lite  # pylint: disable=import-outside-toplevel

  m = models.get(name)
  inputs = batch_of(m, BATCH)
  got = lite.run(model, *inputs)
  want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(m.fn)(m.params, *inputs))]
  q = model.quantize
  if name in CLASSIFIERS:
    value = min(float(np.mean(np.argmax(g, -1) == np.argmax(w, -1))) for g, w in zip(got, want))
    return "top-1 agreement", value, None if q is None else value >= TOP1[q]
  value = max(float(np.max(np.abs(g - w)) / max(np.max(np.abs(w)), 1e-12))
              for g, w in zip(got, want))
  return "max error / range", value, None if q is None else value <= RANGE_ERROR[q]


def main(argv) -> int:
  names = argv or MODELS
  print("| model | quantize | size | metric | value | criterion |")
  print("|---|---|---|---|---|---|")
  for name in names:
    for q in QUANTIZATIONS:
      model = convert(name, q)
      metric, value, ok = accuracy(name, model)
      crit = "-" if ok is None else ("met" if ok else "MISSED")
      shown = f"{value:.1%}" if metric.startswith("top") else f"{value:.2e}"
      print(f"| {name} | {q or 'none (float32)'} | {len(model) / 1024:.0f} KiB | {metric} "
            f"| {shown} | {crit} |", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
