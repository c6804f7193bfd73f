"""Errors about the serialization options, naming what is wrong.

The errors common to both serializations are in tests/spec/test_errors.py.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf
from jax2tf import options
from jax2tf.native import module_rewrite
from jax2tf.native.module_rewrite import UnsupportedCustomCallError


def _graph_ops(f_tf, *specs):
  graph = tf.function(f_tf, autograph=False).get_concrete_function(*specs).graph
  return {op.type for op in graph.get_operations()}


def test_native_serialization_false_selects_graph_serialization():
  ops = _graph_ops(jax2tf.convert(jnp.sin, native_serialization=False),
                   tf.TensorSpec([3], tf.float32))
  assert "Sin" in ops and "XlaCallModule" not in ops


def test_enable_xla_false_with_native():
  with pytest.raises(ValueError, match="enable_xla=False needs graph serialization"):
    jax2tf.convert(jnp.sin, enable_xla=False)


def test_enable_xla_false_with_graph_serialization():
  f = jax2tf.convert(jnp.sin, enable_xla=False, native_serialization=False)
  np.testing.assert_allclose(f(np.float32(1.)).numpy(), np.sin(np.float32(1.)), rtol=1e-6)


@pytest.mark.parametrize("platforms, exc, match", [
    (("gpu",), ValueError, r"unknown platform 'gpu'; expected some of \('cpu', 'cuda', 'rocm', 'tpu'\)"),
    ("cpu", TypeError, re.escape("got the string 'cpu'; write ('cpu',)")),
    ((), ValueError, "must not be empty"),
    ((1,), ValueError, "unknown platform 1"),
])
def test_bad_platforms(platforms, exc, match):
  with pytest.raises(exc, match=match):
    jax2tf.convert(jnp.sin, native_serialization_platforms=platforms)


def test_platform_names_case_insensitive():
  f = jax2tf.convert(jnp.sin, native_serialization_platforms=("CPU",))
  np.testing.assert_allclose(f(np.float32(1.)).numpy(), np.sin(np.float32(1.)), rtol=1e-6)


@pytest.mark.parametrize("checks", [["platform"], [None], "platform"])
def test_bad_disabled_checks(checks):
  with pytest.raises(TypeError, match="native_serialization_disabled_checks: expected "
                                      "jax2tf.DisabledSafetyCheck values"):
    jax2tf.convert(jnp.sin, native_serialization_disabled_checks=checks)


@pytest.mark.parametrize("option", ["with_gradient", "enable_xla", "native_serialization"])
def test_bool_options_must_be_bool(option):
  with pytest.raises(TypeError, match=f"{option} must be a bool"):
    jax2tf.convert(jnp.sin, **{option: 1})


def test_not_callable():
  with pytest.raises(TypeError, match="fun_jax must be callable"):
    jax2tf.convert(np.ones(3))


def test_env_var_false_selects_graph_serialization(monkeypatch):
  monkeypatch.setenv(options.DEFAULT_NATIVE_SERIALIZATION_ENV, "false")
  spec = tf.TensorSpec([3], tf.float32)
  assert "XlaCallModule" not in _graph_ops(jax2tf.convert(jnp.sin), spec)
  # An explicit choice still wins over the environment.
  assert "XlaCallModule" in _graph_ops(
      jax2tf.convert(jnp.sin, native_serialization=True), spec)


@pytest.mark.parametrize("value", ["1", "TRUE", " yes ", ""])
def test_env_var_true_spellings(monkeypatch, value):
  monkeypatch.setenv(options.DEFAULT_NATIVE_SERIALIZATION_ENV, value)
  assert jax2tf.convert(jnp.cos)(np.float32(0.)).numpy() == 1.


def test_env_var_garbage(monkeypatch):
  monkeypatch.setenv(options.DEFAULT_NATIVE_SERIALIZATION_ENV, "maybe")
  with pytest.raises(ValueError, match="JAX2TF_DEFAULT_NATIVE_SERIALIZATION='maybe'"):
    jax2tf.convert(jnp.sin)


def test_host_callback_refused():
  def f(x):
    jax.debug.print("x={x}", x=x)
    return x * 2.

  with pytest.raises(NotImplementedError, match="Host callbacks .* cannot be carried"):
    jax2tf.convert(f)(np.float32(1.))


# -- Custom calls TensorFlow cannot execute ---------------------------------------

A44 = np.random.default_rng(0).random((4, 4)).astype(np.float32)


def qr_pivoting(a):
  return jax.scipy.linalg.qr(a, pivoting=True)


# Pivoted QR lowers to LAPACK's geqp3 custom call only where the matrix's
# size is symbolic: the portable lowering's JAX form needs it static.
SYMBOLIC_MATRIX = ["(n, n)"]


def test_custom_call_outside_jax_allow_list_named_the_package_way():
  # JAX's own check would refuse lapack_sgeqp3_ffi with a generic message
  # ("Cannot serialize code with custom calls whose targets have no
  # compatibility guarantees"), naming neither the primitive nor a remedy.
  with pytest.raises(UnsupportedCustomCallError) as e:
    jax2tf.convert(qr_pivoting, polymorphic_shapes=SYMBOLIC_MATRIX)(A44)
  msg = str(e.value)
  assert "Cannot serialize code with custom calls" not in msg
  assert "geqp3 (qr with pivoting=True) (custom call 'lapack_sgeqp3_ffi')" in msg
  assert ("native_serialization_disabled_checks=["
          "jax2tf.DisabledSafetyCheck.custom_call('lapack_sgeqp3_ffi')]") in msg
  assert e.value.targets == ("lapack_sgeqp3_ffi",) and e.value.primitives == ("geqp3",)
  assert isinstance(e.value, NotImplementedError)


# The primitive, the function that reaches its LAPACK custom call, and the
# polymorphic shapes under which it does.
LAPACK_ONLY = {
    "eig": (lambda x: jnp.linalg.eig(x)[0], None),
    "schur": (lambda x: lax.linalg.schur(x)[0], None),
    "tridiagonal": (lambda x: lax.linalg.tridiagonal(x + x.T)[0], SYMBOLIC_MATRIX),
    "geqp3": (qr_pivoting, SYMBOLIC_MATRIX),
}


@pytest.mark.parametrize("primitive", sorted(LAPACK_ONLY))
def test_refusal_remedy_fits_the_primitive(primitive):
  fun, polymorphic_shapes = LAPACK_ONLY[primitive]
  with pytest.raises(UnsupportedCustomCallError) as e:
    jax2tf.convert(fun, polymorphic_shapes=polymorphic_shapes)(A44)
  msg = str(e.value)
  assert f"cannot convert {primitive}" in msg
  assert "DisabledSafetyCheck.custom_call(" in msg
  if primitive in module_rewrite.GRAPH_SERIALIZATION_CONVERTS:
    assert "Use graph serialization (native_serialization=False)" in msg
  elif primitive in module_rewrite.NO_TF_LOWERING:
    assert "Use graph serialization" not in msg
    assert "exists in either serialization" in msg
  else:
    assert "Use graph serialization" not in msg
    assert "converts it only if it has a rule" in msg


@pytest.mark.parametrize("primitive", sorted(set(LAPACK_ONLY) - module_rewrite.GRAPH_SERIALIZATION_CONVERTS))
def test_no_tf_lowering_is_true_of_graph_serialization(primitive):
  # The native message promises graph serialization nothing for these: it
  # has no rule (NO_TF_LOWERING) or refuses the symbolic matrix too. Native
  # code may not import graph/, so this keeps the two in step.
  fun, polymorphic_shapes = LAPACK_ONLY[primitive]
  with pytest.raises(NotImplementedError, match=f"'{primitive}'"):
    jax2tf.convert(fun, polymorphic_shapes=polymorphic_shapes, native_serialization=False)(A44)


@pytest.mark.parametrize("primitive", ["hessenberg", "tridiagonal", "geqp3"])
def test_householder_reductions_of_static_matrices_convert_natively(primitive):
  # portable_lowering.py lowers them to the JAX forms, which XLA runs.
  fun = {"hessenberg": lambda x: lax.linalg.hessenberg(x)[0],
         "tridiagonal": LAPACK_ONLY["tridiagonal"][0],
         "geqp3": lambda x: qr_pivoting(x)[1]}[primitive]
  np.testing.assert_allclose(jax2tf.convert(fun)(A44), jax.jit(fun)(A44), rtol=1e-4, atol=1e-5)


def test_disabled_custom_call_check_lets_conversion_through():
  target = "lapack_sgeqp3_ffi"
  f_tf = jax2tf.convert(
      qr_pivoting,
      polymorphic_shapes=SYMBOLIC_MATRIX,
      native_serialization_disabled_checks=[jax2tf.DisabledSafetyCheck.custom_call(target)])
  cf = tf.function(f_tf, autograph=False).get_concrete_function(
      tf.TensorSpec([4, 4], tf.float32))
  (op,) = [op for op in cf.graph.get_operations() if op.type == "XlaCallModule"]
  # Only what the user disabled is recorded, not the converter's internals.
  assert [c.decode() for c in op.get_attr("disabled_checks")] == [f"custom_call:{target}"]
  # This TensorFlow has no handler: running it is the consumer's business.
  with pytest.raises(tf.errors.NotFoundError, match=f"No FFI handler registered for {target}"):
    cf(A44)


def test_disabled_custom_call_check_for_another_target_does_not_help():
  f_tf = jax2tf.convert(
      qr_pivoting,
      polymorphic_shapes=SYMBOLIC_MATRIX,
      native_serialization_disabled_checks=[
          jax2tf.DisabledSafetyCheck.custom_call("lapack_dgeqp3_ffi")])
  with pytest.raises(UnsupportedCustomCallError, match="lapack_sgeqp3_ffi"):
    f_tf(A44)
