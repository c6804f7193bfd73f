"""What one consumer of a converted function can run, as data.

A rule never asks which target it lowers for. Mostly it hands two forms
to `ctx.kernel_or`, which reads the target's kernel lists below: the TF ops
it lacks, or whose kernel computes other than XLA's answer, on which dtypes.
The few quirks that are not one op's kernel are capabilities the rule asks
for by name (`ctx.target.<capability>`). Each is written once, with the
reason it exists; a new target is one more `Target` value, a kernel it
lacks one more entry in its lists, and a new capability one more field.

No TensorFlow or JAX here: the graph interpreter, its rules and the native
module rewrites read the same values, each with its own IR.
"""

import dataclasses
from collections.abc import Iterable, Mapping

from jax2tf.targets import kernel_lists

# Type legalizations the graph interpreter applies around a rule, by name
# (jax2tf/graph/legalizations.py maps each to its `Lanes`; all but
# uint32_as_int32_bits also apply to the native module a target reads, op
# by op, in jax2tf/native/module_lanes.py):
#   float16_in_float32    16-bit floats computed in float32, rounded back
#   narrow_ints_in_int32  8- and 16-bit integers computed in int32, cast back
#   uint32_as_order_keys  uint32 moved, compared and ordered as int32 keys
#   uint32_as_int32_bits  uint32 carried as int32 tensors of the same bits
LEGALIZATIONS = (
  "float16_in_float32",
  "narrow_ints_in_int32",
  "uint32_as_order_keys",
  "uint32_as_int32_bits",
)

# How integer bit operations are spelled (jax2tf/graph/bit_ops.py):
#   tf            TF's bitwise kernels, and where the target lacks one
#                 (BitwiseAnd, BitwiseOr, LeftShift, PopulationCount),
#                 integers of up to 32 bits as uint32 arithmetic
#   int32_halves  the same, but int32 (and uint32 as int32 bits) in 16-bit
#                 halves held exactly by float64 numbers, for TF.js, which
#                 has no bitwise kernels and computes int32 products in
#                 JavaScript numbers
BIT_OPS = ("tf", "int32_halves")


