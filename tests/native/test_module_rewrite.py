"""Rewrites of the exported module that keep TF's XLA from failing where JAX's does not.

Programs here crash `jax.jit` itself (XLA's simplifier, in JAX's build as in
TF's), so the reference is JAX op by op (`jax.disable_jit`), where each
primitive compiles alone.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import lax

import jax2tf
from tests.support import compare


def _slice_after_empty_operand(x, empty):
  # The slice starts where the empty operand sits: XLA's slice-of-concatenate
  # simplification sized a vector -1 and aborted the process.
  joined = lax.concatenate([x, empty], 0)
  return lax.slice_in_dim(joined, 1, 1, 1, 0), lax.slice_in_dim(joined, 0, 1, 1, 0)


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_concatenate_with_an_empty_operand_then_sliced(dtype, jit_compile):
  x = np.array([[254, 7, 0, 5]], dtype)
  empty = np.zeros((0, 4), dtype)
  with jax.disable_jit():
    want = _slice_after_empty_operand(x, empty)
  f_tf = tf.function(
    jax2tf.convert(_slice_after_empty_operand), autograph=False, jit_compile=jit_compile
  )
  got = f_tf(tf.constant(x), tf.constant(empty))
  for w, g in zip(want, got):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


def test_concatenate_of_only_empty_operands_keeps_its_shape():
  def f(a, b):
    return lax.concatenate([a, b], 1)

  a, b = np.zeros((2, 0), np.float32), np.zeros((2, 0), np.float32)
  got = jax2tf.convert(f)(a, b)
  assert got.shape == (2, 0) and got.dtype == tf.float32


def _and_or_of_narrowed(x, y):
  t = y.dtype
  return lax.bitwise_and(x.astype(t), y), lax.bitwise_or(y, x.astype(t))


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("native", [True, False], ids=["native", "graph"])
@pytest.mark.parametrize("target", [np.int8, np.int16])
def test_and_or_of_a_narrowing_signed_conversion(target, native, jit_compile):
  # XLA's CPU compiler (JAX 0.10's, TF 2.21's) segfaulted on an and/or of a
  # convert to a narrower signed type with another array; the conversion
  # now goes through the unsigned type of that width, bit for bit the same.
  x = np.array([[-1, 300, 70000], [-129, 2**31 - 1, -(2**31)]], np.int32)
  info = np.iinfo(target)
  y = np.array([[info.min, info.max, -1], [0, 0x55, -0x56]], target)
  with jax.disable_jit():
    want = _and_or_of_narrowed(x, y)
  f_tf = tf.function(
    jax2tf.convert(_and_or_of_narrowed, native_serialization=native),
    autograph=False,
    jit_compile=jit_compile,
  )
  got = f_tf(tf.constant(x), tf.constant(y))
  for w, g in zip(want, got):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


def _divisions_by_zero(x, y):
  # x - x is 0 to XLA (TF's, and JAX 0.10's), which then folded the divide
  # and the remainder of constants with a host division: a zero divisor ended
  # the process (SIGFPE).
  zero = lax.sub(x, x)
  return lax.div(zero, zero), lax.rem(zero, zero), lax.div(x, y), lax.rem(x, y)


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32, np.uint32])
def test_integer_division_by_a_zero_that_xla_folds(dtype, jit_compile):
  info = np.iinfo(dtype)
  x = np.array([7, info.max, info.min, 0, 5, info.min], dtype)
  y = np.array([0, 0, 0, 0, 3, -1 if info.min else 2], dtype)
  with jax.disable_jit():
    want = _divisions_by_zero(x, y)
  f_tf = tf.function(jax2tf.convert(_divisions_by_zero), autograph=False, jit_compile=jit_compile)
  got = f_tf(tf.constant(x), tf.constant(y))
  for w, g in zip(want, got, strict=True):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


def _rewritten(fun, *avals, pipeline="tf_xla"):
  """The module of `fun` after `pipeline`, parsed, with a context to read it."""
  from jax.extend.mlir import ir
  from jax.interpreters import mlir

  from jax2tf.native import module_patterns, module_rewrite

  text = jax.export.export(jax.jit(fun))(*avals).mlir_module()
  context = mlir.make_ir_context()
  with context, ir.Location.unknown():
    module = ir.Module.parse(text)
    module_patterns.run(module, module_rewrite.PIPELINES[pipeline])
  return context, module


_F32 = jax.ShapeDtypeStruct((2, 6, 6, 3), np.float32)
_REDUCTIONS = {
  "max_pool": lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
  "min_pool_padded": lambda x: lax.reduce_window(
    x, np.inf, lax.min, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"
  ),
  "reduce_max": lambda x: x.max(axis=(1, 2)),
  "reduce_min": lambda x: x.min(),
  "cummax": lambda x: lax.cummax(x, axis=1),
}


def _bodies(module, context):
  from jax2tf.native.stablehlo_values import ops_named

  with context:
    reductions = ops_named(module, ("stablehlo.reduce", "stablehlo.reduce_window"))
    return [
      ([o.name for o in op.regions[0].blocks[0].operations], str(op.results[0].type))
      for op in reductions
    ], len(ops_named(module, ("stablehlo.if",)))


@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
def test_for_tf_xla_a_float_reduction_is_two_float_reductions_and_no_conditional(name):
  # The values' reduction stays a float one with a single-op body (LiteRT's
  # pool kernels take floats only, and TF's TFLite converter legalizes only
  # such bodies; the usual recipe hands it this module), a second one
  # reduces the marks on every call, and there is no conditional, whose
  # branches XLA would compile again at each new shape.
  bodies, conditionals = _bodies(*reversed(_rewritten(_REDUCTIONS[name], _F32)))
  combine = "stablehlo.minimum" if "min" in name else "stablehlo.maximum"
  assert conditionals == 0
  assert [b for b, _ in bodies] == [[combine, "stablehlo.return"]] * 2, bodies
  assert all(t.endswith("f32>") for _, t in bodies), bodies


@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
def test_for_litert_a_float_reduction_body_stays_one_max_or_min(name):
  # LiteRT's pool and reduction kernels take floats only: the values'
  # reduction stays a float one, whether one reached NaN's stand-in is an
  # `or`, and a conditional reduces the NaN flags.
  bodies, conditionals = _bodies(*reversed(_rewritten(_REDUCTIONS[name], _F32, pipeline="litert")))
  combine = "stablehlo.minimum" if "min" in name else "stablehlo.maximum"
  assert conditionals == 1
  bodies = [b for b, _ in bodies]
  assert bodies.count([combine, "stablehlo.return"]) == 2, bodies
  assert all(
    b in ([combine, "stablehlo.return"], ["stablehlo.or", "stablehlo.return"]) for b in bodies
  )


# Reductions of values that XLA computes inside its consumer's loop: a
# ReLU before a pool, and `jnp.where`'s masking before a softmax's max,
# which JAX emits as a call of a private function.
_OF_FUSED_VALUES = {
  "max_pool_of_relu": lambda x: lax.reduce_window(
    jax.nn.relu(2 * x + 1), -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"
  ),
  "masked_max": lambda x: jnp.where(jnp.arange(3) > 0, x, -np.inf).max(axis=-1),
  "min_of_negated": lambda x: (-x).min(axis=(0, 3)),
}


@pytest.mark.parametrize("name", sorted(_OF_FUSED_VALUES))
def test_the_nan_branch_reads_only_values_xla_has_in_memory(name):
  # XLA hands a conditional its operands in memory: a NaN mask or a ReLU's
  # result read from outside the branch would be written out on every call
  # (a pass over the whole tensor), so the branch recomputes them from the
  # values before them (here the argument).
  from jax.extend.mlir import ir

  from jax2tf.native import module_patterns
  from jax2tf.native.stablehlo_values import ops_named, walk

  context, module = _rewritten(_OF_FUSED_VALUES[name], _F32, pipeline="litert")
  with context:
    (branch,) = ops_named(module, ("stablehlo.if",))
    inside: set = set()
    for region in branch.regions:
      for op in region.blocks[0].operations:
        walk(op, inside.add)
    read_from_outside = [
      v.owner.name
      for op in inside
      for v in op.operands
      if isinstance(v, ir.OpResult) and v.owner not in inside
    ]
    fusible = [n for n in read_from_outside if n in module_patterns._FUSIBLE or n == "func.call"]
    assert not fusible, read_from_outside


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("name", sorted(_OF_FUSED_VALUES))
def test_reductions_of_fused_values_keep_jax_nan(name, jit_compile):
  _assert_like_jax_on_specials(_OF_FUSED_VALUES[name], jit_compile, seed=2)


def test_every_target_that_reads_a_native_module_names_a_pipeline():
  from jax2tf import targets
  from jax2tf.native import module_rewrite, versions

  named = {t.native_pipeline for t in targets.TARGETS.values()} - {None}
  assert named and named <= set(module_rewrite.PIPELINES)
  with pytest.raises(ValueError, match="pipeline: expected one of"):
    module_rewrite.rewrite_and_serialize(
      "module {}", versions.consumer(None), pipeline="no_such_consumer"
    )


def _reductions_with_an_initial_value(x, init):
  return (
    lax.reduce(x, init, lax.max, (1,)),
    lax.reduce(x, init, lax.min, (0,)),
    lax.reduce_window(x, init, lax.max, (2, 2), (1, 1), "SAME"),
  )


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("init", [np.nan, -np.inf, 0.5])
def test_a_nan_in_the_values_or_the_initial_value_reaches_each_result(init, jit_compile):
  x = np.array([[1.0, np.nan, -2.0], [0.0, -0.0, 3.0], [np.inf, -1.0, -np.inf]], np.float32)
  init = np.float32(init)
  want = jax.jit(_reductions_with_an_initial_value)(x, init)
  f_tf = tf.function(
    jax2tf.convert(_reductions_with_an_initial_value), autograph=False, jit_compile=jit_compile
  )
  got = f_tf(tf.constant(x), tf.constant(init))
  for w, g in zip(want, got, strict=True):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
def test_reductions_keep_jax_nan_and_zeros_under_tf_xla(name, jit_compile):
  _assert_like_jax_on_specials(_REDUCTIONS[name], jit_compile, seed=1)


def _ties_of_zeros(x, y):
  return lax.max(x, y), lax.min(x, y), lax.max(y, x), lax.min(y, x)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_a_max_or_min_of_both_zeros_gives_jax_zero_under_tf_xla(jit_compile):
  # TF's XLA returns the first operand of a tie; JAX's maximum puts +0.0
  # above -0.0 and its minimum -0.0 below +0.0, whichever comes first.
  x = np.array([-0.0, 0.0, -0.0, 0.0, np.nan, 1.0, -0.0], np.float32)
  y = np.array([0.0, -0.0, -0.0, 0.0, -0.0, np.nan, -2.0], np.float32)
  want = jax.jit(_ties_of_zeros)(x, y)
  got = tf.function(jax2tf.convert(_ties_of_zeros), autograph=False, jit_compile=jit_compile)(x, y)
  for w, g in zip(want, got, strict=True):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


def _with_constant_zeros(x):
  pos, neg = np.float32(0.0), np.float32(-0.0)
  return lax.max(x, pos), lax.max(pos, x), lax.min(x, neg), lax.min(neg, x), jax.nn.relu(x + x)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_relu_and_its_mirror_give_jax_zeros_and_nan_under_tf_xla(jit_compile):
  # TF's XLA moves the constant to the right and returns the first operand
  # of a tie, so relu(-0.0) gave -0.0 where JAX gives +0.0.
  x = np.array([-0.0, 0.0, np.nan, -1.0, 2.0, -np.inf, np.inf], np.float32)
  want = jax.jit(_with_constant_zeros)(x)
  got = tf.function(jax2tf.convert(_with_constant_zeros), autograph=False,
                    jit_compile=jit_compile)(x)
  for w, g in zip(want, got, strict=True):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


def _windows_of_both_zeros(x):
  return (
    lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 1), "VALID"),
    lax.reduce_window(x, jnp.inf, lax.min, (1, 2), (1, 1), "VALID"),
    lax.cummax(x, axis=1),
    lax.cummin(x, axis=1),
  )


@pytest.mark.parametrize("jit_compile", [False, True])
def test_a_window_of_both_zeros_gives_jax_zero_under_tf_xla(jit_compile):
  # TF's XLA returns whichever zero of a tie it meets first; JAX's pools
  # put +0.0 above -0.0 (a minimum: -0.0 below +0.0), as its maximum does.
  x = np.array([[-0.0, 0.0, -0.0], [0.0, -0.0, 0.0], [-0.0, -0.0, 0.0]], np.float32)
  want = jax.jit(_windows_of_both_zeros)(x)
  got = tf.function(
    jax2tf.convert(_windows_of_both_zeros), autograph=False, jit_compile=jit_compile
  )(x)
  for w, g in zip(want, got, strict=True):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


# Softmax and log_softmax shift by a maximum whose NaN and zero sign no
# result reads; near misses that do read them.
_SOFTMAXES = {
  "softmax": lambda x: jax.nn.softmax(x, axis=-1),
  "log_softmax": lambda x: jax.nn.log_softmax(x, axis=1),
  "softmax_of_two_axes": lambda x: jax.nn.softmax(x, axis=(0, 2)),
}


def _exp_also_returned(x):
  e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
  return e / jnp.sum(e, axis=-1, keepdims=True), e


def _summed_over_another_axis(x):
  e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
  return e / jnp.sum(e, axis=1, keepdims=True)


def _another_array_shifted(x):
  return jnp.exp(x[::-1] - jnp.max(x, axis=-1, keepdims=True))


_NEAR_SOFTMAXES = {
  "exp_also_returned": _exp_also_returned,
  "summed_over_another_axis": _summed_over_another_axis,
  "another_array_shifted": _another_array_shifted,
}


def _nan_tests(module, context) -> int:
  from jax2tf.native.stablehlo_values import ops_named

  with context:
    compares = ops_named(module, ("stablehlo.compare",))
    return sum(1 for op in compares if op.operands[0] == op.operands[1])


# With a polymorphic batch, JAX broadcasts the maximum back with
# dynamic_broadcast_in_dim.
_SHAPES = {"static": _F32, "batch_polymorphic": jax.ShapeDtypeStruct(
  jax.export.symbolic_shape("b, 6, 6, 3"), np.float32)}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
@pytest.mark.parametrize("pipeline", ["tf_xla", "litert"])
@pytest.mark.parametrize("name", sorted(_SOFTMAXES))
def test_a_softmax_maximum_is_reduced_as_it_is(name, pipeline, shape):
  context, module = _rewritten(_SOFTMAXES[name], _SHAPES[shape], pipeline=pipeline)
  assert _nan_tests(module, context) == 0
  assert _bodies(module, context)[1] == 0  # no conditional


@pytest.mark.parametrize("shape", sorted(_SHAPES))
@pytest.mark.parametrize("name", sorted(_NEAR_SOFTMAXES))
def test_a_maximum_a_result_reads_beyond_a_softmax_keeps_its_nan_test(name, shape):
  context, module = _rewritten(_NEAR_SOFTMAXES[name], _SHAPES[shape])
  assert _nan_tests(module, context) == 1


@pytest.mark.parametrize("polymorphic", [False, True])
@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("name", sorted({**_SOFTMAXES, **_NEAR_SOFTMAXES}))
def test_softmaxes_and_near_misses_keep_jax_nan_under_tf_xla(name, jit_compile, polymorphic):
  fun = {**_SOFTMAXES, **_NEAR_SOFTMAXES}[name]
  x = np.random.default_rng(4).normal(size=_F32.shape).astype(np.float32)
  x[0, 1, 2, 1] = np.nan  # one NaN of a row that holds numbers too
  x[1, 2, :, 0] = [0.0, -0.0] * 3
  x[1, 3, 4, 1] = np.inf
  converted = jax2tf.convert(fun, polymorphic_shapes=["b, ..."] if polymorphic else None)
  got = tf.function(converted, autograph=False, jit_compile=jit_compile)(x)
  compare.assert_same(jax.jit(fun)(x), tf.nest.map_structure(lambda t: t.numpy(), got))


def _assert_like_jax_on_specials(fun, jit_compile, *, seed):
  """`fun` converted computes what jax.jit does, bit for bit, on values with
  NaN, signed zeros and infinities among them."""
  x = np.random.default_rng(seed).normal(size=_F32.shape).astype(np.float32)
  flat = x.reshape(-1)
  flat[[3, 40, 41, 100]] = np.nan
  flat[[7, 8, 60, 61]] = [0.0, -0.0, -0.0, 0.0]
  flat[[90, 150]] = [np.inf, -np.inf]
  got = tf.function(jax2tf.convert(fun), autograph=False, jit_compile=jit_compile)(x)
  compare.assert_same(np.asarray(jax.jit(fun)(x)), got.numpy(), exact=True)


def _rows_max_min_argmax(v):
  return v.max(axis=1), v.min(axis=1), v.max(), jnp.argmax(v, axis=1)


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_reductions_of_every_float_width_keep_jax_nan(dtype, jit_compile):
  # The marks reduce in the values' own type. A row of -0.0 keeps its sign
  # (whether -0.0 or +0.0 wins a row of both, JAX's XLA decides by how it
  # fuses the reduction: not a semantics to compare).
  import ml_dtypes

  dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
  x = np.random.default_rng(3).normal(size=(5, 37)).astype(dt)
  flat = x.reshape(-1)
  flat[[3, 40, 41, 100]] = np.nan
  flat[[90, 120]] = [np.inf, -np.inf]
  x[3, :] = -0.0
  with jax.enable_x64(dtype == "float64"):
    want = jax.jit(_rows_max_min_argmax)(x)
    f_tf = tf.function(
      jax2tf.convert(_rows_max_min_argmax), autograph=False, jit_compile=jit_compile
    )
    got = f_tf(tf.constant(x))
  for w, g in zip(want, got, strict=True):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


def _max_min_with_identities(x):
  # jax.nn.softmax's floor of its max reduction, and both operand orders.
  return jnp.maximum(x, -jnp.inf), jnp.minimum(jnp.inf, x), jnp.maximum(-jnp.inf, x.max(axis=1))


@pytest.mark.parametrize("pipeline", ["tf_xla", "tflite", "litert"])
def test_a_max_or_min_with_its_identity_is_dropped_by_every_pipeline(pipeline):
  from jax2tf.native.stablehlo_values import ops_named

  for shape in ("2, 6", "b, 6"):
    (aval,) = jax.export.symbolic_args_specs((np.zeros((2, 6), np.float32),), shape)
    context, module = _rewritten(_max_min_with_identities, aval, pipeline=pipeline)
    with context:
      left = ops_named(module, ("stablehlo.maximum", "stablehlo.minimum"))
      # Only the max reduction's bodies (of floats) remain.
      outside = [
        op for op in left if op.parent.name == "func.func" and "f32" in str(op.results[0].type)
      ]
      assert outside == [], shape


@pytest.mark.parametrize("jit_compile", [False, True])
def test_a_max_or_min_with_its_identity_keeps_jax_nan_and_zeros(jit_compile):
  x = np.array([[np.nan, -0.0, 0.0, -np.inf, np.inf, 1.0]] * 2, np.float32)
  got = tf.function(
    jax2tf.convert(_max_min_with_identities), autograph=False, jit_compile=jit_compile
  )(x)
  for w, g in zip(jax.jit(_max_min_with_identities)(x), got):
    compare.assert_same(np.asarray(w), g.numpy(), exact=True)


@pytest.mark.parametrize("pipeline", ["tf_xla", "litert"])
def test_relu_of_a_polymorphic_batch_tests_only_its_operand_for_nan(pipeline):
  # The zero is broadcast to the dynamic batch, still a constant without NaN:
  # the maximum is followed by one select (x's NaN), not two.
  from jax2tf.native.stablehlo_values import ops_named

  for shape in ("2, 6", "b, 6"):
    (aval,) = jax.export.symbolic_args_specs((np.zeros((2, 6), np.float32),), shape)
    context, module = _rewritten(jax.nn.relu, aval, pipeline=pipeline)
    with context:
      assert len(ops_named(module, ("stablehlo.select",))) == 1, shape


@pytest.mark.parametrize("jit_compile", [False, True])
def test_relu_of_a_polymorphic_batch_keeps_jax_nan(jit_compile):
  # (The sign of relu(-0.0) is the recorded gap of elementwise.relu_like.)
  x = np.array([[np.nan, 2.0, 0.0, -np.inf, np.inf, -1.0]] * 3, np.float32)
  f = tf.function(
    jax2tf.convert(jax.nn.relu, polymorphic_shapes=["(b, 6)"]),
    autograph=False,
    jit_compile=jit_compile,
    input_signature=[tf.TensorSpec([None, 6], tf.float32)],
  )
  compare.assert_same(np.asarray(jax.jit(jax.nn.relu)(x)), f(x).numpy(), exact=True)


def _pooled(x):
  return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum((1, 2))


def test_the_exported_artifact_and_its_text_are_rewritten_alike():
  # The converter hands the rewrite the Exported's portable artifact, not
  # its text (a print and a parse less); the serialized modules, locations
  # included, must not tell which it read.
  from jax.extend import mlir as jex_mlir
  from jax.interpreters import mlir

  from jax2tf.native import module_rewrite, versions

  (b,) = jax.export.symbolic_shape("b")
  exported = jax.export.export(jax.jit(_pooled))(jax.ShapeDtypeStruct((b, 6, 6, 3), np.float32))
  consumer = versions.consumer(None)
  written = [
    module_rewrite.rewrite_and_serialize(m, consumer)
    for m in (exported.mlir_module(), exported.mlir_module_serialized)
  ]
  with mlir.make_ir_context() as context:
    from_text, from_artifact = (
      jex_mlir.deserialize_portable_artifact(w, context).operation.get_asm(enable_debug_info=True)
      for w in written
    )
  assert from_artifact == from_text
  # The NaN test beside the pool: the pipeline ran.
  assert from_artifact.count("stablehlo.reduce_window") == 2
  assert "loc(" in from_artifact
  rewritten = [
    module_rewrite.rewrite(m, "litert")
    for m in (exported.mlir_module(), exported.mlir_module_serialized)
  ]
  assert rewritten[0] == rewritten[1]
