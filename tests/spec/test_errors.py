"""Bad inputs and bad options give clear errors, naming what is wrong.

Only the errors that do not depend on the serialization; those about the
serialization options are in tests/native/test_errors.py.
"""

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from tests.spec.helpers import convert, rand


@pytest.fixture
def conv(serialization):
  return functools.partial(convert, serialization=serialization)


@pytest.fixture(scope="module")
def row_sums_cf(serialization):
  def row_sums(x):
    return jnp.sum(x, axis=1)

  f_tf = tf.function(convert(row_sums, serialization, polymorphic_shapes="(b, _)"),
                     autograph=False)
  return f_tf.get_concrete_function(tf.TensorSpec([None, 4], tf.float32))


def test_concrete_function_called_with_wrong_shape(row_sums_cf):
  np.testing.assert_allclose(row_sums_cf(tf.ones((3, 4))).numpy(), [4., 4., 4.])
  x = rand((3, 4))
  np.testing.assert_allclose(row_sums_cf(x).numpy(), x.sum(axis=1), rtol=1e-6)
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=re.escape("Shape of tensor x [3,5] is not compatible with "
                                     "expected shape [?,4]")):
    row_sums_cf(tf.ones((3, 5)))


def test_concrete_function_called_with_wrong_rank(row_sums_cf):
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=re.escape("Shape of tensor x [3,4,1] is not compatible")):
    row_sums_cf(tf.ones((3, 4, 1)))


def test_concrete_function_called_with_wrong_dtype(row_sums_cf):
  # TF checks the dtypes of a concrete function's inputs before any of the
  # converter's code runs, and names the input by position only; the
  # converter cannot add the name (docs/native_serialization.md).
  with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a float tensor"):
    row_sums_cf(tf.ones((3, 4), tf.int32))


def test_input_signature_dtype_mismatch_names_the_parameter(conv):
  # With an input_signature, TF binds the arguments against the converted
  # function's signature, which carries the JAX parameter names.
  def brighten(images):
    return images * 2.

  f_tf = tf.function(conv(brighten), autograph=False,
                     input_signature=[tf.TensorSpec([2], tf.float32)])
  with pytest.raises(TypeError) as e:
    f_tf(tf.constant([1, 2], tf.int32))
  msg = str(e.value)
  assert "dtype=tf.int32" in msg
  assert "images: TensorSpec(shape=(2,), dtype=tf.float32" in msg


def test_other_dtype_in_eager_mode_converts_again(conv):
  # Not an error: each dtype gets its own lowering, as jax.jit would.
  f_tf = conv(lambda images: images * 2)
  assert f_tf(np.float32([1.5])).dtype == tf.float32
  assert f_tf(np.int32([3])).dtype == tf.int32


def test_wrong_shape_named_in_compiled_mode(conv):
  f_tf = tf.function(conv(lambda images: images * 2.), autograph=False,
                     jit_compile=True)
  cf = f_tf.get_concrete_function(tf.TensorSpec([2, 3], tf.float32))
  with pytest.raises(tf.errors.InvalidArgumentError, match="Shape of tensor images"):
    cf(tf.ones((3, 3)))


def test_polymorphic_spec_rank_mismatch(conv):
  with pytest.raises(ValueError, match=re.escape(
      "polymorphic_shapes spec '(b, _)' for argument x has rank 2, but the argument has "
      "rank 3 (shape (2, 3, 4))")):
    conv(lambda x: x, polymorphic_shapes=["(b, _)"])(np.ones((2, 3, 4)))


def test_polymorphic_spec_rank_mismatch_under_tf_function(conv):
  f_tf = tf.function(conv(lambda x, y: x + y, polymorphic_shapes=[None, "(b,)"]),
                     autograph=False)
  with pytest.raises(ValueError, match=r"for argument y has rank 1, but the argument has rank 2"):
    f_tf.get_concrete_function(tf.TensorSpec([2], tf.float32),
                               tf.TensorSpec([None, 2], tf.float32))


def test_polymorphic_shapes_wrong_number_of_entries(conv):
  def add(x, y):
    return x + y

  with pytest.raises(ValueError, match="polymorphic_shapes has 1 entries but add was called "
                                       "with 2 positional argument"):
    conv(add, polymorphic_shapes=["(b,)"])(np.ones(2), np.ones(2))


def test_polymorphic_shapes_tree_mismatch(conv):
  with pytest.raises(ValueError, match=r"polymorphic_shapes must be a pytree prefix of "
                                       r"argument d of <lambda>.*"
                                       r"expected keys: \['b'\]; present keys: \['a'\]"):
    conv(lambda d: d["a"], polymorphic_shapes=[{"b": "(b,)"}])({"a": np.ones(2)})


def test_polymorphic_shapes_tuple_vs_list_leaf_count(conv):
  def second(x, pair):
    return x + pair[0]

  with pytest.raises(ValueError, match=re.escape(
      "polymorphic_shapes must be a pytree prefix of argument pair of second: got "
      "polymorphic_shapes structure PyTreeDef((*, *, *)) for arguments structure "
      "PyTreeDef((*, *))")):
    conv(second, polymorphic_shapes=[None, ("(b,)", "(b,)", "(b,)")])(
        np.ones(2), (np.ones(2), np.ones(2)))


