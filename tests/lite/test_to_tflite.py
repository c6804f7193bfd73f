"""jax2tf.to_tflite: routes, signatures, dynamic shapes, refusals, files, quantization."""

import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jax2tf
from jax2tf import lite
from jax2tf.lite import inspect as lite_inspect
from tests.lite.litert_plan import operators_left_unsized
from tests.support import compare


def mlp(params, images, scale):
  h = jax.nn.relu(images @ params["w1"] + params["b1"])
  return (h @ params["w2"] + params["b2"]) * scale


def _params(seed=0):
  rng = np.random.default_rng(seed)
  return {
    "w1": rng.normal(size=(6, 16)).astype(np.float32) / 3,
    "b1": rng.normal(size=(16,)).astype(np.float32),
    "w2": rng.normal(size=(16, 3)).astype(np.float32) / 4,
    "b2": rng.normal(size=(3,)).astype(np.float32),
  }


def _inputs(batch, seed=1):
  rng = np.random.default_rng(seed)
  return rng.normal(size=(batch, 6)).astype(np.float32), np.float32(1.5)


@pytest.fixture(scope="module")
def mlp_model():
  params = _params()
  return params, jax2tf.to_tflite(
    mlp, *_inputs(4), params=params, polymorphic_shapes=["(b, 6)", None]
  )


def test_graph_route_keeps_names_and_matches_jax_at_two_batch_sizes(mlp_model):
  params, model = mlp_model
  assert isinstance(model, bytes) and model.route == "graph"
  assert model.input_names == ("images", "scale")
  assert model.max_error is not None and model.max_error < 1e-4
  for batch in (1, 9):
    images, scale = _inputs(batch, seed=batch)
    (got,) = lite.run(model, images, scale)
    want = np.asarray(jax.jit(mlp)(params, images, scale))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # By name too, as an app would call the signature.
    (by_name,) = lite.run(bytes(model), images=images, scale=scale)
    np.testing.assert_array_equal(by_name, got)


def test_positional_inputs_of_plain_bytes_need_names(mlp_model):
  _, model = mlp_model
  with pytest.raises(TypeError, match="pass them by name"):
    lite.run(bytes(model), *_inputs(2))


def test_pytree_results_are_flattened_in_jax_order():
  def f(x):
    return {"b": x * 2, "a": (jnp.sum(x), x - 1)}

  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  model = jax2tf.to_tflite(f, x)
  want = jax.tree_util.tree_leaves(jax.jit(f)(x))
  got = lite.run(model, x)
  assert len(got) == len(want)
  for g, w in zip(got, want):
    np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("polymorphic", [False, True])
def test_outputs_with_no_elements_come_back_with_their_shapes(polymorphic):
  # LiteRT's Python wrapper refuses to read a tensor of 0 bytes; the model
  # itself computes it (its shape) as JAX does.
  def f(x):
    return jnp.broadcast_to(jnp.sum(x), (0, 3)), x[:, :0] * 2, x + 1

  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  model = jax2tf.to_tflite(f, x, polymorphic_shapes=["b, 3"] if polymorphic else None)
  for xs in (x, np.ones((5, 3), np.float32)) if polymorphic else (x,):
    got = lite.run(model, xs)
    want = jax.tree_util.tree_leaves(jax.jit(f)(xs))
    assert [g.shape for g in got] == [w.shape for w in want]
    np.testing.assert_array_equal(got[2], want[2])


