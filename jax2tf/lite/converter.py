"""TF's TFLite converter on a traced function, and its refusals in JAX's terms.

The converter names the TF ops that TFLite has no builtin kernel for; the
graph serialization puts every TF op under a name scope named after the JAX
primitive it lowers, so a refusal can name the primitive (and, from the
jaxpr, the line of user code that applied it).
"""

import re
import warnings

import numpy as np
import tensorflow as tf

from jax2tf.deploy import provenance
from jax2tf.deploy.signature import Traced
from jax2tf.lite import calibration, mlir_types
from jax2tf.lite.errors import TFLiteConversionError

# A converter message names refused ops as `'tf.Name'`, `tf.Name(` or in
# lists "Flex ops: FlexName, ..." / "Custom ops: Name, ...".
_TF_OP = re.compile(r"\btf\.([A-Z]\w*)")
_OP_LISTS = re.compile(r"(?:Flex|Custom|TF Select) ops: ([\w, ]+)")


def refused_ops(message: str) -> list[str]:
  ops: list[str] = []
  for listed in _OP_LISTS.findall(message):
    for name in listed.split(","):
      name = name.strip()
      if name.startswith("Flex"):
        name = name[len("Flex") :]
      if name and name not in ops:
        ops.append(name)
  for name in _TF_OP.findall(message):
    if name not in ops and not name.startswith("Xla") and name != "Identity":
      ops.append(name)
  return ops


# Its "Details:" lines show each refused op's operand types, in MLIR's
# spelling: "tf.Minimum(tensor<3xui8>, tensor<3xui8>) -> (tensor<3xui8>)".
_DETAIL = re.compile(r"^\s*tf\.(\w+)\((.*?)\) ->", re.MULTILINE)


def operand_dtypes(message: str) -> dict[str, list[str]]:
  """{TF op: the dtypes of its operands where the converter refused it}: TFLite
  has kernels for most ops, but often not for every dtype (MINIMUM and NEG take
  8-bit integers only quantized)."""
  out: dict[str, list[str]] = {}
  for op, operands in _DETAIL.findall(message):
    dtypes = out.setdefault(op, [])
    for dtype in mlir_types.tensor_dtypes(operands):
      if dtype not in dtypes:
        dtypes.append(dtype)
  return out


# The converter's error data locate an op by its TF name: name: "scope/Op@function".
_LOCATED_OP = re.compile(r'name: "([^"@]+)@')


def _located_op_names(error: Exception) -> list[str]:
  """The TF op names the converter's structured error data locate (it gives
  them for ops it cannot lower, such as a TFLite op without the dtype)."""
  return [n for data in getattr(error, "errors", ()) for n in _LOCATED_OP.findall(str(data))]


# "failed to legalize operation 'tfl.concatenation' ...": a TFLite op the
# converter made of a TF op and then found no kernel for. Behind a cond its
# error can come with no location (an empty complex concatenation did).
_ILLEGAL_TFLITE_OP = re.compile(r"failed to legalize operation '?tfl\.(\w+)")
# TFLite op names that are not their TF op's name in snake case.
_TF_NAME_OF_TFLITE_OP = {"concatenation": "concat"}


def _op_key(name: str) -> str:
  """`name` without case, underscores and a version suffix: ReverseV2 and
  reverse_v2 are both "reverse"."""
  return re.sub(r"v\d+$", "", name.replace("_", "").lower())


def _tf_ops_of_illegal_tflite_ops(message: str, nodes) -> set[str]:
  """The TF op types of `nodes` that the TFLite ops the converter could not
  legalize were made of."""
  names = {_op_key(_TF_NAME_OF_TFLITE_OP.get(n, n)) for n in _ILLEGAL_TFLITE_OP.findall(message)}
  return {node.op for node in nodes if _op_key(node.op) in names}


def explain(error: Exception, traced: Traced, route: str, allow_flex: bool) -> str:
  """The converter's refusal as a message about the JAX function."""
  message = str(error)
  concrete = traced.function.get_concrete_function()
  ops = refused_ops(message)
  dtypes = operand_dtypes(message)
  applied = provenance.primitive_lines(traced.jaxpr)
  nodes = list(provenance.node_defs(concrete.graph.as_graph_def()))
  origins = provenance.primitives_of_ops(nodes, set(ops), set(applied))
  lines = []
  for op in ops:
    primitives = origins.get(op, [])
    if not primitives:
      continue
    where = provenance.describe(primitives, applied)
    on = f" on {', '.join(dtypes[op])}" if dtypes.get(op) else ""
    lines.append(f"TF op {op}{on}, emitted for the JAX primitive {where}")
  if lines:
    what = "TFLite has no builtin kernel for:\n  " + "\n  ".join(lines)
  else:
    errors = []
    for line in message.splitlines():
      if "error:" in line:
        text = line[line.index("error:") + len("error:") :].strip()
        if text and text not in errors:
          errors.append(text)
    located = provenance.primitives_of_op_names(_located_op_names(error), set(applied))
    if not located:
      illegal = _tf_ops_of_illegal_tflite_ops(message, nodes)
      by_op = provenance.primitives_of_ops(nodes, illegal, set(applied))
      located = list(dict.fromkeys(p for op in sorted(by_op) for p in by_op[op]))
    detail = "\n  ".join(errors[:6]) or "\n  ".join(message.strip().splitlines()[-6:])
    on = ""
    if located:
      on = f" on the TF ops emitted for the JAX primitive {provenance.describe(located, applied)}"
    what = f"TF's TFLite converter failed{on}:\n  {detail}"
  remedies = ["route='native'" if route == "graph" else "route='graph'"]
  if not allow_flex:
    remedies.append("allow_flex=True (the app then needs the Flex delegate)")
  remedies.append("native serialization to a SavedModel for TF Serving, which runs every op")
  return f"to_tflite (route {route!r}): {what}\nRemedies: " + "; ".join(remedies) + "."


