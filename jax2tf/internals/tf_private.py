"""The TensorFlow internals (``tensorflow.python``, ``tensorflow.compiler``) the
package needs, and why no public API serves.

Use them as attributes: `tf_private.call_module(...)`. Nothing is imported
until first use: most are XLA helpers that only some conversion paths reach.
tests/test_internals.py imports every entry of `REGISTRY` on each supported
TensorFlow, so a release that moves one fails there, naming it.

TensorFlow exports no Python API for its XLA ops (`tf.raw_ops` lacks
XlaCallModule, XlaGather, XlaConvV2, ...): their wrappers, and the
`xla_data_pb2` protos that configure them, are TF internals.
"""

from typing import Any

from jax2tf import internals

_XLA = "tensorflow.compiler.tf2xla.python.xla"
_XLA_DATA = "tensorflow.compiler.xla.xla_data_pb2"
_XLA_SHARDING = "tensorflow.python.compiler.xla.experimental.xla_sharding"
_STABLEHLO = "tensorflow.compiler.mlir.stablehlo.stablehlo"

REGISTRY: dict[str, str | tuple[str, ...]] = {
  # -- XlaCallModule (native serialization) and what the installed TF reads.
  "call_module": f"{_XLA}:call_module",
  "call_module_maximum_supported_version": f"{_XLA}:call_module_maximum_supported_version",
  # The newest StableHLO version TF deserializes: TF has no public getter.
  "stablehlo_current_version": f"{_STABLEHLO}:get_current_version",
  # StableHLO portable artifact -> MLIR bytecode as TF reads it (tests).
  "stablehlo_deserialize_portable_artifact_str": f"{_STABLEHLO}:deserialize_portable_artifact_str",
  # -- Xla* ops for graph serialization with enable_xla=True.
  "xla_conv": f"{_XLA}:conv",
  "xla_gather": f"{_XLA}:gather",
  "xla_scatter": f"{_XLA}:scatter",
  "xla_reduce_window": f"{_XLA}:reduce_window",
  "xla_variadic_reduce": f"{_XLA}:variadic_reduce",
  "xla_rng_bit_generator": f"{_XLA}:rng_bit_generator",
  # The protos their attributes are serialized from.
  "ConvolutionDimensionNumbers": f"{_XLA_DATA}:ConvolutionDimensionNumbers",
  "GatherDimensionNumbers": f"{_XLA_DATA}:GatherDimensionNumbers",
  "ScatterDimensionNumbers": f"{_XLA_DATA}:ScatterDimensionNumbers",
  "OpSharding": f"{_XLA_DATA}:OpSharding",
  # -- sharding annotations (XlaSharding ops): no public TF API adds them.
  "XlaSharding": f"{_XLA_SHARDING}:Sharding",
  "xla_sharding_tile": f"{_XLA_SHARDING}:tile",
  # -- tracing state.
  # Whether the graph being built is compiled by XLA (also inside nested
  # tf.functions); TF keeps this in its control-flow utilities only.
  "graph_or_parents_in_xla_context": "tensorflow.python.ops.control_flow_util:GraphOrParentsInXlaContext",
  # Whether a tape or forward accumulator could record an eager op: lets
  # eager calls skip building a custom gradient nobody will read.
  "could_possibly_record": "tensorflow.python.eager.record:could_possibly_record",
  # -- freezing a concrete function's variables into constants (TF.js graph
  # models hold no variables); TF 2 exports no API for it, only TF 1's
  # Session-based graph_util.convert_variables_to_constants. These are the
  # first two steps of the internal convert_variables_to_constants_v2, less
  # its third (wrapping the GraphDef as a new concrete function, which copies
  # every node in Python: a minute for a graph of 50,000 ops, where the
  # GraphDef alone serves).
  "function_converter_data_in_eager": (
    "tensorflow.python.framework.convert_to_constants:_FunctionConverterDataInEager"
  ),
  "replace_variables_by_constants": (
    "tensorflow.python.framework.convert_to_constants:_replace_variables_by_constants"
  ),
}


def tracing_for_xla() -> bool:
  """Whether the graph being built is traced under tf.function(jit_compile=True),
  also from a tf.function nested in one. TF marks that tracing with an XLA
  control-flow context; a graph traced without jit_compile and compiled later
  (a SavedModel loaded into a jit_compile function) is not seen here."""
  import tensorflow as tf

  return __getattr__("graph_or_parents_in_xla_context")(tf.compat.v1.get_default_graph())


def __getattr__(name: str) -> Any:
  return internals.lazy_getattr(globals(), REGISTRY, name, _owner)


def __dir__() -> list[str]:
  return sorted(set(globals()) | set(REGISTRY))


def _owner() -> str:
  import tensorflow as tf

  return f"TensorFlow {tf.__version__}"