def test_reversing_an_array_with_no_elements_leaves_it_alone():
  # LiteRT's REVERSE_V2 crashed the process on a [b, 3, 0] tensor reversed
  # along b; an array with no elements is its own reverse. A strided slice
  # (fuzz p30416) leaves TF no static 0 to see.
  def f(x):
    strided = lax.slice_in_dim(x, 0, 0, 2, 2)
    return lax.rev(x[..., :0], (0,)), lax.rev(x, (0, 2)), lax.rev(strided, (0, 2))

  x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
  model = jax2tf.to_tflite(f, x, polymorphic_shapes=["b, 3, 2"])
  got = lite.run(model, x)
  want = jax.jit(f)(x)
  assert got[0].shape == want[0].shape == (2, 3, 0)
  assert got[2].shape == want[2].shape == (2, 3, 0)
  np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize(
  "f",
  [
    *(lambda x, axes=axes: lax.rev(x, axes) * 2 for axes in [(0,), (1,), (0, 1), (0, 2), (1, 2)]),
    lambda x: lax.cumsum(x, axis=0, reverse=True),
  ],
  ids=["rev0", "rev1", "rev01", "rev02", "rev12", "reverse_cumsum"],
)
def test_reversing_before_an_axis_empty_only_at_run_time(f):
  # LiteRT's REVERSE_V2 ends the process where the axes after the first
  # reversed one hold no elements (a [2, 0] reversed along 0); a symbolic
  # dimension can be that 0 only at run time, with no sign of it at conversion.
  model = jax2tf.to_tflite(f, np.ones((2, 3, 4), np.float32), polymorphic_shapes=["a, b, c"])
  for shape in [(2, 3, 4), (3, 0, 2), (2, 3, 0), (0, 2, 3), (1, 1, 5)]:
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 4
    np.testing.assert_array_equal(lite.run(model, x)[0], jax.jit(f)(x), err_msg=str(shape))


def test_path_is_written_atomically(tmp_path):
  path = tmp_path / "model.tflite"
  model = jax2tf.to_tflite(lambda x: jnp.sin(x) * 2, np.ones((3,), np.float32), path=path)
  assert path.read_bytes() == bytes(model)
  # A refused conversion leaves the previous file as it was, and no temporary.
  with pytest.raises(lite.TFLiteConversionError):
    jax2tf.to_tflite(lambda x: lax.igamma(x, x), np.ones((3,), np.float32), route="graph",
                     path=path)
  assert path.read_bytes() == bytes(model)
  assert os.listdir(tmp_path) == ["model.tflite"]


def test_refusal_names_primitive_tf_op_line_and_remedies():
  def f(a, x):
    return lax.igamma(a, x)  # the line the error must point at

  ones = np.ones((3,), np.float32)
  with pytest.raises(lite.TFLiteConversionError) as info:
    jax2tf.to_tflite(f, ones, ones, route="graph")
  message = str(info.value)
  assert "TF op Igamma on float32, emitted for the JAX primitive igamma" in message, message
  assert "test_to_tflite.py:" in message, message
  assert "allow_flex=True" in message and "route='native'" in message, message


def test_refusal_of_an_op_dtype_names_the_primitive():
  # TFLite's SLICE has no int16 kernel: the converter names only its own op,
  # whose location leads back to the primitive. (A max window over padding
  # stays int16: in int32 lanes its padding would be int32's lowest.)
  def f(x):
    # the line the error must point at
    return lax.reduce_window(x, np.int16(-32768), lax.max, (1, 3), (1, 1), ((0, 0), (3, 0)))

  with pytest.raises(lite.TFLiteConversionError) as info:
    jax2tf.to_tflite(f, np.zeros((1, 4), np.int16), route="graph")
  message = str(info.value)
  assert "JAX primitive reduce_window_max (at test_to_tflite.py:" in message, message
  assert "i16" in message and "route='native'" in message, message


def test_refusal_without_a_location_names_the_primitive_of_the_illegal_op():
  # An empty complex concatenation read by a cond: the converter fails to
  # legalize its 'tfl.concatenation' and locates nothing; the TF op that op
  # was made of leads back to the primitive.
  def f(pred, x, y):
    joined = lax.concatenate([x, y], 0)  # the line the error must point at
    return lax.cond(pred, lax.neg, lax.neg, joined)

  empty = np.zeros((0, 1, 1), np.complex64)
  with pytest.raises(lite.TFLiteConversionError) as info:
    jax2tf.to_tflite(f, np.array(False), empty, empty, route="graph")
  message = str(info.value)
  assert "'tfl.concatenation'" in message, message
  assert "JAX primitive concatenate (at test_to_tflite.py:" in message, message


