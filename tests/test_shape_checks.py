"""The shape checks a converted function runs in a TF graph: JAX's message in
full where the arguments break the specs, in as few graph ops as that takes
(every SavedModel with a dynamic batch carries them)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import export

from tests.spec.helpers import assert_like_jax, concrete

SERIALIZATIONS = ("native", "graph")


def _jax_message(f, specs, *args) -> str:
  symbolic = export.symbolic_args_specs(args, specs)
  with pytest.raises(ValueError) as e:
    export.export(jax.jit(f))(*symbolic).call(*args)
  return str(e.value)


def _check(f, serialization, specs, good, bad):
  # Dynamic where the spec names a dimension, static where it gives a number.
  tensor_specs = [
    tf.TensorSpec([int(d) if d.strip().isdigit() else None for d in s.strip("()").split(",")],
                  tf.float32)
    for s in specs
  ]
  cf = concrete(f, serialization, specs, *tensor_specs)
  assert_like_jax(f, cf(*good), *good)
  with pytest.raises(tf.errors.InvalidArgumentError) as e:
    cf(*bad)
  expected = _jax_message(f, specs, *bad)
  assert expected in str(e.value), (expected, str(e.value))
  return cf


def _zeros(*shape):
  return np.zeros(shape, np.float32)


@pytest.mark.parametrize("serialization", SERIALIZATIONS)
def test_a_zero_batch_gets_jax_s_message_from_a_lean_check(serialization):
  cf = _check(jnp.sin, serialization, ["(b, 16)"], [_zeros(3, 16)], [_zeros(0, 16)])
  if serialization == "graph":
    return  # its graph reads the dimensions anyway, for the computation
  # `b >= 1` of a dimension read from a shape: the argument's size, whose
  # reciprocal CheckNumerics finds infinite where b = 0, with the message as
  # text (it fails only for b = 0), not a Shape, an Unpack, a comparison with
  # a constant, a StringFormat, or an Assert with the message as data.
  types = [op.type for op in cf.graph.get_operations()]
  unwanted = {"Shape", "Unpack", "GreaterEqual", "StringFormat", "Assert", "StringToNumber"}
  assert not unwanted & set(types), types
  assert types.count("CheckNumerics") == 1, types


@pytest.mark.parametrize("serialization", SERIALIZATIONS)
@pytest.mark.parametrize("bad", [(0, 3), (3, 0)])
def test_a_zero_dimension_names_the_other_dimensions_values(serialization, bad):
  # The message of 'b' >= 1 also gives n's value, read at run time.
  _check(jnp.sin, serialization, ["(b, n)"], [_zeros(2, 3)], [_zeros(*bad)])


@pytest.mark.parametrize("serialization", SERIALIZATIONS)
def test_an_argument_with_a_static_zero_dimension_is_checked_on_its_own_dimension(serialization):
  # Its size is 0 for every b: the check must read b itself.
  f = lambda x: x * 2  # noqa: E731
  _check(f, serialization, ["(b, 0)"], [_zeros(3, 0)], [_zeros(0, 0)])


@pytest.mark.parametrize("serialization", SERIALIZATIONS)
def test_a_shared_batch_of_two_arguments(serialization):
  f = lambda x, y: x + y  # noqa: E731
  good = [_zeros(2, 4), _zeros(2, 4)]
  cf = _check(f, serialization, ["(b, 4)", "(b, 4)"], good, [_zeros(0, 4), _zeros(0, 4)])
  with pytest.raises(tf.errors.InvalidArgumentError) as e:
    cf(_zeros(2, 4), _zeros(3, 4))
  expected = _jax_message(f, ["(b, 4)", "(b, 4)"], _zeros(2, 4), _zeros(3, 4))
  assert expected in str(e.value), (expected, str(e.value))


@pytest.mark.parametrize("serialization", SERIALIZATIONS)
def test_an_offset_dimension_variable_keeps_its_comparison(serialization):
  # 'b + 2' fails for every size below 3, not only at 0.
  _check(jnp.sin, serialization, ["(b + 2, 3)"], [_zeros(5, 3)], [_zeros(2, 3)])
