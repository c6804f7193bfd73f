"""The rewrites that let the litert route (and TF's converter) take loops,
scatter sums and JAX's threefry PRNG: each against `jax.jit`."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from jax2tf.lite import inspect as lite_inspect  # noqa: E402
from jax2tf.lite import litert_converter, runtime  # noqa: E402
from jax2tf.native import module_rewrite, portable_lowering  # noqa: E402
from jax2tf.targets import uint32_words  # noqa: E402
from tests.support import compare  # noqa: E402


def _rng(seed):
  return np.random.default_rng(seed)


def _litert(fun, *args, **kwargs):
  """`fun` through the litert route, run on LiteRT, with what jax.jit gives."""
  model = jax2tf.to_tflite(fun, *args, route="litert", verify=False, **kwargs)
  want = jax.tree_util.tree_leaves(jax.jit(fun)(*args))
  return model, lite.run(model, *args), [np.asarray(w) for w in want]


# --- Loops: the exporter writes a WHILE only with its regions outlined -------


def _scan_reading_outer_values(w, xs, scale):
  # The body reads the weights, the scale and the sequence from outside.
  def step(h, x):
    h = jnp.tanh(x @ w + h * scale)
    return h, h.sum()

  h, sums = lax.scan(step, jnp.zeros(w.shape[1], w.dtype), xs)
  return h, sums


def test_scan_whose_body_reads_the_functions_values_runs_like_jax():
  rng = _rng(0)
  w = rng.normal(size=(3, 4)).astype(np.float32)
  xs = rng.normal(size=(5, 3)).astype(np.float32)
  model, got, want = _litert(_scan_reading_outer_values, w, xs, np.float32(0.5))
  assert lite_inspect.op_counts(model)["WHILE"] == 1
  for w_, g in zip(want, got):
    np.testing.assert_allclose(g, w_, rtol=1e-5, atol=1e-6)


def _nested_loops(x, n):
  def outer(i, acc):
    def inner(j, a):
      return a + x[j] * (i + 1).astype(x.dtype)

    return lax.fori_loop(0, x.shape[0], inner, acc) * 0.5

  return lax.fori_loop(0, n, outer, jnp.zeros((), x.dtype))


def test_nested_loops_with_a_dynamic_trip_count_run_like_jax():
  x = _rng(1).normal(size=(4,)).astype(np.float32)
  for n in (np.int32(0), np.int32(3)):
    model, got, want = _litert(_nested_loops, x, n)
    assert lite_inspect.op_counts(model)["WHILE"] == 2
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)


def _loop_without_captures(x):
  return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1]


def test_loop_that_reads_only_its_own_values_runs_like_jax():
  x = _rng(2).normal(size=(2, 3)).astype(np.float32)
  _, got, want = _litert(_loop_without_captures, x)
  np.testing.assert_allclose(got[0], want[0], rtol=1e-6)


# --- Scatter sums: LiteRT's kernel reads its region as STABLEHLO operators ---


def _segment_sums(data, segments, index, updates):
  return (
    jax.ops.segment_sum(data, segments, num_segments=4),
    jnp.ones((5, 2), data.dtype).at[index].multiply(updates),
    jnp.zeros((5,), jnp.int32).at[index].add(1),
  )


def test_scatter_sums_and_products_run_like_jax():
  rng = _rng(3)
  data = rng.normal(size=(7, 2)).astype(np.float32)
  segments = np.array([0, 2, 2, 3, 0, 1, 2], np.int32)
  index = np.array([4, 0, 4, 1], np.int32)
  updates = rng.normal(size=(4, 2)).astype(np.float32)
  model, got, want = _litert(_segment_sums, data, segments, index, updates)
  counts = lite_inspect.op_counts(model)
  assert counts["STABLEHLO_ADD"] == 2 and counts["STABLEHLO_MULTIPLY"] == 1, counts
  for w, g in zip(want, got):
    compare.assert_same(w, g, tol=(1e-6, 1e-6))


def _scatter_extremes(x, index, updates, counts):
  return (
    x.at[index].max(updates),
    x.at[index].min(updates),
    counts.at[index].max(np.int32(3)),
    counts.at[index].min(np.int32(-2)),
  )


def test_scatter_maxima_and_minima_keep_jax_nan():
  # NaN in the operand, in an update, in both, and nowhere, each reaching
  # an element of its own; an index repeated (two updates combined).
  x = np.array([[0.0, np.nan], [1.0, -1.0], [2.0, 5.0], [np.nan, 3.0], [-4.0, 4.0]], np.float32)
  index = np.array([4, 0, 4, 1, 3], np.int32)
  updates = np.array(
    [[1.0, 9.0], [np.nan, 2.0], [-7.0, np.nan], [0.5, -3.0], [6.0, 1.0]], np.float32
  )
  counts = np.arange(5, dtype=np.int32)
  model, got, want = _litert(_scatter_extremes, x, index, updates, counts)
  ops = lite_inspect.op_counts(model)
  # Each float scatter has a scatter of its NaN flags beside it.
  assert ops["STABLEHLO_SCATTER"] == 6 and ops["STABLEHLO_MAXIMUM"] == 3, ops
  for w, g in zip(want, got, strict=True):
    compare.assert_same(w, g, exact=True)


def _arg_extremes_of_rows(x):
  return jnp.argmax(x, axis=1), jnp.argmin(x, axis=1)


def _arg_extremes_of_columns(x):
  return jnp.argmax(x, axis=0).astype(jnp.int16), jnp.argmin(x, axis=0)


@pytest.mark.parametrize("fun", [_arg_extremes_of_rows, _arg_extremes_of_columns], ids=["rows", "columns"])
def test_argmax_and_argmin_pick_the_first_nan_as_jax(fun):
  # LiteRT's ARG_MAX and ARG_MIN never pick a NaN; JAX's pick the first one
  # of the slice, wherever the maximum is. Slices with a NaN before the
  # maximum, after it, two NaNs, ties, and none.
  x = np.array(
    [
      [1.0, np.nan, 7.0, 0.0],
      [9.0, 2.0, 3.0, np.nan],
      [np.nan, -1.0, np.nan, 5.0],
      [4.0, 4.0, -2.0, -2.0],
      [0.5, -3.0, 8.0, 1.0],
    ],
    np.float32,
  )
  model, got, want = _litert(fun, x)
  ops = lite_inspect.op_counts(model)
  # One more of each beside it, over the NaN flags.
  assert ops["ARG_MAX"] == 2 and ops["ARG_MIN"] == 2, ops
  for w, g in zip(want, got, strict=True):
    compare.assert_same(w, g, exact=True)


def _scatter_differences(x, index, updates, counts):
  dims = lax.ScatterDimensionNumbers((1,), (0,), (0,))
  return (
    lax.scatter_sub(x, index[:, None], updates, dims),
    lax.scatter_sub(counts, index[:, None], counts, dims),
  )


@pytest.mark.parametrize("route", ["litert", "native"])
def test_scatter_subtractions_run_like_jax(route):
  # LiteRT's scatter has no subtraction: x - u is x + (-u), exactly.
  if route == "native":
    pytest.importorskip("tensorflow")
  x = np.array([[0.0, np.nan], [-0.0, 1.0], [2.0, np.inf], [3.0, -1.0], [4.0, 0.0]], np.float32)
  index = np.array([4, 0, 4, 1, 3], np.int32)
  updates = np.array([[0.0, 1.0], [0.0, 2.0], [-7.0, 1.0], [np.inf, -3.0], [6.0, -0.0]], np.float32)
  counts = np.array([[2**31 - 1], [-(2**31)], [5], [7], [-3]], np.int32)
  model = jax2tf.to_tflite(
    _scatter_differences, x, index, updates, counts, route=route, verify=False
  )
  got = lite.run(model, x, index, updates, counts)
  want = jax.jit(_scatter_differences)(x, index, updates, counts)
  for w, g in zip(want, got, strict=True):
    compare.assert_same(np.asarray(w), g, exact=True)


# --- Integer ops TFLite lacks: shifts left, or, uint64 counters --------------


def _shifts_and_ors(x, i):
  u = x
  return (
    (u << np.uint32(13)) | (u >> np.uint32(19)),  # a rotation
    (u >> np.uint32(9)) | np.uint32(0x3F800000),  # the bits of a float in [1, 2)
    u << np.uint32(31),
    lax.shift_left(u, np.uint32(32)),
    i << np.int32(7),
    i << np.int32(31),
    lax.shift_left(i, np.int32(-1)),  # read as unsigned: shifts everything out
  )


def test_left_shifts_by_constants_and_ors_of_disjoint_bits_are_exact():
  x = np.array([0, 1, 0x80000001, 0xFFFFFFFF, 0x12345678, 0xDEADBEEF], np.uint32)
  i = np.array([0, 1, -1, 2**31 - 1, -(2**31), 123456], np.int32)
  model, got, want = _litert(_shifts_and_ors, x, i)
  assert not lite_inspect.flex_ops(model)
  for w, g in zip(want, got):
    compare.assert_same(w, g, exact=True)


def _threefry(key_data, x):
  key = jax.random.wrap_key_data(key_data, impl="threefry2x32")
  k1, k2 = jax.random.split(key)
  return (
    jax.random.bits(k1, (3, 5), jnp.uint32),
    x + jax.random.normal(k2, x.shape, x.dtype),
  )


@pytest.mark.parametrize("seed", [0, 7])
def test_threefry_bits_and_normals_are_jaxs(seed):
  key_data = np.asarray(jax.random.key_data(jax.random.key(seed, impl="threefry2x32")))
  x = _rng(4).normal(size=(2, 6)).astype(np.float32)
  _, got, want = _litert(_threefry, key_data, x)
  compare.assert_same(want[0], got[0], exact=True)
  np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)


def test_the_pipelines_leave_no_uint64_product_nor_left_shift_or_or():
  key = jax.ShapeDtypeStruct((2,), np.uint32)
  x = jax.ShapeDtypeStruct((4, 8), np.float32)
  # Exported as the routes export (threefry's rounds unrolled, not JAX's
  # CPU loop).
  text = jax.export.export(
    jax.jit(_threefry), _override_lowering_rules=portable_lowering.portable_lowering_rules()
  )(key, x).mlir_module()
  assert "ui64" in text and "stablehlo.shift_left" in text and "stablehlo.or" in text
  for pipeline in ("tflite", "litert"):
    rewritten = module_rewrite.rewrite(text, pipeline)
    for gone in ("ui64", "stablehlo.shift_left", "stablehlo.or"):
      assert gone not in rewritten, (pipeline, gone)


def test_uint64_arithmetic_that_may_reach_2_to_the_32_stays_as_it_is():
  text = """module {
  func.func public @main() -> (tensor<3xui32>, tensor<3xui32>) {
    %c = stablehlo.constant dense<[5, 7, %s]> : tensor<3xui64>
    %i = stablehlo.iota dim = 0 : tensor<3xui64>
    %m = stablehlo.multiply %i, %c : tensor<3xui64>
    %h = stablehlo.shift_right_logical %m, %c : tensor<3xui64>
    %0 = stablehlo.convert %m : (tensor<3xui64>) -> tensor<3xui32>
    %1 = stablehlo.convert %h : (tensor<3xui64>) -> tensor<3xui32>
    return %0, %1 : tensor<3xui32>, tensor<3xui32>
  }
}"""
  assert "ui64" in module_rewrite.rewrite(text.replace("%s", str(2**31)), "litert")
  narrowed = module_rewrite.rewrite(text.replace("%s", "9"), "litert")
  assert "ui64" not in narrowed and "stablehlo.constant dense<0> : tensor<3xui32>" in narrowed


# --- Gathers and dynamic slices of polymorphic arrays ------------------------


def _check_polymorphic(fun, spec, sized_args, fixed_args=()):
  """`fun` converted with the polymorphic `spec` for its first argument runs
  like jax.jit at each of `sized_args`' sizes."""
  first = sized_args[0]
  model = jax2tf.to_tflite(
    fun,
    first,
    *fixed_args,
    polymorphic_shapes=[spec] + [None] * len(fixed_args),
    route="litert",
    verify=False,
  )
  for x in sized_args:
    want = jax.tree_util.tree_leaves(jax.jit(fun)(x, *fixed_args))
    got = lite.run(model, x, *fixed_args)
    for w, g in zip(want, got):
      compare.assert_same(np.asarray(w), g, tol=(1e-6, 1e-6))
  return model


