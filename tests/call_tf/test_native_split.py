"""Native serialization split at call_tf(..., call_tf_graph=True) calls.

The TF functions here use ops XLA cannot compile (tf.strings, tf.py_function),
so every numeric check would fail if the call went through XlaCallModule's
function_list (which compiles it with XLA) instead of being a TF call.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf
from jax2tf import call_tf
from jax2tf.native import exporting, split


def via_strings(x):
  # Nine significant digits give back the same float32.
  return tf.strings.to_number(tf.strings.as_string(x, precision=8, scientific=True),
                              tf.float32)


def via_py_function(x):
  y = tf.py_function(lambda t: np.float32(2.) * t.numpy(), [x], tf.float32)
  return tf.ensure_shape(y, x.shape)


NON_COMPILABLE = {"strings": (via_strings, lambda x: x),
                  "py_function": (via_py_function, lambda x: 2. * x)}


def _module(f_tf):
  (entry,) = f_tf._jax2tf_converted._by_avals.values()
  return entry.module


def _sin_tf_cos(tf_fn, **call_tf_kwargs):
  return lambda x: jnp.cos(call_tf(tf_fn, call_tf_graph=True, **call_tf_kwargs)(jnp.sin(x)))


@pytest.mark.parametrize("which", sorted(NON_COMPILABLE))
@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_non_compilable_tf_function_runs(which, mode):
  tf_fn, same_in_jax = NON_COMPILABLE[which]
  f_tf = jax2tf.convert(_sin_tf_cos(tf_fn), native_serialization=True)
  if mode == "graph":
    f_tf = tf.function(f_tf, autograph=False)
  x = np.linspace(-1, 1, 5, dtype=np.float32)
  np.testing.assert_allclose(f_tf(x), jnp.cos(same_in_jax(jnp.sin(x))), rtol=1e-6)


def test_split_module_has_two_parts_around_one_tf_call():
  f_tf = jax2tf.convert(_sin_tf_cos(via_strings), native_serialization=True)
  f_tf(np.float32(1.))
  module = _module(f_tf)
  assert isinstance(module, split.SplitModule)
  assert [type(s).__name__ for s in module.steps] == ["_Part", "_TfCall", "_Part"]
  assert [s.fn.name for s in module.tf_calls] == ["via_strings"]
  assert all(p.module.function_list == () for p in module.parts)


def test_jit_compile_fails_naming_the_op():
  # The whole converted function is then one XLA cluster, TF call included.
  f_tf = tf.function(jax2tf.convert(_sin_tf_cos(via_strings), native_serialization=True),
                     autograph=False, jit_compile=True)
  with pytest.raises(tf.errors.InvalidArgumentError, match="unsupported operations.*AsString"):
    f_tf(np.float32(1.))


def test_polymorphic_batch_one_concrete_function_two_sizes():
  def fun_jax(x):
    y = jnp.sin(x)
    y = call_tf(via_strings, call_tf_graph=True, output_shape_dtype=y)(y)
    return jnp.cos(y), 2. * jnp.concatenate([y, y])

  f_tf = jax2tf.convert(fun_jax, native_serialization=True, polymorphic_shapes=["(b, 2)"])
  concrete = tf.function(f_tf, autograph=False).get_concrete_function(
      tf.TensorSpec([None, 2], tf.float32))
  for n in (3, 7):
    x = np.linspace(-1, 1, 2 * n, dtype=np.float32).reshape(n, 2)
    for got in (concrete(x), f_tf(x)):
      for g, w in zip(got, fun_jax(x)):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_polymorphic_part_whose_inputs_lack_the_dimension():
  # After the call only a scalar crosses, but the part builds an array of
  # shape (b,): b reaches it as an extra (b, 0)-shaped argument.
  def fun_jax(x):
    s = call_tf(lambda x: tf.reduce_sum(via_py_function(x)), call_tf_graph=True)(jnp.sin(x))
    return jnp.arange(x.shape[0], dtype=np.float32) * s

  f_tf = jax2tf.convert(fun_jax, native_serialization=True, polymorphic_shapes=["b"])
  concrete = tf.function(f_tf, autograph=False).get_concrete_function(
      tf.TensorSpec([None], tf.float32))
  for n in (2, 5):
    x = np.linspace(-1, 1, n, dtype=np.float32)
    want = jnp.arange(n, dtype=np.float32) * jnp.sum(2. * jnp.sin(x))
    np.testing.assert_allclose(concrete(x), want, rtol=1e-5)
    np.testing.assert_allclose(f_tf(x), want, rtol=1e-5)
  assert [p.carriers for p in _module(f_tf).parts] == [(), ("b",)]


def test_saved_model_round_trip(tmp_path):
  fun_jax = lambda x: jnp.cos(call_tf(via_strings, call_tf_graph=True,
                                      output_shape_dtype=x)(jnp.sin(x)))
  spec = tf.TensorSpec([None], tf.float32)
  module = tf.Module()
  module.f = tf.function(jax2tf.convert(fun_jax, native_serialization=True,
                                        polymorphic_shapes=["b"]),
                         autograph=False, input_signature=[spec])
  tf.saved_model.save(module, str(tmp_path))
  del module
  restored = tf.saved_model.load(str(tmp_path))
  for n in (3, 6):
    x = np.linspace(-1, 1, n, dtype=np.float32)
    np.testing.assert_allclose(restored.f(x), jnp.cos(jnp.sin(x)), rtol=1e-6)
  ops = _all_op_types(restored.f.get_concrete_function(spec).graph.as_graph_def())
  assert {"XlaCallModule", "AsString", "StringToNumber"} <= ops


def _all_op_types(graph_def) -> set:
  return {n.op for n in graph_def.node} | {
      n.op for f in graph_def.library.function for n in f.node_def}


def scaled_sin(x):
  # Differentiable through sin; the strings make it non-compilable.
  two = tf.strings.to_number(tf.strings.as_string(tf.ones_like(x) * 2.), tf.float32)
  return tf.math.sin(x) * two


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_gradient_matches_jax(mode):
  def fun_jax(scaled_sin_jax):
    return lambda x: jnp.sum(jnp.cos(scaled_sin_jax(jnp.exp(x)) * x))

  f_tf = jax2tf.convert(fun_jax(call_tf(scaled_sin, call_tf_graph=True)),
                        native_serialization=True)
  x = tf.Variable(np.linspace(-1, 1, 4, dtype=np.float32))

  def value_and_grad():
    with tf.GradientTape() as tape:
      y = f_tf(x)
    return y, tape.gradient(y, x)

  if mode == "graph":
    value_and_grad = tf.function(value_and_grad, autograph=False)
  y, g = value_and_grad()
  ref = fun_jax(lambda x: 2. * jnp.sin(x))
  np.testing.assert_allclose(y, ref(x.numpy()), rtol=1e-5)
  np.testing.assert_allclose(g, jax.grad(ref)(x.numpy()), rtol=1e-5)
  (entry,) = f_tf._jax2tf_converted._by_avals.values()
  assert [c.fn.name for c in entry.vjp().module.tf_calls] == [
      "scaled_sin", "vjp(scaled_sin)"]


def marked_sin(x):
  return tf.math.sin(x, name="marked_sin")


def _graph_def(f_tf, *specs):
  return tf.function(f_tf, autograph=False).get_concrete_function(*specs).graph.as_graph_def()


def _producer(input_name: str) -> str:
  return input_name.lstrip("^").split(":")[0]


def test_graph_has_modules_around_the_function_call():
  fun_jax = lambda x: jnp.cos(call_tf(marked_sin, call_tf_graph=True)(jnp.exp(x)))
  graph_def = _graph_def(jax2tf.convert(fun_jax, native_serialization=True),
                         tf.TensorSpec([3], tf.float32))
  library = {f.signature.name: f for f in graph_def.library.function}
  nodes = {n.name: n for n in graph_def.node}
  modules = [n for n in graph_def.node if n.op == "XlaCallModule"]
  calls = [n for n in graph_def.node if n.op in ("PartitionedCall", "StatefulPartitionedCall")
           and any(m.name == "marked_sin" for m in library[n.attr["f"].func.name].node_def)]
  assert len(modules) == 2 and len(calls) == 1
  first, second = modules
  assert not first.attr["function_list"].list.func
  assert not second.attr["function_list"].list.func
  # Data flows first module -> TF function -> second module.
  assert _producer(calls[0].input[0]) == first.name
  assert _producer(second.input[0]) == calls[0].name
  assert nodes[_producer(second.input[0])].op in ("PartitionedCall", "StatefulPartitionedCall")


def test_graph_without_call_tf_graph_has_one_module():
  fun_jax = lambda x: jnp.cos(call_tf(marked_sin)(jnp.exp(x)))
  graph_def = _graph_def(jax2tf.convert(fun_jax, native_serialization=True),
                         tf.TensorSpec([3], tf.float32))
  assert [n.op for n in graph_def.node].count("XlaCallModule") == 1
  assert not [n for n in graph_def.node if n.op in ("PartitionedCall", "StatefulPartitionedCall")]


def test_nested_jit_is_inlined_and_parts_merge():
  @jax.jit
  def inner(y):
    return jnp.cos(call_tf(via_py_function, call_tf_graph=True)(y) * y)

  outer = jax.jit(lambda x: inner(jnp.sin(x)) + inner(x))
  f_tf = jax2tf.convert(outer, native_serialization=True)
  x = np.linspace(-1, 1, 3, dtype=np.float32)
  inner_ref = lambda y: jnp.cos(2. * y * y)
  np.testing.assert_allclose(f_tf(x), inner_ref(jnp.sin(x)) + inner_ref(x), rtol=1e-6)
  # sin | call | (mul, cos) | call | (mul, cos, add): the inner jit's equations
  # join their neighbours.
  assert [type(s).__name__ for s in _module(f_tf).steps] == [
      "_Part", "_TfCall", "_Part", "_TfCall", "_Part"]


def test_jit_with_shardings_is_not_split():
  cpu = jax.sharding.SingleDeviceSharding(jax.devices("cpu")[0])
  fun_jax = jax.jit(lambda x: jnp.cos(call_tf(tf.math.sin, call_tf_graph=True)(x)),
                    in_shardings=cpu)
  f_tf = jax2tf.convert(fun_jax, native_serialization=True)
  x = np.linspace(-1, 1, 3, dtype=np.float32)
  np.testing.assert_allclose(f_tf(x), jnp.cos(jnp.sin(x)), rtol=1e-6)
  module = _module(f_tf)
  assert isinstance(module, exporting.NativeModule) and len(module.function_list) == 1


@pytest.mark.parametrize("has_side_effects", [True, False])
def test_unused_result_kept_only_with_side_effects(has_side_effects):
  def fun_jax(x):
    call_tf(marked_sin, call_tf_graph=True, has_side_effects=has_side_effects)(x)
    return x * 2.

  f_tf = jax2tf.convert(fun_jax, native_serialization=True)
  np.testing.assert_allclose(f_tf(np.float32(3.)), 6.)
  module = _module(f_tf)
  if has_side_effects:
    assert [c.fn.name for c in module.tf_calls] == ["marked_sin"]
  else:
    assert isinstance(module, split.SplitModule) and not module.tf_calls


def test_error_in_a_part_names_the_part():
  def fun_jax(x):
    y = call_tf(tf.math.sin, call_tf_graph=True)(x)
    jax.debug.print("y={}", y)
    return y

  f_tf = jax2tf.convert(fun_jax, native_serialization=True)
  with pytest.raises(NotImplementedError, match="jax.debug.print") as e:
    f_tf(np.float32(1.))
  assert "part 1 of 1 of fun_jax" in "\n".join(getattr(e.value, "__notes__", []))


def test_call_in_cond_keeps_the_function_list():
  # A branch cannot be cut in two: XlaCallModule calls the TF function and
  # compiles it with XLA, which works for compilable TF code only.
  def fun_jax(tf_fn):
    return lambda x: lax.cond(x[0] > 0., call_tf(tf_fn, call_tf_graph=True), jnp.cos, x)

  x = np.linspace(0.5, 1, 3, dtype=np.float32)
  f_tf = jax2tf.convert(fun_jax(tf.math.sin), native_serialization=True)
  np.testing.assert_allclose(f_tf(x), np.sin(x), rtol=1e-6)
  np.testing.assert_allclose(f_tf(-x), np.cos(-x), rtol=1e-6)
  module = _module(f_tf)
  assert isinstance(module, exporting.NativeModule) and len(module.function_list) == 1
  f_tf = jax2tf.convert(fun_jax(via_strings), native_serialization=True)
  with pytest.raises(Exception, match="unsupported operations.*AsString"):
    f_tf(x)


def test_random_key_across_a_call_is_refused_with_a_remedy():
  def fun_jax(x):
    key = jax.random.key(0)
    y = call_tf(tf.math.sin, call_tf_graph=True)(x)
    return y + jax.random.uniform(key, x.shape)

  x = np.ones(3, np.float32)
  with pytest.raises(NotImplementedError, match=r"(?s)fun_jax \(part 1 of 2.*key<fry>\[\].*key_data"):
    jax2tf.convert(fun_jax, native_serialization=True)(x)
  # The remedy the message gives.
  def with_key_data(x):
    data = jax.random.key_data(jax.random.key(0))
    y = call_tf(tf.math.sin, call_tf_graph=True)(x)
    return y + jax.random.uniform(jax.random.wrap_key_data(data), x.shape)

  np.testing.assert_allclose(jax2tf.convert(with_key_data, native_serialization=True)(x),
                             with_key_data(x), rtol=1e-6)


def test_cut_call_reads_and_writes_captured_variables_when_it_runs():
  counter = tf.Variable(np.float32(0.))

  def bump(x):
    counter.assign_add(tf.reduce_sum(x))
    return x + counter.read_value()

  fun_jax = lambda x: jnp.sin(call_tf(bump, call_tf_graph=True)(x * 2.))
  f_tf = jax2tf.convert(fun_jax, native_serialization=True)
  x = np.ones(2, np.float32)
  np.testing.assert_allclose(f_tf(x), np.sin(2. + 4.) * x, rtol=1e-6)
  np.testing.assert_allclose(tf.function(f_tf, autograph=False)(x), np.sin(2. + 8.) * x,
                             rtol=1e-6)
  assert float(counter.numpy()) == 8.


def test_constants_literals_and_arguments_cross_the_call():
  table = np.linspace(1., 2., 3, dtype=np.float32)

  def fun_jax(x, unused):
    y = call_tf(via_py_function, call_tf_graph=True)(x + table)
    z = call_tf(via_py_function, call_tf_graph=True)(jnp.asarray(table))  # a constant in
    return y * table, jnp.asarray(table), jnp.float32(7.), x, z

  f_tf = jax2tf.convert(fun_jax, native_serialization=True)
  x = np.float32([0.5, -1., 2.])
  for f in (f_tf, tf.function(f_tf, autograph=False)):
    got = f(x, np.int32(1))
    for g, w in zip(got, (2. * (x + table) * table, table, 7., x, 2. * table)):
      np.testing.assert_allclose(g, w, rtol=1e-6)


def test_parts_are_exported_once_per_abstract_signature(monkeypatch):
  exported = []
  export_native = exporting.export_native

  def counting(*args, fun_name, **kwargs):
    exported.append(fun_name)
    return export_native(*args, fun_name=fun_name, **kwargs)

  monkeypatch.setattr(exporting, "export_native", counting)
  fun_jax = lambda x: jnp.cos(call_tf(via_strings, call_tf_graph=True,
                                      output_shape_dtype=x)(jnp.sin(x)))
  f_tf = jax2tf.convert(fun_jax, native_serialization=True, polymorphic_shapes=["b"])
  f_graph = tf.function(f_tf, autograph=False)
  for n in (2, 3, 2, 5):
    x = np.linspace(-1, 1, n, dtype=np.float32)
    np.testing.assert_allclose(f_tf(x), jnp.cos(jnp.sin(x)), rtol=1e-6)
    np.testing.assert_allclose(f_graph(x), jnp.cos(jnp.sin(x)), rtol=1e-6)
  assert [name.split(" (")[1] for name in exported] == [
      "part 1 of 2, split at call_tf_graph=True calls)",
      "part 2 of 2, split at call_tf_graph=True calls)"]
