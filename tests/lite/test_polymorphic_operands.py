"""Polymorphic operands in forms both TFLite converters take (the module
rewrites of jax2tf/native/dynamic_ops.py and the forms of
jax2tf/native/target_lowerings.py), on the native and litert routes: pads
that crop a polymorphic operand, columns of a polymorphic batch by index,
windows of polymorphic images whose padding depends on their size, and
integer and transposed convolutions at polymorphic image sizes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from tests.support import compare  # noqa: E402


def rows_with_specials(shape, seed=0):
  rng = np.random.default_rng(seed)
  # Ties, both zeros and NaNs: the orders JAX gives them are the point.
  x = rng.integers(-3, 4, size=shape).astype(np.float32) * 0.5
  x.flat[:: 5] = -0.0
  x.flat[3::7] = np.nan
  return x


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize(
  "config",
  [[(1, 2, 0), (-1, 1, 0)], [(1, -1, 2), (0, 0, 1)], [(0, 0, 0), (-2, -1, 1)]],
  ids=["crop_static_axis", "crop_polymorphic_axis", "crop_both_edges"],
)
def test_pads_that_crop_a_polymorphic_operand(config, route):
  # Both converters ended the process on these (jax2tf/native/dynamic_ops.py).
  if route == "native":
    pytest.importorskip("tensorflow")
  fun = lambda x: lax.pad(x, np.float32(-7.0), config)  # noqa: E731
  model = jax2tf.to_tflite(fun, rows_with_specials((3, 4)), route=route, polymorphic_shapes=["(b, _)"])
  for seed, shape in enumerate([(3, 4), (6, 4)]):
    x = rows_with_specials(shape, seed)
    compare.assert_same(np.asarray(jax.jit(fun)(x)), lite.run(model, x)[0], exact=True)


@pytest.mark.parametrize("route", ["litert", "native"])
def test_columns_of_a_polymorphic_batch_by_index(route):
  # x[:, i]: a dynamic gather whose slices are as tall as the batch, read at
  # run time; out-of-range and negative indices as JAX takes them.
  if route == "native":
    pytest.importorskip("tensorflow")
  fun = lambda x, i: x[:, i] * 2.0  # noqa: E731
  i = np.array([4, 0, -1, 9, 2], np.int32)
  model = jax2tf.to_tflite(fun, rows_with_specials((3, 5)), i, route=route, polymorphic_shapes=["(b, _)", None])
  for seed, shape in enumerate([(3, 5), (8, 5)]):
    x = rows_with_specials(shape, seed)
    compare.assert_same(np.asarray(jax.jit(fun)(x, i)), lite.run(model, x, i)[0], exact=True)


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("kind", ["max_pool", "sum_window"])
def test_same_padded_windows_of_polymorphic_images(kind, route):
  # Their padding depends on the image's size: JAX's dynamic window, which
  # neither converter took, is the initial value concatenated around the
  # image and a window without padding (jax2tf/native/dynamic_ops.py).
  if route == "native":
    pytest.importorskip("tensorflow")
  if kind == "max_pool":
    fun = lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")  # noqa: E731
  else:
    fun = lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 2, 1), "SAME")  # noqa: E731
  rng = np.random.default_rng(5)
  model = jax2tf.to_tflite(
    fun, rng.normal(size=(2, 7, 7, 3)).astype(np.float32), route=route,
    polymorphic_shapes=["(b, h, w, 3)"],
  )  # fmt: skip
  for shape in [(2, 7, 7, 3), (1, 8, 5, 3)]:
    x = rng.normal(size=shape).astype(np.float32)
    if route == "litert":  # the native route warns that LiteRT's max drops NaN
      x[0, 1, 1, 0] = np.nan
    tol = None if kind == "max_pool" else (1e-6, 1e-6)
    want = np.asarray(jax.jit(fun)(x))
    compare.assert_same(want, lite.run(model, x)[0], tol=tol, exact=tol is None)


def _conv(lhs_dilation=(1, 1), padding="SAME"):
  def fun(x, w):
    return lax.conv_general_dilated(
      x, w, (1, 1), padding, lhs_dilation=lhs_dilation,
      dimension_numbers=("NHWC", "HWIO", "NHWC"),
    )  # fmt: skip

  return fun


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("kind", ["int32", "transposed"])
def test_convolutions_of_polymorphic_images_as_one_dot(kind, route):
  # The forms of convolutions LiteRT has no kernel for (integers) or sizes
  # wrongly (TRANSPOSE_CONV at run-time sizes) at polymorphic image sizes.
  if route == "native":
    pytest.importorskip("tensorflow")
  rng = np.random.default_rng(3)
  if kind == "int32":
    fun = _conv()
    make = lambda shape: rng.integers(-50, 50, size=shape).astype(np.int32)  # noqa: E731
  else:
    fun = _conv(lhs_dilation=(2, 2), padding=((2, 1), (1, 2)))
    make = lambda shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
  w = make((3, 3, 2, 4))
  model = jax2tf.to_tflite(
    fun, make((2, 5, 6, 2)), w, route=route, polymorphic_shapes=["(b, h, w, 2)", None]
  )
  for shape in [(2, 5, 6, 2), (3, 8, 4, 2)]:
    x = make(shape)
    want = np.asarray(jax.jit(fun)(x, w))
    tol = None if kind == "int32" else (1e-5, 1e-5)
    compare.assert_same(want, lite.run(model, x, w)[0], tol=tol, exact=tol is None)


_STRIDED = {
  "offset_rows_every_other_column": lambda x: x[1:, ::2],
  "cropped_rows_odd_columns": lambda x: x[2:-1, 1::2] * 3.0,
  "rows_from_the_end_reversed_columns": lambda x: x[-2:, ::-2],
}


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("name", sorted(_STRIDED))
def test_strided_slices_of_a_polymorphic_batch(name, route):
  # JAX writes these as a dynamic gather of a few starts, which neither
  # converter took: a strided slice each (jax2tf/native/dynamic_ops.py).
  if route == "native":
    pytest.importorskip("tensorflow")
  fun = _STRIDED[name]
  model = jax2tf.to_tflite(fun, rows_with_specials((5, 7)), route=route, polymorphic_shapes=["(b, 7)"])
  for seed, shape in enumerate([(5, 7), (9, 7)]):
    x = rows_with_specials(shape, seed)
    compare.assert_same(np.asarray(jax.jit(fun)(x)), lite.run(model, x)[0], exact=True, where=name)


_RUNNING = {
  "cummax": (lambda x: lax.cummax(x, 1), None),
  "reverse_cummin": (lambda x: lax.cummin(x, 0, reverse=True), None),
  "cumprod": (lambda x: lax.cumprod(x * 0.5 + 1.0, 1), (1e-6, 1e-6)),
  "cumprod_of_int32": (lambda x: lax.cumprod(jnp.nan_to_num(x).astype(np.int32) * 3 + 1, 1), None),
  # An axis of no elements beside the polymorphic one: the inits.
  "running_max_of_nothing": (lambda x: jnp.sum(lax.cummax(x[:, :0], 0), axis=1), None),
}


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("name", sorted(_RUNNING))
def test_running_maxima_and_products_along_a_polymorphic_axis(name, route):
  # JAX's window as long as the axis, which no converter took, as doubling
  # steps (jax2tf/jax_forms/doubling_scan.py).
  if route == "native":
    pytest.importorskip("tensorflow")
  fun, tol = _RUNNING[name]

  def rows(shape, seed=0):
    x = rows_with_specials(shape, seed)
    # The native route warns that LiteRT's max drops NaN and may differ in
    # the sign of zero: no NaN or -0.0 there.
    return np.nan_to_num(x) + np.float32(0.0) if route == "native" else x

  model = jax2tf.to_tflite(fun, rows((4, 6)), route=route, polymorphic_shapes=["(b, n)"])
  for seed, shape in enumerate([(4, 6), (7, 9)]):
    x = rows(shape, seed)
    want = np.asarray(jax.jit(fun)(x))
    compare.assert_same(want, lite.run(model, x)[0], tol=tol, exact=tol is None, where=name)


@pytest.mark.parametrize("route", ["litert", "native"])
def test_max_pool_gradient_of_polymorphic_images(route):
  # select_and_scatter_add, which neither converter takes, as the form of
  # slices, selects and pads the static shapes had (jax_forms/selected_windows.py).
  if route == "native":
    pytest.importorskip("tensorflow")

  def pool(x):
    return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

  fun = lambda x, g: jax.vjp(pool, x)[1](g)[0]  # noqa: E731
  rng = np.random.default_rng(7)
  make = lambda *shape: rng.integers(-3, 4, size=shape).astype(np.float32)  # noqa: E731 (ties)
  model = jax2tf.to_tflite(
    fun, make(2, 8, 6, 2), make(2, 4, 3, 2), route=route,
    polymorphic_shapes=["(b, 2*h, 2*w, 2)", "(b, h, w, 2)"],
  )  # fmt: skip
  for b, h, w in [(2, 4, 3), (1, 5, 2)]:
    x, g = make(b, 2 * h, 2 * w, 2), make(b, h, w, 2)
    compare.assert_same(np.asarray(jax.jit(fun)(x, g)), lite.run(model, x, g)[0], exact=True)


def _ordered_pair(a, b):
  # Neither associative nor commutative: the fold's order shows.
  return a[0] * np.int32(3) + b[0], a[1] * np.int32(5) - b[1] + a[0]


_FOLDS = {
  # name: (function, polymorphic shapes)
  "pair_along_the_polymorphic_axis": (
    lambda x, y: lax.reduce((x, y), (np.int32(1), np.int32(2)), _ordered_pair, (0,)),
    ["(b, 5)", "(b, 5)"],
  ),
  "one_operand_along_a_static_axis": (
    lambda x, y: lax.reduce(x, np.int32(7), lambda a, b: a * np.int32(3) + b, (1,)) + y[:, 0],
    ["(b, 5)", "(b, 5)"],
  ),
  "xor_along_the_polymorphic_axis": (
    lambda x, y: lax.reduce_xor_p.bind(x ^ y, axes=(1,)),
    ["(b, n)", "(b, n)"],
  ),
  "and_or_of_booleans": (
    lambda x, y: (jnp.all(x > y, axis=1), jnp.any(x < y, axis=0)),
    ["(b, n)", "(b, n)"],
  ),
}


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("name", sorted(_FOLDS))
def test_reductions_with_any_body_at_polymorphic_sizes(name, route):
  # LiteRT has no kernel for a reduction with another body (STABLEHLO_REDUCE):
  # XLA's fold as a loop (jax2tf/jax_forms/sequential_fold.py).
  if route == "native":
    pytest.importorskip("tensorflow")
  fun, specs = _FOLDS[name]
  rng = np.random.default_rng(11)
  ints = lambda *shape: rng.integers(-9, 9, size=shape).astype(np.int32)  # noqa: E731
  model = jax2tf.to_tflite(fun, ints(4, 5), ints(4, 5), route=route, polymorphic_shapes=specs)
  for shape in [(4, 5), (1, 5), (9, 5)]:
    x, y = ints(*shape), ints(*shape)
    want = jax.tree.leaves(jax.jit(fun)(x, y))
    got = lite.run(model, x, y)
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
      compare.assert_same(np.asarray(w), g, exact=True, where=f"{name} {shape} result {i}")
