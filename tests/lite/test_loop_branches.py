"""Conditionals inside loops on the litert route (jax2tf/native/loop_branches.py):
litert-converter numbered the IF's inputs wrongly where a branch reads a
carried value (other numbers than jax.jit, or the process ended), so both
branches are computed and a select keeps the taken one's results."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from jax2tf.lite import inspect as lite_inspect  # noqa: E402
from tests.support import compare  # noqa: E402

_Z = np.array([4.5, 5.0, -1.25], np.float32)


def _cond_reads_the_carry(z):
  def body(i, carry):
    total, f = carry
    f = f * 2.0 + i
    total = lax.cond(i % 2 == 0, lambda u: u[0] + 2.0 * u[1], lambda u: u[0], (total, f))
    return total, f

  return lax.fori_loop(0, 6, body, (jnp.zeros_like(z), jnp.ones_like(z)))[0]


def _cond_reads_two_carried_values(z):
  # This one ended the process.
  def body(i, carry):
    a, b = carry
    a = lax.cond(i % 2 == 0, lambda u: u[0] + u[1], lambda u: u[0] - u[1], (a, b))
    return a, b * 2.0

  return lax.fori_loop(0, 5, body, (jnp.ones_like(z), z))[0]


def _switch_in_scan(z):
  def body(carry, k):
    branches = [lambda v: v + k, lambda v: v * 2.0, lambda v: v - 1.0]
    carry = lax.switch(k.astype(np.int32) % 4 - 1, branches, carry)  # -1 takes the last
    return carry, carry

  return lax.scan(body, z, jnp.arange(7, dtype=np.float32), reverse=True)


def _nested_conds(z):
  def body(i, x):
    inner = lambda v: lax.cond(v[0] > 0, lambda w: w * 0.5, lambda w: w + 3.0, v)  # noqa: E731
    return lax.cond(i < 2, inner, lambda v: v - 1.0, x)

  return lax.fori_loop(0, 4, body, z)


_FUNCTIONS = {
  "cond_reads_the_carry": _cond_reads_the_carry,
  "cond_reads_two_carried_values": _cond_reads_two_carried_values,
  "switch_in_scan": _switch_in_scan,
  "nested_conds": _nested_conds,
  "bessel_jn": lambda z: jax.scipy.special.bessel_jn(jnp.abs(z) + 4.0, v=2),
}


@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_conditionals_in_loops_compute_what_jax_computes(name):
  fun = _FUNCTIONS[name]
  model = jax2tf.to_tflite(fun, _Z, route="litert")
  assert "IF" not in lite_inspect.op_counts(model)
  got = lite.run(model, _Z)
  want = jax.tree.leaves(jax.jit(fun)(_Z))
  for i, (w, g) in enumerate(zip(want, got, strict=True)):
    compare.assert_same(np.asarray(w), g, tol=(1e-5, 1e-6), where=f"{name} result {i}")


def test_a_conditional_outside_loops_stays_an_if():
  fun = lambda p, x: lax.cond(p, lambda v: v * 3.0, lambda v: v + 1.0, x)  # noqa: E731
  model = jax2tf.to_tflite(fun, np.bool_(True), _Z, route="litert")
  assert lite_inspect.op_counts(model)["IF"] == 1
  for p in (True, False):
    (got,) = lite.run(model, np.bool_(p), _Z)
    compare.assert_same(np.asarray(fun(p, _Z)), got, exact=True)
