"""call_tf under jax.jit and lax control flow: TF's XLA code inlined in JAX's module."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

from jax2tf import call_tf
from jax2tf.call_tf import function_list


def cos_tf(x):
  return tf.math.cos(x)


def cos_tf_sin_jax(x):
  return jnp.sin(call_tf(cos_tf)(x))


def test_cos_tf_sin_jax_jit_and_hlo_is_inlined():
  x = np.float32(1.)
  np.testing.assert_allclose(jax.jit(cos_tf_sin_jax)(x), np.sin(np.cos(x)), rtol=1e-6)
  text = jax.jit(cos_tf_sin_jax).lower(x).as_text()
  assert "custom_call" not in text
  assert "stablehlo.cosine" in text and "stablehlo.sine" in text
  assert "call @call_tf_cos_tf" in text


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_cos_tf_sin_jax_grad_matches_jax(mode):
  grad = jax.grad(cos_tf_sin_jax)
  grad = jax.jit(grad) if mode == "jit" else grad
  want = jax.grad(lambda x: jnp.sin(jnp.cos(x)))
  for x in np.float32([1., -0.3, 2.5]):
    np.testing.assert_allclose(grad(x), want(x), rtol=1e-6)


def _hlo_computations(hlo_text: str) -> dict:
  """name -> body lines of each computation in compiled HLO text."""
  comps, name = {}, None
  for line in hlo_text.splitlines():
    m = re.match(r"^(?:ENTRY )?%(\S+) .*\{$", line)
    if m:
      name = m.group(1)
      comps[name] = []
    elif line.startswith("}"):
      name = None
    elif name is not None:
      comps[name].append(line)
  return comps


@pytest.mark.parametrize("shape", [(), (3,), (64, 64)])
def test_cos_tf_sin_jax_compiled_hlo_fuses_across_the_boundary(shape):
  x = np.ones(shape, np.float32)
  compiled = jax.jit(cos_tf_sin_jax).lower(x).compile().as_text()
  comps = _hlo_computations(compiled)
  instructions = [l for body in comps.values() for l in body]
  # XLA inlined TF's function: no call instruction is left.
  assert not [l for l in instructions if re.search(r"(?<![-\w])call\(", l)], compiled
  fused = [n for n, body in comps.items()
           if any(re.search(r"\bcosine\(", l) for l in body)
           and any(re.search(r"\bsine\(", l) for l in body)]
  assert fused, compiled
  assert any(re.search(rf"fusion\(.*calls=%{re.escape(fused[0])}\b", l) for l in instructions)


def test_one_tf_compilation_per_signature(monkeypatch):
  from jax2tf.call_tf import lowering
  calls = []
  real = lowering.compile_to_stablehlo

  def counting(fn, in_avals, *a):
    calls.append(tuple(tuple(x.shape) for x in in_avals))
    return real(fn, in_avals, *a)

  monkeypatch.setattr(lowering, "compile_to_stablehlo", counting)
  f_jax = call_tf(lambda x: tf.math.sin(x) * 2.)
  for _ in range(2):
    for shape in ((3,), (4,)):
      x = np.ones(shape, np.float32)
      np.testing.assert_allclose(jax.jit(lambda x: f_jax(x) + 1.)(x), np.sin(x) * 2 + 1, rtol=1e-6)
      np.testing.assert_allclose(jax.jit(lambda x: f_jax(x) - 1.)(x), np.sin(x) * 2 - 1, rtol=1e-6)
  assert sorted(calls) == [((3,),), ((4,),)]


def test_pytrees_and_several_results_under_jit():
  def f_tf(a, b):
    return {"s": a + b, "d": (a - b, tf.reduce_sum(a * b))}

  a = np.arange(4, dtype=np.float32)
  res = jax.jit(call_tf(f_tf))(a, 2 * a)
  np.testing.assert_allclose(res["s"], 3 * a)
  np.testing.assert_allclose(res["d"][0], -a)
  np.testing.assert_allclose(res["d"][1], np.sum(2 * a * a))


def test_captured_variables_and_tensors_are_constants():
  v = tf.Variable(np.arange(3, dtype=np.float32))
  c = tf.constant(np.float32(5.))
  s = tf.Variable(np.float32(2.))
  f = jax.jit(call_tf(lambda x: x * v + c * s))
  np.testing.assert_allclose(f(np.ones(3, np.float32)), np.arange(3) + 10.)


def test_integer_and_bool_dtypes_under_jit():
  f = call_tf(lambda x, b: tf.where(b, x * 2, x))
  x = np.arange(4, dtype=np.int32)
  b = np.array([True, False, True, False])
  np.testing.assert_array_equal(jax.jit(f)(x, b), np.where(b, 2 * x, x))


def test_cond_while_scan():
  f_tf = call_tf(lambda x: tf.math.sin(x) + 1.)

  def cond_fn(x):
    return lax.cond(x[0] > 0, f_tf, lambda x: x * 0., x)

  x = np.arange(1, 4, dtype=np.float32)
  np.testing.assert_allclose(cond_fn(x), np.sin(x) + 1, rtol=1e-6)
  np.testing.assert_allclose(jax.jit(cond_fn)(x), np.sin(x) + 1, rtol=1e-6)

  def while_fn(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, f_tf(c[1])), (0, x))[1]

  expected = x
  for _ in range(3):
    expected = np.sin(expected) + 1
  np.testing.assert_allclose(while_fn(x), expected, rtol=1e-5)

  def scan_fn(x):
    return lax.scan(lambda c, xi: (f_tf(c) + xi, c), x, jnp.stack([x, x]))

  c, ys = scan_fn(x)
  c1 = np.sin(x) + 1 + x
  np.testing.assert_allclose(c, np.sin(c1) + 1 + x, rtol=1e-5)
  np.testing.assert_allclose(ys[1], c1, rtol=1e-5)


def _unused_result(f):
  return lambda x: (f(x), x + 1.)[1]


def test_side_effects_keep_unused_calls_in_the_lowered_module():
  x = np.float32(1.)
  kept = jax.jit(_unused_result(call_tf(tf.math.sin))).lower(x).as_text()
  dropped = jax.jit(_unused_result(call_tf(tf.math.sin, has_side_effects=False))).lower(x).as_text()
  assert "call @call_tf_sin" in kept
  assert "call_tf_sin" not in dropped and "sine" not in dropped


def test_side_effects_flag_of_the_tf_function_custom_call():
  # The lowering jax2tf.convert(native_serialization=True) gets for call_tf_graph.
  x = np.float32(1.)
  texts = {}
  for flag in (True, False):
    f = call_tf(tf.math.sin, has_side_effects=flag, call_tf_graph=True)
    with function_list.collecting():
      texts[flag] = jax.jit(_unused_result(f)).lower(x).as_text()
  assert "tf.call_tf_function" in texts[True] and "has_side_effect = true" in texts[True]
  assert "tf.call_tf_function" not in texts[False]


def test_tf_function_and_jit_compiled_tf_function():
  f = tf.function(lambda x: tf.nn.relu(x) ** 2, autograph=False, jit_compile=True)
  x = np.linspace(-2, 2, 5, dtype=np.float32)
  np.testing.assert_allclose(jax.jit(call_tf(f))(x), np.maximum(x, 0) ** 2, rtol=1e-6)


def test_output_shape_dtype_with_static_shapes_under_jit():
  f = call_tf(lambda x: tf.concat([x, x], 0),
              output_shape_dtype=jax.ShapeDtypeStruct((6,), jnp.float32))
  x = np.arange(3, dtype=np.float32)
  np.testing.assert_allclose(jax.jit(f)(x), np.concatenate([x, x]))


def test_variable_assign_is_not_seen_by_a_compiled_function():
  v = tf.Variable(np.float32(2.))
  f_jax = call_tf(lambda x: x * v)
  compiled = jax.jit(f_jax)
  x = np.arange(3, dtype=np.float32)
  np.testing.assert_allclose(compiled(x), jnp.asarray(x) * 2.)
  v.assign(5.)
  # The value was read when TF compiled the call, once per signature of this
  # callable; eager calls and a new call_tf see the new one.
  np.testing.assert_allclose(compiled(x), jnp.asarray(x) * 2.)
  np.testing.assert_allclose(jax.jit(lambda x: f_jax(x) + 0.)(x), jnp.asarray(x) * 2.)
  np.testing.assert_allclose(f_jax(x), jnp.asarray(x) * 5.)
  np.testing.assert_allclose(jax.jit(call_tf(lambda x: x * v))(x), jnp.asarray(x) * 5.)
