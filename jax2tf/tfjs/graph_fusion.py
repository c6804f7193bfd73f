"""Fused ops TF.js runs natively: a convolution or a matrix product with the
per-channel constants added to and multiplied into its result taken into
its weights and a bias, as one `_FusedConv2D`, `FusedDepthwiseConv2dNative`
or `_FusedMatMul` node (encoded as TF's converter encodes them in
model.json: `fused_ops` ["BiasAdd"], `num_args` 1).

In JAX a dense layer is dot + bias, and an inference BatchNorm after a
convolution is (y - mean) * scale + offset with constant mean, scale and
offset: three to four nodes, each a pass over the activations, where TF.js
runs one kernel that adds the bias as it writes the result.

What changes, and why it is kept within the models' tolerances:
* Adding a constant into a fresh bias is exact (y - c is y + (-c)); so is
  fusing it: TF.js's fused kernels add the bias to the finished product, the
  same float32 addition.
* Multiplying by a constant is moved into the weights (y * s becomes a
  product with w * s) and into the bias, and a second constant added is
  summed into the bias: one more float32 rounding per product and per bias,
  a relative difference of a few units in the last place, where the folded
  BatchNorm's differs from JAX's unfolded one (ResNet-50 of the model set,
  53 folded BatchNorms deep, stays within its 2e-4).
* A bias that is all zeros is left out (see `_adds_nothing`).
* The activation stays a node of its own. TF.js's wasm backend runs a fused
  Relu as XNNPack's clamp, which turns NaN into 0 (always for a matrix
  product, for some convolution shapes); its Relu node keeps NaN, and gives
  +0.0 for -0.0, as JAX does. The fused bias alone computes what the unfused
  addition does on both backends.
"""

import numpy as np
import tensorflow as tf

from jax2tf.tfjs import freeze

_FLOAT32 = tf.float32.as_datatype_enum
_ADDS = frozenset({"Add", "AddV2", "BiasAdd"})


def _const_value(node) -> np.ndarray | None:
  if node is None or node.op != "Const" or node.input:
    return None
  return tf.make_ndarray(node.attr["value"].tensor)


class _Base:
  """A Conv2D, DepthwiseConv2dNative or MatMul with constant float32
  weights: its output channels and how to scale its weights per channel."""

  def __init__(self, node, weights: np.ndarray):
    self.node, self.weights = node, weights
    if node.op == "MatMul":
      self.channels = weights.shape[0 if node.attr["transpose_b"].b else 1]
    elif node.op == "Conv2D":
      self.channels = weights.shape[3]
    else:  # DepthwiseConv2dNative: channel c * multiplier + m
      self.channels = weights.shape[2] * weights.shape[3]

  def scaled(self, scale: np.ndarray) -> np.ndarray:
    w = self.weights
    if self.node.op == "MatMul":
      return w * (scale[:, None] if self.node.attr["transpose_b"].b else scale[None, :])
    if self.node.op == "Conv2D":
      return w * scale
    return w * scale.reshape(w.shape[2], w.shape[3])


def _base(node, by_name) -> _Base | None:
  if node.op not in ("Conv2D", "DepthwiseConv2dNative", "MatMul"):
    return None
  if node.attr["T"].type != _FLOAT32:
    return None
  if node.op != "MatMul" and node.attr["data_format"].s not in (b"", b"NHWC"):
    return None
  weights = _const_value(by_name.get(freeze.node_name(node.input[1])))
  if weights is None or len(node.input) != 2 or weights.dtype != np.float32:
    return None
  if node.op == "MatMul" and weights.ndim != 2 or node.op != "MatMul" and weights.ndim != 4:
    return None
  return _Base(node, weights)


def _per_channel(value: np.ndarray | None, channels: int, rank: int) -> np.ndarray | None:
  """`value` as a vector over the output channels, where it broadcasts
  along them only (a scalar, [C], [1, ..., 1, C]) without raising the rank."""
  if value is None or value.dtype != np.float32 or value.ndim > rank:
    return None
  if any(d != 1 for d in value.shape[:-1]) or value.ndim and value.shape[-1] not in (1, channels):
    return None
  return np.broadcast_to(value.reshape(-1), (channels,)).astype(np.float32)


def _step(node, tail: str, by_name, base: _Base, rank: int):
  """(kind, constant) where `node` adds, subtracts or multiplies the output
  `tail` by a per-channel constant; else None."""
  if node.op not in _ADDS | {"Sub", "Mul"} or node.attr["T"].type != _FLOAT32:
    return None
  if node.op == "BiasAdd" and node.attr["data_format"].s not in (b"", b"NHWC"):
    return None
  inputs = list(node.input)
  if len(inputs) != 2 or any(i.startswith("^") for i in inputs):
    return None
  names = [freeze.node_name(i) for i in inputs]
  if names.count(tail) != 1:
    return None
  other = names[1 - names.index(tail)]
  if node.op in ("Sub", "BiasAdd") and names[0] != tail:
    return None  # c - y negates y; BiasAdd's bias is its second input
  value = _per_channel(_const_value(by_name.get(other)), base.channels, rank)
  if value is None:
    return None
  return ("add" if node.op in _ADDS else node.op.lower()), value


