"""Lowering call_tf into JAX's own StableHLO module.

Static shapes: TensorFlow compiles the function with its XLA bridge
(`experimental_get_compiler_ir(...)(stage="hlo_serialized")`), the HLO is
imported as StableHLO, merged into the module being built and called with
`func.call`; XLA then optimises across the boundary like any other function.
Captured tensors and `tf.Variable`s become constants (read when the call is
compiled).

Symbolic shapes (jax2tf.convert with polymorphic_shapes) and
`call_tf_graph=True`: inside jax2tf.convert's native export the call becomes
`stablehlo.custom_call @tf.call_tf_function`, which XlaCallModule resolves by
calling the TF function (its `function_list` entry) at the real shapes.
(Native conversion first splits the function at the call_tf_graph=True calls
it can reach, jax2tf/native/split.py, so only calls inside control flow and
the like get here with that flag.)

`ordered=True`: the call consumes every ordered-effect token in scope
(call_tf's own and, e.g., an ordered io_callback's) and produces the tokens
that later ordered effects consume, so XLA can neither run the call before an
earlier ordered effect nor a later one before the call. The inlined XLA code
cannot take a token, so `stablehlo.optimization_barrier`s tie the tokens to
its operands and its results; the custom call takes and returns one token
itself (`has_token_input_output`).
"""

import numpy as np
import tensorflow as tf
from jax.extend import mlir as jex_mlir
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import func as func_dialect
from jax.extend.mlir.dialects import stablehlo as hlo
from jax.interpreters import mlir

from jax2tf.call_tf import function_list
from jax2tf.call_tf.functions import TfFunction, is_static, spec_of
from jax2tf.call_tf.primitive import call_tf_p
from jax2tf.internals import jax_private

_TF_DEVICE_TYPE = {"cpu": "CPU", "cuda": "GPU", "rocm": "GPU", "tpu": "TPU"}
_TF_PLATFORM_NAME = {"cpu": "Host", "cuda": "CUDA", "rocm": "ROCM", "tpu": "TPU"}

# Ops that write a resource; under jit the write would be lost, so it is an error.
_WRITE_OP_PREFIXES = (
  "Assign",
  "ResourceApply",
  "ResourceSparseApply",
  "ResourceScatter",
  "ResourceStridedSliceAssign",
)


def _op_types(graph) -> set:
  types = {op.type for op in graph.get_operations()}
  for fdef in graph.as_graph_def().library.function:
    types.update(node.op for node in fdef.node_def)
  return types


def _check_no_variable_writes(fn: TfFunction, cf):
  writes = sorted(
    t
    for t in _op_types(cf.graph)
    if t.startswith(_WRITE_OP_PREFIXES) and ("Variable" in t or not t.startswith("Assign"))
  )
  if writes:
    raise ValueError(
      f"call_tf: the TF function {fn.name} writes to tf.Variables (ops {writes}), "
      "which is not supported under jax.jit or other JAX staging: the compiled "
      "call reads captured variables as constants and cannot update them. "
      "Remedy: make the function pure: pass the variable's value in as an argument "
      "and return its new value as a result (then assign it outside), or call the "
      "function outside JAX staging (op-by-op), where TF eager updates variables."
    )


def tf_device_for(platform: str) -> tuple[str, str]:
  device_type = _TF_DEVICE_TYPE.get(platform, platform.upper())
  devices = tf.config.list_logical_devices(device_type)
  if not devices:
    raise ValueError(
      f"call_tf: JAX lowers this computation for platform {platform!r}, but "
      f"TensorFlow sees no {device_type} device to compile the TF function for. "
      f"TF devices: {[d.name for d in tf.config.list_logical_devices()]}"
    )
  return devices[0].name, _TF_PLATFORM_NAME.get(platform, platform.upper())


def _same_device(a: str, b: str) -> bool:
  da, db = tf.DeviceSpec.from_string(a or ""), tf.DeviceSpec.from_string(b or "")
  return (da.device_type or "CPU").upper() == (db.device_type or "CPU").upper() and (
    da.device_index or 0
  ) == (db.device_index or 0)


def _captured_values(fn: TfFunction, cf, device_name: str) -> list:
  # JAX may lower while TF builds a graph (jax2tf.convert called inside a
  # tf.function); there a variable's value would be a symbolic tensor that
  # NumPy cannot read. The values are read eagerly, outside that graph. (Only
  # here: init_scope also pauses gradient tapes, which a traced VJP needs.)
  with tf.init_scope():
    return _read_captured_values(fn, cf, device_name)