def _rows_of(h, index):
  # Rows of a polymorphic number of rows: clamped, filled with NaN, negative.
  return (
    h[index],
    jnp.take(h, index, axis=0, mode="clip"),
    jnp.take(h, index, axis=0, mode="fill"),
  )


def test_rows_of_a_polymorphic_array_are_jaxs_in_and_out_of_bounds():
  index = np.array([0, 2, -1, 9, -7, 1], np.int32)
  sized = [_rng(5).normal(size=(n, 3)).astype(np.float32) for n in (3, 6)]
  _check_polymorphic(_rows_of, "(n, 3)", sized, (index,))


def _dynamic_slices(x, i):
  return lax.dynamic_slice(x, (i, 1), (1, 2)), lax.dynamic_index_in_dim(x, i, axis=0)


@pytest.mark.parametrize("i", [0, 2, -3, 40])
def test_dynamic_slices_of_a_polymorphic_array_clamp_as_jax(i):
  sized = [_rng(6).normal(size=(n, 3)).astype(np.float32) for n in (3, 7)]
  _check_polymorphic(_dynamic_slices, "(n, 3)", sized, (np.int32(i),))


def _columns_and_prefixes(x):
  return x[:, 0], x[:, 1:3], x[:, :-1], x[..., -1]


@pytest.mark.parametrize("spec", ["(b, 4)", "(2, s)"])
def test_static_and_polymorphic_slices_along_polymorphic_arrays_are_jaxs(spec):
  rng = _rng(7)
  if spec == "(b, 4)":
    sized = [rng.normal(size=(n, 4)).astype(np.float32) for n in (1, 5)]
  else:
    sized = [rng.normal(size=(2, n)).astype(np.float32) for n in (3, 8)]
  model = _check_polymorphic(_columns_and_prefixes, spec, sized)
  assert not {op for op in lite_inspect.op_counts(model) if op.startswith("STABLEHLO_DYNAMIC")}


