"""The shape checks of a polymorphic function, in ops TF.js runs.

Graph serialization checks at call time that the inputs satisfy the
polymorphic specs (`b >= 1`, dimensions that must be equal, divisibility)
with `Assert` and a message formatted by `StringFormat` (or `AsString` and
`StringJoin`), or, for a dimension that must not be 0, with `CheckNumerics`
of its reciprocal, none of which TF.js has. Each check becomes a `Reshape` of one element to the shape
`[ok]`: TF.js runs it as a no-op while the condition holds and fails the
model with "Size(1) must match the product of shape 0" when it does not, so
that inputs outside the specs stop the model as they do in TF instead of
giving a number. The node keeps the Assert's name and place (the outputs
depend on it through the same control edges), and model.json records each
check's message (`userDefinedMetadata.jax2tf.shape_checks`), which
`jax2tf.tfjs.run` adds to the error.
"""

import numpy as np
import tensorflow as tf

# Appears in TF.js's error when a check fails.
FAILURE = "must match the product of shape 0"
_HOLE = "?"  # a dimension's value, in a recorded message


def _const_string(node) -> str | None:
  if node.op != "Const" or node.attr["dtype"].type != tf.string.as_datatype_enum:
    return None
  value = tf.make_ndarray(node.attr["value"].tensor)
  return value.item().decode() if value.size == 1 else None


_FORMATTERS = ("StringFormat", "StringJoin")


def _is_message(node) -> bool:
  return node.op in _FORMATTERS or _const_string(node) not in (None, "0")


def _message_source(name: str, by_name, depth: int = 3):
  """What makes the Assert's message: the first StringFormat or StringJoin
  feeding its data, or the message as a string constant where every value in
  it is known when the check fails (`b >= 1` fails only for `b = 0`), read by
  StringToNumber through a Select where the check fails (tf_dims)."""
  frontier = [name]
  for _ in range(depth):
    nodes = [by_name.get(n.lstrip("^").split(":")[0]) for n in frontier]
    nodes = [n for n in nodes if n is not None]
    source = next((n for n in nodes if _is_message(n)), None)
    if source is not None:
      return source
    frontier = [i for n in nodes for i in n.input if not i.startswith("^")]
  return None


def _message(assert_node, by_name) -> str:
  """The check's message, with each dimension's value as '?'."""
  if len(assert_node.input) < 2:
    return ""
  source = _message_source(assert_node.input[1], by_name)
  if source is None:
    return ""
  if source.op == "Const":
    return _const_string(source) or ""
  if source.op == "StringFormat":
    return source.attr["template"].s.decode().replace("{}", _HOLE)
  pieces = []
  for name in source.input:
    text = _const_string(by_name[name.split(":")[0]])
    pieces.append(_HOLE if text is None else text)
  return "".join(pieces)


def _const(graph_def, name: str, value: np.ndarray):
  node = graph_def.node.add()
  node.name, node.op = name, "Const"
  node.attr["dtype"].type = tf.as_dtype(value.dtype).as_datatype_enum
  node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value))
  return node


def _condition(name: str, by_name) -> tuple[str, int]:
  """What the check reads and its dtype: the count (a size or a dimension,
  never negative) that tf_dims casts to bool, where it does so, else the
  bool condition. TF.js's wasm backend casts an integer to bool by keeping
  its low byte (a size of 256 reads false), so the count itself is read."""
  producer = by_name.get(name.split(":")[0])
  if (
    producer is not None
    and producer.op == "Cast"
    and producer.attr["DstT"].type == tf.bool.as_datatype_enum
    and tf.as_dtype(producer.attr["SrcT"].type).is_integer
  ):
    return producer.input[0], producer.attr["SrcT"].type
  return name, tf.bool.as_datatype_enum


def _zero_count_check(node, by_name) -> tuple[str, int] | None:
  """The count read by tf_dims's check that a dimension is not 0, written
  `CheckNumerics(Reciprocal(Cast(count)))` (infinite where the count is 0),
  with its dtype; None for any other node."""
  if node.op != "CheckNumerics":
    return None
  reciprocal = by_name.get(node.input[0].split(":")[0])
  if reciprocal is None or reciprocal.op != "Reciprocal":
    return None
  cast = by_name.get(reciprocal.input[0].split(":")[0])
  if cast is None or cast.op != "Cast" or not tf.as_dtype(cast.attr["SrcT"].type).is_integer:
    return None
  return cast.input[0], cast.attr["SrcT"].type


def make_runnable(graph_def) -> list[dict]:
  """Rewrites every shape check of `graph_def` (an Assert, or the
  CheckNumerics of a dimension that must not be 0) as a failing Reshape
  (above), in place; returns [{"node", "message"}] per check. The message
  and count inputs are left dangling for the caller to prune."""
  by_name = {node.name: node for node in graph_def.node}
  checks = []
  for node in list(graph_def.node):
    zero_count = _zero_count_check(node, by_name)
    if zero_count is not None:
      checks.append({"node": node.name, "message": node.attr["message"].s.decode()})
      condition, condition_type = zero_count
    elif node.op == "Assert":
      checks.append({"node": node.name, "message": _message(node, by_name)})
      condition, condition_type = _condition(node.input[0], by_name)
    else:
      continue
    controls = [i for i in node.input if i.startswith("^")]
    base = node.name
    cast = graph_def.node.add()
    cast.name, cast.op = f"{base}/as_int", "Cast"
    cast.input.append(condition)
    cast.attr["SrcT"].type = condition_type
    cast.attr["DstT"].type = tf.int32.as_datatype_enum
    cast.attr["Truncate"].b = False
    # A count read as the condition holds where it is 1 or more.
    _const(graph_def, f"{base}/one", np.array(1, np.int32))
    at_most_one = graph_def.node.add()
    at_most_one.name, at_most_one.op = f"{base}/at_most_one", "Minimum"
    at_most_one.input.extend([cast.name, f"{base}/one"])
    at_most_one.attr["T"].type = tf.int32.as_datatype_enum
    _const(graph_def, f"{base}/rank_1", np.array([1], np.int32))
    shape = graph_def.node.add()
    shape.name, shape.op = f"{base}/shape", "Reshape"
    shape.input.extend([at_most_one.name, f"{base}/rank_1"])
    shape.attr["T"].type = tf.int32.as_datatype_enum
    shape.attr["Tshape"].type = tf.int32.as_datatype_enum
    _const(graph_def, f"{base}/one_element", np.zeros([1], np.float32))
    node.op = "Reshape"
    node.ClearField("attr")
    del node.input[:]
    node.input.extend([f"{base}/one_element", shape.name, *controls])
    node.attr["T"].type = tf.float32.as_datatype_enum
    node.attr["Tshape"].type = tf.int32.as_datatype_enum
  return checks