def _read_captured_values(fn: TfFunction, cf, device_name: str) -> list:
  values = []
  variables = list(cf.variables)
  for inp in cf.captured_inputs:
    if inp.dtype == tf.resource:
      found = [v for v in variables if v.handle is inp]
      if len(found) != 1:
        raise ValueError(
          f"call_tf: the TF function {fn.name} captures a resource that is not a "
          "tf.Variable (e.g. a lookup table or a dataset); under jax.jit only "
          "tensors and variables can be captured. Pass its contents as arguments."
        )
      var = found[0]
      if not _same_device(var.device, device_name):
        raise ValueError(
          f"call_tf: the TF function {fn.name} captures the variable {var.name} "
          f"placed on {var.device}, but the JAX computation is lowered for "
          f"{device_name}. Captured variables must live on the device the "
          "computation runs on; create the variable under "
          f"tf.device({device_name!r}), or pass its value as an argument."
        )
      values.append(np.asarray(var.read_value()))
    else:
      values.append(np.asarray(inp))
  return values


def compile_to_stablehlo(fn: TfFunction, in_avals, device_name: str, platform_name: str):
  """(StableHLO bytecode, captured values) for `fn` at static `in_avals`."""
  specs = [spec_of(a) for a in in_avals]
  jit_fn = tf.function(fn.flat_fn, autograph=False, jit_compile=True)
  with tf.device(device_name):
    cf = jit_fn.get_concrete_function(*specs)
    _check_no_variable_writes(fn, cf)
    captured = _captured_values(fn, cf, device_name)
    try:
      hlo_bytes = jit_fn.experimental_get_compiler_ir(*specs)(stage="hlo_serialized")
    except Exception as e:  # TF raises several types (InvalidArgumentError, ...)
      raise ValueError(
        f"call_tf: TensorFlow cannot compile the TF function {fn.name} with XLA for "
        f"arguments {[str(s) for s in specs]}, which is needed when it is called "
        "under jax.jit, lax.cond/while_loop/scan or another JAX staging context "
        "(it must work with tf.function(jit_compile=True)). Remedy: call it "
        "outside JAX staging (op-by-op, TF eager), remove the ops XLA does not "
        "support (e.g. tf.strings, tf.py_function), or, when converting back to "
        "TF with jax2tf.convert, use call_tf_graph=True (with native "
        "serialization only for calls outside lax control flow). "
        f"TensorFlow said: {e}"
      ) from e
  return jex_mlir.hlo_to_stablehlo(hlo_bytes), captured


def _symbolic(ctx) -> bool:
  return not all(is_static(a) for a in (*ctx.avals_in, *ctx.avals_out))


def _lowering(ctx, *args, fn: TfFunction, has_side_effects, ordered, call_tf_graph):
  if call_tf_graph or _symbolic(ctx):
    if function_list.active():
      # stablehlo refine-shapes wants one shape operand per result, and a
      # token result has no shape: with symbolic results the call is fenced.
      takes_token = all(is_static(a) for a in ctx.avals_out)
      return _ordered(
        ctx,
        ordered,
        args,
        takes_token,
        lambda args, token: _lower_to_tf_function_call(ctx, args, fn, has_side_effects, token),
      )
    if _symbolic(ctx):
      raise ValueError(
        f"call_tf: the TF function {fn.name} is called with symbolic shapes "
        f"{[str(a) for a in ctx.avals_in]} outside jax2tf.convert. Its XLA code "
        "can only be produced for static shapes; symbolic shapes work when the "
        "JAX function is converted with jax2tf.convert(..., polymorphic_shapes=...) "
        "(TF then runs the function at the real shapes). Export with static "
        "shapes, or convert with jax2tf.convert."
      )
  return _ordered(
    ctx, ordered, args, False, lambda args, token: (_inline_compiled(ctx, args, fn), None)
  )


def _ordered(ctx, ordered: bool, args, takes_token: bool, emit):
  """The results of `emit(args, token)` -> (results, token), sequenced with
  the ordered effects in scope when `ordered`: through the op's own token
  operand and result when `takes_token`, otherwise through barriers that tie
  the tokens to its operands and its results."""
  tokens = _tokens_in_scope(ctx) if ordered else []
  if not tokens:
    return emit(list(args), None)[0]
  n = len(tokens)
  if takes_token:
    results, token = emit(list(args), tokens[0] if n == 1 else hlo.AfterAllOp(tokens).result)
    tokens = [token] if n == 1 else _barrier([token, *tokens[1:]])
  else:
    fenced = _barrier([*tokens, *args])
    results, _ = emit(fenced[n:], None)
    fenced = _barrier([*fenced[:n], *results])
    tokens, results = fenced[:n], fenced[n:]
  # One distinct token value per effect: XLA's CPU client refuses a module
  # that returns the same token twice.
  effects = [e for e, _ in ctx.tokens_in.items()]
  ctx.set_tokens_out(ctx.tokens_in.update_tokens(mlir.TokenSet(dict(zip(effects, tokens)))))
  return results


