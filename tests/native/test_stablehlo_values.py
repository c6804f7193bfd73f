"""The typed walk from a StableHLO value to its constant, and the quirk
predicate the native and graph routes share."""

import ml_dtypes
import numpy as np
import pytest
from jax.extend.mlir import ir
from jax.interpreters import mlir

from jax2tf.native import stablehlo_values as values
from jax2tf.targets import quirks


def _returned(body: str, result_type: str):
  """The value `body` returns (a module of one function, parsed)."""
  text = f"func.func @f() -> {result_type} {{\n{body}\n}}"
  module = ir.Module.parse(text)
  func = module.body.operations[0]
  ret = list(func.regions[0].blocks[0].operations)[-1]
  return module, ret.operands[0]


@pytest.fixture
def context():
  with mlir.make_ir_context(), ir.Location.unknown():
    yield


def _constant(body, result_type):
  module, value = _returned(body, result_type)
  return module, values.constant_of(value)


def test_through_broadcasts_and_reshapes_in_the_values_type(context):
  _, c = _constant(
    """
    %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %r = stablehlo.reshape %b : (tensor<2x3xf32>) -> tensor<6xf32>
    return %r : tensor<6xf32>
    """,
    "tensor<6xf32>",
  )
  assert c is not None and c.elements.dtype == np.float32
  np.testing.assert_array_equal(c.elements, [-np.inf])


def test_through_a_convert_that_keeps_every_element(context):
  _, c = _constant(
    """
    %c = stablehlo.constant dense<[0xFF800000, 1.0]> : tensor<2xf32>
    %v = stablehlo.convert %c : (tensor<2xf32>) -> tensor<2xbf16>
    return %v : tensor<2xbf16>
    """,
    "tensor<2xbf16>",
  )
  assert c.elements.dtype == ml_dtypes.bfloat16
  np.testing.assert_array_equal(c.elements.astype(np.float32), [-np.inf, 1.0])


def test_a_convert_that_changes_an_element_leaves_a_constant_of_unknown_elements(context):
  _, c = _constant(
    """
    %c = stablehlo.constant dense<[2.5, 0.0]> : tensor<2xf32>
    %v = stablehlo.convert %c : (tensor<2xf32>) -> tensor<2xi32>
    return %v : tensor<2xi32>
    """,
    "tensor<2xi32>",
  )
  assert c is not None and c.elements is None


def test_an_argument_or_a_computed_value_is_no_constant(context):
  module = ir.Module.parse(
    """
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = stablehlo.add %x, %x : tensor<2xf32>
      return %y : tensor<2xf32>
    }
    """
  )
  add = list(module.body.operations[0].regions[0].blocks[0].operations)[0]
  assert values.constant_of(add.operands[0]) is None
  assert values.constant_of(add.results[0]) is None


@pytest.mark.parametrize(
  "literal, nan_free",
  [("dense<[1.0, 0x7FC00000]>", False), ("dense<[1.0, 0x7F800000]>", True), ("dense<0.0>", True)],
)
def test_nan_free_reads_the_elements_not_their_spelling(context, literal, nan_free):
  _, value = _returned(
    f"""
    %c = stablehlo.constant {literal} : tensor<2xf32>
    return %c : tensor<2xf32>
    """,
    "tensor<2xf32>",
  )
  assert values.is_nan_free_constant(value) is nan_free


@pytest.mark.parametrize(
  "array, dropped",
  [
    (np.array([np.inf], np.float32), True),
    (np.array([-np.inf, np.inf], np.float32), True),
    (np.array([-np.finfo(np.float32).max], np.float32), True),
    (np.array([ml_dtypes.finfo(ml_dtypes.bfloat16).max], ml_dtypes.bfloat16), True),
    (np.array([np.finfo(np.float32).max], np.float64), False),  # not f64's largest
    (np.array([np.inf, 1.0], np.float32), False),
    (np.array([np.nan], np.float32), False),
    (np.array([], np.float32), False),
    (np.array([2**31 - 1], np.int32), False),
  ],
)
def test_which_constants_tflite_drops_a_min_max_with(array, dropped):
  assert quirks.tflite_drops_min_max_with(array) is dropped


def test_a_complex_constant_is_one_whose_elements_numpy_is_not_given(context):
  # The bindings cannot view a complex constant as dense elements; the walk
  # still knows it is a constant (a subtract of it by a transposed value is
  # rewritten), without its elements.
  _, c = _constant(
    """
    %c = stablehlo.constant dense<(1.0, 0.0)> : tensor<complex<f32>>
    %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
    return %b : tensor<3xcomplex<f32>>
    """,
    "tensor<3xcomplex<f32>>",
  )
  assert c is not None and c.elements is None