def test_16_bit_floats_compute_in_float32_and_round_where_jax_does():
  # TFLite has no float16 arithmetic: each primitive computes on float32
  # copies and rounds its result, so the product overflows to inf and
  # underflows to 0 before the division, as in JAX; -2 * 0 is -0.0.
  def f(x, y):
    return (x * y) / y, jnp.sin(x) * y, jnp.isnan(x * y)

  x = np.array([300, 1e-4, 3, -2, np.inf, 65504], np.float16)
  y = np.array([300, 1e-4, 1 / 3, 0, 0, 2], np.float16)
  model = jax2tf.to_tflite(f, x, y, route="graph")
  compare.assert_same(jax.jit(f)(x, y), lite.run(model, x, y))
  assert jax.jit(f)(x, y)[0][0] == np.inf  # the rounding this checks
  ops = lite_inspect.op_counts(model)
  assert ops["CAST"] >= 2 and lite_inspect.flex_ops(model) == [], ops


def test_float16_gathers_and_broadcasts_convert_with_builtin_ops():
  # TF's converter would move the widening cast below GATHER and BROADCAST_TO,
  # which have no float16 kernels.
  def embed(table, ids, bias):
    return table[ids] + jnp.broadcast_to(bias, (ids.shape[0], table.shape[1]))

  table = np.arange(12, dtype=np.float16).reshape(4, 3) / 7
  ids, bias = np.array([3, 0, 3], np.int32), np.array([0.5, -0.0, np.inf], np.float16)
  model = jax2tf.to_tflite(embed, table, ids, bias, route="graph")
  compare.assert_same(jax.jit(embed)(table, ids, bias), lite.run(model, table, ids, bias))
  assert lite_inspect.flex_ops(model) == []


def test_bfloat16_inside_a_float32_function_runs_on_litert():
  def f(x):
    return jnp.exp(x.astype(jnp.bfloat16)).astype(jnp.float32)

  # LiteRT rounds exp's result to bfloat16; XLA on CPU may keep it in float32
  # (excess precision), so the float32 outputs differ by up to bfloat16's ulp.
  x = np.linspace(-3, 3, 7, dtype=np.float32)
  model = jax2tf.to_tflite(f, x, route="graph", tolerance=(2**-7, 1e-6))
  compare.assert_same(jax.jit(f)(x), lite.run(model, x), tol=(2**-7, 1e-6))


@pytest.mark.parametrize("route", ["graph", "native"])
def test_what_crashes_the_converter_is_refused_before_it_runs(route):
  # TF's converter ends the process (SIGSEGV) on the real part of a broadcast
  # complex value; the real part of the value, broadcast after, converts.
  def f(x):
    return lax.real(lax.broadcast_in_dim(x, (4, 2), (0,)))  # the line named

  x = np.array([1.5 - 2j], np.complex64)
  with pytest.raises(lite.TFLiteConversionError) as info:
    jax2tf.to_tflite(f, x, route=route)
  message = str(info.value)
  assert "crashes the process" in message and "JAX primitive real (at test_to_tflite.py:" in message
  model = jax2tf.to_tflite(lambda x: lax.broadcast_in_dim(lax.real(x), (4, 2), (0,)), x, route="graph")
  np.testing.assert_array_equal(lite.run(model, x)[0], np.full((4, 2), 1.5, np.float32))


