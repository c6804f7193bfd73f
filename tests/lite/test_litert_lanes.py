"""The litert route computes 16-bit floats in float32 and 8- and 16-bit
integers in int32 (jax2tf/native/module_lanes.py), rounding or wrapping each
result where JAX does; the ops whose result depends on the narrow width stay
narrow."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.extend.core import primitives as core_primitives

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from tests.support import compare  # noqa: E402


def _on_litert(fun, *args, route="litert"):
  model = jax2tf.to_tflite(fun, *args, route=route)
  got = lite.run(model, *args)
  want = jax.tree_util.tree_leaves(jax.jit(fun)(*args))
  assert len(got) == len(want)
  for w, g in zip(want, got, strict=True):
    compare.assert_same(np.asarray(w), np.asarray(g), exact=True)


_F16 = np.array([-65504.0, -3.5, -1.0, -0.0, 0.0, 6e-8, 0.1, 1.0, 2.5, 300.0, 65504.0, np.inf,
                 -np.inf, np.nan], np.float16)  # fmt: skip


def _f16_arithmetic(x, y):
  # Overflow to infinity, subnormals, signed zeros and NaN, each rounded to
  # float16 where JAX rounds it. (Not sqrt: LiteRT's float32 SQRT is not
  # correctly rounded, so its float16 result may round the other way; nor
  # negation and maximum, whose zeros' signs LiteRT's kernels lose in every
  # float type, recorded as gaps of the case table.)
  return x * y, x + y, x - y, x / y, x < y, x == y


def test_float16_arithmetic_rounds_where_jax_rounds():
  _on_litert(_f16_arithmetic, _F16, _F16[::-1].copy())


def test_float16_data_movement_and_selection():
  def f(x):
    return jnp.where(x > 0, jnp.broadcast_to(x, (3, x.size)), 1.5).T[::-1], jnp.concatenate([x, x])

  _on_litert(f, _F16)


_I8 = np.array([-128, -127, -100, -1, 0, 1, 2, 7, 100, 127], np.int8)
_U8 = np.array([0, 1, 2, 7, 100, 127, 128, 200, 254, 255], np.uint8)
_I16 = np.array([-32768, -32767, -300, -1, 0, 1, 3, 300, 20000, 32767], np.int16)


def _wrapping(x, y):
  # Sums, products and negations wrap; x / 0 is -1 (all bits) and
  # INT_MIN / -1 is INT_MIN; comparisons see the narrow values.
  return x + y, x * y, -x, lax.div(x, y), lax.rem(x, y), x < y, x == y, jnp.maximum(x, y)


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize(
  "dtype", [np.float16, jnp.bfloat16, np.uint16, np.int8], ids=["f16", "bf16", "u16", "i8"]
)
def test_16_bit_results_of_broadcasts_and_iotas_convert(dtype, route):
  # A 16-bit result that is only a broadcast (or an iota of several axes,
  # which the converters broadcast): they move the convert back to 16 bits
  # above the broadcast, and LiteRT has no 16-bit BROADCAST_TO. Sizes that
  # are and are not powers of two, a new axis and a stretched one.
  if route == "native":
    pytest.importorskip("tensorflow")
  x = np.arange(-2, 3).astype(dtype)

  def f(x):
    return (
      jnp.broadcast_to(x, (3, 5)),
      jnp.broadcast_to(x[:, None], (5, 4)),
      lax.broadcasted_iota(dtype, (2, 3, 7), 2),
      lax.broadcasted_iota(dtype, (6, 2), 0),
    )

  _on_litert(f, x, route=route)


@pytest.mark.parametrize("values", [_I8, _U8, _I16], ids=["int8", "uint8", "int16"])
def test_narrow_integers_wrap_as_in_jax(values):
  divisors = np.roll(values, 3)
  divisors[0] = 0
  if values.dtype.kind == "i":
    values = values.copy()
    values[1], divisors[1] = np.iinfo(values.dtype).min, -1
  _on_litert(_wrapping, values, divisors)


def _litert_module(fun, *args):
  """The text of `fun`'s module after the litert pipeline."""
  from jax.extend.mlir import ir
  from jax.interpreters import mlir

  from jax2tf.native import module_patterns, module_rewrite

  text = jax.export.export(jax.jit(fun))(*args).mlir_module()
  with mlir.make_ir_context(), ir.Location.unknown():
    module = ir.Module.parse(text)
    module_patterns.run(module, module_rewrite.PIPELINES["litert"])
    return str(module)


