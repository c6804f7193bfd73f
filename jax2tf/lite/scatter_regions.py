"""A scatter's update region in the form LiteRT's STABLEHLO_SCATTER runs.

LiteRT's STABLEHLO_SCATTER kernel runs its update region as one kernel: it
reads which combination the region's single operator is, and knows only
STABLEHLO_ADD, STABLEHLO_MULTIPLY, STABLEHLO_MAXIMUM and STABLEHLO_MINIMUM
(or a region that returns the update). Both converters (TF's, from the
native module, and litert-converter) legalize the region's `stablehlo.add`
into a builtin ADD like any other, which the kernel then refuses at run time
("Only update, Add, Multiply, Maximum and Minimum operations are currently
supported"): a segment sum (`x.at[i].add(v)`, `jax.ops.segment_sum`) did not
run. `scatter_regions_as_stablehlo` writes such a region's ADD, MUL,
MAXIMUM or MINIMUM back as the StableHLO operator it was, which computes the
same combination. (The litert pipeline keeps a float max or min region one
operator and tests NaN beside the scatter:
module_patterns.NAN_BESIDE_MIN_MAX_SCATTERS.)
"""

from jax2tf.lite.flatbuffer import Graph, fused_activation
from jax2tf.lite.litert_schema import schema

Op = schema.BuiltinOperator

# The builtin operators the converters write in a region -> the StableHLO
# operator the kernel reads as the same combination.
_AS_STABLEHLO = {
  Op.ADD: Op.STABLEHLO_ADD,
  Op.MUL: Op.STABLEHLO_MULTIPLY,
  Op.MAXIMUM: Op.STABLEHLO_MAXIMUM,
  Op.MINIMUM: Op.STABLEHLO_MINIMUM,
}


def scatter_regions_as_stablehlo(g: Graph) -> None:
  """The update region of each STABLEHLO_SCATTER of `g` that is one ADD, MUL,
  MAXIMUM or MINIMUM of its two arguments, without a fused activation,
  holds the StableHLO operator instead."""
  if g.region:
    return
  for op in g.ops:
    if g.code(op) != Op.STABLEHLO_SCATTER:
      continue
    options = op.builtinOptions2
    if not isinstance(options, schema.StablehloScatterOptionsT):
      continue
    region = Graph(g.model, options.updateComputationSubgraphIndex, region=True)
    if len(region.ops) != 1:
      continue
    (combine,) = region.ops
    code = region.code(combine)
    if code not in _AS_STABLEHLO or fused_activation(combine) not in (None, 0):
      continue
    if sorted(combine.inputs) != sorted(region.subgraph.inputs):
      continue
    if combine.outputs != region.subgraph.outputs:
      continue
    combine.opcodeIndex = region.opcode_index(_AS_STABLEHLO[code])
    combine.builtinOptionsType, combine.builtinOptions = 0, None
    g.changed = True
