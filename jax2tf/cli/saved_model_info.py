"""What a SavedModel directory holds: its signatures, the ops they run, and
each XlaCallModule op with the TensorFlow releases that can run it.

Everything is read from the protos and nothing is loaded: loading needs every
op to be known to the installed TensorFlow, and inspecting is often how one
learns that a serving TensorFlow will not take the model.
"""

import collections
import os
from collections.abc import Iterable, Iterator

from jax2tf import extras
from jax2tf.cli import portable_artifact, releases
from jax2tf.cli.errors import UsageError

SAVED_MODEL_PB = "saved_model.pb"
XLA_CALL_MODULE = "XlaCallModule"
# XlaCallModule is the one Xla op TFLite's converter still takes in part: it
# legalizes the StableHLO inside to TFLite ops (docs/tflite.md, native route).
_XLA_CALL_MODULE_NOTE = "TFLite can legalize part of its StableHLO (to_tflite route='native')"
# Signatures TensorFlow adds for its own bookkeeping (the init op).
_INTERNAL_SIGNATURE_PREFIX = "__saved_model"


def is_saved_model(path: str) -> bool:
  return os.path.isdir(path) and os.path.isfile(os.path.join(path, SAVED_MODEL_PB))


def _parse(path: str):
  # The generated proto module is TensorFlow's public SavedModel format (not
  # tensorflow.python); TF has no public reader that does not load the model.
  extras.require_tensorflow("reading a SavedModel")
  from tensorflow.core.protobuf import saved_model_pb2  # pylint: disable=import-outside-toplevel

  pb_path = os.path.join(path, SAVED_MODEL_PB)
  with open(pb_path, "rb") as f:
    data = f.read()
  proto = saved_model_pb2.SavedModel()
  try:
    proto.ParseFromString(data)
  except Exception as e:  # protobuf's DecodeError
    raise UsageError(f"{pb_path} is not a SavedModel proto ({e})") from e
  if not proto.meta_graphs:
    raise UsageError(f"{pb_path} holds no MetaGraph: expected a SavedModel, got an empty one")
  return proto


def _dtype(enum: int) -> str | None:
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  if not enum:  # DT_INVALID: a signature entry with no tensor (the init op)
    return None
  try:
    return tf.dtypes.as_dtype(enum).name
  except TypeError:
    return f"DataType_{enum}"


def _shape(proto) -> list[int | None] | None:
  """A TensorShapeProto as a list with None for a dynamic dimension; None for
  an unknown rank."""
  if proto.unknown_rank:
    return None
  return [None if d.size < 0 else int(d.size) for d in proto.dim]


def _natural(name: str) -> tuple:
  # output_2 before output_10.
  parts = []
  for chunk in "".join(c if c.isdigit() else f" {c} " for c in name).split():
    parts.append((0, int(chunk), "") if chunk.isdigit() else (1, 0, chunk))
  return tuple(parts)


def _tensor_infos(infos) -> list[dict]:
  return [
    {"name": key, "dtype": _dtype(infos[key].dtype), "shape": _shape(infos[key].tensor_shape)}
    for key in sorted(infos, key=_natural)
  ]


def _signatures(meta_graph) -> dict[str, dict]:
  return {
    name: {
      "method": sig.method_name,
      "inputs": _tensor_infos(sig.inputs),
      "outputs": _tensor_infos(sig.outputs),
    }
    for name, sig in sorted(meta_graph.signature_def.items())
    if not name.startswith(_INTERNAL_SIGNATURE_PREFIX)
  }


def _node_name(tensor: str) -> str:
  # "^ctrl", "node", "node:1" and, inside functions, "node:output:0".
  return tensor.lstrip("^").split(":")[0]


def _called(node, functions: dict) -> Iterator[str]:
  """The library functions a node calls: through an op named after one, or a
  function-valued attr (f, then_branch, body, branches, ...)."""
  if node.op in functions:
    yield node.op
  for value in node.attr.values():
    kind = value.WhichOneof("value")
    if kind == "func":
      yield value.func.name
    elif kind == "list":
      yield from (f.name for f in value.list.func)