def _tokens_in_scope(ctx) -> list:
  return [t for _, t in ctx.tokens_in.items()] if ctx.tokens_in is not None else []


def _barrier(values: list) -> list:
  return list(hlo.OptimizationBarrierOp(values).results)


def _inline_compiled(ctx, args, fn: TfFunction):
  platforms = ctx.module_context.platforms
  device_name, platform_name = tf_device_for(platforms[0])
  bytecode, captured = fn.compiled(ctx.avals_in, device_name, platform_name, compile_to_stablehlo)
  submodule = ir.Module.parse(bytecode, context=ctx.module_context.context)
  callee = submodule.body.operations
  main = [op for op in callee if ir.StringAttr(op.attributes["sym_name"]).value == "main"][0]
  result_types = list(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results)
  _check_result_types(ctx, fn, result_types)
  name = mlir.merge_mlir_modules(
    ctx.module_context.module, f"call_tf_{_symbol_name(fn.name)}", submodule
  )
  operands = list(args) + [mlir.ir_constant(np.asarray(c)) for c in captured]
  call = func_dialect.CallOp(result_types, ir.FlatSymbolRefAttr.get(name), operands)
  return list(call.results)


def _symbol_name(name: str) -> str:
  return "".join(c if c.isalnum() or c == "_" else "_" for c in name)[:60] or "fn"


def _check_result_types(ctx, fn, result_types):
  expected = [mlir.aval_to_ir_type(ctx.module_context, a) for a in ctx.avals_out]
  if [str(t) for t in result_types] != [str(t) for t in expected]:
    raise ValueError(
      f"call_tf: TensorFlow compiled the TF function {fn.name} to results "
      f"{[str(t) for t in result_types]}, but JAX expects "
      f"{[str(t) for t in expected]} (from output_shape_dtype or TF's shape "
      "inference). Fix output_shape_dtype to match what the function returns."
    )


def _lower_to_tf_function_call(ctx, args, fn: TfFunction, has_side_effects, token):
  cf = fn.concrete([spec_of(a) for a in ctx.avals_in])
  index = function_list.add(cf)
  result_types = [mlir.aval_to_ir_type(ctx.module_context, a) for a in ctx.avals_out]
  operands = list(args)
  shape_operands = []
  if not all(is_static(a) for a in ctx.avals_out):
    # XlaCallModule refines the custom call's result types from these shape
    # operands (stablehlo refine-shapes), before it inlines the TF function.
    shape_operands = [jax_private.eval_dynamic_shape_as_tensor(ctx, a.shape) for a in ctx.avals_out]
  if token is not None:
    # XlaCallModule expects the token first among operands and results.
    operands.insert(0, token)
    result_types.insert(0, hlo.TokenType.get())
  op = hlo.CustomCallOp(
    result_types,
    operands + shape_operands,
    call_target_name=ir.StringAttr.get("tf.call_tf_function"),
    has_side_effect=ir.BoolAttr.get(bool(has_side_effects) or token is not None),
    api_version=mlir.i32_attr(2),
    called_computations=ir.ArrayAttr.get([]),
    backend_config=ir.StringAttr.get(""),
  )
  config = {
    "called_index": mlir.i64_attr(index),
    "has_token_input_output": ir.BoolAttr.get(token is not None),
  }
  op.attributes["tf.backend_config"] = ir.DictAttr.get(config)
  if shape_operands:
    first = len(operands)
    op.attributes["indices_of_shape_operands"] = ir.DenseIntElementsAttr.get(  # type: ignore[call-overload]
      np.arange(first, first + len(shape_operands), dtype=np.int64),
      type=ir.RankedTensorType.get([len(shape_operands)], ir.IntegerType.get_signless(64)),
    )
  results = list(op.results)
  if token is not None:
    token, *results = results
  return results, token


# Not cacheable: JAX's lowering cache would lower the call in a function of its
# own that sees only call_tf's token, and ordered=True threads every token in scope.
mlir.register_lowering(call_tf_p, _lowering, cacheable=False)