def test_polymorphic_shapes_tree_mismatch_in_keyword_argument(conv):
  def scale(x, *, factors):
    return x * factors["a"]

  with pytest.raises(ValueError, match="pytree prefix of keyword argument factors of scale"):
    conv(scale, polymorphic_shapes={"x": "(b,)", "factors": ["(b,)"]})(
        np.ones(2), factors={"a": np.ones(2)})


def test_polymorphic_shapes_dict_with_unknown_parameter(conv):
  # ValueError, as upstream (its shape_poly_test.test_pytree_errors_2).
  with pytest.raises(ValueError, match=r"unknown key\(s\) \['z'\], parameters \['x'\]"):
    conv(lambda x: x, polymorphic_shapes={"z": "(b,)"})(np.ones(3))


def test_polymorphic_shapes_bad_leaf_type(conv):
  with pytest.raises(TypeError, match="each shape spec must be a str, a PolyShape or None, got 3"):
    conv(lambda x: x, polymorphic_shapes=[3])(np.ones(3))


@pytest.mark.parametrize("spec, detail", [
    ("(b,,)", "syntax error in symbolic shape '(b,,)' in dimension 1"),
    ("b+", "syntax error in symbolic shape 'b+'"),
    ("(b, 2.5)", "expecting integer, found 2.5"),
    ("(b, 3", ""),  # unclosed parenthesis
    ("(b, 5)", "different size 5 for known dimension"),
])
def test_malformed_specs_name_the_argument(spec, detail, conv):
  with pytest.raises(ValueError) as e:
    conv(lambda images: images, polymorphic_shapes=[spec])(np.ones((2, 3)))
  msg = str(e.value)
  assert msg.startswith(f"polymorphic_shapes spec {spec!r} for argument images with shape (2, 3)")
  assert detail in msg


def test_poly_shape_ellipsis_only_last():
  with pytest.raises(ValueError, match="'...' may only appear last"):
    jax2tf.PolyShape("b", ..., 3)
  with pytest.raises(TypeError, match="dimension 1 must be a str, an int or"):
    jax2tf.PolyShape("b", 2.5)


def test_unknown_symbol_in_constraints(conv):
  with pytest.raises(ValueError, match=re.escape(
      "constraint 'c >= 2' uses unknown dimension variable(s) ['c']; the variables of "
      "polymorphic_shapes are ['b']")):
    conv(lambda x: x, polymorphic_shapes=["(b, _)"],
                   polymorphic_constraints=("c >= 2",))(np.ones((2, 3)))


def test_constraints_given_as_one_string(conv):
  with pytest.raises(TypeError, match=re.escape("write ('b >= 2',)")):
    conv(lambda x: x, polymorphic_shapes="(b,)", polymorphic_constraints="b >= 2")


def test_non_jittable_function_keeps_tracer_error(conv):
  def f_not_jittable(x):
    if x > 0:
      return x
    return -x

  with pytest.raises(jax.errors.TracerBoolConversionError) as e:
    conv(f_not_jittable)(np.float32(1.))
  notes = "\n".join(getattr(e.value, "__notes__", []))
  assert "while converting f_not_jittable with jax2tf.convert" in notes
  assert "must be jittable" in notes


def test_non_jittable_int_conversion(conv):
  with pytest.raises(jax.errors.ConcretizationTypeError) as e:
    conv(lambda x: jnp.zeros(int(x)))(np.int32(3))
  assert "must be jittable" in "\n".join(e.value.__notes__)


def test_polymorphic_shapes_named_in_conversion_note(conv):
  with pytest.raises(TypeError) as e:
    conv(lambda x, y: x + y, polymorphic_shapes=["(v,)", "(4,)"])(
        np.ones(4), np.ones(4))
  notes = "\n".join(e.value.__notes__)
  assert "polymorphic shapes x: (v,), y: (4,)" in notes


def test_string_tensor_argument(conv):
  with pytest.raises(TypeError, match="argument x has TF dtype string, which JAX cannot represent"):
    conv(lambda x: x)(tf.constant(["a"]))


def test_string_tensor_in_graph_names_the_leaf(conv):
  f_tf = tf.function(conv(lambda d: d["n"] * 2), autograph=False)
  with pytest.raises(TypeError, match=r"argument d\['s'\] has TF dtype string"):
    f_tf.get_concrete_function({"n": tf.TensorSpec([], tf.int32),
                                "s": tf.TensorSpec([], tf.string)})


def test_numpy_string_and_object_arguments(conv):
  with pytest.raises(TypeError, match=r"argument x has dtype <U1"):
    conv(lambda x: x)(np.array(["a"]))
  with pytest.raises(TypeError, match=r"argument args\[1\]|argument y"):
    conv(lambda x, y: x)(np.ones(2), object())


def test_shape_mismatch_in_the_function_body_has_conversion_note(conv):
  def matmul(x):
    return jnp.matmul(x, x)

  with pytest.raises(TypeError, match="dot_general requires contracting dimensions") as e:
    conv(matmul)(np.ones((3, 4), np.float32))
  assert "while converting matmul with jax2tf.convert" in "\n".join(e.value.__notes__)