@dataclasses.dataclass(frozen=True)
class Target:
  """One consumer of converted functions and what it can run."""

  name: str
  title: str
  # May emit the Xla* TF ops (XlaGather, XlaReduceWindow, sharding
  # annotations): graphs only TF with XLA runs.
  xla_ops: bool
  # TF op names without a kernel here, for float32 and narrower dtypes: a
  # rule emits its formulation in ops the target has instead.
  missing_kernels: frozenset[str]
  # Those of `missing_kernels` also formulated in float64 (the other
  # formulations are truncated series for float32 and leave float64 to TF's
  # kernel).
  missing_kernels_f64: frozenset[str]
  # TF ops whose kernel is missing here, or computes something other than
  # XLA's answer, on some dtypes only: pairs of an op and those dtypes
  # (NumPy names). A rule formulates them there as it does a missing one
  # (`kernels_by_dtype` below builds the pairs; each target says why).
  missing_kernels_by_dtype: tuple[tuple[str, frozenset[str]], ...]
  legalizations: tuple[str, ...]
  bit_ops: str
  # Whether -0.0 exists in the target's tensors: a fully int8-quantized
  # model has one zero, and LiteRT's int8 DIV refuses the 1/x that tells
  # the zeros apart.
  signed_zeros: bool = True
  # Whether TF's graph optimizer (grappler) rewrites the graph before it
  # runs; TF.js's converter runs none, so nothing needs hiding from it.
  runs_grappler: bool = True
  # Whether TF's XLA may compile the graph (under jit_compile): its CPU
  # compiler's crashes are then worked around.
  runs_on_tf_xla: bool = True
  # Whether TF's runtime executes the graph (TF, TF Serving), whose grappler
  # also makes the rewrites of semantics.TF_RUNTIME_REWRITES; a converter
  # (TFLite's, TF.js's) reads it instead.
  runs_on_tf: bool = True
  # Whether an Abs of a Relu survives to run (TF's XLA drops it, keeping
  # relu(-0.0) == -0.0): where it does, relu's zero sign is fixed with Abs,
  # one op XNNPack fuses, rather than a select.
  keeps_abs_of_relu: bool = False
  # Whether the converter moves a Transpose below a Sub or Div whose first
  # operand is a constant and rebuilds the op with its operands swapped
  # (TF's TFLite converter, 2.21: 3 - transpose(a) became a - 3).
  swaps_constant_first_operands: bool = False
  # Whether complex Add, Sub, Mul and Complex broadcast their operands:
  # TF.js's (cpu backend, 4.22) read a lower-rank operand past its end and
  # its Complex asserts one shape.
  broadcasts_complex_operands: bool = True
  # Whether REVERSE_V2 takes any axes: LiteRT's takes adjacent axes only,
  # and ends the process where the axes after the first reversed one hold
  # no elements.
  reverses_any_axes: bool = True
  # Whether a complex number can be built from its real and imaginary parts:
  # LiteRT has no kernel for it (both converters leave stablehlo.complex and
  # TF's Complex as tf.Complex), so a complex result must come from complex
  # arithmetic (ADD, SUB, MUL), the graph route's ops.
  builds_complex_from_parts: bool = True
  # Whether the converter reads TFLite's own operators written into the
  # module (litert-converter does, jax2tf/native/tflite_ops.py): where it
  # legalizes StableHLO only at static sizes (a sort or top_k becomes a
  # STABLEHLO_SORT LiteRT cannot run, a cumulative sum a dynamic window it
  # does not convert), the forms of polymorphic shapes write those (TOPK_V2,
  # CUMSUM), which take their sizes at run time.
  tflite_ops_in_module: bool = False
  # The pipeline of StableHLO rewrites a native module gets
  # (jax2tf/native/module_rewrite.py), or None where the target reads no
  # native module.
  native_pipeline: str | None = None
  # Where the target lists the ops its converter refuses for want of a
  # kernel, on which dtypes (jax2tf/targets/kernel_lists/<name>.json), or
  # None where it refuses none that way (TF) or lists what it runs
  # elsewhere (TF.js: jax2tf/tfjs/ops.py).
  kernel_list: str | None = None

  def __post_init__(self):
    unknown = set(self.legalizations) - set(LEGALIZATIONS)
    if unknown:
      raise ValueError(f"Target {self.name}: unknown legalizations {sorted(unknown)}")
    if self.bit_ops not in BIT_OPS:
      raise ValueError(f"Target {self.name}: bit_ops {self.bit_ops!r} is not one of {BIT_OPS}")
    if not self.missing_kernels_f64 <= self.missing_kernels:
      raise ValueError(f"Target {self.name}: missing_kernels_f64 must be among missing_kernels")

  def lacks_kernel(self, op: str, dtype=None) -> bool:
    """Whether the TF op `op` (on `dtype`, a NumPy or TF dtype name or
    object, when given; on any dtype, when not) has no kernel here with
    XLA's semantics, so that a rule formulates it. The Xla* ops have
    kernels only where the target takes them (`xla_ops`)."""
    if op.startswith("Xla"):
      return not self.xla_ops
    name = _dtype_name(dtype)
    for listed, dtypes in self.missing_kernels_by_dtype:
      if listed == op and (name is None or name in dtypes):
        return True
    if op not in self.missing_kernels:
      return False
    if name is not None and name.startswith("complex"):
      return False  # the formulations are of real numbers; complex ones keep TF's kernels
    return name != "float64" or op in self.missing_kernels_f64

  def refuses(self, op: str, on: Iterable[str] = ()) -> bool:
    """Whether the converter refuses `op` on operands of the dtypes `on`
    (NumPy names) for want of a kernel, as the target's list says."""
    return self.kernel_list is not None and kernel_lists.lists(self.kernel_list, op, on)

  def legalizes(self, name: str) -> bool:
    """Whether the interpreter applies the legalization `name` (LEGALIZATIONS)."""
    if name not in LEGALIZATIONS:
      raise ValueError(f"unknown legalization {name!r}; expected one of {LEGALIZATIONS}")
    return name in self.legalizations

  @property
  def uint32_as_int32_bits(self) -> bool:
    return "uint32_as_int32_bits" in self.legalizations


