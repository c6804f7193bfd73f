"""Constant folding: each op of the frozen graph whose inputs are all
constants, transitively, becomes a Const holding its value.

TF.js runs a graph model as written, with none of the graph optimizations
TF's own converter applies first: an op that reads only constants (the
Reshape of a weight to its broadcast shape, BatchNorm's rsqrt(var + eps)
times scale) runs again on every call, at a cost per node that dominates
small models and adds a third of ResNet-50's nodes. Folded once here, the
value becomes a weight like any other.

The values are computed by TF on the CPU, with the kernels whose semantics
the graph's rules reproduce JAX's with (integers and booleans exactly; float
functions rounded to float32, as TF.js rounds them).
"""

import numpy as np
import tensorflow as tf

from jax2tf.tfjs import freeze

# Ops never folded: those that have no value without inputs (Placeholder),
# order or forward control (NoOp, the loop and conditional primitives,
# whose outputs carry TF's frames), and those whose value is not theirs
# alone (stateful ops: random numbers, asserts; found from the op
# definitions below).
_NEVER = frozenset(
  {
    "Const",
    "Placeholder",
    "PlaceholderWithDefault",
    "NoOp",
    "Switch",
    "Merge",
    "Enter",
    "Exit",
    "NextIteration",
    "LoopCond",
  }
)

# The dtypes a folded value may take: those TF.js holds, where TF's value is
# exactly the bytes TF.js reads (int64 is written as int32, so only values
# in int32's range fold).
_DTYPES = frozenset({tf.float32, tf.int32, tf.int64, tf.bool})
_INT32 = np.iinfo(np.int32)

# A folded value is written into the weights. Folding must not make the
# model much larger than the graph that computes the value: a broadcast of a
# scalar to a large shape stays an op. A value folds where it holds no more
# elements than the constants it is computed from (a reshape, a transpose,
# an elementwise op of weights), or at most SMALL_ELEMENTS (16 KiB of
# float32: less than a node's share of model.json in a small model).
SMALL_ELEMENTS = 4096


def _has_subnormals(value: np.ndarray) -> bool:
  # TF's CPU executor flushes subnormal floats to zero where TF.js and JAX
  # keep them: an op reading one is left for TF.js to compute.
  if value.dtype != np.float32 or not value.size:
    return False
  magnitude = np.abs(value)
  return bool(np.any((magnitude > 0) & (magnitude < np.finfo(np.float32).tiny)))


def _elements(shape) -> int | None:
  return shape.num_elements() if shape.is_fully_defined() else None


def _foldable_op(op) -> bool:
  if op.type in _NEVER or op.op_def.is_stateful or len(op.outputs) != 1:
    return False
  return op.outputs[0].dtype in _DTYPES


def _constants(graph_def, graph, protected: set[str]) -> tuple[dict, list[str]]:
  """({name: elements} of the nodes whose value is known at conversion,
  [names of the non-Const ones among them, in an order where each comes
  after its inputs])."""
  values: dict[str, np.ndarray] = {}
  size: dict[str, int] = {}
  for node in graph_def.node:
    if node.op == "Const" and not node.input:
      value = tf.make_ndarray(node.attr["value"].tensor)
      values[node.name] = value
      size[node.name] = value.size
  order: list[str] = []
  pending = [n for n in graph_def.node if n.op != "Const" and n.input and n.name not in protected]
  grew = True
  while grew:
    grew = False
    rest = []
    for node in pending:
      inputs = list(node.input)
      if any(i.startswith("^") for i in inputs):
        continue  # waits on something: a branch's or a loop's frame
      if not all(freeze.node_name(i) in size for i in inputs):
        rest.append(node)
        continue
      op = graph.get_operation_by_name(node.name)
      elements = _elements(op.outputs[0].shape) if len(op.outputs) == 1 else None
      if not _foldable_op(op) or elements is None:
        continue
      read = sum(size[freeze.node_name(i)] for i in inputs)
      if elements > max(read, SMALL_ELEMENTS):
        continue
      if any(
        _has_subnormals(values[freeze.node_name(i)])
        for i in inputs
        if freeze.node_name(i) in values
      ):
        continue
      size[node.name] = elements
      order.append(node.name)
      grew = True
    pending = rest
  return size, order


def _evaluate(graph, names: list[str]) -> dict[str, np.ndarray]:
  """{name: value} of the ops `names` in `graph`, computed by TF on the CPU;
  an op whose kernel fails on its constants (a shape check that fails
  whatever the inputs) is left out, to fail in TF.js as before."""
  if not names:
    return {}
  fetches = [graph.get_operation_by_name(n).outputs[0] for n in names]
  with tf.compat.v1.Session(graph=graph) as session:
    try:
      return dict(zip(names, session.run(fetches)))
    except tf.errors.OpError:
      pass
    values = {}
    for name, fetch in zip(names, fetches):
      try:
        values[name] = session.run(fetch)
      except tf.errors.OpError:
        continue
    return values


def as_const(node, value: np.ndarray) -> None:
  """Makes `node` a Const holding `value`, in place."""
  node.op = "Const"
  node.ClearField("attr")
  node.attr["dtype"].type = tf.as_dtype(value.dtype).as_datatype_enum
  node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value))
  del node.input[:]


def _fits(value: np.ndarray) -> bool:
  if value.dtype == np.float32:
    return not _has_subnormals(value)
  if value.dtype == np.int64 and value.size:
    return _INT32.min <= value.min() and value.max() <= _INT32.max
  return True


def _without_colocation(graph_def):
  """A copy of `graph_def` without colocation constraints (`_class`): one may
  name a node that freezing pruned (a conditional's input), which TF's import
  refuses and TF.js ignores."""
  copy = tf.compat.v1.GraphDef()
  copy.CopyFrom(graph_def)
  for node in copy.node:
    if "_class" in node.attr:
      del node.attr["_class"]
  return copy


def imported(graph_def) -> tf.Graph:
  """`graph_def` as a TF graph on the CPU, to read static shapes and
  evaluate values."""
  graph = tf.Graph()
  with graph.as_default(), tf.device("/CPU:0"):
    tf.graph_util.import_graph_def(_without_colocation(graph_def), name="")
  return graph


def fold_constants(graph_def, protected: set[str]) -> int:
  """Makes each op of `graph_def` whose inputs are all constants a Const of
  its value, in place, leaving the ops named in `protected` (the signature's,
  the shape checks') as they are; returns how many became Consts. The
  constants only other constants read are left for the caller to prune."""
  graph = imported(graph_def)
  _, order = _constants(graph_def, graph, protected)
  if not order:
    return 0
  folded = set(order)
  # Only the values that ops left in the graph read are written: the rest
  # of a chain of folded ops is pruned.
  read_by_others = {
    freeze.node_name(i) for n in graph_def.node if n.name not in folded for i in n.input
  }
  wanted = [n for n in order if n in read_by_others]
  values = _evaluate(graph, wanted)
  count = 0
  for node in graph_def.node:
    value = values.get(node.name)
    if value is not None and _fits(np.asarray(value)):
      as_const(node, np.asarray(value))
      count += 1
  return count