@pytest.mark.parametrize(
  "f, shapes",
  [
    (jnp.matmul, ((2, 0), (0, 3))),  # TF's converter: SIGFPE
    (jnp.matmul, ((4, 2, 0), (4, 0, 3))),  # LiteRT: fails to prepare
    (lambda x: jax.lax.rev(x, (0,)), ((3, 0),)),  # LiteRT: SIGSEGV
  ],
)
@pytest.mark.parametrize("route", ["native", "litert"])
def test_what_would_end_the_process_on_the_module_routes_is_computed_without_it(f, shapes, route):
  # Zeros for a sum of no products, the operand for a reverse of nothing.
  args = [np.ones(s, np.float32) for s in shapes]
  model = jax2tf.to_tflite(f, *args, route=route)
  assert lite_inspect.op_counts(model).keys().isdisjoint({"BATCH_MATMUL", "REVERSE_V2"})
  np.testing.assert_array_equal(lite.run(model, *args)[0], jax.jit(f)(*args))


def test_an_unread_product_over_an_empty_axis_converts_on_the_native_route():
  # A gradient's forward product, which nothing reads, is no refusal.
  f = jax.grad(lambda a, b: jnp.sum(a @ b), argnums=(0, 1))
  a, b = np.ones((0,), np.float32), np.ones((0, 3), np.float32)
  model = jax2tf.to_tflite(f, a, b, route="native")
  for got, want in zip(lite.run(model, a, b), f(a, b)):
    assert got.shape == want.shape


def test_a_complex_ones_like_read_by_abs_is_refused_before_it_runs():
  # Shape-polymorphic, x ** 0 is a complex OnesLike at run time: TF's
  # converter crashes on it as on a broadcast.
  def f(x):
    return lax.abs(lax.integer_pow(x, 0))

  x = np.array([1.5 - 2j, 0.5j], np.complex64)
  with pytest.raises(lite.TFLiteConversionError, match="crashes the process.*OnesLike"):
    jax2tf.to_tflite(f, x, route="graph", polymorphic_shapes=["b"])


def test_auto_route_falls_back_to_native_and_says_so():
  # TF's Igamma has no TFLite kernel; JAX's own decomposition of igamma in
  # the StableHLO module legalizes to builtins.
  a, x = np.full((3,), 2.0, np.float32), np.array([0.5, 1.0, 3.0], np.float32)
  model = jax2tf.to_tflite(lax.igamma, a, x)
  assert model.route == "native"
  (got,) = lite.run(model, a, x)
  np.testing.assert_allclose(got, jax.jit(lax.igamma)(a, x), rtol=1e-5)


def test_auto_route_reports_every_route_when_none_works():
  x = np.eye(3, dtype=np.float32)
  with pytest.raises(lite.TFLiteConversionError) as info:
    jax2tf.to_tflite(lambda x: jnp.linalg.eigh(x)[0], x)
  assert "[graph]" in str(info.value) and "[native]" in str(info.value)


def test_native_route_warns_where_litert_drops_nan():
  x = np.array([np.nan, 1.0], np.float32)
  y = np.array([1.0, np.nan], np.float32)
  f = lambda a, b: jnp.maximum(a, b)  # noqa: E731
  with pytest.warns(UserWarning, match=r"MAXIMUM/MINIMUM kernels, which run max \(at test_to_tfl"):
    model = jax2tf.to_tflite(f, x, y, route="native", verify=False)
  # What the warning is about: JAX's max is NaN at both positions, LiteRT's
  # only where its kernel happens to return the NaN operand.
  (got,) = lite.run(model, x, y)
  assert np.isnan(jax.jit(f)(x, y)).all() and not np.isnan(got).all(), got
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    jax2tf.to_tflite(f, x, y, route="graph")
    # Integers have neither NaN nor signed zeros: nothing to warn about.
    jax2tf.to_tflite(f, np.arange(2, dtype=np.int32), np.ones(2, np.int32), route="native")


def test_allow_flex_warns_that_the_app_needs_the_flex_delegate():
  with pytest.warns(UserWarning, match="Flex delegate"):
    jax2tf.to_tflite(lambda x: x + 1, np.ones((2,), np.float32), allow_flex=True)


def test_builtin_only_by_default_emits_no_warning():
  with warnings.catch_warnings():
    warnings.simplefilter("error", UserWarning)
    jax2tf.to_tflite(lambda x: x + 1, np.ones((2,), np.float32))