def _strided_same_convolution(x, w):
  # "SAME" padding with a stride of 2 depends on the image's size.
  return lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def test_same_convolution_of_polymorphic_images_is_jaxs_at_odd_and_even_sizes():
  rng = _rng(8)
  w = rng.normal(size=(3, 3, 2, 4)).astype(np.float32)
  sized = [rng.normal(size=(1, n, n + 1, 2)).astype(np.float32) for n in (5, 8)]
  model = _check_polymorphic(_strided_same_convolution, "(1, h, w, 2)", sized, (w,))
  assert lite_inspect.op_counts(model)["CONV_2D"] == 1


# --- uint64 in uint32 words: threefry's counters at polymorphic shapes -------


class _NumpyWords:
  """uint32 numpy arrays for the formulas of jax2tf/targets/uint32_words.py."""

  @staticmethod
  def add(x, y):
    return (x + np.uint32(y)) if isinstance(y, int) else x + y

  @staticmethod
  def mul(x, y):
    return (x * np.uint32(y)) if isinstance(y, int) else x * y

  @staticmethod
  def xor(x, y):
    return x ^ (np.uint32(y) if isinstance(y, int) else y)

  @staticmethod
  def shr(x, n):
    return x >> np.uint32(n)


def test_uint32_word_formulas_compute_64_bit_unsigned_arithmetic():
  rng = _rng(9)
  edges = np.array([0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**16, 2**16 - 1], np.uint64)
  a = np.concatenate([edges, rng.integers(0, 2**32, 200, dtype=np.uint64)])
  b = np.concatenate([edges[::-1], rng.integers(0, 2**32, 200, dtype=np.uint64)])
  ops, mask = _NumpyWords(), np.uint64(2**32 - 1)

  def words(v):
    return (v >> np.uint64(32)).astype(np.uint32), (v & mask).astype(np.uint32)

  def joined(w):
    return (w[0].astype(np.uint64) << np.uint64(32)) | w[1].astype(np.uint64)

  x, y = a * np.uint64(2**32 - 5) + b, b * np.uint64(977) + a  # wrapping uint64
  with np.errstate(over="ignore"):
    hi = uint32_words.multiply_high(ops, a.astype(np.uint32), b.astype(np.uint32))
    np.testing.assert_array_equal(hi, ((a * b) >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(joined(uint32_words.add(ops, words(x), words(y))), x + y)
    np.testing.assert_array_equal(joined(uint32_words.multiply(ops, words(x), words(y))), x * y)
    zeros = np.zeros_like(a, np.uint32)
    for n in (0, 1, 13, 31, 32, 33, 63, 64):
      shifted = uint32_words.shift_right(ops, words(x), n, zeros)
      want = x >> np.uint64(n) if n < 64 else np.zeros_like(x)
      np.testing.assert_array_equal(joined(shifted), want)


def test_threefry_of_a_polymorphic_batch_is_jaxs_at_two_sizes():
  key_data = np.asarray(jax.random.key_data(jax.random.key(3, impl="threefry2x32")))
  sized = [_rng(10).normal(size=(n, 6)).astype(np.float32) for n in (1, 4)]

  def threefry(x, key_data):
    return _threefry(key_data, x)

  def bits_and_normals(x, key_data):
    key = jax.random.wrap_key_data(key_data, impl="threefry2x32")
    return jax.random.bits(key, x.shape, jnp.uint32), threefry(x, key_data)[1]

  model = jax2tf.to_tflite(
    bits_and_normals, sized[0], key_data, polymorphic_shapes=["(b, 6)", None],
    route="litert", verify=False,
  )  # fmt: skip
  for x in sized:
    want = [np.asarray(w) for w in jax.jit(bits_and_normals)(x, key_data)]
    got = lite.run(model, x, key_data)
    compare.assert_same(want[0], got[0], exact=True)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)


def test_uint64_counters_past_2_to_the_32_are_exact_in_words():
  # A polymorphic iota times a factor past 2**32, plus a constant, split in
  # halves: carries and high products that the counters of JAX's models
  # never reach.
  factor, offset = 2**32 + 2**31 + 12345, 2**32 - 7
  text = f"""module {{
  func.func public @main(%arg0: tensor<?xf32>) -> (tensor<?xui32>, tensor<?xui32>) {{
    %n = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %shape = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
    %i = stablehlo.dynamic_iota %shape, dim = 0 : (tensor<1xi32>) -> tensor<?xui64>
    %f = stablehlo.constant dense<{factor}> : tensor<ui64>
    %o = stablehlo.constant dense<{offset}> : tensor<ui64>
    %32 = stablehlo.constant dense<32> : tensor<ui64>
    %fb = stablehlo.dynamic_broadcast_in_dim %f, %shape, dims = [] : (tensor<ui64>, tensor<1xi32>) -> tensor<?xui64>
    %ob = stablehlo.dynamic_broadcast_in_dim %o, %shape, dims = [] : (tensor<ui64>, tensor<1xi32>) -> tensor<?xui64>
    %sb = stablehlo.dynamic_broadcast_in_dim %32, %shape, dims = [] : (tensor<ui64>, tensor<1xi32>) -> tensor<?xui64>
    %p = stablehlo.multiply %i, %fb : tensor<?xui64>
    %c = stablehlo.add %p, %ob : tensor<?xui64>
    %h = stablehlo.shift_right_logical %c, %sb : tensor<?xui64>
    %hi = stablehlo.convert %h : (tensor<?xui64>) -> tensor<?xui32>
    %lo = stablehlo.convert %c : (tensor<?xui64>) -> tensor<?xui32>
    return %hi, %lo : tensor<?xui32>, tensor<?xui32>
  }}
}}"""
  rewritten = module_rewrite.rewrite(text, "litert")
  assert "ui64" not in rewritten
  model = litert_converter.convert(
    rewritten, input_names=["x"], output_names=["output_0", "output_1"]
  )
  for n in (3, 9):
    hi, lo = runtime.run(model, np.zeros(n, np.float32), input_names=["x"])
    counts = np.arange(n, dtype=np.uint64) * np.uint64(factor) + np.uint64(offset)
    np.testing.assert_array_equal(hi, (counts >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(lo, (counts & np.uint64(2**32 - 1)).astype(np.uint32))


def test_int64_remainder_is_xlas_truncated_one():
  # LiteRT has no int64 DIV; the remainder comes from its FLOOR_MOD, moved
  # by the divisor where the signs differ, the dividend for a zero divisor.
  big = np.iinfo(np.int64).min
  x = np.array([-7, 7, -7, 7, big, big, 5, 0, 13, -13, 2**40 + 3], np.int64)
  y = np.array([2, -2, -2, 2, -1, 3, 0, 3, -5, 5, -(2**33)], np.int64)
  with jax.enable_x64(True):
    model, got, want = _litert(lax.rem, x, y)
  assert "FLOOR_MOD" in lite_inspect.op_counts(model)
  compare.assert_same(want, got, exact=True)


@pytest.mark.parametrize("n", [3, 4000])
def test_stateful_uniform_draws_fill_jaxs_range(n):
  # XLA's RngUniform promises no bits, only values in [minval, maxval):
  # LiteRT's unseeded RANDOM_UNIFORM, scaled to the range. (JAX lowers it
  # only at static shapes.)
  def draws(x):
    return lax.rng_uniform(-1.0, 2.0, x.shape) + x * 0

  x = np.zeros((n,), np.float32)
  model = jax2tf.to_tflite(draws, x, route="litert", verify=False)
  assert "RANDOM_UNIFORM" in lite_inspect.op_counts(model)
  (got,) = lite.run(model, x)
  (want,) = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(draws)(x))]
  assert got.shape == want.shape and got.dtype == want.dtype
  assert np.all(got >= -1.0) and np.all(got < 2.0), got
  if n > 1000:  # the range filled, not one corner of it
    assert got.min() < -0.9 and got.max() > 1.9 and abs(got.mean() - 0.5) < 0.1


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64, np.complex128])
def test_iotas_of_64_bit_elements_are_jaxs(dtype):
  # LiteRT has no 64-bit (nor complex128) RANGE or BROADCAST_TO: a static
  # iota of them is a constant. (LiteRT computes little else on them.)
  def positions(x):
    return x, lax.broadcasted_iota(dtype, (3, 4), 1)

  x = np.ones((2,), np.float32)
  with jax.enable_x64(True):
    _, got, want = _litert(positions, x)
  compare.assert_same(want, got, exact=True)
