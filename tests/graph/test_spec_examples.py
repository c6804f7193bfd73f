"""The spec's examples as far as graph serialization (`native_serialization=False`)
differs from native serialization.

The examples common to both serializations are in tests/spec/, run under
each; here are only the documented graph differences: one TF op per JAX
primitive (no Xla* op with enable_xla=False), dimension expressions computed
by TF ops, shape checks as TF Assert ops (and, under jit_compile=True, which
drops them, an assertion-only XlaCallModule), and the known issues that apply
to graph serialization.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf
from tests.graph.spec_helpers import (
  FLAVOURS,
  assert_like_jax,
  concrete,
  gconvert,
  graph_op_types,
  raises_shape_error,
  rand,
)
from tests.spec.helpers import no_jax_model_fun, save_and_load, save_no_jax_model
from tests.tf_modes import TF_MODES, in_mode, run_in_mode

SHAPE_ASSERTIONS = jax2tf.DisabledSafetyCheck.shape_assertions()


def f_jax(x):
  return jnp.sin(jnp.cos(x))


# =============================================================================
# Usage: basic functions
# =============================================================================

@pytest.mark.parametrize("flavour", FLAVOURS)
def test_basic_graph_has_one_tf_op_per_primitive(flavour):
  ops = graph_op_types(gconvert(f_jax, flavour), tf.TensorSpec([4], tf.float32))
  assert {"Sin", "Cos"} <= ops
  assert "XlaCallModule" not in ops
  assert not any(op.startswith("Xla") for op in ops), ops


_PLUMBING = {"Placeholder", "EnsureShape", "Identity", "IdentityN", "Const", "NoOp"}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_each_equation_is_one_tf_op_in_its_name_scope(flavour):
  def chain(x):
    return jnp.tanh(jnp.exp(jnp.sin(jnp.cos(x)) * x) + x)

  eqns = jax.make_jaxpr(chain)(np.ones(4, np.float32)).jaxpr.eqns
  graph = tf.function(gconvert(chain, flavour), autograph=False).get_concrete_function(
      tf.TensorSpec([4], tf.float32)).graph
  compute = [op for op in graph.get_operations() if op.type not in _PLUMBING]
  # In equation order, each in the name scope of its primitive.
  assert [op.name.split("/")[0] for op in compute] == [str(e.primitive) for e in eqns]
  assert [op.type for op in compute] == ["Cos", "Sin", "Mul", "Exp", "AddV2", "Tanh"]


# =============================================================================
# Usage: saved model
# =============================================================================

def _saved_op_types(path) -> set:
  from tensorflow.core.protobuf import saved_model_pb2
  sm = saved_model_pb2.SavedModel()
  sm.ParseFromString((path / "saved_model.pb").read_bytes())
  graph_def = sm.meta_graphs[0].graph_def
  ops = {n.op for n in graph_def.node}
  for fn in graph_def.library.function:
    ops |= {n.op for n in fn.node_def}
  return ops


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_saved_graph_holds_only_tf_ops(tmp_path, flavour):
  # The light counterpart of tests/spec's subprocess test: nothing in the
  # saved graph refers to JAX, and without XLA ops it needs no XLA either.
  serialization = "graph" if flavour == "xla" else "graph_no_xla"
  path = save_no_jax_model(tmp_path / "model", serialization)
  ops = _saved_op_types(path)
  assert "XlaCallModule" not in ops and "Sin" in ops
  assert not any("py" in op.lower() and "func" in op.lower() for op in ops), ops
  if flavour == "no_xla":
    assert not any(op.startswith("Xla") for op in ops), ops
  restored = tf.saved_model.load(str(path))
  for n in (1, 5):
    x = np.arange(4 * n, dtype=np.float32).reshape(n, 4) / 7.
    np.testing.assert_allclose(restored.f(tf.constant(x)).numpy(),
                               jax.jit(no_jax_model_fun)(x), rtol=1e-5)


# =============================================================================
# Shape-polymorphic conversion
# =============================================================================

def _dim_ops_fun(x):
  n = x.shape[0]
  return (jnp.zeros((n // 3,)) + 1.,
          jnp.zeros((n % 3,)) + 2.,
          jnp.ones((jax.core.max_dim(n - 4, 2),)),
          jnp.ones((jax.core.min_dim(n, 5),)),
          jnp.reshape(x[: 2 * (n // 2)], (n // 2, 2)),
          x[: n - 1] * (n * n + 3 * n))


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("mode", TF_MODES)
def test_dimension_expressions_as_tf_ops(mode, flavour):
  f_tf = in_mode(gconvert(_dim_ops_fun, flavour, polymorphic_shapes=["b"]), mode)
  if mode != "eager":
    f_tf = f_tf.get_concrete_function(tf.TensorSpec([None], tf.float32))
  for n in (1, 2, 5, 9):
    x = rand((n,), n)
    assert_like_jax(_dim_ops_fun, f_tf(x), x)


def test_dimension_expressions_are_computed_from_tf_shape():
  cf = concrete(_dim_ops_fun, ["b"], tf.TensorSpec([None], tf.float32))
  ops = {op.type for op in cf.graph.get_operations()}
  assert "Shape" in ops and {"FloorDiv", "FloorMod", "Maximum", "Minimum"} <= ops, ops


# -- Shape assertions ------------------------------------------------------------

def test_shape_assertion_messages_same_as_native():
  # The same violations, the same text, under both serializations (eager and
  # tf.function).
  funs = {}
  for native in (False, True):
    f = jax2tf.convert(jnp.sin, polymorphic_shapes="(b, b, 2*d)", native_serialization=native)
    funs[(native, True)] = f
    funs[(native, False)] = tf.function(f, autograph=False).get_concrete_function(
        tf.TensorSpec([None, None, None], tf.float32))

  def message(native, eager, shape):
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
      funs[(native, eager)](rand(shape))
    text = str(e.value)
    first = text.find("Input shapes do not match")
    assert first >= 0, text
    return text[first:text.find("for more details.", first)]

  for shape in [(3, 3, 5), (0, 0, 4), (3, 4, 6)]:
    for eager in (True, False):
      assert message(False, eager, shape) == message(True, eager, shape), (shape, eager)


def test_shape_checks_raise_in_spec_order():
  # Of several failing checks the first in JAX's order must raise: TF runs
  # independent ops in any order, so each check's message waits for the check
  # before it.
  cf = concrete(jnp.sin, "(b, b, 2*d)", tf.TensorSpec([None, None, None], tf.float32))
  by_name = {n.name: n for n in cf.graph.as_graph_def().node}

  def ancestors(name):
    seen, todo = set(), [name]
    while todo:
      node = by_name[todo.pop().lstrip("^").split(":")[0]]
      if node.name not in seen:
        seen.add(node.name)
        todo.extend(node.input)
    return seen

  checks = [n for n in by_name.values() if n.op == "Assert"]
  assert len(checks) >= 2, [n.name for n in checks]
  for earlier, later in zip(checks, checks[1:]):
    message = later.input[1]
    assert by_name[message.split(":")[0]].op == "StringToNumber", later
    assert earlier.name in ancestors(message), (earlier.name, later.name)


def test_shape_assertion_with_static_tensor_spec_fails_at_tracing():
  # A TensorSpec whose known sizes already violate the spec: no TF graph to
  # run, the check happens while tracing, as for native serialization.
  for native in (False, True):
    f_tf = tf.function(jax2tf.convert(jnp.sin, polymorphic_shapes="(b, b)",
                                      native_serialization=native), autograph=False)
    with raises_shape_error(re.escape(
        "Found inconsistency between dimension size args[0].shape[1] (= 4) and the "
        "specification 'b' (= 3)")):
      f_tf.get_concrete_function(tf.TensorSpec([3, 4], tf.float32))


def test_disabled_shape_assertions_leave_no_assert_ops():
  spec = tf.TensorSpec([None, None, None], tf.float32)
  checked = concrete(jnp.sin, "(b, b, 2*d)", spec)
  unchecked = concrete(jnp.sin, "(b, b, 2*d)", spec,
                       native_serialization_disabled_checks=[SHAPE_ASSERTIONS])
  assert "Assert" in {op.type for op in checked.graph.get_operations()}
  assert "Assert" not in {op.type for op in unchecked.graph.get_operations()}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_assertion_module_only_under_jit_compile(flavour):
  spec = tf.TensorSpec([None, None, None], tf.float32)

  def call_modules(jit_compile, **kwargs):
    cf = concrete(jnp.sin, "(b, b, 2*d)", spec, flavour=flavour, jit_compile=jit_compile,
                  **kwargs)
    return [op for op in cf.graph.get_operations() if op.type == "XlaCallModule"]

  assert not call_modules(False)
  (checks,) = call_modules(True)
  # The graph runs wherever TF compiles it: so must its checks.
  assert [p.decode() for p in checks.get_attr("platforms")] == ["CPU", "CUDA", "ROCM", "TPU"]
  assert not call_modules(True, native_serialization_disabled_checks=[SHAPE_ASSERTIONS])


# -- The spec's unchecked assumptions (graph serialization only) ------------------

def positive_fun(x):
  return 0 if x.shape[0] == 0 else 1


def test_unchecked_assumption_strictly_positive():
  x0 = np.array([], np.float32)
  assert positive_fun(x0) == 0  # JAX sees the empty shape
  # Eager: the broken assumption b >= 1 is caught.
  with raises_shape_error("Expected value >= 1 for dimension variable 'b'"):
    gconvert(positive_fun, polymorphic_shapes=["b"])(x0)
  traced = {jc: tf.function(gconvert(positive_fun, polymorphic_shapes=["b"]),
                           autograph=False, jit_compile=jc).get_concrete_function(
                               tf.TensorSpec([None], dtype=np.float32))
            for jc in (False, True)}
  # Traced first to a TF graph the spec says the assumption "may be missed":
  # the graph's Assert ops catch it, and under jit_compile=True, where TF
  # drops them, an assertion-only XlaCallModule does.
  for jit_compile in (False, True):
    with raises_shape_error("Expected value >= 1 for dimension variable 'b'"):
      traced[jit_compile](x0)
  assert traced[True](np.ones((3,), np.float32)).numpy() == 1


def equal_dims_fun(x):
  return 0 if x.shape[0] != x.shape[1] else 1


def test_unchecked_assumption_equal_dimensions():
  x45 = np.ones((4, 5), dtype=np.float32)
  assert equal_dims_fun(x45) == 0
  with raises_shape_error(re.escape(
      "Found inconsistency between dimension size args[0].shape[1] (= 5) and the "
      "specification 'b' (= 4)")):
    gconvert(equal_dims_fun, polymorphic_shapes=["b, b"])(x45)
  traced = {jc: tf.function(gconvert(equal_dims_fun, polymorphic_shapes=["b, b"]),
                           autograph=False, jit_compile=jc).get_concrete_function(
                               tf.TensorSpec([None, None], dtype=np.float32))
            for jc in (False, True)}
  for jit_compile in (False, True):
    with raises_shape_error(re.escape("Found inconsistency between dimension size "
                                      "args[0].shape[1] (= 5)")):
      traced[jit_compile](x45)
  assert traced[True](np.ones((4, 4), np.float32)).numpy() == equal_dims_fun(np.ones((4, 4))) == 1


# =============================================================================
# Known issues that apply to graph serialization
# =============================================================================

# The known issues that apply to both serializations (tf.Module wrapping,
# unsafe_rbg, first-order-only SavedModel gradients) are in
# tests/spec/test_saved_model.py.


def test_compile_only_the_converted_part(tmp_path):
  # The spec's recipe when the surrounding TF code cannot be compiled.
  def compute_jax_fn(x):
    return jnp.cumsum(jnp.sin(x))

  def entire_tf_fun(s):
    y = tf.strings.to_number(tf.strings.split(s, ","), tf.float32)
    z = tf.function(gconvert(compute_jax_fn, polymorphic_shapes=["(b,)"]),
                    autograph=False, jit_compile=True)(y)
    return tf.strings.reduce_join(tf.strings.as_string(z, precision=4), separator=",")

  my_model = tf.Module()
  my_model.f = tf.function(entire_tf_fun, autograph=False,
                           input_signature=[tf.TensorSpec([], tf.string)])
  restored = save_and_load(my_model, tmp_path)
  x = np.float32([0.5, 1., 2.])
  res = restored.f(tf.constant(",".join(str(v) for v in x))).numpy().decode()
  np.testing.assert_allclose([float(v) for v in res.split(",")],
                             jax.jit(compute_jax_fn)(x), atol=1e-4)


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_associative_scan_reductions_flag(mode):
  f = lambda x: (jnp.cumsum(x, axis=0), jnp.cumprod(x, axis=1), lax.cummax(x, axis=0))
  x = rand((5, 3))
  with jax.jax2tf_associative_scan_reductions(True):
    assert_like_jax(f, run_in_mode(gconvert(f), mode, x), x, rtol=1e-5)


def test_pmap_unsupported():
  with pytest.raises(NotImplementedError) as e:
    gconvert(jax.pmap(jnp.sin))(np.ones((1, 3), np.float32))
  # The message names the primitive, shows its parameters and the remedy.
  msg = str(e.value)
  # (pmap is shard_map inside in newer JAX)
  assert re.search(r"no rule for the JAX primitive '(xla_pmap|shard_map)' "
                   r"\(parameters \{.*axis_name", msg), msg
  assert "native_serialization=True" in msg, msg