@pytest.mark.parametrize(
  "kwargs, match",
  [
    ({"route": "xla"}, "route: expected 'auto', 'graph', 'native' or 'litert', got 'xla'"),
    ({"quantize": "int4"}, "quantize: expected one of"),
    ({"quantize": "int8"}, "quantize='int8' needs representative_dataset"),
    ({"representative_dataset": lambda: []}, "only used with quantize='int8'"),
    ({"polymorphic_shapes": ["(b,)", "(b,)"]}, "polymorphic_shapes: expected one entry per"),
    ({"tolerance": (1e-3,)}, r"tolerance: expected \(rtol, atol\)"),
  ],
)
def test_bad_arguments_are_named(kwargs, match):
  with pytest.raises(ValueError, match=match):
    jax2tf.to_tflite(lambda x: x + 1, np.ones((2,), np.float32), **kwargs)


def test_input_spec_of_wrong_type_is_named():
  with pytest.raises(TypeError, match=r"input_specs\[1\]: expected an array or a "
                     "jax.ShapeDtypeStruct, got dict"):
    jax2tf.to_tflite(lambda x, y: x, np.ones((2,), np.float32), {"a": 1})


def test_shape_dtype_struct_specs_verify_on_random_inputs():
  spec = jax.ShapeDtypeStruct((2, 5), np.float32)
  model = jax2tf.to_tflite(lambda x: jnp.tanh(x) @ jnp.ones((5, 2), np.float32), spec)
  assert model.max_error is not None


def test_parameters_beyond_one_flatbuffer_fail_before_any_work():
  # A broadcast view reports 2 GiB without holding it.
  huge = {"w": np.broadcast_to(np.float32(0), (2**29 + 1,))}
  with pytest.raises(ValueError, match=r"params: 2.00 GiB .* at most 2 GiB"):
    jax2tf.to_tflite(lambda p, x: x + p["w"][0], np.ones((2,), np.float32), params=huge)


@pytest.mark.parametrize("quantize, shrink", [("float16", 0.6), ("dynamic_int8", 0.4)])
def test_weight_quantization_shrinks_and_stays_close(quantize, shrink):
  rng = np.random.default_rng(0)
  params = {"w": rng.normal(size=(256, 256)).astype(np.float32) / 16}
  x = rng.normal(size=(4, 256)).astype(np.float32)
  f = lambda p, x: jnp.tanh(x @ p["w"])  # noqa: E731
  full = jax2tf.to_tflite(f, x, params=params)
  small = jax2tf.to_tflite(f, x, params=params, quantize=quantize)
  assert small.quantize == quantize and small.max_error is None
  assert len(small) < shrink * len(full), (len(small), len(full))
  (got,) = lite.run(small, x)
  want = np.asarray(jax.jit(f)(params, x))
  assert np.max(np.abs(got - want)) < 0.05


def test_full_int8_calibrates_on_the_representative_dataset():
  params = _params()
  samples = [_inputs(1, seed=s) for s in range(20)]
  model = jax2tf.to_tflite(mlp, *_inputs(1), params=params, quantize="int8",
                           representative_dataset=lambda: samples)
  images, scale = _inputs(1, seed=99)
  (got,) = lite.run(model, images, scale)
  want = np.asarray(jax.jit(mlp)(params, images, scale))
  assert got.dtype == np.float32
  # int8 activations: within a few quantization steps of the output range.
  assert np.max(np.abs(got - want)) < 0.1 * max(1.0, np.max(np.abs(want))), (got, want)



def test_dense_layers_fuse_into_fully_connected(mlp_model):
  _, model = mlp_model
  ops = lite_inspect.op_counts(model)
  # MatMul + bias + Relu per layer: one FULLY_CONNECTED each, the Relu fused
  # (an ABS after it gives relu(-0.0) XLA's +0.0).
  assert ops["FULLY_CONNECTED"] == 2, ops
  assert not {"ADD", "RELU", "BATCH_MATMUL"} & set(ops), ops  # MUL: the `* scale`
  assert lite_inspect.flex_ops(model) == []


