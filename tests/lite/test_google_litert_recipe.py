"""Google's LiteRT recipe on plain `jax2tf.convert` output.

The recipe: `tf.function(jax2tf.convert(f))`, a concrete function (or a
SavedModel), `tf.lite.TFLiteConverter` with builtin ops only, LiteRT's
interpreter. The module that `convert` writes for TF's XLA propagates NaN
through max/min reductions and pools as JAX does, with each reduction's
body a single max/min op, which the converter legalizes (to pools and
REDUCE_MAX/MIN); the NaN tests beside them keep JAX's NaN on LiteRT too.

jax.jit on CPU drops a NaN of a max/min reduction over 4096 elements or
more (XLA's vectorized loops); the inputs here stay below that.
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter
from jax import lax

import jax2tf
from benchmarks import models
from jax2tf.deploy import signature as deploy_signature
from tests import model_set
from tests.support import compare

rng = np.random.default_rng(0)


def _with_specials(shape):
  """Normal values with NaN, infinities and zeros of both signs, several in
  one pooling window and others alone in theirs."""
  x = rng.normal(size=shape).astype(np.float32)
  flat = x.reshape(-1)
  for i, v in zip(
    rng.choice(flat.size, 12, replace=False),
    [np.nan] * 5 + [np.inf, -np.inf] * 2 + [0.0, -0.0, -0.0],
  ):
    flat[i] = v
  return x


class _CNN(nn.Module):
  @nn.compact
  def __call__(self, x):
    x = nn.relu(nn.Conv(8, (3, 3))(x))
    x = nn.max_pool(x, (2, 2), (2, 2))
    x = nn.relu(nn.Conv(8, (3, 3))(x))
    x = nn.max_pool(x, (3, 3), (1, 1), padding="SAME")
    return nn.Dense(4)(jnp.max(x, axis=(1, 2)))


_IMAGES = (2, 8, 8, 3)


def _cnn():
  model = _CNN()
  params = model.init(jax.random.key(0), np.zeros(_IMAGES, np.float32))
  return lambda x: model.apply(params, x)


# One result each: LiteRT's output order need not be the function's.
_FUNCTIONS = {
  "cnn": _cnn(),
  "max_pool": lambda x: nn.max_pool(x, (2, 2), (2, 2)),
  "max_pool_same": lambda x: nn.max_pool(x, (3, 3), (2, 2), padding="SAME"),
  "min_pool": lambda x: lax.reduce_window(x, np.inf, lax.min, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
  "reduce_max_spatial": lambda x: jnp.max(x, axis=(1, 2)),
  "reduce_min_channels": lambda x: jnp.min(x, axis=-1),
  "reduce_max_all": lambda x: jnp.max(x),
  "reduce_min_keepdims": lambda x: jnp.min(x, axis=1, keepdims=True),
  "relu_then_max": lambda x: jnp.max(jax.nn.relu(x), axis=(1, 2)),
  "max_and_min_elementwise": lambda x: jnp.maximum(x, x[:, ::-1]) - jnp.minimum(x, 0.5),
}


def _convert(fun, x):
  tf_fun = tf.function(jax2tf.convert(fun), autograph=False)
  return tf_fun, tf_fun.get_concrete_function(tf.TensorSpec(x.shape, tf.float32))


def _builtins_only(converter):
  converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
  return converter.convert()


def _run_litert(model: bytes, x):
  (out,) = _run_litert_all(model)(x)
  return out


def _assert_like_jax_on_litert(want, got):
  # LiteRT's kernels may order a tie of -0.0 and +0.0 otherwise than XLA;
  # NaN positions and infinities are JAX's.
  want, got = np.asarray(want), np.asarray(got)
  assert got.shape == want.shape and got.dtype == want.dtype
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_concrete_function_recipe_runs_on_litert_as_jax(name):
  fun, x = _FUNCTIONS[name], _with_specials(_IMAGES)
  tf_fun, concrete = _convert(fun, x)
  model = _builtins_only(tf.lite.TFLiteConverter.from_concrete_functions([concrete], tf_fun))
  want = jax.jit(fun)(x)
  assert np.isnan(want).any()
  _assert_like_jax_on_litert(want, _run_litert(model, x))


def test_saved_model_recipe_runs_on_litert_as_jax(tmp_path):
  fun, x = _FUNCTIONS["cnn"], _with_specials(_IMAGES)
  module = tf.Module()
  module.f = tf.function(
    jax2tf.convert(fun), autograph=False, input_signature=[tf.TensorSpec(x.shape, tf.float32)]
  )
  tf.saved_model.save(module, str(tmp_path), signatures=module.f.get_concrete_function())
  model = _builtins_only(tf.lite.TFLiteConverter.from_saved_model(str(tmp_path)))
  _assert_like_jax_on_litert(jax.jit(fun)(x), _run_litert(model, x))


def test_the_pools_stay_pools():
  # The NaN flags are pooled by a second MAX_POOL_2D, which XNNPack runs.
  from jax2tf.lite import inspect as lite_inspect

  fun, x = _FUNCTIONS["max_pool"], _with_specials(_IMAGES)
  tf_fun, concrete = _convert(fun, x)
  model = _builtins_only(tf.lite.TFLiteConverter.from_concrete_functions([concrete], tf_fun))
  ops = lite_inspect.op_counts(model)
  assert ops["MAX_POOL_2D"] == 2 and "STABLEHLO_REDUCE_WINDOW" not in ops, ops


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_tf_xla_keeps_jax_nan_and_signed_zeros(name, jit_compile):
  fun, x = _FUNCTIONS[name], _with_specials(_IMAGES)
  got = tf.function(jax2tf.convert(fun), autograph=False, jit_compile=jit_compile)(x)
  compare.assert_same(jax.jit(fun)(x), got.numpy(), tol=(1e-5, 1e-5))


def test_a_polymorphic_batch_converts_and_runs_at_any_batch():
  # With a symbolic batch the NaN and zero tensors beside a reduction are
  # broadcast to sizes read at run time.
  def fun(x):
    return jnp.max(nn.max_pool(x, (2, 2), (2, 2)), axis=(1, 2))

  tf_fun = tf.function(jax2tf.convert(fun, polymorphic_shapes=["(b, 8, 8, 3)"]), autograph=False)
  concrete = tf_fun.get_concrete_function(tf.TensorSpec((None, *_IMAGES[1:]), tf.float32))
  model = _builtins_only(tf.lite.TFLiteConverter.from_concrete_functions([concrete], tf_fun))
  for batch in (1, 3):
    x = _with_specials((batch, *_IMAGES[1:]))
    _assert_like_jax_on_litert(jax.jit(fun)(x), _run_litert(model, x))


@pytest.mark.parametrize(
  "name", ["max_pool", "min_pool", "reduce_max_spatial", "reduce_min_channels"]
)
def test_nan_beside_infinities_and_the_largest_floats(name):
  # NaN stands in a reduction as the largest finite float, and infinities
  # and the largest floats of the data reach that too: each window below
  # holds one such mix, or one alone.
  big = np.finfo(np.float32).max
  x = rng.normal(size=(1, 4, 8, 2)).astype(np.float32)
  x[0, 0, 0:4, 0] = [np.nan, np.inf, -np.inf, big]
  x[0, 0, 4:8, 1] = [big, -big, np.nan, -np.inf]
  x[0, 2, 2, :] = [np.inf, -np.inf]
  x[0, 3, 6, :] = [big, -big]
  fun = _FUNCTIONS[name]
  tf_fun, concrete = _convert(fun, x)
  model = _builtins_only(tf.lite.TFLiteConverter.from_concrete_functions([concrete], tf_fun))
  want = jax.jit(fun)(x)
  _assert_like_jax_on_litert(want, _run_litert(model, x))
  compare.assert_same(want, tf_fun(x).numpy(), exact=True)


def _noisy(x):
  # Threefry as a VAE's sampling writes it: rotations (shifts and `or`)
  # and 64-bit counters, which TFLite has no kernels for.
  return x + jax.random.normal(jax.random.key(3), x.shape)


def test_the_prng_converts_and_draws_jax_numbers_on_litert():
  x = np.random.default_rng(0).normal(size=_IMAGES).astype(np.float32)
  tf_fun, concrete = _convert(_noisy, x)
  model = _builtins_only(tf.lite.TFLiteConverter.from_concrete_functions([concrete], tf_fun))
  np.testing.assert_allclose(_run_litert(model, x), jax.jit(_noisy)(x), rtol=1e-6, atol=1e-6)


def _run_litert_all(model: bytes):
  def run(*inputs):
    interpreter = Interpreter(model_content=model)
    args = interpreter.get_input_details()
    assert len(args) == len(inputs), (len(args), len(inputs))
    for arg, x in zip(args, inputs):
      interpreter.resize_tensor_input(arg["index"], np.shape(x))
    interpreter.allocate_tensors()
    for arg, x in zip(args, inputs):
      interpreter.set_tensor(arg["index"], np.asarray(x))
    interpreter.invoke()
    return [interpreter.get_tensor(out["index"]) for out in interpreter.get_output_details()]

  return run


def _scan_and_window(xs, start):
  # A scan over a polymorphic number of steps reads one step each time (a
  # dynamic slice of the polymorphic operand), and a window of two steps at
  # a start read at run time, clamped into the sequence as JAX clamps it.
  def step(carry, x):
    carry = jnp.tanh(carry * 0.5 + x)
    return carry, carry * 2.0

  last, ys = lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)
  window = lax.dynamic_slice_in_dim(xs, start[0], 2, axis=0)
  return last, ys, window


@pytest.mark.parametrize("jit_compile", [None, False, True], ids=["litert", "tf", "tf_xla"])
def test_a_dynamic_slice_of_a_polymorphic_operand(jit_compile):
  fun = jax2tf.convert(
    _scan_and_window, polymorphic_shapes=["(t, 3, 4)", None], polymorphic_constraints=["t >= 2"]
  )
  tf_fun = tf.function(fun, autograph=False, jit_compile=bool(jit_compile))
  signature = [tf.TensorSpec((None, 3, 4), tf.float32), tf.TensorSpec((1,), tf.int32)]
  if jit_compile is None:
    concrete = tf_fun.get_concrete_function(*signature)
    model = _builtins_only(tf.lite.TFLiteConverter.from_concrete_functions([concrete], tf_fun))
    run = _run_litert_all(model)
  else:
    run = lambda *xs: [r.numpy() for r in tf_fun(*xs)]  # noqa: E731
  for steps, start in [(3, 0), (5, 3), (5, 4), (7, -1), (7, 100)]:
    xs = rng.normal(size=(steps, 3, 4)).astype(np.float32)
    args = (xs, np.array([start], np.int32))
    want = jax.jit(_scan_and_window)(*args)
    got = run(*args)
    if jit_compile is None:  # LiteRT's outputs by shape, not in the function's order
      got = sorted(got, key=lambda g: g.shape)
      want = sorted(want, key=lambda w: w.shape)
    for w, g in zip(want, got, strict=True):
      np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"{steps=} {start=}")


# Google's recipe on every row of the model set but these, pinned with what
# stops them: TF's converter (2.21) writes a scatter's sum (the GNN's
# message aggregation) as STABLEHLO_SCATTER with a TFLite ADD as its update,
# which LiteRT's kernel refuses; `to_tflite` rewrites that update in the
# flatbuffer (lite/scatter_regions.py), which the recipe never reaches.
_RECIPE_FAILS = {
  ("gnn", model_set.STATIC): "currently supported for stablehlo.scatter",
  ("gnn", "batch"): "currently supported for stablehlo.scatter",
}
_RECIPE_FAST = {
  ("nnx_cnn", "spatial"),
  ("vae", "batch"),
  ("actor_critic", "batch"),
  ("gpt_rotary", "seq"),
  ("bilstm", "seq"),
  ("gnn", "batch"),
}


def _recipe_rows():
  for name in models.REGISTRY:
    for variant in model_set.variants(name):
      marks = [] if (name, variant) in _RECIPE_FAST else [pytest.mark.slow]
      yield pytest.param(name, variant, id=f"{name}-{variant}", marks=marks)


@pytest.mark.parametrize("name,variant", list(_recipe_rows()))
def test_model_set_through_the_recipe_runs_as_jax_at_each_size(name, variant):
  # What JAX writes for a polymorphic dimension, in forms TF's converter
  # legalizes and TF's XLA refines (dynamic_ops.py): a convolution padded
  # over one as an explicit pad, an iota over one (the VAE's reshape index)
  # as a range, `x[:, 0]` of one (a dynamic gather) and a scan's read of one
  # step of a polymorphic sequence as strided slices.
  fails = _RECIPE_FAILS.get((name, variant))
  if fails is None:
    _run_recipe_row(name, variant)
    return
  with pytest.raises(RuntimeError, match=fails):
    _run_recipe_row(name, variant)


def _run_recipe_row(name, variant):
  m = models.get(name)
  inputs, specs = model_set.export_inputs(m, variant)
  tf_fun = tf.function(
    jax2tf.convert(lambda *xs: m.fn(m.params, *xs), polymorphic_shapes=specs), autograph=False
  )
  # Dynamic where the spec names a dimension variable, as a served model's.
  signature = [
    tf.TensorSpec(i.shape, tf.as_dtype(i.dtype))
    for i in deploy_signature.input_specs(m.fn, inputs, specs, has_params=True)
  ]
  concrete = tf_fun.get_concrete_function(*signature)
  model = _builtins_only(tf.lite.TFLiteConverter.from_concrete_functions([concrete], tf_fun))
  model_set.assert_runs_like_jax(m, variant, _run_litert_all(model))
