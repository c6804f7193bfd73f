"""What TF.js's WebGL backend would compute inexactly.

WebGL textures hold int32 tensors as float32, which is exact only for
integers below 2**24 in magnitude. The 32-bit bit operations of a model
(jax2tf/graph/int32_bits.py: bitwise primitives, shifts, bitcasts, uint32
values, the threefry PRNG) need every one of the 32 bits: on the WebGL
backend they give other numbers, without an error. `to_tfjs` records the
JAX primitives that do such arithmetic in model.json, and
`jax2tf.tfjs.browser.run` refuses to run those models on WebGL.
"""

from jax2tf.deploy import provenance

# JAX primitives whose int32 ops need all 32 bits exact.
BIT_PRIMITIVES = frozenset(
  """threefry2x32 iota_2x32_shape and or xor not shift_left shift_right_logical
  shift_right_arithmetic bitcast_convert_type""".split()
)


def bit_primitives(graph_def) -> list[str]:
  """The JAX primitives of `graph_def` that compute on int32 bits, sorted."""
  found = set()
  for node in provenance.node_defs(graph_def):
    primitive = provenance.primitive_of_node(node, BIT_PRIMITIVES)
    if primitive in BIT_PRIMITIVES and "int32" in provenance.node_dtypes(node):
      found.add(primitive)
  return sorted(found)
