"""The spec's "Shape-polymorphic conversion", as far as native serialization differs.

The examples common to both serializations are in tests/spec/test_shape_poly.py.
"""

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from tests.spec.helpers import raises_shape_error, rand
from tests.tf_modes import TF_MODES, in_mode

UNKNOWN_3D = tf.TensorSpec([None, None, None], tf.float32)


@pytest.mark.parametrize("mode", TF_MODES)
def test_shape_assertion_precedes_body_refinement(mode):
  # XlaCallModule refines the whole body (x * 2. needs consistent shapes)
  # before its own shape assertions run. Eager and graph mode check the
  # arguments with TF ops first; under jit_compile=True, where TF drops
  # Assert ops, an assertion-only module (empty body) is checked first.
  f_tf = in_mode(jax2tf.convert(lambda x: x * 2., polymorphic_shapes="(b, b, 2*d)"), mode)
  if mode != "eager":
    f_tf = f_tf.get_concrete_function(UNKNOWN_3D)
  with raises_shape_error("Input shapes do not match the polymorphic shapes specification. "
                          "Division had remainder 1 when computing the value of 'd'"):
    f_tf(rand((3, 3, 5)))
  np.testing.assert_allclose(f_tf(rand((3, 3, 4))).numpy(), rand((3, 3, 4)) * 2., rtol=1e-6)


def _call_module_count(f_tf, jit_compile):
  cf = tf.function(f_tf, autograph=False, jit_compile=jit_compile).get_concrete_function(
      UNKNOWN_3D)
  return [op.type for op in cf.graph.get_operations()].count("XlaCallModule")


@pytest.mark.parametrize("jit_compile", [False, True])
def test_assertion_module_only_where_needed(jit_compile):
  poly = jax2tf.convert(lambda x: x * 2., polymorphic_shapes="(b, b, 2*d)")
  assert _call_module_count(poly, jit_compile) == (2 if jit_compile else 1)
  unchecked = jax2tf.convert(
      lambda x: x * 2., polymorphic_shapes="(b, b, 2*d)",
      native_serialization_disabled_checks=[jax2tf.DisabledSafetyCheck.shape_assertions()])
  assert _call_module_count(unchecked, jit_compile) == 1


def test_assertion_module_under_compiled_gradient():
  f = lambda x: jnp.sum(jnp.sin(x) * x.shape[0])
  f_tf = jax2tf.convert(f, polymorphic_shapes="(b, b, 2*d)")

  @tf.function(autograph=False, jit_compile=True, input_signature=[UNKNOWN_3D])
  def grad(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = f_tf(x)
    return tape.gradient(y, x)

  for shape in [(2, 2, 4), (3, 3, 2)]:
    x = rand(shape)
    np.testing.assert_allclose(grad(x).numpy(), jax.grad(f)(x), rtol=1e-5)
  with raises_shape_error("Found inconsistency between dimension size args\\[0\\]\\.shape\\[1\\]"):
    grad(rand((2, 3, 4)))


# -- eigh: only the batch dimensions may be polymorphic ------------------------------

def _symmetric(shape, dtype):
  x = np.random.default_rng(shape[0]).normal(size=shape).astype(dtype)
  return x + np.swapaxes(x, -1, -2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_with_polymorphic_batch(dtype):
  tol = 1e-4 if dtype == np.float32 else 1e-10
  with jax.enable_x64(dtype == np.float64):
    f_tf = tf.function(jax2tf.convert(jnp.linalg.eigh, polymorphic_shapes="(b, 5, 5)"),
                       autograph=False)
    cf = f_tf.get_concrete_function(tf.TensorSpec([None, 5, 5], dtype))
    for b in (1, 3):
      x = _symmetric((b, 5, 5), dtype)
      w, v = (t.numpy() for t in cf(x))
      w_jax, _ = jax.jit(jnp.linalg.eigh)(x)
      np.testing.assert_allclose(w, w_jax, rtol=tol, atol=tol)
      # Eigenvectors are unique up to sign: check the decomposition instead.
      np.testing.assert_allclose(v @ (w[..., None] * np.swapaxes(v, -1, -2)), x,
                                 rtol=tol, atol=tol)
      np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(5), x.shape),
                                 rtol=tol, atol=tol)


def test_eigh_with_polymorphic_matrix_size_is_refused():
  with pytest.raises(NotImplementedError,
                     match="eigh is implemented only for the batch dimensions") as e:
    jax2tf.convert(jnp.linalg.eigh, polymorphic_shapes="(b, n, n)")(_symmetric((2, 3, 3),
                                                                               np.float32))
  assert "polymorphic shapes a: (b, n, n)" in "\n".join(e.value.__notes__)


# -- TF_XLA_FLAGS=--tf_xla_call_module_disabled_checks=shape_assertions -----------------

_TF_FLAGS_SCRIPT = textwrap.dedent("""
    import sys
    import jax.numpy as jnp
    import numpy as np
    import tensorflow as tf
    import jax2tf
    f_tf = jax2tf.convert(jnp.sin, polymorphic_shapes="(b, b, 2*d)")
    x = np.arange(72, dtype=np.float32).reshape(3, 4, 6) / 7.  # b inconsistent
    cf = tf.function(f_tf, autograph=False).get_concrete_function(
        tf.TensorSpec([None, None, None], tf.float32))
    for name, fun in (("eager", f_tf), ("graph", cf)):
      try:
        res = fun(x).numpy()
      except tf.errors.InvalidArgumentError as e:
        print(name, "ERROR", "Found inconsistency" in str(e))
      else:
        print(name, "OK", bool(np.allclose(res, np.sin(x), rtol=1e-6)))
""")


@pytest.mark.subprocess
@pytest.mark.parametrize("flag", [None, "--tf_xla_call_module_disabled_checks=shape_assertions"])
def test_tf_xla_flags_disable_shape_assertions(tmp_path, flag):
  # TF reads TF_XLA_FLAGS once, at start: a separate process per setting.
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("TF_XLA_FLAGS", None)
  if flag:
    env["TF_XLA_FLAGS"] = flag
  proc = subprocess.run([sys.executable, "-c", _TF_FLAGS_SCRIPT], capture_output=True,
                        text=True, env=env, timeout=240, cwd=str(tmp_path))
  assert proc.returncode == 0, proc.stderr[-3000:]
  lines = sorted(l for l in proc.stdout.splitlines() if l.startswith(("eager", "graph")))
  expected = "OK True" if flag else "ERROR True"
  assert lines == [f"eager {expected}", f"graph {expected}"], proc.stdout


def test_tf_xla_flags_parsing(monkeypatch):
  from jax2tf.options import checks_disabled_by_tf_flags
  monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 "
                     "--tf_xla_call_module_disabled_checks=platform,shape_assertions")
  assert checks_disabled_by_tf_flags() == {"platform", "shape_assertions"}
  monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2")
  assert checks_disabled_by_tf_flags() == frozenset()