def kernels_by_dtype(**dtypes_of_op: frozenset[str]) -> tuple[tuple[str, frozenset[str]], ...]:
  """`missing_kernels_by_dtype` from op=dtypes keywords, in a stable order."""
  return tuple(sorted((op, frozenset(d)) for op, d in dtypes_of_op.items()))


def _dtype_name(dtype) -> str | None:
  if dtype is None:
    return None
  return getattr(dtype, "name", str(dtype))


# Formulated wherever a converter may read the graph (without XLA ops):
# TFLite and TF.js have no Atan, Asin or Cosh kernels, nor Erf, Erfc and
# Erfinv; TruncateDiv and TruncateMod neither (FloorDiv and FloorMod are
# everywhere), and TFLite has no BitwiseAnd, BitwiseOr or LeftShift.
_PORTABLE_MISSING_F64 = frozenset({"Atan", "Asin", "Cosh", "TruncateDiv", "TruncateMod"})
# TFLite's converter lowers TensorListSetItem (a TensorArray write) only for
# a static element shape.
_PORTABLE_MISSING = _PORTABLE_MISSING_F64 | {
  "Erf", "Erfc", "Erfinv", "BitwiseAnd", "BitwiseOr", "LeftShift", "TensorListSetItem",
}  # fmt: skip
# TFLite also lacks Tan, Acos, Sinh, Asinh, Acosh, Atanh, Expm1, Cumprod and
# PopulationCount, and its Log and Log1p are too coarse near 1.
_FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
_NARROW_INTS = frozenset({"int8", "int16", "uint8", "uint16"})
# LiteRT's comparisons of 8- and 16-bit integers are meant for quantized
# tensors (its uint8 equality crashes), and it has no uint32 ordered
# comparison nor NotEqual. Its NEG, and the pads of LiteRT and TF.js, write
# +0.0 for -0.0.
_PORTABLE_MISSING_BY_DTYPE = {
  **dict.fromkeys(("Less", "LessEqual", "Greater", "GreaterEqual"), _NARROW_INTS | {"uint32"}),
  "Equal": _NARROW_INTS,
  "NotEqual": _NARROW_INTS | {"uint32"},
  "Neg": _FLOATS,
  "PadV2": _FLOATS,
}
# Neither TFLite nor TF.js has TF's Cholesky or MatrixTriangularSolve: the
# rules lower their loops (jax2tf/jax_forms/triangular.py), as the native
# modules of the targets without XLA do.
_LINEAR_ALGEBRA_MISSING = frozenset({"Cholesky", "MatrixTriangularSolve"})
_TFLITE_MISSING = _PORTABLE_MISSING | _LINEAR_ALGEBRA_MISSING | {
  "Tan", "Acos", "Sinh", "Asinh", "Acosh", "Atanh", "Expm1", "Log1p", "Log", "Cumprod",
  "PopulationCount",
}  # fmt: skip

TF_XLA = Target(
  name="tf_xla",
  title="TensorFlow, with XLA ops",
  xla_ops=True,
  missing_kernels=frozenset(),
  missing_kernels_f64=frozenset(),
  missing_kernels_by_dtype=(),
  legalizations=(),
  bit_ops="tf",
  native_pipeline="tf_xla",
)

