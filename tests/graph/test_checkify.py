"""checkify's check under graph serialization (rules/control_flow.py).

debug_check is covered by the control-flow cases; a check that was not
functionalized has no value to compare, only a refusal.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import jax2tf


def _checked(x):
  checkify.check(jnp.all(x > 0), "x must be positive")
  return x * 2


def test_unfunctionalized_check_is_refused_like_jit():
  with pytest.raises(ValueError, match="functionaliz"):
    jax.jit(_checked)(np.ones(3, np.float32))
  f_tf = jax2tf.convert(_checked, native_serialization=False)
  with pytest.raises(ValueError, match="checkify.checkify before converting"):
    f_tf(np.ones(3, np.float32))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_functionalized_check_converts_to_its_flag(sign):
  # checkify.checkify turns the check into ordinary ops returning the error's
  # data: whether it failed, an index into a table of messages that each
  # trace extends (so it is not compared), and the function's value.
  checked = checkify.checkify(_checked)
  fun = lambda x: jax.tree_util.tree_leaves(checked(x))  # noqa: E731
  x = np.array([1.0, 2.0, 3.0], np.float32) * np.float32(sign)
  failed, _, value = fun(x)
  got_failed, _, got_value = jax2tf.convert(fun, native_serialization=False)(x)
  assert bool(got_failed) == bool(failed) == (sign < 0)
  np.testing.assert_array_equal(np.asarray(got_value), np.asarray(value))
