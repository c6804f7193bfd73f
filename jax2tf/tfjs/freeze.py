"""The traced function as the one self-contained GraphDef a TF.js graph model
holds: variables frozen into constants, nested functions inlined, control
flow lowered to the loop primitives TF.js executes (Enter, Merge, Switch,
NextIteration, Exit), and only the nodes the outputs need.
"""

import dataclasses

from jax2tf.internals import tf_private
from jax2tf.lite.signature import Traced, output_index

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


def _node_name(tensor_name: str) -> str:
  return tensor_name.lstrip("^").split(":")[0]


def _prune(graph_def, keep) -> None:
  """Keeps the nodes that the tensors `keep` (outputs, and inputs even when
  unused, which the signature names) need, through data and control edges:
  what TF.js runs, and so what the refusals are about."""
  by_name = {node.name: node for node in graph_def.node}
  needed: set[str] = set()
  stack = [_node_name(t.name) for t in keep]
  while stack:
    name = stack.pop()
    if name in needed:
      continue
    needed.add(name)
    stack.extend(_node_name(i) for i in by_name[name].input)
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


def freeze(traced: Traced) -> Frozen:
  concrete = traced.function.get_concrete_function()
  frozen = tf_private.convert_variables_to_constants_v2(
    concrete, lower_control_flow=True, aggressive_inlining=True
  )
  # The frozen function keeps the order of the concrete function's inputs
  # (the signature's, less the variables) and of its flat outputs; the
  # structured outputs name them.
  inputs = dict(zip((i.name for i in traced.inputs), frozen.inputs))
  flat = [t.name for t in concrete.outputs]
  named = sorted(concrete.structured_outputs.items(), key=lambda kv: output_index(kv[0]))
  outputs = {name: frozen.outputs[flat.index(tensor.name)] for name, tensor in named}
  graph_def = frozen.graph.as_graph_def()
  _as_identity(graph_def)
  _prune(graph_def, [*inputs.values(), *outputs.values()])
  return Frozen(graph_def, inputs, outputs)