# Graphs of ordinary TF ops: what TF runs without XLA, and what the TFLite
# and TF.js converters are fed; so it avoids what those lack too.
TF_NO_XLA = Target(
  name="tf_no_xla",
  title="TensorFlow, without XLA ops",
  xla_ops=False,
  missing_kernels=_PORTABLE_MISSING,
  missing_kernels_f64=_PORTABLE_MISSING_F64,
  missing_kernels_by_dtype=kernels_by_dtype(**_PORTABLE_MISSING_BY_DTYPE),
  legalizations=(),
  bit_ops="tf",
  keeps_abs_of_relu=True,
  swaps_constant_first_operands=True,
)

# A graph for TF's TFLite converter, run on LiteRT (jax2tf.to_tflite,
# route "graph"); its native route reads a native module.
TFLITE = dataclasses.replace(
  TF_NO_XLA,
  name="tflite",
  title="TFLite (LiteRT), through TF's converter",
  missing_kernels=_TFLITE_MISSING,
  missing_kernels_f64=_PORTABLE_MISSING_F64 | {"Cumprod"},
  # FULLY_CONNECTED and BATCH_MATMUL take integers only quantized; MUL has
  # no uint64 kernel and FLOOR_DIV no 64-bit one.
  missing_kernels_by_dtype=kernels_by_dtype(
    **_PORTABLE_MISSING_BY_DTYPE,
    MatMul=frozenset({"int32"}),
    Mul=frozenset({"uint64"}),
    FloorDiv=frozenset({"int64", "uint64"}),
  ),
  legalizations=("float16_in_float32", "narrow_ints_in_int32", "uint32_as_order_keys"),
  runs_on_tf_xla=False,
  runs_on_tf=False,
  reverses_any_axes=False,
  builds_complex_from_parts=False,
  native_pipeline="tflite",
  kernel_list="tflite",
)

# The same, for a fully int8-quantized model, whose tensors hold no -0.0.
TFLITE_INT8 = dataclasses.replace(TFLITE, name="tflite_int8", signed_zeros=False)

# A graph for TF.js (jax2tf.to_tfjs), which holds no unsigned tensors.
TFJS = dataclasses.replace(
  TF_NO_XLA,
  name="tfjs",
  title="TensorFlow.js",
  legalizations=("uint32_as_int32_bits",),
  bit_ops="int32_halves",
  runs_grappler=False,
  runs_on_tf_xla=False,
  runs_on_tf=False,
  missing_kernels=_PORTABLE_MISSING | _LINEAR_ALGEBRA_MISSING,
  # TF.js multiplies int32s in JavaScript numbers, which drop low bits past
  # 2**53; its cumulative sums start from the first element, not from +0.0,
  # and keep a leading -0.0.
  missing_kernels_by_dtype=kernels_by_dtype(
    **_PORTABLE_MISSING_BY_DTYPE,
    **dict.fromkeys(("Mul", "Prod", "Cumprod"), frozenset({"int32"})),
    Cumsum=_FLOATS,
  ),
  swaps_constant_first_operands=False,
  broadcasts_complex_operands=False,
)

# JAX's StableHLO through the standalone litert-converter (to_tflite route
# "litert"), without TensorFlow. It shares TF's TFLite converter's
# legalizations and LiteRT's kernels, so it has every quirk of TFLITE; it
# reads a native module only, whose pipeline adds to TFLITE's the rewrites
# that make LiteRT's kernels compute JAX's values (NaN through MAXIMUM and
# MINIMUM, integer division by zero).
LITERT = dataclasses.replace(
  TFLITE,
  name="litert",
  title="LiteRT, through the standalone litert-converter",
  native_pipeline="litert",
  kernel_list="litert",
  tflite_ops_in_module=True,
)

TARGETS: Mapping[str, Target] = {
  t.name: t for t in (TF_XLA, TF_NO_XLA, TFLITE, TFLITE_INT8, TFJS, LITERT)
}


def for_convert(enable_xla: bool) -> Target:
  """The target of a plain `jax2tf.convert` call."""
  return TF_XLA if enable_xla else TF_NO_XLA