def _reached_nodes(graph_def, tensors: Iterable[str]) -> list:
  """The top-level graph nodes the given tensors depend on."""
  by_name = {n.name: n for n in graph_def.node}
  todo = [_node_name(t) for t in tensors]
  seen: dict = {}
  while todo:
    name = todo.pop()
    if name in seen or name not in by_name:
      continue
    seen[name] = by_name[name]
    todo.extend(_node_name(i) for i in by_name[name].input)
  return list(seen.values())


def _reached_functions(roots: Iterable[str], functions: dict) -> list[str]:
  todo = list(roots)
  seen: dict[str, None] = {}
  while todo:
    name = todo.pop()
    if name in seen or name not in functions:
      continue
    seen[name] = None
    for node in functions[name].node_def:
      todo.extend(_called(node, functions))
  return list(seen)


def _ops(meta_graph) -> dict:
  """The op histogram of what the signatures run, and its scope.

  The library also holds checkpoint save/restore functions (SaveV2,
  RestoreV2, ...) that no converter or server runs; without signatures, the
  functions the restored object exposes stand in for them.
  """
  graph_def = meta_graph.graph_def
  functions = {f.signature.name: f for f in graph_def.library.function}
  tensors = [
    info.name
    for name, sig in meta_graph.signature_def.items()
    if not name.startswith(_INTERNAL_SIGNATURE_PREFIX)
    for info in sig.outputs.values()
  ]
  nodes = _reached_nodes(graph_def, tensors)
  if tensors:
    scope = "signatures"
    roots = [f for node in nodes for f in _called(node, functions)]
  else:
    scope = "saved functions"
    roots = list(meta_graph.object_graph_def.concrete_functions)
  reached = _reached_functions(roots, functions)
  counts: collections.Counter = collections.Counter()
  for node in nodes + [n for f in reached for n in functions[f].node_def]:
    if node.op not in functions:  # a call, counted through the callee's ops
      counts[node.op] += 1
  return {
    "scope": scope,
    "functions_counted": len(reached),
    "functions_total": len(functions),
    "histogram": counts,
  }


def _attr(node, name: str):
  # SavedModels omit attrs left at their default, so a missing one is the default.
  return node.attr[name] if name in node.attr else None


def _strings(node, name: str) -> list[str]:
  value = _attr(node, name)
  return [s.decode() for s in value.list.s] if value is not None else []


def _flag(node, name: str) -> bool:
  value = _attr(node, name)
  return bool(value.b) if value is not None else False


def _xla_call_module(function: str | None, node) -> dict:
  serialized = _attr(node, "module").s if _attr(node, "module") is not None else b""
  version = int(_attr(node, "version").i) if _attr(node, "version") is not None else 0
  entry: dict = {"function": function, "node": node.name, "version": version}
  try:
    entry["bytecode_version"], entry["producer"] = portable_artifact.header(serialized)
    entry["stablehlo_version"] = portable_artifact.stablehlo_version(serialized)
    entry["module_error"] = None
  except portable_artifact.NotBytecodeError as e:
    entry.update(bytecode_version=None, producer=None, stablehlo_version=None)
    entry["module_error"] = str(e)
  sout = _attr(node, "Sout")
  outputs = [_shape(s) for s in sout.list.shape] if sout is not None else []
  functions = _attr(node, "function_list")
  entry.update(
    module_bytes=len(serialized),
    platforms=_strings(node, "platforms"),
    disabled_checks=_strings(node, "disabled_checks"),
    has_token_input_output=_flag(node, "has_token_input_output"),
    use_shardy_partitioner=_flag(node, "use_shardy_partitioner"),
    # Early calling conventions passed dimension values as arguments
    # (dim_args_spec); current ones derive them from the input shapes.
    dimension_args=len(_strings(node, "dim_args_spec")),
    # TF functions the module calls back (call_tf).
    function_list=len(functions.list.func) if functions is not None else 0,
    output_shapes=outputs,
    polymorphic_outputs=sum(1 for s in outputs if s is None or None in s),
  )
  try:
    inputs = portable_artifact.entry_signature(serialized)["inputs"]
  except Exception as e:  # a module newer than the installed JAX reads, or not StableHLO
    entry.update(module_inputs=None, polymorphic_inputs=None)
    entry["module_inputs_error"] = f"{type(e).__name__}: {e}"
  else:
    entry.update(module_inputs=inputs, module_inputs_error=None)
    entry["polymorphic_inputs"] = sum(1 for i in inputs if i["shape"] and None in i["shape"])
  runs_on = releases.readers(version, entry["stablehlo_version"])
  needs = releases.requirement(version, entry["stablehlo_version"])
  entry["tf_releases"] = releases.summary(runs_on, needs)
  return entry


