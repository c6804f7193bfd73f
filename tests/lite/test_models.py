"""The model set (benchmarks/models) through jax2tf.to_tflite, run on LiteRT.

Every model, static (its default input sizes) and in every shape-polymorphic
variant (written once with the polymorphic dimensions dynamic in the
flatbuffer, and run at the variant's two sizes: the interpreter resizes its
inputs), builtin TFLite ops only, on the LiteRT interpreter against `jax.jit`
on the same inputs with the model's tolerance. The fast tier holds the small
models at their batch variant; `make test-all` runs every row.
"""

import functools

import jax
import numpy as np
import pytest

import jax2tf
from benchmarks import models
from jax2tf import lite

FAST = {("mlp", "batch"), ("cnn", "batch"), ("actor_critic", "batch")}
# Models the graph route refuses, pinned with what the refusal must name: the
# VAE samples with the threefry PRNG, whose 32-bit bitwise ops (or, left
# shift) have no builtin TFLite kernel.
REFUSED = {"vae": ("threefry2x32", "BitwiseOr")}


STATIC = "static"


def _rows():
  for name in models.REGISTRY:
    yield pytest.param(name, STATIC, id=f"{name}-{STATIC}", marks=(pytest.mark.slow,))
    for v in models.variants_of(name):
      marks = () if (name, v.name) in FAST else (pytest.mark.slow,)
      yield pytest.param(name, v.name, id=f"{name}-{v.name}", marks=marks)


@functools.cache
def _model(name: str, variant: str):
  m = models.get(name)
  if variant == STATIC:
    return jax2tf.to_tflite(m.fn, *m.inputs, params=m.params, route="graph", verify=False)
  v = m.variant(variant)
  return jax2tf.to_tflite(m.fn, *m.inputs_for(v, v.sizes[0]), params=m.params,
                          polymorphic_shapes=list(v.specs), route="graph", verify=False)


@pytest.mark.parametrize("name,variant", list(_rows()))
def test_model_on_litert(name, variant):
  m = models.get(name)
  if name in REFUSED:
    primitive, op = REFUSED[name]
    with pytest.raises(lite.TFLiteConversionError, match=f"TF op {op}, emitted for the JAX "
                       f"primitive {primitive}"):
      _model(name, variant)
    return
  model = _model(name, variant)
  assert model.route == "graph"
  if variant == STATIC:
    sized = [("default", m.inputs)]
  else:
    v = m.variant(variant)
    sized = [(size, m.inputs_for(v, size)) for size in v.sizes]
  for size, inputs in sized:
    expected = jax.tree_util.tree_leaves(jax.jit(m.fn)(m.params, *inputs))
    got = lite.run(model, *inputs)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
      e = np.asarray(e)
      where = f"{name}[{variant}={size}] output {i}"
      assert g.shape == e.shape and g.dtype == e.dtype, (where, g.shape, e.shape, g.dtype)
      np.testing.assert_allclose(g, e, rtol=m.rtol, atol=m.atol, err_msg=where)
