"""What TF.js's WebGL backend would compute inexactly.

WebGL textures hold int32 tensors as float32, which is exact only for
integers below 2**24 in magnitude. The 32-bit bit operations of a model
(jax2tf/graph/int32_bits.py: bitwise primitives, shifts, bitcasts, uint32
values, the threefry PRNG) need every one of the 32 bits: on the WebGL
backend they give other numbers, without an error. `to_tfjs` records the
JAX primitives that do such arithmetic in model.json, and
`jax2tf.tfjs.browser.run` refuses to run those models on WebGL.
"""

import re

import tensorflow as tf

from jax2tf import provenance

# JAX primitives whose int32 ops need all 32 bits exact.
BIT_PRIMITIVES = frozenset(
  """threefry2x32 iota_2x32_shape and or xor not shift_left shift_right_logical
  shift_right_arithmetic bitcast_convert_type""".split()
)


def _has_int32(node) -> bool:
  for value in node.attr.values():
    enums = list(value.list.type) + ([value.type] if value.HasField("type") else [])
    if tf.int32.as_datatype_enum in enums:
      return True
  return False


def bit_primitives(graph_def) -> list[str]:
  """The JAX primitives of `graph_def` that compute on int32 bits, sorted."""
  found = set()
  for node in provenance.node_defs(graph_def):
    scopes = {re.sub(r"_\d+$", "", s) for s in node.name.split("/")[:-1]}
    hits = scopes & BIT_PRIMITIVES
    if hits and _has_int32(node):
      found |= hits
  return sorted(found)
