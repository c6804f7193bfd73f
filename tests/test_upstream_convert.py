"""Behaviours of `jax.experimental.jax2tf.convert` that upstream's own tests
(jax-v0.10.2, jax2tf_test.py and shape_poly_test.py) pin, each compared with
JAX itself where JAX computes the value."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tf_fun(f_tf, with_function: bool):
  return tf.function(f_tf, autograph=False) if with_function else f_tf


# -- TF's trackable containers are pytrees -----------------------------------


def _module_with_containers():
  # A tuple stays a tuple unless it holds something trackable.
  m = tf.Module()
  m.a = [tf.Variable(1.0), tf.Variable(2.0)]
  m.b = (tf.Variable(3.0), tf.Variable(4.0))
  m.c = {"z": tf.Variable(5.0), "a": tf.Variable(6.0)}
  return m


def test_trackable_wrappers_are_pytrees_as_the_containers_they_wrap():
  jax2tf.convert  # noqa: B018  (its first use registers them, as importing upstream does)
  m = _module_with_containers()
  assert type(m.a) is not list and type(m.b) is not tuple and type(m.c) is not dict

  def values(tree):
    return [float(v.numpy()) for v in jax.tree_util.tree_leaves(tree)]

  assert values(m.a) == [1, 2]
  assert values(m.b) == [3, 4]
  # In the dict's own order, as JAX's jax2tf registers them.
  assert values(m.c) == [5, 6]
  a, b, c = jax.tree_util.tree_map(lambda v: float(v.numpy()), (m.a, m.b, m.c))
  assert a == [1, 2] and b == (3, 4) and dict(c) == {"z": 5, "a": 6}
  # Variables kept in a module are leaves of the JAX function's arguments.
  want = jax.jit(lambda p: p[0] * p[1])([np.float32(1), np.float32(2)])
  np.testing.assert_array_equal(jax2tf.convert(lambda p: p[0] * p[1])(m.a).numpy(), want)


# Run in a fresh process: registrations cannot be undone, and the order of the
# imports is the point.
_IMPORT_ORDER = """
import json, sys
import tensorflow as tf
import jax
m = tf.Module()
m.a = [tf.Variable(1.0), tf.Variable(2.0)]
m.b = (tf.Variable(3.0), tf.Variable(4.0))
m.c = {"z": tf.Variable(5.0), "a": tf.Variable(6.0)}

def observe():
  return {k: [[float(x.numpy()) for x in jax.tree_util.tree_leaves(v)],
              type(jax.tree_util.tree_map(lambda x: x, v)).__name__,
              str(jax.tree_util.tree_structure(v))] for k, v in (("a", m.a), ("b", m.b), ("c", m.c))}

out = {}
if sys.argv[1] == "ours_first":
  import jax2tf
  jax2tf.convert
  out["before"] = observe()
  from jax.experimental import jax2tf as upstream  # registers them again
else:
  from jax.experimental import jax2tf as upstream
  out["before"] = observe()
  import jax2tf
  jax2tf.convert
out["after"] = observe()
out["both_convert"] = [float(jax2tf.convert(lambda x: x + 1)(1.0)),
                       float(upstream.convert(lambda x: x + 1)(1.0))]
