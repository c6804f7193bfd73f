"""The graph lowering's shared machinery: the rule registry's guard and the rule
context."""

import jax
import numpy as np
import pytest
import tensorflow as tf
from jax import lax
from jax.extend import core as jax_core

import jax2tf
from jax2tf.graph import registry
from jax2tf.graph.context import RuleContext

# -- the registry's guard against two rules for one primitive -----------------------

@pytest.fixture
def empty_registry(monkeypatch):
  monkeypatch.setattr(registry, "_RULES", {})


def _functions(source: str, filename: str) -> dict:
  namespace = {"__name__": "tests.graph.fake_rules"}
  exec(compile(source, filename, "exec"), namespace)  # pylint: disable=exec-used
  return namespace


def test_two_lambdas_of_one_module_for_one_primitive_are_refused(empty_registry):
  prim = jax_core.Primitive("test_two_lambdas")
  fns = _functions("first = lambda ctx, x: x\nsecond = lambda ctx, x: -x\n", "/fake/rules.py")
  registry.register(prim)(fns["first"])
  with pytest.raises(ValueError, match="already has a rule"):
    registry.register(prim)(fns["second"])
  assert registry.rule_for(prim).fn is fns["first"]


def test_a_module_imported_again_registers_its_rules_again(empty_registry):
  # What a re-import after a failed import does: the same definitions, new objects.
  prim = jax_core.Primitive("test_reimport")
  source = "rule = lambda ctx, x: x\n"
  first, again = _functions(source, "/fake/rules.py"), _functions(source, "/fake/rules.py")
  registry.register(prim)(first["rule"])
  registry.register(prim)(again["rule"])
  assert registry.rule_for(prim).fn is again["rule"]


def test_the_same_function_for_aliased_primitives(empty_registry):
  prim = jax_core.Primitive("test_alias")

  def rule(ctx, x):
    return x
  registry.register(prim, prim)(rule)
  assert registry.rule_for(prim).fn is rule


# -- the rule context ------------------------------------------------------------------

class _FalsyAval:
  """An aval-like value whose truth value is False (as a length-0 sequence is)."""
  dtype = np.dtype(np.int32)

  def __bool__(self):
    return False


def test_tf_dtype_of_a_given_aval_even_if_falsy():
  ctx = RuleContext(None, [], [jax.core.ShapedArray((), np.float32)], env=None)
  assert ctx.tf_dtype() == tf.float32
  assert ctx.tf_dtype(_FalsyAval()) == tf.int32


@pytest.mark.parametrize("enable_xla", [True, False])
def test_generic_reduce_with_bitwise_or_body_on_integers(enable_xla):
  # An `or` body is max only on bool: on integers it is bitwise (JAX: 1|2|8|5 == 15).
  def f(x):
    return lax.reduce(x, np.int32(5), lax.bitwise_or, (0,))

  x = np.array([1, 2, 8], np.int32)
  f_tf = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
  np.testing.assert_array_equal(np.asarray(f_tf(x)), np.asarray(jax.jit(f)(x)))


@pytest.mark.parametrize("enable_xla", [True, False])
def test_conj_bound_with_jax_s_older_parameter_name(enable_xla):
  # JAX's lowering accepts conj's operand dtype as `_input_dtype` too.
  def f(x):
    return lax.conj_p.bind(x, _input_dtype=x.dtype)

  for x in (np.array([1 + 2j, 3 - 1j], np.complex64), np.array([1.5, -2.0], np.float32)):
    f_tf = jax2tf.convert(f, native_serialization=False, enable_xla=enable_xla)
    np.testing.assert_array_equal(np.asarray(f_tf(x)), np.asarray(jax.jit(f)(x)))


# -- equations nothing reads ---------------------------------------------------------


def _graph_ops(f, *args) -> set:
  converted = jax2tf.convert(f, native_serialization=False, with_gradient=False)
  specs = [tf.TensorSpec(np.shape(a), tf.as_dtype(np.asarray(a).dtype)) for a in args]
  graph = tf.function(converted, autograph=False).get_concrete_function(*specs).graph
  return {op.type for op in graph.get_operations()}


def test_equations_nothing_reads_are_not_lowered():
  # Flax's RNN splits a key for a zeros initializer: the split's hash is dead.
  def f(x):
    jax.random.split(jax.random.key(0))
    return x + 1

  x = np.arange(3, dtype=np.float32)
  assert "BitwiseXor" not in _graph_ops(f, x)
  got = jax2tf.convert(f, native_serialization=False)(x)
  np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.jit(f)(x)))

  def read(x):  # the same split, read: lowered
    return x + 1, jax.random.key_data(jax.random.split(jax.random.key(0)))

  assert "BitwiseXor" in _graph_ops(read, x)


def test_equations_with_effects_are_kept_though_nothing_reads_them():
  # A callback's result is unread, yet it runs: kept, and so refused here.
  def f(x):
    jax.debug.callback(print, x * 2)
    return x + 1

  with pytest.raises(NotImplementedError, match="debug_callback"):
    jax2tf.convert(f, native_serialization=False)(np.arange(3, dtype=np.float32))