def _representative(dataset, inputs):
  names = [i.name for i in inputs]
  shapes = {i.name: tuple(i.shape) for i in inputs}
  dtypes = {i.name: i.dtype for i in inputs}

  def gen():
    for sample in calibration.samples(dataset, names, shapes, dtypes):
      yield {name: tf.constant(value) for name, value in sample.items()}

  return gen


def configure(converter, *, quantize: str | None, allow_flex: bool = False, calibration=None):
  """Sets a `tf.lite.TFLiteConverter`'s ops and quantization as `to_tflite`
  does (also for references converted beside it, such as a Keras twin).
  `calibration`: the converter's representative dataset, for "int8"."""
  ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
  if quantize == "int8":
    ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8, tf.lite.OpsSet.TFLITE_BUILTINS]
  if allow_flex:
    ops.append(tf.lite.OpsSet.SELECT_TF_OPS)
  converter.target_spec.supported_ops = ops
  if quantize is not None:
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
  if quantize == "float16":
    converter.target_spec.supported_types = [tf.float16]
  if quantize == "int8":
    converter.representative_dataset = calibration


# A complex value broadcast at run time (a shape-polymorphic ones_like is a
# OnesLike) read by one of these: TF's TFLite converter (2.21) crashes the
# process (a segmentation fault) on it, so it is refused first.
_COMPLEX_BROADCASTS = frozenset({"BroadcastTo", "Fill", "OnesLike", "ZerosLike"})
_CRASHING_READERS_OF_COMPLEX_BROADCAST = frozenset({"Real", "Imag", "ComplexAbs"})


def _is_literal(v) -> bool:
  return type(v).__name__ == "Literal"


def _graph_readers_of_complex_broadcasts(traced: Traced, applied) -> list[str]:
  nodes = list(provenance.node_defs(traced.function.get_concrete_function().graph.as_graph_def()))
  broadcasts = {
    n.name for n in nodes if n.op in _COMPLEX_BROADCASTS and provenance.node_dtypes(n) & _COMPLEX
  }
  readers = [
    n.name
    for n in nodes
    if n.op in _CRASHING_READERS_OF_COMPLEX_BROADCAST
    and any(i.split(":")[0].lstrip("^") in broadcasts for i in n.input)
  ]
  return provenance.primitives_of_op_names(readers, set(applied)) or (
    ["broadcast_in_dim"] if readers else []
  )


def _jaxpr_readers_of_complex_broadcasts(traced: Traced) -> list[str]:
  # The native route's module broadcasts where the jaxpr does.
  if traced.jaxpr is None:
    return []
  broadcast, found = set(), []
  for eqn in provenance.equations(traced.jaxpr.jaxpr):
    if eqn.primitive.name == "broadcast_in_dim" and np.dtype(eqn.outvars[0].aval.dtype).kind == "c":
      broadcast.add(eqn.outvars[0])
    elif eqn.primitive.name in ("real", "imag", "abs") and any(
      v in broadcast for v in eqn.invars if not _is_literal(v)
    ):
      found.append(eqn.primitive.name)
  return found


def _refuse_what_crashes_the_converter(traced: Traced, route: str):
  applied = provenance.primitive_lines(traced.jaxpr)
  if route == "graph":
    primitives = _graph_readers_of_complex_broadcasts(traced, applied)
  else:
    primitives = _jaxpr_readers_of_complex_broadcasts(traced)
  if not primitives:
    return
  where = provenance.describe(primitives, applied)
  raise TFLiteConversionError(
    f"to_tflite (route {route!r}): TF's TFLite converter crashes the process on a "
    f"complex {'/'.join(sorted(_COMPLEX_BROADCASTS))} read by "
    f"{'/'.join(sorted(_CRASHING_READERS_OF_COMPLEX_BROADCAST))}, "
    f"emitted for the JAX primitive {where}, so it is not run.\nRemedies: "
    + ("route='native'; " if route == "graph" else "")
    + "take the real or imaginary part before broadcasting; native serialization to a "
    "SavedModel for TF Serving."
  )


_COMPLEX = {"complex64", "complex128"}


def convert_traced(
  traced: Traced,
  *,
  route: str,
  allow_flex: bool,
  quantize: str | None,
  representative_dataset=None,
) -> bytes:
  _refuse_what_crashes_the_converter(traced, route)
  concrete = traced.function.get_concrete_function()
  converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], traced.module)
  configure(
    converter,
    quantize=quantize,
    allow_flex=allow_flex,
    calibration=_representative(representative_dataset, traced.inputs)
    if quantize == "int8"
    else None,
  )
  try:
    with warnings.catch_warnings():
      # The converter warns about its own deprecated internals on every call,
      # and its int8 calibrator runs TF's deprecated tf.lite.Interpreter.
      warnings.simplefilter("ignore", DeprecationWarning)
      warnings.filterwarnings("ignore", "(?s).*tf.lite.Interpreter is deprecated", UserWarning)
      return converter.convert()
  except Exception as e:  # pylint: disable=broad-except
    if type(e).__name__ != "ConverterError":
      raise
    raise TFLiteConversionError(explain(e, traced, route, allow_flex)) from e