def test_only_an_arithmetic_shift_of_unsigned_narrow_ints_stays_narrow():
  x = np.zeros(4, np.int8)
  u = np.zeros(4, np.uint8)
  text = _litert_module(
    lambda x, u: (lax.shift_right_logical(x, x), lax.shift_right_arithmetic(x, x),
                  lax.shift_right_arithmetic(u, u), lax.shift_right_logical(u, u)), x, u)  # fmt: skip
  lines = {op: [ln for ln in text.splitlines() if f"stablehlo.{op} " in ln]
           for op in ("shift_right_logical", "shift_right_arithmetic")}  # fmt: skip
  # The width decides an arithmetic shift of uint8 (its fill and, out of
  # range, its answer); a logical shift of int8 is an arithmetic one of its
  # zero-extended bits in int32 (jax2tf/native/integer_patterns.py).
  assert not any("xi8>" in ln or "xui8>" in ln for ln in lines["shift_right_logical"]), lines
  narrow = [ln for ln in lines["shift_right_arithmetic"] if "xi8>" in ln or "xui8>" in ln]
  assert narrow and all("%arg1" in ln and "xui8>" in ln for ln in narrow), lines


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16], ids=["f16", "bf16"])
def test_argmax_and_argmin_of_16_bit_floats_compute_in_float32(dtype, route):
  # LiteRT's ARG_MAX and ARG_MIN take no 16-bit floats; their initial
  # values, infinities, are the same in float32. Ties pick the first; the
  # litert route also picks the first NaN.
  if route == "native":
    pytest.importorskip("tensorflow")
  x = np.array([[1.0, 3.0, 3.0, -2.0], [0.5, -1.0, 0.5, -1.0], [2.0, 2.0, 2.0, 2.0]], dtype)
  if route == "litert":
    x[1, 2] = np.nan

  def f(x):
    return jnp.argmax(x, axis=1), jnp.argmin(x, axis=1), jnp.argmax(x, axis=0)

  _on_litert(f, x, route=route)


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16], ids=["f16", "bf16"])
def test_16_bit_float_sums_and_products_compute_in_float32(dtype, route):
  # LiteRT has no 16-bit SUM, CUMSUM, ADD or MUL; XLA folds them in an
  # order of its own, rounding each step. On 4,096 ones every order gives
  # JAX's sums (adding in order, rounding each step, stops at 2048 in
  # float16 and at 256 in bfloat16). lax's reductions, as jnp.sum widens
  # first. The scatters add 1,024 ones to each of 4 rows in float16 (exact
  # in any order) and each row once in bfloat16.
  if route == "native":
    pytest.importorskip("tensorflow")
  ones = np.ones(4096, dtype)
  powers = np.tile(np.array([2.0, 0.5, 4.0, 0.25, 2.0], dtype), 6)
  duplicates = 1024 if dtype == np.float16 else 1

  def f(ones, powers):
    rows = jnp.zeros((4096 // duplicates, 2), dtype)
    index = jnp.arange(4096) % rows.shape[0]
    return (lax.reduce(ones, dtype(0), lax.add, (0,)), lax.cumsum(ones),
            lax.reduce_window(ones, dtype(0), lax.add, (100,), (7,), "VALID"),
            lax.reduce(powers, dtype(1), lax.mul, (0,)), lax.cumprod(powers),
            rows.at[index].add(jnp.stack([ones, ones], axis=1)),
            jnp.ones_like(rows).at[index[:rows.shape[0]]].mul(powers[0]))  # fmt: skip

  _on_litert(f, ones, powers, route=route)


def test_reductions_of_narrow_types_keep_their_single_op_bodies():
  x16 = np.linspace(-4, 4, 24).astype(np.float16).reshape(4, 6)
  x8 = np.arange(-12, 12, dtype=np.int8).reshape(4, 6)

  def f(a, b):
    return (jnp.max(a, axis=1), lax.reduce_window(a, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID"),
            jnp.argmax(b, axis=0), jnp.min(b, axis=1))  # fmt: skip

  _on_litert(f, x16, x8)


_U32 = np.array([0, 1, 7, 2**31 - 1, 2**31, 2**31 + 5, 2**32 - 2, 2**32 - 1], np.uint32)


def test_uint32_order_and_movement_compute_on_int32_keys():
  # Keys keep the order across 2**31, where an int32 reading of the bits
  # would wrap; the identities of max and min (0, 2**32 - 1) stay exact.
  def f(x, y):
    grid = jnp.stack([x, y])
    return (x < y, x == y, jnp.maximum(x, y), jnp.minimum(x, y), grid.T[::-1],
            jnp.max(grid, axis=0), jnp.min(grid, axis=1), jnp.clip(x, np.uint32(5), y),
            jnp.pad(x, 1, constant_values=np.uint32(2**31 + 1)))  # fmt: skip

  _on_litert(f, _U32, _U32[::-1].copy())


def test_uint32_arithmetic_stays_uint32():
  text = _litert_module(lambda x, y: (x + y, x // y), _U32, _U32)
  assert "stablehlo.add" in text and "stablehlo.divide" in text
  assert all(
    "ui32" in ln for ln in text.splitlines() if "stablehlo.add " in ln or "stablehlo.divide " in ln
  )


@pytest.mark.parametrize("route", ["litert", "native"])
def test_uint32_negations_differences_and_sums_wrap_on_int32_bits(route):
  # LiteRT has no uint32 NEG, SUB, SUM or CUMSUM; int32 of the same bits
  # wraps modulo 2**32 to the same bits.
  if route == "native":
    pytest.importorskip("tensorflow")

  def f(x, y):
    grid = jnp.stack([x, y, x * np.uint32(3)])
    return -x, x - y, jnp.sum(grid, axis=0), jnp.cumsum(grid, axis=1), jnp.prod(grid, axis=0)

  _on_litert(f, _U32, _U32[::-1].copy(), route=route)
  text = _litert_module(f, _U32, _U32)
  assert "stablehlo.bitcast_convert" in text


def _bool_ops(a, b):
  return (
    core_primitives.add_jaxvals_p.bind(a, b),  # a gradient's sum: XLA's or
    lax.clamp(a, b, a | b),
    jnp.maximum(a, b),
    jnp.minimum(a, b),
    a ^ b,
    a < b,
    a <= b,
    a > b,
    a >= b,
    lax.reduce_window(a, False, lax.max, (2,), (1,), "VALID"),
    lax.reduce_xor(a, (0,)),
  )


@pytest.mark.parametrize("route", ["litert", "native"])
def test_bool_maxima_comparisons_and_xor_are_logic(route):
  # TFLite has no MAXIMUM, MINIMUM, ADD, clamp, ordered comparison or XOR
  # of bools; each is LOGICAL_AND/OR/NOT of them
  # (module_patterns.BOOL_OPS_AS_LOGIC).
  if route == "native":
    pytest.importorskip("tensorflow")
  a = np.array([False, False, True, True, False, True], bool)
  b = np.array([False, True, False, True, True, False], bool)
  _on_litert(_bool_ops, a, b, route=route)


@pytest.mark.parametrize("route", ["litert", "native"])
def test_argmax_of_bools_stays_one_kernel(route):
  # Its body compares bools: the converters recognize it as ARG_MAX only
  # as JAX writes it, so the logic forms leave reduction bodies alone.
  from jax2tf.lite import inspect as lite_inspect

  if route == "native":
    pytest.importorskip("tensorflow")
  fun = lambda x: jnp.argmax(x, axis=1)  # noqa: E731
  x = np.array([[False, True, True], [False, False, False], [True, False, True]], bool)
  _on_litert(fun, x, route=route)
  ops = lite_inspect.op_counts(jax2tf.to_tflite(fun, x, route=route, verify=False))
  assert ops.get("ARG_MAX") == 1 and "STABLEHLO_REDUCE" not in ops, ops
