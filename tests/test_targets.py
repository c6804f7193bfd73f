"""Targets as data: what each consumer can run, and rules that ask it, never its name."""

import ast
import dataclasses
import pathlib
import re

import jax
import jax.numpy as np_jax
import numpy as np
import pytest
import tensorflow as tf

from jax2tf import api, options, targets
from jax2tf.graph import bit_ops

_RULES = pathlib.Path(__file__).parents[1] / "jax2tf" / "graph" / "rules"

# Queries of the target in the rules, a capability each. The count may only
# go down: a new target-dependent behaviour belongs in the target's kernel
# lists (read through `ctx.kernel_or`), `ctx.bits`, a rule registered in
# lanes, or a shared helper, not in another branch.
_TARGET_QUERY = re.compile(
  r"ctx\.target\.(?!signed_zeros\b)\w+|ctx\.bits\.in_halves|ctx\.uint32_in_int32_bits"
  r"|_unsigned_lanes\(ctx\)|ctx\.in_wide_lanes"
)
_MOST_TARGET_QUERIES = 7


def _rule_sources():
  return {p.name: p.read_text() for p in sorted(_RULES.glob("*.py"))}


def test_rules_never_ask_for_a_target_by_name():
  names = {t.name for t in targets.TARGETS.values()}
  for file, source in _rule_sources().items():
    tree = ast.parse(source)
    for node in ast.walk(tree):
      if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) in ("ctx", "env"):
        assert node.attr not in ("for_tfjs", "for_tflite", "enable_xla", "consumer"), (
          f"{file}:{node.lineno} reads ctx.{node.attr}; ask ctx.target for a capability"
        )
      if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
        if node.attr == "name":
          assert node.value.attr != "target", f"{file}:{node.lineno} compares the target's name"
      if isinstance(node, ast.Constant) and isinstance(node.value, str):
        assert node.value not in names, f"{file}:{node.lineno} names the target {node.value!r}"


def test_target_queries_in_the_rules_only_go_down():
  sites = {
    f"{file}:{source.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
    for file, source in _rule_sources().items()
    for m in _TARGET_QUERY.finditer(source)
  }
  assert len(sites) <= _MOST_TARGET_QUERIES, "\n".join(sorted(sites))


def test_every_target_declares_known_legalizations_and_bit_ops():
  for t in targets.TARGETS.values():
    assert set(t.legalizations) <= set(targets.LEGALIZATIONS), t.name
    assert t.bit_ops in targets.BIT_OPS, t.name
    assert t.missing_kernels_f64 <= t.missing_kernels, t.name
  with pytest.raises(ValueError, match="unknown legalizations"):
    dataclasses.replace(targets.TF_XLA, legalizations=("float16_everywhere",))
  with pytest.raises(ValueError, match="bit_ops"):
    dataclasses.replace(targets.TF_XLA, bit_ops="abacus")


def test_missing_kernels_by_dtype():
  assert targets.TFLITE.lacks_kernel("Tan", tf.float32)
  assert not targets.TFLITE.lacks_kernel("Tan", tf.float64)  # a float32 series
  assert targets.TFLITE.lacks_kernel("Atan", np.dtype(np.float64))
  assert not targets.TFLITE.lacks_kernel("Log", tf.complex64)  # formulations are real
  assert not targets.TF_XLA.lacks_kernel("Atan", tf.float32)
  assert targets.TF_NO_XLA.lacks_kernel("Erf", "float32")
  assert not targets.TF_NO_XLA.lacks_kernel("Tan", "float32")


def test_kernels_missing_on_some_dtypes_only():
  assert targets.TFJS.lacks_kernel("Mul", tf.int32)  # JavaScript numbers
  assert not targets.TFJS.lacks_kernel("Mul", tf.float32)
  assert not targets.TFLITE.lacks_kernel("Mul", tf.int32)
  assert targets.TFLITE.lacks_kernel("Less", "uint8")  # quantized comparisons
  assert not targets.TFLITE.lacks_kernel("Less", "int32")
  assert targets.TFLITE.lacks_kernel("Neg", "float32")  # NEG of -0.0 gives +0.0
  assert not targets.TF_XLA.lacks_kernel("Neg", "float32")
  assert targets.TFLITE.lacks_kernel("MatMul", "int32")
  assert not targets.TFJS.lacks_kernel("MatMul", "int32")


def test_xla_ops_have_kernels_only_where_the_target_takes_them():
  for t in targets.TARGETS.values():
    assert t.lacks_kernel("XlaGather") == (not t.xla_ops), t.name


def _options(*, enable_xla, target=None, native_serialization=False):
  return options.make_options(
    polymorphic_shapes=None,
    polymorphic_constraints=(),
    with_gradient=False,
    enable_xla=enable_xla,
    native_serialization=native_serialization,
    native_serialization_platforms=None,
    native_serialization_disabled_checks=(),
    target_tf_version=None,
    target=target,
  )


def test_convert_picks_its_target_by_enable_xla():
  make = _options
  assert make(enable_xla=True).target is targets.TF_XLA
  assert make(enable_xla=False).target is targets.TF_NO_XLA
  assert make(enable_xla=False, target=targets.TFJS).target is targets.TFJS
  with pytest.raises(ValueError, match="enable_xla=False forbids"):
    make(enable_xla=False, target=targets.TF_XLA)
  with pytest.raises(ValueError, match="reads no native module"):
    make(enable_xla=True, target=targets.TFJS, native_serialization=True)
  with pytest.raises(TypeError, match="expected a jax2tf.targets.Target"):
    make(enable_xla=False, target="tflite")