def _xla_call_modules(meta_graph) -> list[dict]:
  """Every XlaCallModule op, in the top-level graph and in every library
  function (gradient functions included: they are called when a restored
  model is differentiated)."""
  graph_def = meta_graph.graph_def
  found = [_xla_call_module(None, n) for n in graph_def.node if n.op == XLA_CALL_MODULE]
  for function in sorted(graph_def.library.function, key=lambda f: f.signature.name):
    found += [
      _xla_call_module(function.signature.name, n)
      for n in function.node_def
      if n.op == XLA_CALL_MODULE
    ]
  return found


def _dir_bytes(path: str) -> int:
  total = 0
  for root, _, files in os.walk(path):
    total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
  return total


def _merge_histograms(histograms: list[dict]) -> dict:
  counts: collections.Counter = collections.Counter()
  for h in histograms:
    counts.update(h)
  return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _artifact_releases(modules: list[dict]) -> dict | None:
  """The releases that run every module (None without any): a model that
  restores runs its gradient functions' modules too when differentiated."""
  if not modules:
    return None
  common = set.intersection(*(set(m["tf_releases"]["releases"]) for m in modules))
  return releases.summary(common)


def read(path: str) -> dict:
  """The report on the SavedModel directory `path` (see docs/cli.md)."""
  proto = _parse(path)
  several = len(proto.meta_graphs) > 1
  signatures: dict[str, dict] = {}
  modules: list[dict] = []
  op_reports = []
  for meta_graph in proto.meta_graphs:
    tags = list(meta_graph.meta_info_def.tags)
    prefix = f"{','.join(tags)}/" if several else ""
    signatures.update({prefix + k: v for k, v in _signatures(meta_graph).items()})
    modules += _xla_call_modules(meta_graph)
    op_reports.append(_ops(meta_graph))
  histogram = _merge_histograms([r["histogram"] for r in op_reports])
  xla_ops = sorted(op for op in histogram if op.startswith("Xla"))
  first = proto.meta_graphs[0].meta_info_def
  return {
    "kind": "saved_model",
    "path": os.path.abspath(path),
    "written_by": first.tensorflow_version or None,
    "tags": [list(m.meta_info_def.tags) for m in proto.meta_graphs],
    "files": {
      SAVED_MODEL_PB: os.path.getsize(os.path.join(path, SAVED_MODEL_PB)),
      "variables": _dir_bytes(os.path.join(path, "variables")),
      "assets": _dir_bytes(os.path.join(path, "assets")),
    },
    "signatures": signatures,
    "serialization": "native" if modules else "graph",
    "xla_call_modules": modules,
    "tf_releases": _artifact_releases(modules),
    "ops": {
      "scope": op_reports[0]["scope"],
      "functions_counted": sum(r["functions_counted"] for r in op_reports),
      "functions_total": sum(r["functions_total"] for r in op_reports),
      "histogram": histogram,
    },
    "xla_ops": xla_ops,
    # The TFLite and TF.js converters' builtin paths take ordinary TF ops:
    # Xla* ops have no conversion there.
    "converters": f"needs XLA ops: {', '.join(xla_ops)}" if xla_ops else "no XLA ops",
    "converters_note": _XLA_CALL_MODULE_NOTE if XLA_CALL_MODULE in xla_ops else None,
  }
