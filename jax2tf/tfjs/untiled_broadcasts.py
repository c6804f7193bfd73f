"""Broadcasts TF.js would run as Tile, written with ops that broadcast in
their kernels.

TF.js broadcasts a `BroadcastTo`, and each operand of a `SelectV2` whose
shape is not the result's, with its Tile kernel, which computes the source
index of every element. On the wasm backend in Node, filling a scalar into
131,072 elements that way took about 9 ms where a select of operands of one
shape took 0.5 ms; a causal mask of (64, 64) selecting in scores of
(32, 4, 64, 64) took 92 ms against 7 ms. The graph's rules select with a
scalar for a NaN or a mask's fill (ResNet-50's max pool spent 3 to 4 ms of
its 19 ms tiling two of them), and TF runs such selects without tiling.

Fill writes a constant without index arithmetic, and the binary ops
broadcast in their kernels on every backend, so a broadcast operand `x`
becomes, exactly:
* a constant of one element: Fill(shape, its value);
* a float tensor: x + Fill(shape, -0.0) (adding -0.0 changes no float:
  -0.0 + -0.0 is -0.0, NaN stays NaN);
* an integer tensor: x + Fill(shape, 0);
* a bool tensor: LogicalAnd(x, Fill(shape, true)).
The shape is a constant where the result's is static, else the Shape of an
operand of the result's shape (a SelectV2 without one is left as it is).
"""

import numpy as np
import tensorflow as tf

from jax2tf.tfjs import graph_folding

_INT32 = tf.int32.as_datatype_enum
_FLOATS = frozenset({tf.float32, tf.float16})


def _same_shape(a: tf.TensorShape, b: tf.TensorShape) -> bool:
  """Whether two static shapes are the same, unknown dimensions included: a
  JAX program broadcasts only explicitly, so an operand whose unknown
  dimensions stand where the result's do has the result's shape."""
  return a.rank is not None and a.as_list() == b.as_list()


class _Writer:
  """New nodes of `graph_def`, named under a node's name."""

  def __init__(self, graph_def):
    self.graph_def = graph_def
    self.names = {n.name for n in graph_def.node}

  def node(self, base: str, op: str, inputs: list, **attrs):
    name, k = f"{base}/untiled_{op}", 0
    while name in self.names:
      k += 1
      name = f"{base}/untiled_{op}_{k}"
    self.names.add(name)
    node = self.graph_def.node.add(name=name, op=op)
    node.input.extend(inputs)
    for key, value in attrs.items():
      node.attr[key].CopyFrom(value)
    return name

  def const(self, base: str, value: np.ndarray) -> str:
    name = self.node(base, "Const", [])
    graph_folding.as_const(self.graph_def.node[-1], value)
    return name

  def fill(self, base: str, shape: str, value: np.ndarray) -> str:
    dtype = tf.as_dtype(value.dtype).as_datatype_enum
    return self.node(
      base,
      "Fill",
      [shape, self.const(base, value.reshape(()))],
      T=tf.compat.v1.AttrValue(type=dtype),
      index_type=tf.compat.v1.AttrValue(type=_INT32),
    )


def _one_element_constant(graph_def_nodes: dict, tensor: tf.Tensor) -> np.ndarray | None:
  node = graph_def_nodes.get(tensor.op.name)
  if node is None or node.op != "Const" or tensor.value_index != 0:
    return None
  value = tf.make_ndarray(node.attr["value"].tensor)
  return value if value.size == 1 else None


def _untiled(writer: _Writer, nodes: dict, base: str, tensor: tf.Tensor, shape: str) -> str | None:
  """A tensor name computing `tensor` broadcast to `shape` without Tile, or
  None for a dtype none of the forms covers."""
  value = _one_element_constant(nodes, tensor)
  if value is not None:
    return writer.fill(base, shape, value)
  dtype = tensor.dtype
  if dtype in _FLOATS:
    zero = writer.fill(base, shape, np.array(-0.0, dtype.as_numpy_dtype))
    return writer.node(
      base, "AddV2", [tensor.name, zero], T=tf.compat.v1.AttrValue(type=dtype.as_datatype_enum)
    )
  if dtype == tf.int32:
    zero = writer.fill(base, shape, np.array(0, np.int32))
    return writer.node(base, "AddV2", [tensor.name, zero], T=tf.compat.v1.AttrValue(type=_INT32))
  if dtype == tf.bool:
    true = writer.fill(base, shape, np.array(True))
    return writer.node(base, "LogicalAnd", [tensor.name, true])
  return None


def _result_shape(writer: _Writer, op: tf.Operation) -> str | None:
  """A tensor name holding the shape of `op`'s result: a constant where it
  is static, else the Shape of an operand of that shape; None if neither."""
  shape = op.outputs[0].shape
  if shape.is_fully_defined():
    return writer.const(op.name, np.array(shape.as_list(), np.int32))
  for tensor in op.inputs:
    if _same_shape(tensor.shape, shape):
      return writer.node(
        op.name,
        "Shape",
        [tensor.name],
        T=tf.compat.v1.AttrValue(type=tensor.dtype.as_datatype_enum),
        out_type=tf.compat.v1.AttrValue(type=_INT32),
      )
  return None


def untile(graph_def) -> int:
  """Rewrites, in place, the BroadcastTo nodes of `graph_def` and the
  operands of its SelectV2 nodes that TF.js would tile; returns how many
  operands were rewritten."""
  graph = graph_folding.imported(graph_def)
  nodes = {n.name: n for n in graph_def.node}
  writer = _Writer(graph_def)
  count = 0
  for node in list(graph_def.node):
    if node.op not in ("SelectV2", "BroadcastTo"):
      continue
    op = graph.get_operation_by_name(node.name)
    result = op.outputs[0].shape
    if result.rank is None:
      continue
    if node.op == "BroadcastTo":
      source = op.inputs[0]
      if _same_shape(source.shape, result):
        continue
      untiled = _untiled(writer, nodes, node.name, source, node.input[1])
      if untiled is not None:
        # The node stays, as an Identity of the untiled value: its readers
        # and its name (a signature may name it) are unchanged.
        node.op = "Identity"
        del node.input[:]
        node.input.append(untiled)
        node.attr.clear()
        node.attr["T"].CopyFrom(tf.compat.v1.AttrValue(type=source.dtype.as_datatype_enum))
        count += 1
      continue
    broadcast = [k for k, t in enumerate(op.inputs) if not _same_shape(t.shape, result)]
    if not broadcast:
      continue
    shape = _result_shape(writer, op)
    if shape is None:
      continue
    for k in broadcast:
      untiled = _untiled(writer, nodes, node.name, op.inputs[k], shape)
      if untiled is not None:
        node.input[k] = untiled
        count += 1
  return count