def _graph_ops(fun, target, *args):
  opts = _options(enable_xla=target.xla_ops, target=target)
  f_tf = tf.function(api.converted_function(fun, opts), autograph=False)
  specs = [tf.TensorSpec(a.shape, a.dtype) for a in args]
  graph = f_tf.get_concrete_function(*specs).graph
  return f_tf, [op.type for op in graph.get_operations()]


def test_a_target_without_signed_zeros_leaves_out_the_zero_test():
  # max tells +0.0 from -0.0 by 1/x; a fully int8-quantized model holds no
  # -0.0, and LiteRT's int8 DIV refuses the zero divisor.
  x = np.array([0.0, -0.0, 1.0, np.nan, -2.0], np.float32)
  y = np.array([-0.0, 0.0, np.nan, 1.0, -3.0], np.float32)
  fun = lambda a, b: jax.numpy.maximum(a, b)  # noqa: E731
  with_zeros, ops = _graph_ops(fun, targets.TFLITE, x, y)
  assert "RealDiv" in ops
  without, ops = _graph_ops(fun, targets.TFLITE_INT8, x, y)
  assert "RealDiv" not in ops
  want = np.asarray(jax.jit(fun)(x, y))
  got = with_zeros(x, y).numpy()
  np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
  np.testing.assert_array_equal(got, want)
  # Without signed zeros only the sign of a zero result may differ.
  np.testing.assert_array_equal(without(x, y).numpy(), want)


@pytest.mark.parametrize("target", [targets.TF_XLA, targets.TF_NO_XLA, targets.TFLITE])
def test_bit_ops_give_xla_shifts_out_of_range(target):
  x = np.array([1, -8, 2**30, -(2**31), 7], np.int32)
  amounts = np.array([0, 3, 31, 32, -1], np.int32)
  bits = bit_ops.BitOps(target)
  for name, lax_op in [
    ("shift_left", jax.lax.shift_left),
    ("shift_right_logical", jax.lax.shift_right_logical),
    ("shift_right_arithmetic", jax.lax.shift_right_arithmetic),
  ]:
    got = getattr(bits, name)(tf.constant(x), tf.constant(amounts)).numpy()
    np.testing.assert_array_equal(got, np.asarray(jax.jit(lax_op)(x, amounts)), err_msg=name)


def test_tfjs_bit_ops_work_in_halves():
  bits = bit_ops.BitOps(targets.TFJS)
  a = np.array([0x7FFFFFFF, -1, 123456789, -(2**31)], np.int32)
  b = np.array([0x7FFFFFFF, 3, 987654321, -1], np.int32)
  assert bits.in_halves(tf.constant(a))
  got = bits.multiply(tf.constant(a), tf.constant(b)).numpy()
  np.testing.assert_array_equal(got, np.asarray(jax.jit(jax.lax.mul)(a, b)))
  got = bits.bitwise_and(tf.constant(a), tf.constant(b)).numpy()
  np.testing.assert_array_equal(got, np_jax.bitwise_and(a, b))


def test_shape_checks_of_a_graph_without_xla_ops_compile():
  # The polymorphic shape checks of a graph are a native module, read by
  # TF's XLA whatever the graph's own target.
  fun = lambda x: np_jax.sin(x) * 2  # noqa: E731
  import jax2tf

  f_tf = jax2tf.convert(
    fun, polymorphic_shapes=["b, ..."], native_serialization=False, enable_xla=False
  )
  x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
  got = tf.function(f_tf, jit_compile=True, autograph=False)(x).numpy()
  np.testing.assert_allclose(got, np.asarray(jax.jit(fun)(x)), rtol=1e-6)


class _NumpyMathOps:
  """portable_math.MathOps on float32 NumPy arrays, with the Log of LiteRT's
  vectorized kernel on x86 CPUs without AVX-512: about 88.7 (the log of the
  largest float) for inf and NaN."""

  def constant(self, c, like):
    return np.full_like(like, c)

  abs, sqrt, floor = staticmethod(np.abs), staticmethod(np.sqrt), staticmethod(np.floor)
  add, sub, mul = staticmethod(np.add), staticmethod(np.subtract), staticmethod(np.multiply)
  div, exp, select = staticmethod(np.divide), staticmethod(np.exp), staticmethod(np.where)

  def negate(self, x):
    return -x

  def less(self, x, c):
    return x < c

  def equal(self, x, y):
    return x == y

  def not_equal(self, x, y):
    return x != y

  def log(self, x):
    return np.where(np.isnan(x) | (x == np.inf), np.float32(88.72284), np.log(x))


@pytest.mark.parametrize(
  "name,reference,x",
  [
    ("log", np.log, [np.inf, np.nan, 0.0, -1.0, 1.0, 2.5, 1e30, 3e38]),
    ("log1p", np.log1p, [np.inf, np.nan, -1.0, -2.0, 1e-6, 0.5, 1e30]),
    ("asinh", np.arcsinh, [np.inf, -np.inf, np.nan, 0.7, -3.0, 1e20]),
    ("acosh", np.arccosh, [np.inf, np.nan, 0.5, 1.0, 3.0, 1e20]),
    ("atanh", np.arctanh, [1.0, -1.0, np.nan, 2.0, 0.5, -0.9]),
  ],
)
def test_portable_logs_keep_inf_and_nan_where_the_kernel_does_not(name, reference, x):
  from jax2tf.targets import portable_math

  x = np.array(x, np.float32)
  with np.errstate(all="ignore"):
    got = getattr(portable_math, name)(_NumpyMathOps(), x)
    want = reference(x.astype(np.float64)).astype(np.float32)
  np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
