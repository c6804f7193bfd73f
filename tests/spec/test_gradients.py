"""TF differentiation of converted functions is JAX's differentiation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

from tests.spec.helpers import all_serializations, assert_like_jax, convert, rand
from tests.tf_modes import TF_MODES, in_mode, run_in_mode


def f_jax(x, y):
  return jnp.sum(jnp.sin(x) * y ** 2) + jnp.prod(jnp.cos(y))


X = np.linspace(-1., 2., 6, dtype=np.float32).reshape(2, 3)
Y = np.linspace(0.5, 1.5, 6, dtype=np.float32).reshape(2, 3)


def tf_grad(f, *args, mode="eager"):
  variables = [tf.Variable(a) for a in args]

  def compute(*vs):
    with tf.GradientTape() as tape:
      tape.watch(vs)
      y = f(*vs)
    return tape.gradient(y, vs)

  return [None if g is None else g.numpy() for g in in_mode(compute, mode)(*variables)]


@all_serializations
@pytest.mark.parametrize("mode", TF_MODES)
def test_gradient_equals_jax_grad(mode, serialization):
  g_tf = tf_grad(convert(f_jax, serialization), X, Y, mode=mode)
  g_jax = jax.grad(f_jax, argnums=(0, 1))(X, Y)
  for a, b in zip(g_tf, g_jax):
    np.testing.assert_allclose(a, b, rtol=1e-5)


def test_vjp_with_pytree_outputs_and_output_cotangents(serialization):
  def f(x):
    return {"a": jnp.sin(x), "b": (x * 3., jnp.sum(x))}

  x = np.float32([0.1, 0.2, 0.3])
  ct = {"a": np.float32([1., 2., 3.]), "b": (np.float32([-1., 0., 1.]), np.float32(2.))}
  xv = tf.Variable(x)
  with tf.GradientTape() as tape:
    res = convert(f, serialization)(xv)
  g_tf = tape.gradient(res, xv, output_gradients=ct)
  _, pullback = jax.vjp(f, x)
  np.testing.assert_allclose(g_tf.numpy(), pullback(ct)[0], rtol=1e-6)


@pytest.mark.parametrize("mode", TF_MODES)
def test_custom_vjp_rule_is_used(mode, serialization):
  @jax.custom_vjp
  def f(x):
    return jnp.sin(x)

  def f_fwd(x):
    return jnp.sin(x), x

  def f_bwd(x, ct):
    # Not the derivative of sin: a result that only the custom rule gives.
    return (ct * 100. + x,)

  f.defvjp(f_fwd, f_bwd)
  x = np.float32([0.5, 1.5])
  g_tf, = tf_grad(lambda v: tf.reduce_sum(convert(f, serialization)(v)), x, mode=mode)
  g_jax = jax.grad(lambda v: jnp.sum(f(v)))(x)
  np.testing.assert_allclose(g_jax, 100. + x)
  np.testing.assert_allclose(g_tf, g_jax)


@pytest.mark.parametrize("mode", TF_MODES)
def test_custom_jvp_rule_is_used(mode, serialization):
  @jax.custom_jvp
  def f(x):
    return x * 2.

  @f.defjvp
  def f_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return f(x), t * 7.

  x = np.float32(1.)
  g_tf, = tf_grad(convert(f, serialization), x, mode=mode)
  assert g_tf == jax.grad(f)(x) == 7.
  assert_like_jax(f, convert(f, serialization)(x), x)


def f_poly(x, y):
  # (jnp.prod's VJP is not shape-polymorphic in JAX itself.)
  return jnp.sum(jnp.sin(x) * y ** 2) + jnp.sum(jnp.cos(y)) / x.shape[0]


@all_serializations
def test_gradient_with_polymorphic_shapes(serialization):
  f_tf = tf.function(
      convert(f_poly, serialization, polymorphic_shapes=["(b, _)", "(b, _)"]),
      autograph=False)

  @tf.function(autograph=False, input_signature=[tf.TensorSpec([None, 3], tf.float32)] * 2)
  def grads(x, y):
    with tf.GradientTape() as tape:
      tape.watch([x, y])
      r = f_tf(x, y)
    return tape.gradient(r, [x, y])

  for n in (1, 4):
    x, y = rand((n, 3), n), rand((n, 3), n + 10)
    g_tf = grads(x, y)
    g_jax = jax.grad(f_poly, argnums=(0, 1))(x, y)
    for a, b in zip(g_tf, g_jax):
      np.testing.assert_allclose(a.numpy(), b, rtol=1e-5)


@jax.custom_vjp
def _scaled_rows(x):
  return jnp.sin(x) * x.shape[0]


def _scaled_rows_fwd(x):
  return _scaled_rows(x), x


def _scaled_rows_bwd(x, ct):
  # Not the derivative: a result only the custom rule gives, which also uses
  # the symbolic batch size.
  return (ct * 10. + x / x.shape[0],)


_scaled_rows.defvjp(_scaled_rows_fwd, _scaled_rows_bwd)


@pytest.mark.parametrize("mode", ["graph", "compiled"])
def test_custom_vjp_with_polymorphic_shapes(mode, serialization):
  f = lambda x: jnp.sum(_scaled_rows(x) ** 2)
  f_tf = convert(f, serialization, polymorphic_shapes=["(b, _)"])

  @tf.function(autograph=False, jit_compile=(mode == "compiled"),
               input_signature=[tf.TensorSpec([None, 3], tf.float32)])
  def grad(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = f_tf(x)
    return tape.gradient(y, x)

  for n in (1, 5):
    x = rand((n, 3), n)
    g_jax = jax.grad(f)(x)
    true_grad = 2 * np.sin(x) * n * np.cos(x) * n
    assert not np.allclose(g_jax, true_grad, rtol=1e-2)  # the custom rule is in play
    np.testing.assert_allclose(grad(x).numpy(), g_jax, rtol=1e-5)


def test_with_gradient_false_fails_loudly(serialization):
  f_tf = convert(jnp.sin, serialization, with_gradient=False)
  x = tf.Variable(1.)
  with pytest.raises(LookupError, match="with_gradient=False"):
    with tf.GradientTape() as tape:
      y = f_tf(x)
    tape.gradient(y, x)
  # The forward result is unaffected.
  np.testing.assert_allclose(f_tf(x).numpy(), np.sin(1.), rtol=1e-6)
  np.testing.assert_allclose(f_tf(x).numpy(), jnp.sin(np.float32(1.)), rtol=1e-6)


def test_with_gradient_false_fails_loudly_in_graph(serialization):
  f_tf = convert(jnp.sin, serialization, with_gradient=False)

  @tf.function(autograph=False)
  def grad(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = f_tf(x)
    return tape.gradient(y, x)

  with pytest.raises(LookupError, match="Gradient explicitly disabled"):
    grad(tf.constant(1.))


@pytest.mark.parametrize("mode", TF_MODES)
def test_float0_gradient_is_bool_zero(mode, serialization):
  # As JAX's jax2tf (its test_gradient_with_float0_result), though its README
  # says int32.
  def f(x):
    return x * 2.

  x = np.int16(2)
  g_jax = jax.grad(f, allow_int=True)(x)
  assert g_jax.dtype == jax.dtypes.float0
  res = run_in_mode(convert(jax.grad(f, allow_int=True), serialization), mode, x)
  assert res.dtype == tf.bool and res.shape == ()
  assert not res.numpy()


def test_float0_in_pytree_gradient(serialization):
  def f(x, i):
    return jnp.sum(x * i)

  x, i = np.float32([1., 2.]), np.int32([3, 4])
  gx, gi = convert(jax.grad(f, argnums=(0, 1), allow_int=True), serialization)(x, i)
  np.testing.assert_allclose(gx.numpy(), jax.grad(f)(x, i))
  assert gi.dtype == tf.bool
  np.testing.assert_array_equal(gi.numpy(), [False, False])


def unconnected_fn(x0, x1, x2, x3):
  # x1 and x3 are not used; x3 has integer type.
  return x0 * 0. + x2 * 2.


@pytest.fixture(scope="module")
def unconnected_tape(serialization):
  xs = [tf.Variable(x) for x in [10., 11., 12., 13]]
  with tf.GradientTape(persistent=True) as tape:
    res = convert(unconnected_fn, serialization, with_gradient=True)(*xs)
  return tape, res, xs


def _jax_unconnected_grads():
  args = (np.float32(10.), np.float32(11.), np.float32(12.), np.int32(13))
  return [float(g) for g in jax.grad(unconnected_fn, argnums=(0, 1, 2))(*args)]


def test_unconnected_gradients_default(unconnected_tape):
  tape, res, xs = unconnected_tape
  assert xs[3].dtype == tf.int32
  g = tape.gradient(res, xs)
  # x1 gets 0 (JAX computes it), only the integer x3 gets None.
  got = [None if t is None else float(t.numpy()) for t in g]
  assert got == [0., 0., 2., None]
  assert got == _jax_unconnected_grads() + [None]
  assert g[1].dtype == tf.float32


def test_unconnected_gradients_zero(unconnected_tape):
  tape, res, xs = unconnected_tape
  g = tape.gradient(res, xs, unconnected_gradients=tf.UnconnectedGradients.ZERO)
  got = [t.numpy().item() for t in g]
  assert got == [0., 0., 2., 0]
  assert got == _jax_unconnected_grads() + [0]
  assert g[3].dtype == tf.int32


def test_unconnected_gradients_native_tf_for_comparison():
  # The table's TF-native column, which the converted function differs from;
  # no conversion involved.
  xs = [tf.Variable(x) for x in [10., 11., 12., 13]]
  with tf.GradientTape(persistent=True) as tape:
    res = unconnected_fn(*xs[:3], tf.cast(xs[3], tf.float32))
  g = tape.gradient(res, xs)
  assert [None if t is None else float(t.numpy()) for t in g] == [0., None, 2., None]


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_second_order_gradient(mode, serialization):
  def f(x):
    return jnp.sum(jnp.sin(x) * x ** 3)

  f_tf = convert(f, serialization)

  def second(x):
    with tf.GradientTape() as outer:
      outer.watch(x)
      with tf.GradientTape() as inner:
        inner.watch(x)
        y = f_tf(x)
      g = inner.gradient(y, x)
    return outer.gradient(g, x)

  x = np.float32([0.3, 0.7, 1.1])
  h_tf = in_mode(second, mode)(tf.constant(x))
  np.testing.assert_allclose(h_tf.numpy(), jnp.diag(jax.hessian(f)(x)), rtol=1e-5)


def test_third_order_gradient(serialization):
  f_tf = convert(jnp.sin, serialization)
  x = tf.Variable(0.4)
  with tf.GradientTape() as t3:
    with tf.GradientTape() as t2:
      with tf.GradientTape() as t1:
        y = f_tf(x)
      g1 = t1.gradient(y, x)
    g2 = t2.gradient(g1, x)
  g3 = t3.gradient(g2, x)
  expected = jax.grad(jax.grad(jax.grad(jnp.sin)))(np.float32(0.4))
  np.testing.assert_allclose(g3.numpy(), expected, rtol=1e-6)


def test_gradient_with_respect_to_variables_in_closure(serialization):
  params = {"w": tf.Variable(np.float32([[1., 2.], [3., 4.]])),
            "b": tf.Variable(np.float32([0.5, -0.5]))}

  def model(p, x):
    return jnp.sum(jnp.tanh(x @ p["w"] + p["b"]))

  x = np.float32([[0.1, 0.2]])
  with tf.GradientTape() as tape:
    y = convert(model, serialization)(params, x)
  g = tape.gradient(y, params)
  g_jax = jax.grad(model)({k: v.numpy() for k, v in params.items()}, x)
  for k in params:
    np.testing.assert_allclose(g[k].numpy(), g_jax[k], rtol=1e-5)


# Native stays in the slow tier, where it has always been.
@pytest.mark.parametrize("serialization", [
    pytest.param("native", marks=pytest.mark.slow), "graph"], indirect=True)
@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.complex64])
def test_gradient_dtypes(dtype, serialization):
  with jax.enable_x64(dtype == np.float64):
    f = lambda x: jnp.sum(jnp.real(x * x * 3.))
    x = np.array([1., 2.], dtype)
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
      y = convert(f, serialization)(xv)
    g = tape.gradient(y, xv)
    g_jax = jax.grad(f)(x)
    assert g.dtype == tf.as_dtype(g_jax.dtype)
    np.testing.assert_allclose(g.numpy(), np.asarray(g_jax), rtol=1e-3)
