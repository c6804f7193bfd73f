"""to_tflite(route="litert"): JAX's StableHLO through the standalone litert-converter."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from jax2tf.lite import api as lite_api  # noqa: E402
from jax2tf.lite import inspect as lite_inspect  # noqa: E402
from jax2tf.lite import litert_converter  # noqa: E402
from tests.support import compare  # noqa: E402


def _rng(seed):
  return np.random.default_rng(seed)


def mlp(params, images, scale):
  h = jax.nn.relu(images @ params["w1"] + params["b1"])
  return (h @ params["w2"] + params["b2"]) * scale


def _mlp_params():
  rng = _rng(0)
  return {
    "w1": rng.normal(size=(6, 16)).astype(np.float32) / 3,
    "b1": rng.normal(size=(16,)).astype(np.float32),
    "w2": rng.normal(size=(16, 3)).astype(np.float32) / 4,
    "b2": rng.normal(size=(3,)).astype(np.float32),
  }


def _mlp_model(route):
  images = _rng(1).normal(size=(4, 6)).astype(np.float32)
  return jax2tf.to_tflite(
    mlp,
    images,
    np.float32(1.5),
    params=_mlp_params(),
    polymorphic_shapes=["(b, 6)", None],
    route=route,
  )


def test_mlp_keeps_the_other_routes_names_and_matches_jax_at_two_batch_sizes():
  params = _mlp_params()
  model = _mlp_model("litert")
  assert isinstance(model, bytes) and model.route == "litert"
  assert model.input_names == ("images", "scale")
  assert model.max_error is not None and model.max_error < 1e-4
  assert _signature_facts(model)["serving_default"]["inputs"][0] == ("images", "float32", [-1, 6])
  for batch in (1, 9):
    x = _rng(batch).normal(size=(batch, 6)).astype(np.float32)
    (got,) = lite.run(model, x, np.float32(-2.0))
    want = np.asarray(jax.jit(mlp)(params, x, np.float32(-2.0)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    (by_name,) = lite.run(bytes(model), images=x, scale=np.float32(-2.0))
    np.testing.assert_array_equal(by_name, got)


def test_mlp_signature_is_the_native_routes():
  # The native route needs TensorFlow, which `make test-litert` runs without.
  pytest.importorskip("tensorflow", reason="the native route needs TensorFlow")
  # Its signature: key, inputs' and outputs' names, dtypes and shape
  # signatures (-1 for the batch).
  with pytest.warns(UserWarning, match="MAXIMUM/MINIMUM"):
    native = _mlp_model("native")
  assert _signature_facts(_mlp_model("litert")) == _signature_facts(native)


def _signature_facts(model):
  return {
    key: {
      side: sorted((t["name"], t["dtype"], list(t["shape_signature"])) for t in tensors)
      for side, tensors in entry.items()
    }
    for key, entry in lite_inspect.signatures(model).items()
  }


def _cnn_params():
  rng = _rng(2)
  return {
    "k1": rng.normal(size=(3, 3, 1, 4)).astype(np.float32) / 3,
    "b1": rng.normal(size=(4,)).astype(np.float32) / 10,
    "k2": rng.normal(size=(3, 3, 4, 8)).astype(np.float32) / 6,
    "w": rng.normal(size=(4 * 4 * 8, 10)).astype(np.float32) / 20,
    "b": rng.normal(size=(10,)).astype(np.float32),
  }


def cnn(params, images):
  dn = ("NHWC", "HWIO", "NHWC")

  def pool(h):
    return lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

  h = lax.conv_general_dilated(images, params["k1"], (1, 1), "SAME", dimension_numbers=dn)
  h = pool(jax.nn.relu(h + params["b1"]))
  h = lax.conv_general_dilated(h, params["k2"], (1, 1), "SAME", dimension_numbers=dn)
  h = pool(jax.nn.relu(h))
  return jax.nn.log_softmax(h.reshape(h.shape[0], -1) @ params["w"] + params["b"])


def test_cnn_with_a_polymorphic_batch_matches_jax_at_two_batch_sizes():
  params = _cnn_params()
  images = _rng(3).normal(size=(2, 16, 16, 1)).astype(np.float32)
  model = jax2tf.to_tflite(
    cnn, images, params=params, polymorphic_shapes=["(b, 16, 16, 1)"], route="litert"
  )
  assert model.input_names == ("images",)
  ops = lite_inspect.op_counts(model)
  assert "CONV_2D" in ops and not lite_inspect.custom_ops(model), ops
  for batch in (1, 5):
    x = _rng(10 + batch).normal(size=(batch, 16, 16, 1)).astype(np.float32)
    (got,) = lite.run(model, x)
    want = np.asarray(jax.jit(cnn)(params, x))
    assert got.shape == want.shape == (batch, 10)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _dynamic_tensors(model, batch):
  """The tensors that LiteRT's own kernels size at each call rather than
  when the tensors are allocated, once the polymorphic inputs are resized
  to `batch`: those whose shapes the call changes."""
  from ai_edge_litert import interpreter  # pylint: disable=import-outside-toplevel

  litert = interpreter.Interpreter(
    model_content=bytes(model),
    experimental_op_resolver_type=interpreter.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
  )
  inputs = litert.get_input_details()
  for detail in inputs:
    signature = list(detail["shape_signature"])
    if -1 in signature:
      litert.resize_tensor_input(detail["index"], [batch if d == -1 else d for d in signature])
  litert.allocate_tensors()
  planned = {t["index"]: list(t["shape"]) for t in litert.get_tensor_details()}
  for detail in litert.get_input_details():
    litert.set_tensor(detail["index"], np.zeros(detail["shape"], detail["dtype"]))
  litert.invoke()
  return [
    (t["name"], planned[t["index"]], list(t["shape"]))
    for t in litert.get_tensor_details()
    # (Kernels may add tensors of their own, temporaries, while they run.)
    if t["index"] in planned and list(t["shape"]) != planned[t["index"]]
  ]


_SHAPE_ARITHMETIC = ("SHAPE", "UNSORTED_SEGMENT_PROD", "BROADCAST_TO", "GATHER", "CONCATENATION")


def test_polymorphic_mlp_and_cnn_size_every_tensor_when_the_batch_is_set():
  # litert-converter writes a polymorphic batch as shape arithmetic, run at
  # every call into RESHAPE and BROADCAST_TO: their results are dynamic
  # tensors, which LiteRT prepares at each call and keeps off XNNPack.
  images = _rng(3).normal(size=(2, 16, 16, 1)).astype(np.float32)
  models = {
    "mlp": _mlp_model("litert"),
    "cnn": jax2tf.to_tflite(
      cnn, images, params=_cnn_params(), polymorphic_shapes=["(b, 16, 16, 1)"], route="litert"
    ),
  }
  for name, model in models.items():
    ops = lite_inspect.op_counts(model)
    assert not set(_SHAPE_ARITHMETIC) & set(ops), (name, ops)
    for batch in (1, 7):
      assert _dynamic_tensors(model, batch) == [], (name, batch)
  # relu(x @ w + b), NaN and all, is one FULLY_CONNECTED with a fused ReLU.
  assert lite_inspect.op_counts(models["mlp"]) == {"FULLY_CONNECTED": 2, "MUL": 1}


def _relus(x):
  w1 = np.array([[1, -2, 0], [2, 1, -1], [0, 3, 1], [-1, 0, 2]], np.float32)
  w2 = np.array([[1, -1], [2, 0], [-1, 1]], np.float32)
  h = jax.nn.relu(x @ w1 + np.array([0.5, 0.0, -1.0], np.float32))
  return jax.nn.relu(h @ w2 + np.array([0.0, 2.0], np.float32)), jax.nn.relu(x), jnp.maximum(0.0, x)


def test_relu_keeps_nan_infinities_and_positive_zero_as_jax():
  # LiteRT's MAXIMUM drops a NaN and keeps -0.0; JAX's relu keeps NaN and
  # gives +0.0 for -0.0. The flatbuffer passes make it RELU (fused where it
  # can be) and, where a reader could tell the zeros apart, ABS.
  x = np.array(
    [
      [1, 2, -3, 4],
      [-0.0, -0.0, -0.0, -0.0],
      [_NAN, 1, 0, 0],
      [np.inf, 0, 1, 0],
      [-np.inf, 0, 0, 1],
      [0, -0.0, 2, -1],
    ],
    np.float32,
  )
  model = jax2tf.to_tflite(_relus, x, polymorphic_shapes=["(b, 4)"], route="litert")
  ops = lite_inspect.op_counts(model)
  assert not {"MAXIMUM", "NOT_EQUAL", "SELECT", "SELECT_V2"} & set(ops), ops
  want = jax.jit(_relus)(x)
  for batch in (6, 3):
    for w, g in zip(want, lite.run(model, x[:batch])):
      compare.assert_same(np.asarray(w)[:batch], g, exact=True)


_NAN = np.nan
_X = np.array([_NAN, 1.0, 2.0, -1.0, 3.0, -2.0, 0.5, _NAN], np.float32)
_Y = np.array([1.0, _NAN, -3.0, 4.0, _NAN, 0.0, 0.25, _NAN], np.float32)


def _nan_max_min(x, y):
  pooled = lax.reduce_window(x.reshape(1, 8, 1), -jnp.inf, lax.max, (1, 2, 1), (1, 2, 1), "VALID")
  return (
    jnp.maximum(x, y),
    jnp.minimum(x, y),
    jax.nn.relu(x),
    jnp.clip(x, -1.5, y),
    jnp.max(x[2:]),
    jnp.min(y.reshape(2, 4), axis=1),
    pooled,
  )


def test_max_and_min_propagate_nan_as_jax_does():
  # LiteRT's MAXIMUM/MINIMUM return the other operand of a NaN; the litert
  # target's module rewrites test NaN beside them, reductions and pools.
  model = jax2tf.to_tflite(_nan_max_min, _X, _Y, route="litert")
  want = jax.jit(_nan_max_min)(_X, _Y)
  for w, g in zip(want, lite.run(model, _X, _Y)):
    compare.assert_same(np.asarray(w), g, exact=True)


def _masked_softmax(scores):
  # Attention's form: a causal mask of the lowest float, then softmax.
  causal = jnp.tril(jnp.ones(scores.shape[-2:], bool))
  return jax.nn.softmax(jnp.where(causal, scores, jnp.finfo(scores.dtype).min))


# Rows holding NaN, +inf, -inf, all -inf, signed zeros (JAX: NaN, NaN, a
# zero, NaN, uniform).
_SOFTMAX_ROWS = np.array(
  [
    [1, 2, 3, 4],
    [_NAN, 1, 2, 3],
    [1, np.inf, 2, 3],
    [1, 2, -np.inf, 3],
    [-np.inf] * 4,
    [0, -0.0, 0, -0.0],
  ],
  np.float32,
)


@pytest.mark.parametrize(
  "fun, op",
  [(jax.nn.softmax, "SOFTMAX"), (jax.nn.log_softmax, "LOG_SOFTMAX"), (jax.nn.gelu, "GELU")],
)
def test_softmax_and_gelu_are_single_ops_with_jax_specials(fun, op):
  # The NaN test of softmax's max reduction goes with the rest of the chain:
  # LiteRT's SOFTMAX and LOG_SOFTMAX make a row holding NaN all NaN.
  model = jax2tf.to_tflite(fun, _SOFTMAX_ROWS, polymorphic_shapes=["(b, 4)"], route="litert")
  assert lite_inspect.op_counts(model) == {op: 1}
  for batch in (6, 2):
    x = _SOFTMAX_ROWS[-batch:]
    compare.assert_same(np.asarray(jax.jit(fun)(x)), lite.run(model, x)[0], tol=(1e-6, 1e-7))


def test_log_softmax_along_another_axis_takes_the_log_formula():
  # LOG_SOFTMAX runs along the last axis only. Along another, the log of the
  # sum is the log formula (two LOGs behind comparisons), not a bare LOG,
  # which on x86 CPUs without AVX-512 gives 88.7 for a NaN column's sum.
  fun = functools.partial(jax.nn.log_softmax, axis=0)
  model = jax2tf.to_tflite(fun, _SOFTMAX_ROWS, route="litert")
  ops = lite_inspect.op_counts(model)
  assert "LOG_SOFTMAX" not in ops and ops["LOG"] == 2 and "LESS" in ops, ops
  compare.assert_same(
    np.asarray(jax.jit(fun)(_SOFTMAX_ROWS)), lite.run(model, _SOFTMAX_ROWS)[0], tol=(1e-6, 1e-7)
  )


def test_masked_softmax_of_attention_is_one_op():
  scores = _rng(3).normal(size=(2, 3, 4, 4)).astype(np.float32)
  scores[1, 2, 3, 1] = _NAN
  model = jax2tf.to_tflite(
    _masked_softmax, scores, polymorphic_shapes=["(b, 3, 4, 4)"], route="litert"
  )
  ops = lite_inspect.op_counts(model)
  assert ops["SOFTMAX"] == 1 and not {"IF", "REDUCE_MAX", "EXP"} & set(ops), ops
  compare.assert_same(
    np.asarray(jax.jit(_masked_softmax)(scores)), lite.run(model, scores)[0], tol=(1e-6, 1e-7)
  )


def test_a_max_reduction_that_is_no_softmax_keeps_its_nan_test():
  def shifted(x):  # x - max(x) alone: only the NaN test makes a row all NaN
    return jnp.exp(x - x.max(axis=-1, keepdims=True))

  model = jax2tf.to_tflite(shifted, _SOFTMAX_ROWS, route="litert")
  assert "IF" in lite_inspect.op_counts(model)
  compare.assert_same(
    np.asarray(jax.jit(shifted)(_SOFTMAX_ROWS)), lite.run(model, _SOFTMAX_ROWS)[0], tol=(1e-6, 1e-7)
  )


def _signed_zero_max_min(x, y):
  return jnp.maximum(x, y), jnp.minimum(x, y)


def test_max_and_min_order_signed_zeros_as_jax_does():
  # LiteRT's MAXIMUM/MINIMUM return the second operand of a tie of -0.0 and
  # +0.0; module_patterns.ORDER_ZEROS_IN_MIN_MAX picks JAX's.
  x = np.array([0.0, -0.0, -0.0, 0.0], np.float32)
  y = np.array([-0.0, 0.0, -0.0, 0.0], np.float32)
  model = jax2tf.to_tflite(_signed_zero_max_min, x, y, route="litert", verify=False)
  want = jax.jit(_signed_zero_max_min)(x, y)
  for w, g in zip(want, lite.run(model, x, y)):
    compare.assert_same(np.asarray(w), g, exact=True)


def _specials(x, i, j):
  inf = jnp.float32(np.inf)
  return (
    jnp.where(x > 0, inf, x),
    x * inf,
    jnp.max(x[:0], initial=-inf),
    jnp.sin(x),
    jnp.exp(x),
    lax.div(i, j),
  )


def test_infinities_sin_exp_and_integer_division_by_zero_as_jax():
  # The converter keeps infinite constants infinite (configured so); SIN of
  # -0.0 and EXP of NaN are fixed after LiteRT's kernels; a zero divisor
  # gets XLA's answer instead of LiteRT's DIV refusing to run.
  x = np.array([_NAN, 1.0, -0.0, 0.0, -2.0, np.inf, -np.inf, 3.0], np.float32)
  i = np.array([7, -7, 3, 0, 5, -9, 2, 1], np.int32)
  j = np.array([2, 2, 0, 0, -3, 4, 0, 1], np.int32)
  model = jax2tf.to_tflite(_specials, x, i, j, route="litert", verify=False)
  want = jax.jit(_specials)(x, i, j)
  got = lite.run(model, x, i, j)
  for k, (w, g) in enumerate(zip(want, got)):
    w = np.asarray(w)
    if k in (3, 4):  # LiteRT's SIN and EXP differ by a few units in the last place
      np.testing.assert_allclose(g, w, rtol=1e-6, atol=0)
      assert np.array_equal(np.signbit(g), np.signbit(w)) and np.array_equal(
        np.isnan(g), np.isnan(w)
      )
    else:
      compare.assert_same(w, g, exact=True)


def _spectrum(x):
  return jnp.abs(jnp.fft.fft(x))


def test_refusal_names_the_op_and_the_jax_primitive():
  x = np.ones((4, 8), np.float32)
  with pytest.raises(litert_converter.LiteRTConversionError) as info:
    jax2tf.to_tflite(_spectrum, x, route="litert")
  message = str(info.value)
  assert "route 'litert'" in message
  assert "JAX primitive fft" in message and "test_litert_route.py" in message, message
  assert "route='graph'" in message
  assert info.value.primitives == ("fft",)
  # One type of refusal for every route.
  assert isinstance(info.value, lite.TFLiteConversionError)


def test_a_custom_call_no_litert_kernel_runs_is_refused_at_conversion():
  # The converter writes XLA's Eigh custom call (eigh, and the SVD made
  # of it) as STABLEHLO_CUSTOM_CALL, which no LiteRT runtime runs: refused
  # here, in JAX's terms, rather than failing when the model is loaded.
  a = np.eye(3, dtype=np.float32)
  with pytest.raises(litert_converter.LiteRTConversionError) as info:
    jax2tf.to_tflite(lambda a: jnp.linalg.eigh(a)[0], a, route="litert", verify=False)
  assert info.value.primitives == ("eigh",), str(info.value)
  message = str(info.value)
  assert "stablehlo.custom_call on float32" in message and "test_litert_route.py" in message


def test_a_refusal_of_a_library_function_names_the_line_that_converts_it():
  # jnp.linalg.pinv passed as it is: the first frame outside JAX is this
  # package's wrapper, not the user's line.
  with pytest.raises(litert_converter.LiteRTConversionError) as info:
    jax2tf.to_tflite(jnp.linalg.pinv, np.eye(3, dtype=np.float32), route="litert")
  assert "test_litert_route.py:" in str(info.value) and "api.py" not in str(info.value)


def test_route_arguments_name_the_litert_route():
  assert lite_api.AUTO_ORDER[-1] == "litert"
  with pytest.raises(ValueError, match="'litert'"):
    jax2tf.to_tflite(jnp.sin, np.ones(3, np.float32), route="tflite_please")
  with pytest.raises(ValueError, match="allow_flex=True: route 'litert'"):
    jax2tf.to_tflite(jnp.sin, np.ones(3, np.float32), route="litert", allow_flex=True)


def test_names_must_fit_the_module():
  text = jax.export.export(jax.jit(jnp.sin))(jax.ShapeDtypeStruct((3,), np.float32)).mlir_module()
  with pytest.raises(ValueError, match="2 inputs named"):
    litert_converter.convert(text, input_names=["x", "y"], output_names=["output_0"])


def test_integer_remainder_is_truncated_as_in_xla():
  # LiteRT's own integer remainder is a floored modulo (-7 rem 2 == 1).
  info = np.iinfo(np.int32)
  x = np.array([-7, 7, -7, 7, 0, -1, 5, info.min, info.min, 3], np.int32)
  y = np.array([2, 2, -2, -2, 3, 4, 0, -1, 1, 0], np.int32)
  model = jax2tf.to_tflite(lax.rem, x, y, route="litert")
  (got,) = lite.run(model, x, y)
  np.testing.assert_array_equal(got, np.asarray(jax.jit(lax.rem)(x, y)))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_negation_keeps_the_signs_of_zeros(dtype):
  # LiteRT's NEG gives +0.0 for -0.0; the route writes -x as x * -1, as the
  # graph route does for the target's missing Neg kernel
  # (jax2tf/native/kernel_forms.py).
  x = np.array([-0.0, 0.0, 1.5, -np.inf, np.inf, np.nan], dtype)
  model = jax2tf.to_tflite(lambda x: -x, x, route="litert")
  (got,) = lite.run(model, x)
  compare.assert_same(np.asarray(jax.jit(lambda x: -x)(x)), np.asarray(got), exact=True)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int32])
def test_clamp_with_crossed_bounds_gives_the_upper_one(dtype):
  # XLA's clamp is min(max(x, lo), hi), hi where lo > hi; LiteRT's lowering
  # of clamp gave lo there.
  lo = np.array([0, 2, -1, 5, 3], dtype)
  x = np.array([1, 1, 3, 4, -2], dtype)
  hi = np.array([2, 1, 0, 3, 3], dtype)
  if dtype == np.float32:
    x[1], lo[4] = np.nan, np.nan

  def f(lo, x, hi):
    return lax.clamp(lo, x, hi), lax.clamp(lo[1], x, hi[3])

  model = jax2tf.to_tflite(f, lo, x, hi, route="litert")
  got = lite.run(model, lo, x, hi)
  for w, g in zip(jax.jit(f)(lo, x, hi), got, strict=True):
    compare.assert_same(np.asarray(w), np.asarray(g), exact=True)


def _edge_integers(dtype, count, seed):
  info = np.iinfo(dtype)
  edges = np.array([0, 1, -1, info.min, info.max, info.max // 2, 0x55, 0x0F], np.int64)
  rng = _rng(seed).integers(info.min, info.max, size=count - edges.size, endpoint=True)
  return np.concatenate([edges, rng]).astype(dtype)


_BIT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("dtype", _BIT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_bitwise_and_or_shift_left_popcount_and_clz_match_xla(dtype, route):
  # TFLite has no BitwiseAnd, BitwiseOr, LeftShift or PopulationCount (nor
  # a leading-zero count): the module writes them in uint32 arithmetic, as the graph route does
  # (jax2tf/native/kernel_forms.py), with XLA's shifts out of range (from
  # the width on, and negative amounts) giving 0.
  width = np.iinfo(dtype).bits
  x, y = _edge_integers(dtype, 40, 1), _edge_integers(dtype, 40, 2)
  amounts = np.resize(np.arange(-2, width + 3), x.size).astype(np.int64)
  amounts = (
    (amounts % 2**width).astype(dtype) if np.iinfo(dtype).min == 0 else amounts.astype(dtype)
  )

  def f(x, y, s):
    return x & y, x | y, lax.shift_left(x, s), lax.population_count(x), lax.clz(x)

  if route == "native":
    pytest.importorskip("tensorflow", reason="the native route needs TF's converter")
  model = jax2tf.to_tflite(f, x, y, amounts, route=route)
  ops = lite_inspect.op_counts(model)
  assert not [o for o in ops if o.startswith("STABLEHLO_")], ops
  got = lite.run(model, x, y, amounts)
  for w, g in zip(jax.jit(f)(x, y, amounts), got, strict=True):
    compare.assert_same(np.asarray(w), np.asarray(g), exact=True)


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("dtype", _BIT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_shifts_right_give_xlas_bits(dtype, route):
  # XLA reads the amount as unsigned and shifts everything out from the
  # width on (zeros, or copies of the sign bit); TFLite's RIGHT_SHIFT gave
  # x back for a negative amount and filled a signed integer from its sign
  # bit in a logical shift (jax2tf/native/integer_patterns.py).
  if route == "native":
    pytest.importorskip("tensorflow", reason="the native route needs TF's converter")
  width = np.iinfo(dtype).bits
  x = _edge_integers(dtype, 40, 3)
  amounts = np.resize(np.arange(-3, width + 4), x.size).astype(np.int64)
  amounts = (amounts % 2**width).astype(dtype)
  signed = np.iinfo(dtype).min < 0

  def f(x, s):
    # An arithmetic shift of an unsigned narrow integer stays narrow (it
    # fills from the narrow sign bit) and is refused.
    logical = lax.shift_right_logical(x, s)
    return (logical, lax.shift_right_arithmetic(x, s)) if signed or width == 32 else (logical,)

  model = jax2tf.to_tflite(f, x, amounts, route=route)
  got = lite.run(model, x, amounts)
  for w, g in zip(jax.jit(f)(x, amounts), got, strict=True):
    compare.assert_same(np.asarray(w), np.asarray(g), exact=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: np.dtype(d).name)
def test_round_half_away_from_zero_keeps_halves_zeros_and_specials(dtype):
  # The converter cannot legalize round_nearest_afz; the module writes it
  # from floor and ceil, as the graph route does (jax2tf/targets/rounding.py).
  x = np.array([0.5, -0.5, 1.5, -2.5, 0.49999997, -0.3, -0.0, 0.0, 2.4999, 1e7 + 1,
                np.inf, -np.inf, np.nan], np.float32).astype(dtype)  # fmt: skip
  f = lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO)  # noqa: E731
  model = jax2tf.to_tflite(f, x, route="litert")
  (got,) = lite.run(model, x)
  compare.assert_same(np.asarray(jax.jit(f)(x)), np.asarray(got), exact=True)