def test_same_conv_and_average_pool_are_single_ops():
  rng = np.random.default_rng(0)
  w = rng.normal(size=(3, 3, 2, 4)).astype(np.float32)

  def f(x):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    s = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return s / 4.0  # Flax's avg_pool

  x = rng.normal(size=(1, 8, 8, 2)).astype(np.float32)
  ops = lite_inspect.op_counts(jax2tf.to_tflite(f, x))
  assert ops == {"CONV_2D": 1, "AVERAGE_POOL_2D": 1}, ops


def test_a_polymorphic_batch_leaves_no_tensor_unsized():
  # An attention mask's broadcasts, a mean kept as (b, 3, 1), a reshape that
  # merges the batch: each would take a computed shape if lowered literally.
  def f(x, keep):
    y = jnp.where(keep[:, None, :], x, -1e9)
    y = y - jnp.mean(y, axis=-1, keepdims=True)
    return jnp.tanh(y.reshape(-1, 5))

  rng = np.random.default_rng(0)

  def inputs(batch):
    return rng.normal(size=(batch, 3, 5)).astype(np.float32), rng.random((batch, 5)) > 0.3

  model = jax2tf.to_tflite(f, *inputs(2), polymorphic_shapes=["(b, 3, 5)", "(b, 5)"])
  assert operators_left_unsized(model, 7) == []
  for batch in (1, 7):
    x, keep = inputs(batch)
    (got,) = lite.run(model, x, keep)
    np.testing.assert_allclose(got, np.asarray(jax.jit(f)(x, keep)), rtol=1e-5, atol=1e-6)


def _edges_u32(seed):
  edge = np.array([0, 1, 2, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFF0000],
                  np.uint32)
  rest = np.random.default_rng(seed).integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
  return np.concatenate([edge, rest])


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.uint8, np.int16])
def test_mulhi_runs_on_litert_without_64_bit_products(dtype):
  # LiteRT has no uint64 MUL nor 64-bit FLOOR_DIV: the high half comes from
  # 16-bit halves in uint32.
  x, y = _edges_u32(0), _edges_u32(1)[::-1].copy()
  if dtype == np.int32:
    x, y = x.view(np.int32), y.view(np.int32)
  else:
    x, y = x.astype(dtype), y.astype(dtype)
  model = jax2tf.to_tflite(lax.mulhi, x, y, route="graph")
  np.testing.assert_array_equal(lite.run(model, x, y)[0], np.asarray(jax.jit(lax.mulhi)(x, y)))


def test_philox_keys_run_on_litert():
  def sample(seed):
    key = jax.random.key(seed, impl="philox4x32")
    return jax.random.bits(jax.random.split(key)[1], (7,))

  model = jax2tf.to_tflite(sample, np.uint32(7), route="graph")
  for seed in (np.uint32(0), np.uint32(0xFFFFFFFF)):
    np.testing.assert_array_equal(lite.run(model, seed)[0], np.asarray(jax.jit(sample)(seed)))


def test_verification_compares_both_parts_of_complex_outputs():
  from jax2tf.lite import api as lite_api  # pylint: disable=import-outside-toplevel

  want = np.array([1 + 2j, -3 + 0j], np.complex64)
  assert lite_api._max_error([want], [want.copy()], (1e-6, 1e-6), "litert") == 0.0
  wrong_imaginary = np.array([1 - 2j, -3 + 0j], np.complex64)
  with pytest.raises(lite.VerificationError, match="output 0 differs from JAX by up to 4"):
    lite_api._max_error([want], [wrong_imaginary], (1e-6, 1e-6), "litert")
  nan_imaginary = np.array([1 + 2j, complex(-3, np.nan)], np.complex64)
  with pytest.raises(lite.VerificationError, match="NaN or infinities differ"):
    lite_api._max_error([want], [nan_imaginary], (1e-6, 1e-6), "litert")
