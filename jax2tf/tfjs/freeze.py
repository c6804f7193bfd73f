"""The traced function as the one self-contained GraphDef a TF.js graph model
holds: variables frozen into constants, nested functions inlined, control
flow lowered to the loop primitives TF.js executes (Enter, Merge, Switch,
NextIteration, Exit), the shape checks of polymorphic inputs in ops TF.js
runs (shape_checks.py), and only the nodes the outputs need.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from jax2tf.deploy.signature import Traced, output_index
from jax2tf.internals import tf_private
from jax2tf.tfjs import shape_checks

# Ops that forward their input at inference, which TF.js cannot run as TF
# defines them: the gradient guard of a function converted without gradients
# (no TF.js kernel), and EnsureShape, whose shape TF is an attribute but
# TF.js 4.22 reads as a second input that is not there. The EnsureShapes
# jax2tf emits check the arguments (which TF.js checks against the
# placeholders' shapes before running) and pin loop-carried shapes for TF's
# while_loop (which TF.js does not check).
_AS_IDENTITY = frozenset({"PreventGradient", "EnsureShape"})


@dataclasses.dataclass
class Frozen:
  graph_def: object  # tf.compat.v1.GraphDef
  inputs: dict  # input name -> tf.Tensor, in the JAX function's order
  outputs: dict  # output_0, output_1, ... -> tf.Tensor, in JAX's flattened order
  shape_checks: list = dataclasses.field(default_factory=list)  # [{"node", "message"}]


def node_name(tensor_name: str) -> str:
  return tensor_name.lstrip("^").split(":")[0]


def prune(graph_def, keep) -> None:
  """Keeps the nodes that the tensors `keep` (outputs, and inputs even when
  unused, which the signature names) need, through data and control edges:
  what TF.js runs, and so what the refusals are about."""
  by_name = {node.name: node for node in graph_def.node}
  needed: set[str] = set()
  stack = [node_name(t.name) for t in keep]
  while stack:
    name = stack.pop()
    if name in needed:
      continue
    needed.add(name)
    stack.extend(node_name(i) for i in by_name[name].input)
  kept = [node for node in graph_def.node if node.name in needed]
  del graph_def.node[:]
  graph_def.node.extend(kept)


def _as_identity(graph_def) -> None:
  for node in graph_def.node:
    if node.op in _AS_IDENTITY:
      node.op = "Identity"
      for attr in list(node.attr):
        if attr != "T":
          del node.attr[attr]


def _gate_branch_constants(graph_def) -> None:
  """Makes the constants of a conditional's branches wait for their branch.

  Lowered control flow ties each constant inside a branch to the branch's
  pivot by a control edge, so that the constant is dead when the branch is
  not taken and Merge forwards the other branch's value. TF.js loads every
  Const as a weight, available from the start whatever its inputs: Merge
  would then forward the first branch's constant even when the second is
  taken. The value moves into a Const of its own, and the node becomes an
  Identity of it with the same control inputs, which TF.js runs only once
  they are live.
  """
  for node in list(graph_def.node):
    if node.op != "Const" or not node.input:
      continue
    value = graph_def.node.add()
    value.CopyFrom(node)
    value.name = f"{node.name}/value"
    del value.input[:]
    controls = list(node.input)
    dtype = node.attr["dtype"].type
    node.op = "Identity"
    node.ClearField("attr")
    node.attr["T"].type = dtype
    del node.input[:]
    node.input.extend([value.name, *controls])


# Ops whose outputs carry TF's control-flow frames and deadness: an Identity
# reading one stays (lowered conditionals use it as a branch's pivot).
_CONTROL_FLOW = frozenset({"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"})


def _drop_constant_control_edges(graph_def) -> None:
  """Removes control edges from constants and their plain Identities (the
  variable reads that freezing turned into Identities of Consts, which the
  function's outputs wait on): they order nothing, and they would keep those
  Identities in the graph."""
  by_name = {node.name: node for node in graph_def.node}
  constant = {node.name for node in graph_def.node if node.op == "Const" and not node.input}
  grew = True
  while grew:
    grew = False
    for node in graph_def.node:
      if (
        node.op == "Identity"
        and node.name not in constant
        and len(node.input) == 1
        and node_name(node.input[0]) in constant
        and by_name[node_name(node.input[0])].op in ("Const", "Identity")
      ):
        constant.add(node.name)
        grew = True
  for node in graph_def.node:
    kept = [i for i in node.input if not (i.startswith("^") and i[1:] in constant)]
    if len(kept) != len(node.input):
      del node.input[:]
      node.input.extend(kept)


def _empty_results_as_constants(graph_def, graph) -> None:
  """Makes each op whose result TF's shape inference finds empty a constant.

  TF.js 4.22's broadcastTo returns a one-element input unchanged (reshaped
  only) when every dimension of the target shape is 0 or 1: broadcasting a
  scalar to [0, 1], as BroadcastTo does and SelectV2 does to its first
  value, gives shape [1, 1]. An empty result's value is its shape and
  dtype: a Const holds both. It keeps its inputs as control inputs, so that
  it lives in the same loop frame or conditional branch. Identities stay:
  they forward what they read, and one that reads a conditional's Merge,
  made a Const waiting on it, leaves TF.js unable to run the graph.
  """
  for node in graph_def.node:
    if node.op in ("Const", "Placeholder", "Identity") or node.op in _CONTROL_FLOW:
      continue
    outputs = graph.get_operation_by_name(node.name).outputs
    if len(outputs) != 1 or not outputs[0].dtype.is_numpy_compatible:
      continue
    shape, dtype = outputs[0].shape, outputs[0].dtype
    if not shape.is_fully_defined() or shape.num_elements() != 0:
      continue
    value = tf.make_tensor_proto(np.zeros(shape.as_list(), dtype.as_numpy_dtype))
    controls = list(dict.fromkeys("^" + node_name(i) for i in node.input))
    node.op = "Const"
    node.ClearField("attr")
    node.attr["dtype"].type = dtype.as_datatype_enum
    node.attr["value"].tensor.CopyFrom(value)
    del node.input[:]
    node.input.extend(controls)


def _bypass_identities(graph_def, keep) -> None:
  """Points the readers of each plain Identity at its input instead.

  Freezing leaves an Identity per variable read, argument check and output
  wrapper (a third of a small model's nodes); TF.js runs each one as a node
  of its executor, at a cost per node that dominates small models. Kept:
  Identities with control inputs, named by a control edge, read by the
  signature (`keep`), or reading a control-flow op.
  """
  by_name = {node.name: node for node in graph_def.node}
  controlled = {i[1:] for node in graph_def.node for i in node.input if i.startswith("^")}

  def source(tensor: str) -> str:
    while True:
      node = by_name.get(node_name(tensor))
      if (
        node is None
        or node.op != "Identity"
        or node.name in keep
        or node.name in controlled
        or len(node.input) != 1
        or by_name[node_name(node.input[0])].op in _CONTROL_FLOW
      ):
        return tensor
      tensor = node.input[0]

  for node in graph_def.node:
    for k, tensor in enumerate(node.input):
      if not tensor.startswith("^"):
        node.input[k] = source(tensor)


def freeze(traced: Traced) -> Frozen:
  concrete = traced.function.get_concrete_function()
  graph_def, captured = _frozen_graph_def(concrete)
  # The frozen graph keeps the names of the concrete function's tensors. Its
  # inputs are the signature's, in order, less the captured variables; the
  # structured outputs name the flat ones.
  frozen = tf.Graph()
  with frozen.as_default():
    tf.graph_util.import_graph_def(graph_def, name="")
  arguments = [t for t in concrete.inputs if not any(t is c for c in captured)]
  inputs = {}
  for spec, tensor in zip(traced.inputs, arguments):
    inputs[spec.name] = frozen.get_tensor_by_name(tensor.name)
    inputs[spec.name].set_shape(tensor.shape)
  named = sorted(concrete.structured_outputs.items(), key=lambda kv: output_index(kv[0]))
  outputs = {name: frozen.get_tensor_by_name(tensor.name) for name, tensor in named}
  _as_identity(graph_def)
  _empty_results_as_constants(graph_def, frozen)
  _gate_branch_constants(graph_def)
  checks = shape_checks.make_runnable(graph_def)
  signature = [*inputs.values(), *outputs.values()]
  _drop_constant_control_edges(graph_def)
  _bypass_identities(graph_def, {node_name(t.name) for t in signature})
  prune(graph_def, signature)
  return Frozen(graph_def, inputs, outputs, checks)


def _frozen_graph_def(concrete):
  """The concrete function as one GraphDef, its captured variables made
  constants, functions inlined, control flow lowered; and the captures so
  replaced."""
  converter = tf_private.function_converter_data_in_eager(
    func=concrete, lower_control_flow=True, aggressive_inlining=True
  )
  graph_def, converted = tf_private.replace_variables_by_constants(converter_data=converter)
  captures = concrete.graph.internal_captures
  return graph_def, [captures[i] for i in converted]
