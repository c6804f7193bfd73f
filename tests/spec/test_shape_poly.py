"""The spec's "Shape-polymorphic conversion" section, example by example."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import export

import jax2tf
from jax2tf import PolyShape
from tests.spec.helpers import (
  all_serializations,
  assert_like_jax,
  concrete,
  convert,
  raises_shape_error,
  rand,
)
from tests.tf_modes import TF_MODES, in_mode

SHAPE_ASSERTIONS = jax2tf.DisabledSafetyCheck.shape_assertions()


def images_fun(x):
  return jnp.sin(x) * jnp.sum(x, axis=0)


@pytest.mark.parametrize("spec", ["(b, 28, 28)", "(b, _, _)", "(b, ...)",
                                  PolyShape("b", 28, 28), PolyShape("b", ...),
                                  PolyShape("b", "_", 28)], ids=str)
def test_batch_spec_spellings(spec, serialization):
  cf = concrete(images_fun, serialization, [spec], tf.TensorSpec([None, 28, 28], tf.float32))
  assert cf.structured_outputs.shape.as_list() == [None, 28, 28]
  for n in (1, 3):
    x = rand((n, 28, 28), n)
    assert_like_jax(images_fun, cf(x), x)


def test_single_spec_string_not_in_a_list(serialization):
  # A bare spec applies to the single positional argument.
  cf = concrete(images_fun, serialization, "(b, _, _)", tf.TensorSpec([None, 4, 4], tf.float32))
  x = rand((2, 4, 4))
  assert_like_jax(images_fun, cf(x), x)


def square_fun(x):
  assert x.shape[-2] == x.shape[-1]  # known to JAX from "(b, d, d)"
  return jnp.matmul(x, jnp.sin(x))


@all_serializations
@pytest.mark.parametrize("mode", ["graph", "compiled"])
def test_square_images_b_d_d(mode, serialization):
  f_tf = in_mode(convert(square_fun, serialization, polymorphic_shapes=["(b, d, d)"]), mode)
  cf = f_tf.get_concrete_function(tf.TensorSpec([None, None, None], tf.float32))
  for shape in [(1, 2, 2), (3, 5, 5)]:
    x = rand(shape)
    assert_like_jax(square_fun, cf(x), x)


SQUARE_MISMATCH = (r"Found inconsistency between dimension size args\[0\]\.shape\[2\] "
                   r"\(= 4\) and the specification 'd' \(= 3\)")


@pytest.mark.parametrize("fun", [square_fun, jnp.sin], ids=["matmul", "sin"])
def test_square_images_mismatch_is_an_invalid_argument(fun, serialization):
  cf = concrete(fun, serialization, ["(b, d, d)"],
                tf.TensorSpec([None, None, None], tf.float32))
  # The arguments are checked before the computation runs, so even a body that
  # cannot be refined for the wrong shapes reports the spec's message.
  with raises_shape_error(SQUARE_MISMATCH):
    cf(rand((2, 3, 4)))


def test_square_images_mismatch_eager(serialization):
  with raises_shape_error(SQUARE_MISMATCH):
    convert(square_fun, serialization, polymorphic_shapes=["(b, d, d)"])(rand((2, 3, 4)))


def test_spec_with_none_for_second_argument(serialization):
  def f(x, w):
    return jnp.tanh(x @ w)

  cf = concrete(f, serialization, ["(b, _, _)", None],
                tf.TensorSpec([None, 28, 28], tf.float32), tf.TensorSpec([28, 16], tf.float32))
  x, w = rand((3, 28, 28)), rand((28, 16), 1)
  assert_like_jax(f, cf(x, w), x, w)
  # A known TensorSpec leading dimension traces for the same polymorphic shape.
  cf1 = concrete(f, serialization, ["(b, _, _)", None],
                 tf.TensorSpec([1, 28, 28], tf.float32), tf.TensorSpec([28, 16], tf.float32))
  assert_like_jax(f, cf1(x[:1], w), x[:1], w)


def test_shared_dimension_variable_across_arguments(serialization):
  def f(x, y):
    return x * y[:, None]

  f_tf = convert(f, serialization, polymorphic_shapes=["(batch, _)", "(batch,)"])
  cf = tf.function(f_tf, autograph=False).get_concrete_function(
      tf.TensorSpec([None, 16], tf.float32), tf.TensorSpec([None], tf.float32))
  x, y = rand((8, 16)), rand((8,), 1)
  assert_like_jax(f, cf(x, y), x, y)
  assert_like_jax(f, f_tf(x, y), x, y)  # eager with concrete shapes [8, 16] and [8]
  message = re.escape("Found inconsistency between dimension size args[1].shape[0] (= 7) "
                      "and the specification 'batch' (= 8)")
  with raises_shape_error(message):
    cf(x, rand((7,)))
  with raises_shape_error(message):
    f_tf(x, rand((7,)))
  g = lambda x, y: (jnp.sum(x, axis=1), jnp.sin(y))
  cg = concrete(g, serialization, ["(batch, _)", "(batch,)"],
                tf.TensorSpec([None, 16], tf.float32), tf.TensorSpec([None], tf.float32))
  with raises_shape_error(message):
    cg(x, rand((7,)))


def image_mask_jax(images, mask):
  # images: f32[B, W, W] and mask: f32[W, W]
  return images * mask


@all_serializations
@pytest.mark.parametrize("mode", TF_MODES)
def test_image_mask_shares_w_between_arguments(mode, serialization):
  # The spec's example: broadcast_in_dim's shape becomes (1, w, w).
  f_tf = in_mode(convert(image_mask_jax, serialization,
                         polymorphic_shapes=["(b, w, w)", "(w, w)"]), mode)
  if mode != "eager":
    f_tf = f_tf.get_concrete_function(tf.TensorSpec([None, None, None], tf.float32),
                                      tf.TensorSpec([None, None], tf.float32))
  for b, w in [(1, 28), (3, 5)]:
    images, mask = rand((b, w, w), b), rand((w, w), w)
    assert_like_jax(image_mask_jax, f_tf(images, mask), images, mask)
  if mode == "compiled" and serialization != "native":
    return  # graph serialization's Assert ops are dropped by jit_compile
  with raises_shape_error(re.escape(
      "Found inconsistency between dimension size args[1].shape[0] (= 4) and the "
      "specification 'w' (= 3)")):
    f_tf(rand((2, 3, 3)), rand((4, 4)))


def test_spec_for_pytree_argument_prefix(serialization):
  def f(d):
    return d["a"] + jnp.sum(d["b"], axis=1)

  # One spec for the whole dict: a pytree prefix.
  cf = concrete(f, serialization, [{"a": "(b,)", "b": "(b, _)"}],
                {"a": tf.TensorSpec([None], tf.float32),
                 "b": tf.TensorSpec([None, 3], tf.float32)})
  d = {"a": rand((5,)), "b": rand((5, 3), 1)}
  assert_like_jax(f, cf(d), d)


def test_unknown_dim_without_spec_is_refused(serialization):
  f_tf = tf.function(convert(jnp.sin, serialization), autograph=False)
  with pytest.raises(ValueError, match=r"argument x has shape \(\?, 3\) with unknown "
                                       "dimensions, but no polymorphic_shapes spec"):
    f_tf.get_concrete_function(tf.TensorSpec([None, 3], tf.float32))


def test_underscore_needs_known_dimension(serialization):
  f_tf = tf.function(convert(jnp.sin, serialization, polymorphic_shapes=["(b, _)"]),
                     autograph=False)
  with pytest.raises(ValueError, match="argument x"):
    f_tf.get_concrete_function(tf.TensorSpec([None, None], tf.float32))


@all_serializations
def test_dimension_expression_in_spec(serialization):
  # "2*d" constrains the dimension to be even; d is solved from it.
  def f(x):
    return jnp.reshape(x, (x.shape[0], 2, x.shape[1] // 2)).sum(axis=1)

  cf = concrete(f, serialization, ["(b, 2*d)"], tf.TensorSpec([None, None], tf.float32))
  assert cf.structured_outputs.shape.as_list() == [None, None]
  for shape in [(1, 2), (3, 8)]:
    x = rand(shape)
    assert_like_jax(f, cf(x), x)


# -- Computing with dimension variables -------------------------------------

@all_serializations
def test_reshape_with_dimension_product(serialization):
  f = lambda x: jnp.reshape(x, (x.shape[0] * x.shape[1],))
  x = rand((3, 4))
  assert_like_jax(f, convert(f, serialization, polymorphic_shapes=["(b, 4)"])(x), x)
  cf = concrete(f, serialization, ["(b, 4)"], tf.TensorSpec([None, 4], tf.float32))
  for n in (1, 3):
    x = rand((n, 4))
    assert_like_jax(f, cf(x), x)
  _, out_spec = jax2tf.eval_polymorphic_shape(f, polymorphic_shapes=["(b, 4)"])(x)
  assert out_spec.replace(",)", ")") == "(4*b)"


def implicit_array_fun(x):
  return (x + x.shape[0] + jnp.sin(x.shape[0]),
          5. + x.shape[0],
          x.shape[0] - np.ones((5,), dtype=np.int32))


@all_serializations
@pytest.mark.parametrize("mode", TF_MODES)
def test_dimension_in_arithmetic_with_non_integers(mode, serialization):
  f_tf = in_mode(convert(implicit_array_fun, serialization, polymorphic_shapes=["b"]), mode)
  x = np.ones(3, np.float32)
  assert_like_jax(implicit_array_fun, f_tf(x), x)
  if mode != "eager":
    f_tf = f_tf.get_concrete_function(tf.TensorSpec([None], tf.float32))
  for n in (1, 3):
    x = np.ones(n, np.float32)
    assert_like_jax(implicit_array_fun, f_tf(x), x)


@all_serializations
@pytest.mark.parametrize("mode", TF_MODES)
def test_average_over_polymorphic_axis(mode, serialization):
  f = lambda x: jnp.sum(x, axis=0) / x.shape[0]
  f_tf = in_mode(convert(f, serialization, polymorphic_shapes=["(v, _)"]), mode)
  for n in (1, 3):
    x = rand((n, 4), n)
    assert_like_jax(f, f_tf(x), x)
  if mode != "eager":
    f_tf = f_tf.get_concrete_function(tf.TensorSpec([None, 4], tf.float32))
  for n in (1, 3, 6):
    x = rand((n, 4), n)
    assert_like_jax(f, f_tf(x), x)


@all_serializations
def test_shape_as_array_and_arange(serialization):
  def f(x):
    return jnp.array(x.shape) * 2, jnp.arange(x.shape[0]) * x.shape[1]

  cf = concrete(f, serialization, ["(a, b)"], tf.TensorSpec([None, None], tf.float32))
  for shape in [(2, 3), (5, 1)]:
    x = rand(shape)
    assert_like_jax(f, cf(x), x)


# -- Errors in presence of shape polymorphism --------------------------------

def test_error_incompatible_broadcasting(serialization):
  four_ones = np.ones((4,))
  with pytest.raises(TypeError, match=re.escape(
      "add got incompatible shapes for broadcasting: (v,), (4,)")):
    convert(lambda x, y: x + y, serialization,
            polymorphic_shapes=["(v,)", "(4,)"])(four_ones, four_ones)


def test_error_dot_general_contracting_dims(serialization):
  # JAX now prints the dimensions as tuples, the spec shows lists.
  with pytest.raises(TypeError, match=re.escape(
      "dot_general requires contracting dimensions to have the same shape, got (4,) and (v,)")):
    convert(lambda x: jnp.matmul(x, x), serialization,
            polymorphic_shapes=["(v, 4)"])(np.ones((4, 4)))
  # The remedy of the spec: square matrices.
  f = lambda x: jnp.matmul(x, x)
  x = rand((4, 4))
  assert_like_jax(f, convert(f, serialization, polymorphic_shapes=["(v, v)"])(x), x)


def test_error_shapes_must_be_1d_sequences(serialization):
  with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type"):
    convert(lambda x: jnp.reshape(x, (x.shape[0] * np.array([x.shape[1]]),)), serialization,
            polymorphic_shapes=["(b, 4)"])(np.ones((3, 4)))


def test_error_not_solvable_non_linear(serialization):
  with pytest.raises(ValueError, match=r"Cannot solve for values of dimension variables \{'a'\}"):
    convert(lambda x: x, serialization, polymorphic_shapes=["a * a"])(np.ones(4))


def test_error_not_solvable_too_few_equations(serialization):
  with pytest.raises(ValueError) as e:
    convert(lambda x: x, serialization, polymorphic_shapes=["a + b"])(np.ones(4))
  msg = str(e.value)
  assert re.search(r"Cannot solve for values of dimension variables \{'(a|b)', '(a|b)'\}", msg)
  assert "We can only solve linear uni-variate constraints" in msg
  assert "args[0].shape = (" in msg and "Unprocessed specifications" in msg


def test_error_inconclusive_comparison(serialization):
  with pytest.raises(jax.errors.InconclusiveDimensionOperation,
                     match=re.escape("comparison 'a + 1' >= 'b' is inconclusive")):
    convert(lambda x: 0 if x.shape[0] + 1 >= x.shape[1] else 1, serialization,
            polymorphic_shapes=["(a, b)"])(np.ones((3, 4)))


def test_comparisons_that_are_conclusive(serialization):
  def f(x):
    a, b = x.shape
    # b >= 1 and 2*a + b >= 3 hold for all a, b >= 1; b + b == 2*b too.
    assert b >= 1 and 2 * a + b >= 3 and b + b == 2 * b and b + 1 != b
    return x * 2.

  x = rand((2, 3))
  assert_like_jax(f, convert(f, serialization, polymorphic_shapes=["(a, b)"])(x), x)


@all_serializations
def test_max_dim_instead_of_conditional(serialization):
  # The spec's remedy for `d if d > 0 else 0`, which would be inconclusive.
  def f(x):
    n = jax.core.max_dim(x.shape[0] - 2, 0)
    return jnp.concatenate([x, jnp.zeros((n,), x.dtype)])

  with pytest.raises(jax.errors.InconclusiveDimensionOperation):
    convert(lambda x: x[:(x.shape[0] - 2 if x.shape[0] - 2 > 0 else 0)], serialization,
            polymorphic_shapes=["b"])(rand((5,)))
  cf = concrete(f, serialization, ["b"], tf.TensorSpec([None], tf.float32))
  for n in (1, 2, 5):
    x = rand((n,))
    assert_like_jax(f, cf(x), x)


@all_serializations
def test_min_dim_instead_of_builtin_min(serialization):
  # The spec's remedy for the builtin min of a dimension and a constant.
  def f(x):
    return x[:jax.core.min_dim(x.shape[0], 4)] * 2.

  with pytest.raises(jax.errors.InconclusiveDimensionOperation, match="is inconclusive"):
    convert(lambda x: x[:min(x.shape[0], 4)], serialization,
            polymorphic_shapes=["b"])(rand((5,)))
  cf = concrete(f, serialization, ["b"], tf.TensorSpec([None], tf.float32))
  for n in (1, 4, 9):
    x = rand((n,), n)
    res = cf(x)
    assert res.shape == (min(n, 4),)
    assert_like_jax(f, res, x)


@all_serializations
def test_min_of_dimensions_in_a_spec_expression(serialization):
  # min(...) of two dimension variables, in the function and its result shape.
  def f(x, y):
    k = jax.core.min_dim(x.shape[0], y.shape[0])
    return x[:k] + y[:k]

  cf = concrete(f, serialization, ["a", "b"], tf.TensorSpec([None], tf.float32),
                tf.TensorSpec([None], tf.float32))
  for n, m in [(2, 5), (6, 3), (4, 4)]:
    x, y = rand((n,), n), rand((m,), m + 10)
    assert_like_jax(f, cf(x, y), x, y)


# -- Division ----------------------------------------------------------------

def test_division_error_cannot_divide_evenly(serialization):
  with pytest.raises(jax.errors.InconclusiveDimensionOperation,
                     match=re.escape("Cannot divide evenly the sizes of shapes (b, 5, 7) and (2, -1)")) as e:
    convert(lambda x: jnp.reshape(x, (2, -1)), serialization,
            polymorphic_shapes=["(b, ...)"])(np.ones((4, 5, 7)))
  # The spec's further detail: 35*b is the size of the input.
  assert "Details: Cannot divide '35*b' by '-2'." in "\n".join(e.value.__notes__)


@pytest.mark.parametrize("spec, shapes, out_spec", [
    ("(b, ...)", [(4, 5, 6), (1, 5, 6)], "(2, 15*b)"),
    ("(2*b, ...)", [(4, 5, 7), (2, 5, 7)], "(2, 35*b)"),
])
def test_division_that_succeeds(spec, shapes, out_spec, serialization):
  f = lambda x: jnp.reshape(x, (2, -1))
  x = rand(shapes[0])
  assert_like_jax(f, convert(f, serialization, polymorphic_shapes=[spec])(x), x)
  cf = concrete(f, serialization, [spec], tf.TensorSpec([None, *shapes[0][1:]], tf.float32))
  for shape in shapes:
    x = rand(shape)
    assert_like_jax(f, cf(x), x)
  _, res_spec = jax2tf.eval_polymorphic_shape(f, polymorphic_shapes=[spec])(x)
  assert res_spec == out_spec


def test_reshape_minus_one_with_two_variables(serialization):
  f = lambda x: jnp.reshape(x, (-1, x.shape[0]))
  x = rand((4, 5, 6))
  assert_like_jax(f, convert(f, serialization, polymorphic_shapes=["(b1, b2, ...)"])(x), x)
  cf = concrete(f, serialization, ["(b1, b2, ...)"],
                tf.TensorSpec([None, None, 6], tf.float32))
  for shape in [(4, 5, 6), (2, 1, 6)]:
    x = rand(shape)
    assert_like_jax(f, cf(x), x)
  _, res_spec = jax2tf.eval_polymorphic_shape(f, polymorphic_shapes=["(b1, b2, ...)"])(x)
  assert res_spec == "(6*b2, b1)"


# -- Symbolic constraints ------------------------------------------------------

def test_implicit_constraint_b_plus_15(serialization):
  f = lambda x: x[0:16]
  cf = concrete(f, serialization, "b + 15, ...", tf.TensorSpec([None, 2], tf.float32))
  assert cf.structured_outputs.shape.as_list() == [16, 2]
  x = rand((20, 2))
  assert_like_jax(f, cf(x), x)
  with raises_shape_error("Expected value >= 1 for dimension variable 'b'"):
    cf(rand((15, 2)))
  c_sin = concrete(jnp.sin, serialization, "b + 15, ...", tf.TensorSpec([None, 2], tf.float32))
  with raises_shape_error("Expected value >= 1 for dimension variable 'b'"):
    c_sin(rand((15, 2)))
  with raises_shape_error("Expected value >= 1 for dimension variable 'b'"):
    convert(f, serialization, polymorphic_shapes="b + 15, ...")(rand((15, 2)))


def test_slice_without_constraint_uses_min(serialization):
  # The spec says x[0:16] fails for "(b, ...)"; JAX now gives min(b, 16).
  f = lambda x: x[0:16]
  _, spec = jax2tf.eval_polymorphic_shape(f, polymorphic_shapes="b, ...")(rand((20, 2)))
  assert spec == "(min(b, 16), 2)"
  cf = concrete(f, serialization, "b, ...", tf.TensorSpec([None, 2], tf.float32))
  for n in (5, 20):
    x = rand((n, 2))
    assert_like_jax(f, cf(x), x)


def explicit_constraints_fun(x):
  return x[:x.shape[1], :16]


EXPLICIT = dict(polymorphic_shapes="(a, b)", polymorphic_constraints=("a >= b", "b >= 16"))


@all_serializations
@pytest.mark.parametrize("mode", TF_MODES)
def test_explicit_constraints(mode, serialization):
  f_tf = in_mode(convert(explicit_constraints_fun, serialization, **EXPLICIT), mode)
  x = rand((20, 18))
  assert_like_jax(explicit_constraints_fun, f_tf(x), x)
  _, spec = jax2tf.eval_polymorphic_shape(explicit_constraints_fun, **EXPLICIT)(x)
  assert spec == "(b, 16)"  # without the constraints: (min(a, b), min(b, 16))


@pytest.mark.parametrize("eager", [False, True], ids=["tf_function", "eager"])
def test_explicit_constraints_checked_at_call_time(eager, serialization):
  def checked(fun):
    if eager:
      return convert(fun, serialization, **EXPLICIT)
    return concrete(fun, serialization, EXPLICIT["polymorphic_shapes"],
                    tf.TensorSpec([None, None], tf.float32),
                    polymorphic_constraints=EXPLICIT["polymorphic_constraints"])

  f_tf = checked(explicit_constraints_fun)
  x = rand((20, 18))
  assert_like_jax(explicit_constraints_fun, f_tf(x), x)
  with raises_shape_error("Input shapes do not match the symbolic shape constraint b >= 16"):
    f_tf(rand((20, 10)))
  s_tf = checked(jnp.sin)
  with raises_shape_error("Input shapes do not match the symbolic shape constraint b >= 16"):
    s_tf(rand((20, 10)))
  with raises_shape_error("Input shapes do not match the symbolic shape constraint a >= b"):
    s_tf(rand((17, 18)))


@pytest.mark.parametrize("constraints", [(), ("b >= 4*floordiv(b, 4)",)])
def test_floordiv_slice(constraints, serialization):
  f = lambda x: x[: 4 * (x.shape[0] // 4)]
  cf = concrete(f, serialization, ("b, ...",), tf.TensorSpec([None, 2], tf.float32),
                polymorphic_constraints=constraints)
  for n in (3, 10, 12):
    x = rand((n, 2))
    assert_like_jax(f, cf(x), x)


def equality_constraint_fun(x, y):
  return x + y[:y.shape[0] // 2]


def test_equality_constraint_needed(serialization):
  with pytest.raises(TypeError, match=re.escape(
      "add got incompatible shapes for broadcasting: (a,), (floordiv(b, 2),)")):
    convert(equality_constraint_fun, serialization, polymorphic_shapes=("a", "b"))(
        rand((3,)), rand((7,)))


@all_serializations
def test_equality_constraint(serialization):
  cf = concrete(equality_constraint_fun, serialization, ("a", "b"),
                tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.float32),
                polymorphic_constraints=("floordiv(b, 2) == a",))
  for a, b in [(3, 7), (3, 6), (1, 2)]:
    x, y = rand((a,)), rand((b,), 1)
    assert_like_jax(equality_constraint_fun, cf(x, y), x, y)
  with raises_shape_error(re.escape("Input shapes do not match the symbolic shape "
                                    "constraint floordiv(b, 2) == a")):
    cf(rand((3,)), rand((9,)))


def test_constraint_malformed(serialization):
  with pytest.raises(ValueError, match="polymorphic_constraints"):
    convert(lambda x: x, serialization, polymorphic_shapes="(a, b)",
            polymorphic_constraints=("a >= b >= 2",))(np.ones((3, 2)))


def test_equality_constraint_with_addition_on_lhs_rejected(serialization):
  with pytest.raises(ValueError, match="polymorphic_constraints"):
    convert(lambda x: x, serialization, polymorphic_shapes="(a, b)",
            polymorphic_constraints=("a + b == 5",))(np.ones((3, 2)))


# -- Shape assertions ------------------------------------------------------------

BBD_BODIES = {"sin": jnp.sin, "double": lambda x: x * 2.}


@pytest.fixture(scope="module")
def bbd_concretes(serialization):
  # Both an elementwise function and x * 2., whose body a native module
  # could not even refine for shapes that break the spec.
  return {name: concrete(fun, serialization, "(b, b, 2*d)",
                         tf.TensorSpec([None, None, None], tf.float32))
          for name, fun in BBD_BODIES.items()}


@pytest.fixture(params=sorted(BBD_BODIES))
def bbd(request, bbd_concretes):
  return BBD_BODIES[request.param], bbd_concretes[request.param]


def test_shape_assertion_passes(bbd):
  fun, cf = bbd
  x = rand((3, 3, 4))
  assert_like_jax(fun, cf(x), x)


BBD_REMAINDER_PIECES = [
    "Input shapes do not match the polymorphic shapes specification.",
    "Division had remainder 1 when computing the value of 'd'.",
    "Using the following polymorphic shapes specifications: args[0].shape = (b, b, 2*d).",
    "Obtained dimension variables: 'b' = 3 from specification 'b' for dimension "
    "args[0].shape[0] (= 3)",
]


def test_shape_assertion_division_remainder(bbd):
  _, cf = bbd
  with raises_shape_error("Division had remainder") as e:
    cf(rand((3, 3, 5)))
  msg = str(e.value)
  for piece in BBD_REMAINDER_PIECES:
    assert piece in msg, msg


def test_shape_assertion_b_zero(bbd):
  _, cf = bbd
  with raises_shape_error("Expected value >= 1 for dimension variable 'b'"):
    cf(rand((0, 0, 4)))


def test_shape_assertion_mismatched_b(bbd):
  _, cf = bbd
  with raises_shape_error(re.escape(
      "Found inconsistency between dimension size args[0].shape[1] (= 4) and the "
      "specification 'b' (= 3)")):
    cf(rand((3, 4, 6)))


@pytest.mark.parametrize("mode", TF_MODES)
def test_shape_assertions_per_mode(mode, serialization):
  f_tf = in_mode(convert(jnp.sin, serialization, polymorphic_shapes="(b, b, 2*d)"), mode)
  if mode != "eager":
    f_tf = f_tf.get_concrete_function(tf.TensorSpec([None, None, None], tf.float32))
  x = rand((3, 3, 5))
  # The spec's "jit_compile suppresses them" no longer holds: where TF drops
  # Assert ops, an assertion-only XlaCallModule checks, in either serialization.
  with raises_shape_error("Division had remainder 1"):
    f_tf(x)


@pytest.mark.parametrize("mode", TF_MODES)
def test_disabled_shape_assertions(mode, serialization):
  f_tf = in_mode(convert(jnp.sin, serialization, polymorphic_shapes="(b, b, 2*d)",
                         native_serialization_disabled_checks=[SHAPE_ASSERTIONS]), mode)
  # b = 0 violates b >= 1; the computation itself is fine with it.
  x = rand((0, 0, 4))
  assert f_tf(x).shape == (0, 0, 4)
  x = rand((3, 4, 6))  # b inconsistent; sin is elementwise, so still computable
  np.testing.assert_allclose(f_tf(x).numpy(), np.sin(x), rtol=1e-6)
  if mode != "eager":
    cf = f_tf.get_concrete_function(tf.TensorSpec([None, None, None], tf.float32))
    assert cf(rand((0, 0, 4))).shape == (0, 0, 4)
    np.testing.assert_allclose(cf(x).numpy(), jax.jit(jnp.sin)(x), rtol=1e-6)


# -- eval_polymorphic_shape ----------------------------------------------------

def test_eval_polymorphic_shape(serialization):
  def f(x, y):
    return {"flat": jnp.reshape(x, (-1,)), "mm": x @ y}

  out_shapes, out_specs = jax2tf.eval_polymorphic_shape(
      f, polymorphic_shapes=["(b, 4)", None])(
          tf.TensorSpec([None, 4], tf.float32), jax.ShapeDtypeStruct((4, 3), np.float32))
  assert out_specs == {"flat": "(4*b)", "mm": "(b, 3)"} or \
      out_specs == {"flat": "(4*b,)", "mm": "(b, 3)"}
  assert isinstance(out_shapes["mm"], jax.ShapeDtypeStruct)
  assert out_shapes["mm"].dtype == np.float32
  assert str(out_shapes["mm"].shape[0]) == "b" and out_shapes["mm"].shape[1] == 3
  # The specs feed a following conversion.
  g = lambda d: d["flat"].sum() + d["mm"].sum()
  cf = concrete(g, serialization, [out_specs], {"flat": tf.TensorSpec([None], tf.float32),
                                                "mm": tf.TensorSpec([None, 3], tf.float32)})
  d = {"flat": rand((8,)), "mm": rand((2, 3), 1)}
  assert_like_jax(g, cf(d), d)


def test_eval_polymorphic_shape_does_not_lower():
  # Only shapes are computed, so no serialization is involved.
  def f(x):
    if x.shape[0] > 0:  # conclusive: only shapes are needed
      return jnp.concatenate([x, x])
    return x

  out, spec = jax2tf.eval_polymorphic_shape(f, polymorphic_shapes=["(b, 2)"])(np.ones((3, 2)))
  assert spec == "(2*b, 2)" and out.dtype == np.float32


def test_dimension_variable_shared_scope_with_symbolic_shape():
  a1, = export.symbolic_shape("a,")
  a2, = export.symbolic_shape("a,", constraints=("a >= 8",))
  with pytest.raises(ValueError, match="scope"):
    a1 + a2
  a, = export.symbolic_shape("a,", constraints=("a >= 8",))
  b, = export.symbolic_shape("b,", scope=a.scope)
  assert str(a + b) in ("a + b", "b + a")


def vmapped_fun(x):
  per_example = lambda x: jnp.tanh(x @ jnp.arange(12., dtype=np.float32).reshape(4, 3))
  return jax.vmap(per_example)(x)


@pytest.fixture(scope="module")
def vmapped_cf(serialization):
  return concrete(vmapped_fun, serialization, ["(b, 4)"], tf.TensorSpec([None, 4], tf.float32))


@pytest.mark.parametrize("n", [1, 17])
def test_vmap_batch_polymorphic(vmapped_cf, n):
  x = rand((n, 4))
  assert_like_jax(vmapped_fun, vmapped_cf(x), x)


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 128, 1000])
def test_vmap_batch_polymorphic_many_sizes(vmapped_cf, n):
  x = rand((n, 4))
  assert_like_jax(vmapped_fun, vmapped_cf(x), x)