def _output_rank(base: _Base) -> int:
  return 2 if base.node.op == "MatMul" else 4


def _fused_node(node, base: _Base, weights_name: str, bias_name: str | None) -> None:
  """Rewrites `node` (the last op taken in) as the fused op, in place."""
  source = base.node
  inputs = [source.input[0], weights_name]
  attrs = {k: source.attr[k] for k in source.attr}
  node.ClearField("attr")
  for key, value in attrs.items():
    node.attr[key].CopyFrom(value)
  del node.input[:]
  if bias_name is None:
    node.op = source.op
    node.input.extend(inputs)
    return
  node.op = {"Conv2D": "_FusedConv2D", "MatMul": "_FusedMatMul"}.get(
    source.op, "FusedDepthwiseConv2dNative"
  )
  node.input.extend([*inputs, bias_name])
  node.attr["num_args"].i = 1
  node.attr["fused_ops"].list.s.append(b"BiasAdd")
  node.attr["epsilon"].f = 0.0


def _add_const(graph_def, by_name, name: str, value: np.ndarray) -> str:
  while name in by_name:
    name += "_"
  node = graph_def.node.add()
  by_name[name] = node
  node.name, node.op = name, "Const"
  node.attr["dtype"].type = _FLOAT32
  node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value.astype(np.float32)))
  return name


def _adds_nothing(bias: np.ndarray) -> bool:
  """Whether adding `bias` to the product changes nothing: adding -0.0
  never does, and adding +0.0 only turns -0.0 into +0.0, which TF.js's
  products never give: their kernels (cpu and wasm, matrix products and
  convolutions) sum from +0.0, and a sum from +0.0 is never -0.0 (JAX's
  y + 0.0 is not either). A fresh layer's bias is all zeros, and a plain
  product is cheaper than a fused one (a tenth of a small MLP's time on the
  wasm backend)."""
  return not np.any(bias != 0)


def fuse(graph_def, keep: set[str]) -> int:
  """Takes the per-channel additions and products of each convolution and
  matrix product into a fused op, in place; the ops taken in keep their
  names only if last (the fused op takes the last one's name, so that its
  readers are unchanged). `keep` names nodes read from outside (the
  signature's): their values must stay. Returns how many fused ops."""
  by_name = {node.name: node for node in graph_def.node}
  readers: dict[str, list] = {}
  for node in graph_def.node:
    for i in node.input:
      readers.setdefault(freeze.node_name(i), []).append(node)
  fused = 0
  for node in list(graph_def.node):
    base = _base(node, by_name)
    if base is None:
      continue
    rank = _output_rank(base)
    scale, bias, tail = None, None, node
    while True:
      after = readers.get(tail.name, [])
      if tail.name in keep or len(after) != 1:
        break
      step = _step(after[0], tail.name, by_name, base, rank)
      if step is None:
        break
      kind, value = step
      if kind == "add":
        bias = value if bias is None else (bias + value).astype(np.float32)
      elif kind == "sub":
        bias = -value if bias is None else (bias - value).astype(np.float32)
      else:
        scale = value if scale is None else (scale * value).astype(np.float32)
        if bias is not None:
          bias = (bias * value).astype(np.float32)
      tail = after[0]
    if tail is node:
      continue
    if bias is not None and _adds_nothing(bias):
      bias = None
    weights_name = node.input[1]
    if scale is not None:
      weights_name = _add_const(graph_def, by_name, f"{tail.name}/weights", base.scaled(scale))
    bias_name = None if bias is None else _add_const(graph_def, by_name, f"{tail.name}/bias", bias)
    _fused_node(tail, base, weights_name, bias_name)
    fused += 1
  return fused


def drop_abs_of_relu(graph_def) -> int:
  """Points the readers of each Abs of a Relu at the Relu; returns how many.

  The graph's rule for JAX's relu writes abs(relu(x)), so that relu(-0.0)
  is +0.0 as in JAX where TF's Relu keeps -0.0. TF.js's cpu and wasm Relu
  give +0.0 already (cpu: Math.max(0, x); wasm: its own kernel) and keep
  NaN: the Abs is one more pass over the activations for nothing, a quarter
  of ResNet-50's time on wasm. TF.js's WebGL Relu keeps -0.0, like the
  GPU's arithmetic, which defines neither NaN nor the sign of zero
  (docs/tfjs.md).
  """
  by_name = {node.name: node for node in graph_def.node}
  redirect = {}
  for node in graph_def.node:
    if node.op != "Abs" or len(node.input) != 1:
      continue
    source = by_name.get(freeze.node_name(node.input[0]))
    if source is not None and source.op == "Relu" and ":" not in node.input[0]:
      redirect[node.name] = node.input[0]
  for node in graph_def.node:
    for k, tensor in enumerate(node.input):
      if not tensor.startswith("^") and freeze.node_name(tensor) in redirect and ":" not in tensor:
        node.input[k] = redirect[freeze.node_name(tensor)]
  return len(redirect)
