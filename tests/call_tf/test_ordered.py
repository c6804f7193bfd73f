"""ordered=True: the call is sequenced with JAX's ordered effects.

Under jit the sequencing is in the lowered module's data flow (tokens), which
is checked on the module; eagerly it is observable at run time, which is
checked with an ordered io_callback and a TF function that logs.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from jax import lax
from jax.experimental import io_callback
from jax.extend.mlir import ir

import jax2tf
from jax2tf import call_tf
from jax2tf.call_tf import function_list


def _main_ops(module):
  main = [op for op in module.body.operations
          if ir.StringAttr(op.attributes["sym_name"]).value == "main"][0]
  return list(main.regions[0].blocks[0].operations)


def _depends(module):
  """The ops of `main` and, per op, the indices of the ops it depends on
  (transitively, through operands)."""
  ops = _main_ops(module)
  index = {op.operation: i for i, op in enumerate(ops)}
  closure = []
  for op in ops:
    found = set()
    for v in op.operands:
      if isinstance(v.owner, ir.Block):
        continue
      j = index[v.owner.operation if hasattr(v.owner, "operation") else v.owner]
      found |= {j} | closure[j]
    closure.append(found)
  return ops, closure


def _positions(ops, pred):
  return [i for i, op in enumerate(ops) if pred(op)]


def _is_io_callback(op):
  return op.operation.name == "stablehlo.custom_call" and "callback" in str(
      op.attributes["call_target_name"])


def _is_call_tf(op):
  return op.operation.name == "func.call" and "call_tf_" in str(op.attributes["callee"])


def _between_io_callbacks(ordered):
  def f(x):
    io_callback(lambda: None, None, ordered=True)
    y = call_tf(tf.math.sin, ordered=ordered)(x)
    io_callback(lambda: None, None, ordered=True)
    return y
  return f


@pytest.mark.parametrize("ordered", [True, False])
def test_lowered_call_sits_between_ordered_io_callbacks(ordered):
  module = jax.jit(_between_io_callbacks(ordered)).lower(np.float32(1.)).compiler_ir("stablehlo")
  ops, deps = _depends(module)
  first_cb, second_cb = _positions(ops, _is_io_callback)
  (call,) = _positions(ops, _is_call_tf)
  # Only data flow orders XLA's execution; without `ordered` there is none.
  assert (first_cb in deps[call]) == ordered
  assert (call in deps[second_cb]) == ordered


@pytest.mark.parametrize("ordered", [True, False])
def test_two_ordered_calls_are_chained(ordered):
  def f(x):
    return call_tf(tf.math.sin, ordered=ordered)(x), call_tf(tf.math.cos, ordered=ordered)(x)

  module = jax.jit(f).lower(np.float32(1.)).compiler_ir("stablehlo")
  ops, deps = _depends(module)
  first, second = _positions(ops, _is_call_tf)
  assert (first in deps[second]) == ordered


def test_ordered_call_with_unused_result_reaches_the_returned_tokens():
  f = lambda x: (call_tf(tf.math.sin, ordered=True)(x), x + 1.)[1]
  module = jax.jit(f).lower(np.float32(1.)).compiler_ir("stablehlo")
  ops, deps = _depends(module)
  (call,) = _positions(ops, _is_call_tf)
  (ret,) = _positions(ops, lambda op: op.operation.name == "func.return")
  assert call in deps[ret]


def test_ordered_under_jit_and_control_flow_matches_jax():
  log = []
  f_tf = call_tf(lambda x: tf.math.sin(x) + 1., ordered=True)
  f_ref = lambda x: jnp.sin(x) + 1.

  def program(f):
    def run(x):
      io_callback(lambda: log.append("before"), None, ordered=True)
      y = lax.cond(x[0] > 0, f, lambda x: x * 0., x)
      y = lax.fori_loop(0, 2, lambda i, c: f(c), y)
      y = lax.scan(lambda c, xi: (f(c) + xi, None), y, jnp.stack([x, x]))[0]
      io_callback(lambda: log.append("after"), None, ordered=True)
      return y
    return run

  x = np.arange(1, 4, dtype=np.float32)
  np.testing.assert_allclose(jax.jit(program(f_tf))(x), jax.jit(program(f_ref))(x), rtol=1e-5)
  jax.effects_barrier()
  assert log == ["before", "after"] * 2


def _logging_tf(log, tag):
  def append(v):
    log.append(tag)
    return v

  def f_tf(x):
    return tf.py_function(append, [x], tf.float32)
  f_tf.__name__ = f"log_{tag}"
  return f_tf


def test_ordered_eager_call_waits_for_earlier_ordered_effects():
  log = []

  @functools.partial(jax.jit, static_argnums=1)
  def jax_log(x, tag):
    # The matmul makes the computation costly enough for JAX to dispatch it
    # asynchronously, so the callback may run after Python has moved on.
    s = jnp.sum(x @ x)
    io_callback(lambda s: log.append(tag), None, s, ordered=True)

  f = call_tf(_logging_tf(log, "tf"), ordered=True,
              output_shape_dtype=jax.ShapeDtypeStruct((), jnp.float32))
  big = np.ones((1000, 1000), np.float32)
  for _ in range(3):
    log.clear()
    jax_log(big, "jax_before")
    f(np.float32(1.))
    jax_log(big, "jax_after")
    jax.effects_barrier()
    assert log == ["jax_before", "tf", "jax_after"]


@pytest.mark.parametrize("call_tf_graph", [False, True])
def test_convert_native_ordered(call_tf_graph):
  fun_jax = lambda x: jnp.cos(call_tf(tf.math.sin, ordered=True, call_tf_graph=call_tf_graph)(x))
  x = np.linspace(0, 1, 3, dtype=np.float32)
  f_tf = jax2tf.convert(fun_jax, native_serialization=True)
  want = jnp.cos(jnp.sin(x))
  np.testing.assert_allclose(f_tf(x), want, rtol=1e-6)
  np.testing.assert_allclose(tf.function(f_tf, autograph=False)(x), want, rtol=1e-6)


def _is_tf_function_call(op):
  return op.operation.name == "stablehlo.custom_call" and "tf.call_tf_function" in str(
      op.attributes["call_target_name"])


@pytest.mark.parametrize("with_io_callbacks", [False, True])
def test_call_tf_graph_passes_the_token_to_the_tf_function(with_io_callbacks):
  def fun_jax(x):
    if with_io_callbacks:
      io_callback(lambda: None, None, ordered=True)
    y = call_tf(tf.math.sin, ordered=True, call_tf_graph=True)(x)
    if with_io_callbacks:
      io_callback(lambda: None, None, ordered=True)
    return jnp.cos(y)

  # The lowering jax2tf.convert(native_serialization=True) gets.
  with function_list.collecting() as called:
    module = jax.jit(fun_jax).lower(np.float32(1.)).compiler_ir("stablehlo")
  assert len(called) == 1
  ops, deps = _depends(module)
  (custom,) = _positions(ops, _is_tf_function_call)
  assert "has_token_input_output = true" in str(ops[custom].attributes["tf.backend_config"])
  assert str(ops[custom].operands[0].type) == "!stablehlo.token"
  assert str(ops[custom].results[0].type) == "!stablehlo.token"
  if with_io_callbacks:
    first_cb, second_cb = _positions(ops, _is_io_callback)
    assert first_cb in deps[custom] and custom in deps[second_cb]


@pytest.mark.parametrize("native", [True, False], ids=["native", "graph"])
def test_convert_ordered_with_polymorphic_shapes(native):
  # Symbolic results: the custom call cannot take the token (no shape to
  # refine it from), so barriers order it instead.
  fun_jax = lambda x: call_tf(tf.math.sin, ordered=True, output_shape_dtype=x)(x) * 2.
  f_tf = jax2tf.convert(fun_jax, polymorphic_shapes=["b"], native_serialization=native)
  for n in (2, 5):
    x = np.linspace(0, 1, n, dtype=np.float32)
    np.testing.assert_allclose(f_tf(x), jnp.sin(x) * 2., rtol=1e-6)


# Native serialization without call_tf_graph would compile py_function with XLA.
@pytest.mark.parametrize("native, call_tf_graph", [(False, False), (False, True), (True, True)],
                         ids=["graph", "graph-call_tf_graph", "native-call_tf_graph"])
def test_convert_runs_stateful_ordered_calls_in_program_order(native, call_tf_graph):
  log = []
  spec = jax.ShapeDtypeStruct((), jnp.float32)
  f_a = call_tf(_logging_tf(log, "a"), ordered=True, output_shape_dtype=spec,
                call_tf_graph=call_tf_graph)
  f_b = call_tf(_logging_tf(log, "b"), ordered=True, output_shape_dtype=spec,
                call_tf_graph=call_tf_graph)

  def fun_jax(x):
    a = f_a(x * 2.)
    b = f_b(x * 3.)  # independent of `a`: only the order of effects links them
    return b, a

  f_tf = tf.function(jax2tf.convert(fun_jax, native_serialization=native), autograph=False)
  for _ in range(3):
    log.clear()
    b, a = f_tf(np.float32(1.))
    assert (float(a), float(b)) == (2., 3.)
    assert log == ["a", "b"]
