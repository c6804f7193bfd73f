"""Helpers for the spec's examples, run under every serialization they apply to."""

import contextlib
import re

import jax
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from tests.tf_modes import to_numpy

# "graph_no_xla" is graph serialization with enable_xla=False: no Xla* TF ops.
SERIALIZATIONS = ("native", "graph", "graph_no_xla")

# The default `serialization` fixture (conftest.py) covers native and graph;
# this marks the examples that also hold without XLA ops.
all_serializations = pytest.mark.parametrize("serialization", SERIALIZATIONS,
                                             indirect=True)

GRAD_OPTIONS = tf.saved_model.SaveOptions(experimental_custom_gradients=True)


def convert(fun, serialization: str, **kwargs):
  if serialization == "native":
    return jax2tf.convert(fun, native_serialization=True, **kwargs)
  return jax2tf.convert(fun, native_serialization=False,
                        enable_xla=(serialization == "graph"), **kwargs)


def rand(shape, seed=0, dtype=np.float32):
  return np.random.default_rng(seed).random(shape).astype(dtype)


def assert_like_jax(f_jax, res_tf, *args, rtol=1e-5, atol=0., **kwargs):
  """`res_tf` has the pytree structure, shapes, dtypes and values of JAX's."""
  expected = jax.jit(f_jax)(*args, **kwargs)
  res = to_numpy(res_tf)
  assert jax.tree_util.tree_structure(res) == jax.tree_util.tree_structure(expected), (
      res, expected)
  for r, e in zip(jax.tree_util.tree_leaves(res), jax.tree_util.tree_leaves(expected)):
    e = np.asarray(e)
    assert r.shape == e.shape and r.dtype == e.dtype, (r.shape, e.shape, r.dtype, e.dtype)
    np.testing.assert_allclose(r, e, rtol=rtol, atol=atol)


def concrete(f_jax, serialization, specs, *tensor_specs, jit_compile=False,
             **convert_kwargs):
  f_tf = tf.function(convert(f_jax, serialization, polymorphic_shapes=specs,
                             **convert_kwargs),
                     autograph=False, jit_compile=jit_compile)
  return f_tf.get_concrete_function(*tensor_specs)


@contextlib.contextmanager
def raises_shape_error(pattern):
  """Expects tf.errors.InvalidArgumentError whose message matches `pattern`
  (with JAX's quotes as they are, not escaped)."""
  with pytest.raises(tf.errors.InvalidArgumentError) as e:
    yield e
  assert re.search(pattern, str(e.value)), str(e.value)


def save_and_load(module, path, options=GRAD_OPTIONS):
  tf.saved_model.save(module, str(path), options=options)
  return tf.saved_model.load(str(path))


def no_jax_model_fun(x):
  return jax.numpy.sin(x) @ jax.numpy.arange(8., dtype=np.float32).reshape(4, 2)


def save_no_jax_model(path, serialization):
  """A batch-polymorphic model, saved for loading without JAX."""
  my_model = tf.Module()
  my_model.f = tf.function(convert(no_jax_model_fun, serialization,
                                   polymorphic_shapes=["(b, 4)"]),
                           autograph=False,
                           input_signature=[tf.TensorSpec([None, 4], tf.float32)])
  tf.saved_model.save(my_model, str(path), options=GRAD_OPTIONS)
  return path