out["upstream_is_jax"] = upstream.convert.__module__
print(json.dumps(out))
"""


@pytest.mark.subprocess
def test_registration_beside_jax_module_in_either_import_order():
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu")
  env.pop("JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL", None)
  env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
  results = {}
  for order in ("ours_first", "upstream_first"):
    proc = subprocess.run(
      [sys.executable, "-W", "ignore::DeprecationWarning", "-c", textwrap.dedent(_IMPORT_ORDER),
       order],
      env=env,
      capture_output=True,
      text=True,
      timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    results[order] = json.loads(proc.stdout.strip().splitlines()[-1])
  for out in results.values():
    assert out["before"] == out["after"]
    assert out["both_convert"] == [2.0, 2.0]
    assert out["upstream_is_jax"] == "jax.experimental.jax2tf.jax2tf"
  # Whichever registered, the same pytrees: JAX's module's own registration
  # stands where it was imported first.
  assert results["ours_first"]["after"] == results["upstream_first"]["after"]
  assert results["ours_first"]["after"]["c"][:2] == [[5.0, 6.0], "_DictWrapper"]


# -- float0 results -----------------------------------------------------------


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("with_function", [False, True])
def test_float0_results_are_boolean_zeros(native, with_function):
  def f(x, y):
    return jnp.sum(x.astype(jnp.float32) * y)

  grad = jax.grad(f, argnums=(0, 1), allow_int=True)
  x, y = np.arange(6, dtype=np.int16).reshape(2, 3), np.float32(1.5)
  gx_jax, gy_jax = grad(x, y)
  assert gx_jax.dtype == jax.dtypes.float0
  gx, gy = _tf_fun(jax2tf.convert(grad, native_serialization=native), with_function)(x, y)
  # TF has no float0: JAX's jax2tf gives False of the same shape.
  assert gx.dtype == tf.bool and gx.shape == gx_jax.shape
  assert not gx.numpy().any()
  np.testing.assert_allclose(gy.numpy(), np.asarray(gy_jax))


# -- typed PRNG keys closed over ---------------------------------------------


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("custom_prng", [False, True])
def test_closed_over_typed_key(native, custom_prng):
  with jax.enable_custom_prng(custom_prng):
    key = jax.random.key(0) if not custom_prng else jax.random.PRNGKey(0)
    assert jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)

    def f():
      return jax.random.uniform(key.reshape(1).squeeze(), (3,))

    got = jax2tf.convert(f, native_serialization=native)()
    np.testing.assert_array_equal(got.numpy(), np.asarray(jax.jit(f)()))


# -- gradients with integer arguments and results under symbolic shapes ------


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("with_function", [False, True])
def test_gradient_with_integer_values_and_symbolic_shapes(native, with_function):
  def f(xi_yf, zb):
    xi, yf = xi_yf
    return jnp.zeros(xi.shape, jnp.float32), (xi, zb, xi.astype(jnp.float32) * 2.0 * yf)

  xi = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
  yf = xi.astype(np.float32)
  zb = np.array([True, False])
  f_tf = jax2tf.convert(
    f, polymorphic_shapes=[("b1, b2, 4", "b1, b2, 4"), "b1"], native_serialization=native
  )
  f_tf = _tf_fun(f_tf, with_function)

  def loss_tf(xi, yf, zb):
    zeros, (_, _, prod) = f_tf((xi, yf), zb)
    return tf.reduce_sum(zeros) + tf.reduce_sum(prod)

  xs = [tf.Variable(xi), tf.Variable(yf), tf.Variable(zb)]
  with tf.GradientTape() as tape:
    loss = loss_tf(*xs)
  g_xi, g_yf, g_zb = tape.gradient(loss, xs, unconnected_gradients=tf.UnconnectedGradients.ZERO)

  def loss_jax(yf):
    zeros, (_, _, prod) = f((xi, yf), zb)
    return jnp.sum(zeros) + jnp.sum(prod)

  np.testing.assert_allclose(g_yf.numpy(), np.asarray(jax.grad(loss_jax)(yf)))
  np.testing.assert_array_equal(g_xi.numpy(), np.zeros_like(xi))
  np.testing.assert_array_equal(g_zb.numpy(), np.zeros_like(zb))


@pytest.mark.parametrize("native", [True, False])
def test_saved_model_of_an_integer_function_with_symbolic_shapes(native, tmp_path):
  # Saving traces the gradient, whose cotangents have symbolic shapes.
  def f(x):
    return jnp.reshape(x, (-1,))

  m = tf.Module()
  m.f = tf.function(
    jax2tf.convert(f, polymorphic_shapes=["(b, ...)"], native_serialization=native),
    autograph=False,
    input_signature=[tf.TensorSpec((None, 3, 4), tf.int32)],
  )
  tf.saved_model.save(m, str(tmp_path))
  restored = tf.saved_model.load(str(tmp_path))
  x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
  np.testing.assert_array_equal(restored.f(x).numpy(), np.asarray(jax.jit(f)(x)))


# -- polymorphic_shapes that does not fit the arguments ----------------------


@pytest.mark.parametrize(
  "polymorphic_shapes, detail",
  [
    (("b", "b", "b"), "has 3 entries but add_all was called with 2"),
    (dict(a="b"), r"its keys must be parameter names of add_all; unknown key\(s\) \['a'\]"),
    ((dict(a="b"), "b"), "must be a pytree prefix of argument x_pair_of_list"),
  ],
)
def test_polymorphic_shapes_not_fitting_the_arguments(polymorphic_shapes, detail):
  x = np.arange(4, dtype=np.float32)

  def add_all(x_pair_of_list, y_dict):
    x_list_0, x_list_1 = x_pair_of_list
    return sum(x_list_0 + x_list_1 + [y_dict["a"], y_dict["b"]])

  # ValueError with JAX's words for a structure mismatch, which upstream's
  # users match, then ours.
  with pytest.raises(ValueError, match="^pytree structure error: .*" + detail):
    jax2tf.convert(add_all, polymorphic_shapes=polymorphic_shapes)(([x, x], [x]), dict(a=x, b=x))


# -- the names of the graph ops of arguments and results ---------------------


@pytest.mark.parametrize("native", [True, False])
def test_graph_ops_named_after_arguments_and_results(native):
  f_tf = jax2tf.convert(lambda xs, y: [x + y for x in xs], native_serialization=native)

  @tf.function(autograph=False)
  def u(xs, y):
    with tf.GradientTape() as tape:
      tape.watch(xs)
      res = f_tf(xs, y)
      tape.gradient(res, xs)
    return res

  spec = tf.TensorSpec([2], tf.float32)
  graph = u.get_concrete_function([spec] * 3, spec).graph
  ops = {op.name: op for op in graph.get_operations()}
  for i in range(4):
    # The shape check of each argument is the named op: no Identity added.
    assert ops[f"jax2tf_arg_{i}"].type == "EnsureShape"
    assert ops[f"jax2tf_arg_{i}"].inputs[0].op.type == "Placeholder"
    assert f"jax2tf_vjp/jax2tf_arg_{i}" in ops
  assert "jax2tf_arg_4" not in ops
  for name in ("jax2tf_out", "jax2tf_out_1", "jax2tf_out_2"):
    assert name in ops
  assert "jax2tf_out_3" not in ops
  # The VJP's results: one cotangent per argument.
  for name in ("jax2tf_vjp/jax2tf_out", "jax2tf_vjp/jax2tf_out_3"):
    assert name in ops
  assert not [name for name in ops if name.startswith("check_shape_of_")]


@pytest.mark.parametrize("native", [True, False])
def test_names_go_to_the_ops_made_anyway(native):
  # A constant argument, a cast argument and results without a gradient add
  # no Identity: the op is named.
  f_tf = jax2tf.convert(lambda a, b: (a * 2, b), native_serialization=native, with_gradient=False)

  @tf.function(autograph=False)
  def u(b):
    return f_tf(np.float32(3), b)

  res = u(tf.constant([1.5, 2.5], tf.float64))
  want = jax.jit(lambda a, b: (a * 2, b))(np.float32(3), np.float32([1.5, 2.5]))
  np.testing.assert_array_equal(res[0].numpy(), np.asarray(want[0]))
  np.testing.assert_array_equal(res[1].numpy(), np.asarray(want[1]))
  graph = u.get_concrete_function(tf.TensorSpec([2], tf.float64)).graph
  types = {op.name: op.type for op in graph.get_operations()}
  assert types["jax2tf_arg_0"] == "Const"
  assert types["jax2tf_arg_1"] == "Cast"  # float64 without jax_enable_x64
  assert types["jax2tf_out"] == types["jax2tf_out_1"] == "PreventGradient"
