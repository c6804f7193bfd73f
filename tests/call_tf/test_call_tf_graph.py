"""call_tf_graph=True: the TF function stays a TF function in the converted result."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf
from jax2tf import call_tf


def f_tf_non_compilable(x):
  return tf.strings.length(tf.strings.format("Hello {}!", [x]))


def _converted_entry(f_tf):
  (entry,) = f_tf._jax2tf_converted._by_signature.values()
  return entry


def in_cond(f):
  """`f` in a branch of lax.cond, where native serialization cannot split it
  out (so it goes through XlaCallModule's function_list)."""
  return lambda x: lax.cond(x[0] > 0., f, lambda x: x, x)


def test_native_in_cond_uses_function_list_and_custom_call():
  fun_jax = lambda x: jnp.cos(in_cond(call_tf(tf.math.sin, call_tf_graph=True))(x))
  f_tf = jax2tf.convert(fun_jax, native_serialization=True)
  x = np.linspace(0.1, 1, 3, dtype=np.float32)
  np.testing.assert_allclose(f_tf(x), np.cos(np.sin(x)), rtol=1e-6)
  entry = _converted_entry(f_tf)
  assert len(entry.module.function_list) == 1
  graph_def = tf.function(f_tf, autograph=False).get_concrete_function(
      tf.TensorSpec([3], tf.float32)).graph.as_graph_def()
  call_module = [n for n in graph_def.node if n.op == "XlaCallModule"]
  assert len(call_module) == 1 and call_module[0].attr["function_list"].list.func


def test_native_with_side_effects_false():
  fun_jax = lambda x: call_tf(tf.math.sin, call_tf_graph=True, has_side_effects=False)(x) + 1.
  f_tf = jax2tf.convert(fun_jax, native_serialization=True)
  np.testing.assert_allclose(f_tf(np.float32(1.)), np.sin(1.) + 1., rtol=1e-6)


@pytest.mark.parametrize("native,call_tf_graph", [(False, False), (False, True), (True, True)],
                         ids=["graph", "graph-call_tf_graph", "native-call_tf_graph"])
def test_non_compilable_round_trip(native, call_tf_graph):
  # Native serialization needs call_tf_graph=True: without it the function is
  # compiled with XLA when the JAX function is lowered.
  fun_jax = lambda x: call_tf(f_tf_non_compilable, call_tf_graph=call_tf_graph)(x) + 1
  f_tf = jax2tf.convert(fun_jax, native_serialization=native)
  assert int(f_tf(np.float32(42.))) == 10
  g = tf.function(f_tf, autograph=False)
  assert int(g(np.float32(42.))) == 10


def marked_sin(x):
  return tf.math.sin(x, name="marked_sin")


def _nodes(graph_def):
  """(top-level nodes, {library function name: its nodes})"""
  return list(graph_def.node), {f.signature.name: list(f.node_def) for f in graph_def.library.function}


_CALL_OPS = ("PartitionedCall", "StatefulPartitionedCall")


@pytest.mark.parametrize("call_tf_graph", [False, True])
def test_graph_serialization_flag_decides_call_or_ops_in_place(call_tf_graph):
  fun_jax = lambda x: jnp.cos(call_tf(marked_sin, call_tf_graph=call_tf_graph)(x))
  f_tf = tf.function(jax2tf.convert(fun_jax, native_serialization=False), autograph=False)
  x = np.linspace(0, 1, 3, dtype=np.float32)
  np.testing.assert_allclose(f_tf(x), jnp.cos(jnp.sin(x)), rtol=1e-6)
  top, library = _nodes(f_tf.get_concrete_function(tf.TensorSpec([3], tf.float32)).graph.as_graph_def())
  marked_on_top = [n for n in top if n.name.endswith("marked_sin")]
  calls_of_marked = [
      n for n in top if n.op in _CALL_OPS
      and any(m.name == "marked_sin" for m in library.get(n.attr["f"].func.name, []))]
  if call_tf_graph:
    assert not marked_on_top and len(calls_of_marked) == 1
  else:
    assert len(marked_on_top) == 1 and not calls_of_marked


def test_native_in_cond_saved_model_keeps_the_function_list(tmp_path):
  fun_jax = lambda x: jnp.cos(in_cond(call_tf(marked_sin, call_tf_graph=True))(x))
  spec = tf.TensorSpec([3], tf.float32)
  module = tf.Module()
  module.f = tf.function(jax2tf.convert(fun_jax, native_serialization=True), autograph=False,
                         input_signature=[spec])
  tf.saved_model.save(module, str(tmp_path),
                      options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))
  del module
  restored = tf.saved_model.load(str(tmp_path))
  x = np.linspace(0.1, 1, 3, dtype=np.float32)
  np.testing.assert_allclose(restored.f(x), jnp.cos(jnp.sin(x)), rtol=1e-6)
  top, library = _nodes(restored.f.get_concrete_function(spec).graph.as_graph_def())
  call_modules = [n for n in top + [n for nodes in library.values() for n in nodes]
                  if n.op == "XlaCallModule"]
  listed = [f.name for n in call_modules for f in n.attr["function_list"].list.func]
  assert listed, "no XlaCallModule with a function_list in the restored graph"
  # Each listed function was restored, and one of them is marked_sin itself.
  assert all(name in library for name in listed)
  assert any("marked_sin" in {m.name for m in library[name]} for name in listed)


def test_call_tf_graph_under_plain_jit_inlines():
  f = jax.jit(lambda x: call_tf(tf.math.sin, call_tf_graph=True)(x))
  x = np.float32(0.5)
  np.testing.assert_allclose(f(x), np.sin(x), rtol=1e-6)
  assert "custom_call" not in f.lower(x).as_text()


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("flags", [dict(call_tf_graph=True), dict(ordered=True),
                                   dict(call_tf_graph=True, ordered=True)],
                         ids=["call_tf_graph", "ordered", "both"])
def test_gradient_after_convert(native, flags):
  fun_jax = lambda x: jnp.sum(call_tf(tf.math.sin, **flags)(x) * x)
  f_tf = jax2tf.convert(fun_jax, native_serialization=native)
  x = tf.Variable(np.linspace(0, 1, 4, dtype=np.float32))
  with tf.GradientTape() as tape:
    y = f_tf(x)
  want = jax.grad(lambda x: jnp.sum(jnp.sin(x) * x))(x.numpy())
  np.testing.assert_allclose(tape.gradient(y, x), want, rtol=1e-5)
