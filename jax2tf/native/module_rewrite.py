"""Rewrites of the exported StableHLO for the consumer that reads it, then its serialization.

Each consumer has a named pipeline of patterns (`PIPELINES`,
jax2tf/native/module_patterns.py, where each pattern says why it exists):

* "tf_xla", for TF's `XlaCallModule`: the module computes JAX's values
  under TF's XLA (NaN through float max/min, reductions and clamp; no
  process-ending folds or compiler crashes on integer ops), in forms that
  TF's TFLite converter also legalizes, since the usual recipe hands the
  converted function to it: every reduction keeps a single max/min body,
  with its NaN tested beside it.
* "tflite", for `to_tflite(route="native")`: JAX's own ops, with only the
  forms TF's TFLite converter and LiteRT need; LiteRT's kernels are checked
  case by case instead.
* "litert", for `to_tflite(route="litert")` (the standalone litert-converter,
  which shares TF's converter's legalizations): those forms, and JAX's values
  where LiteRT's kernels differ: NaN through float max/min, reductions and
  clamp (LiteRT's MAXIMUM/MINIMUM return the other operand), -0.0 below
  +0.0 in max/min and their reductions and pools, integer
  remainders (LiteRT's is a floored modulo) and integer division by zero
  (LiteRT's DIV refuses to run it); conditionals inside loops are selects
  of both branches (litert-converter numbers the IF's inputs wrongly there).

Custom calls that TF cannot execute are then refused at conversion time,
naming the primitive that produced them, and the module is serialized at
the StableHLO version of the consumer.
"""

import re

from jax.extend import mlir as jex_mlir
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo
from jax.interpreters import mlir

from jax2tf.native import (
  dynamic_ops,
  integer_patterns,
  kernel_forms,
  loop_branches,
  module_lanes,
  module_patterns,
  placement,
  reduce_folds,
  tflite_ops,
  versions,
)
from jax2tf.native.stablehlo_values import ops_named
from jax2tf.native.versions import ConsumerVersions
from jax2tf.targets import LITERT, TFLITE

# Custom calls that TensorFlow's XLA executes (expanded by XLA passes or
# implemented by TF itself), on top of those a user allows explicitly.
TF_EXECUTABLE_CUSTOM_CALLS = frozenset(
  {
    "Qr",
    "ProductOfElementaryHouseholderReflectors",
    "Eigh",
    "Sharding",
    "SPMDFullToShardShape",
    "SPMDShardToFullShape",
    "shape_assertion",
    "annotate_device_placement",
    "tf.call_tf_function",
    "stablehlo.dynamic_reduce_window",
    "stablehlo.dynamic_rng_bit_generator",
    "stablehlo.dynamic_top_k",
    "ApproxTopK",
    "stablehlo.dynamic_approx_top_k",
    "X64Combine",
    "X64SplitLow",
    "X64SplitHigh",
  }
)


class UnsupportedCustomCallError(NotImplementedError):
  """A custom call TensorFlow cannot execute; `targets` and `primitives` name them."""

  def __init__(self, message: str, *, primitives=(), targets=()):
    super().__init__(message)
    self.primitives = tuple(primitives)
    self.targets = tuple(targets)


# What to tell the user about a primitive whose CPU/GPU lowering is a custom
# call TF has no handler for. Native code must not import graph/, so these
# sets record what graph serialization does (tests/native/test_errors.py
# checks them against it). Primitives in neither set get a remedy that does
# not promise anything about graph serialization: hessenberg, tridiagonal
# and geqp3 (pivoted qr) reach a custom call only with a symbolic matrix
# dimension (portable_lowering.py lowers them otherwise), which graph
# serialization refuses too.
GRAPH_SERIALIZATION_CONVERTS = frozenset({"eig"})
NO_TF_LOWERING = frozenset({"schur"})
# How users meet a primitive whose name is not what they called.
_USER_NAMES = {"geqp3": "qr with pivoting=True"}


# Patterns in order: a later one sees what an earlier one wrote. A max/min
# with its identity (-inf, +inf) is dropped and one of another extreme
# constant is a select before the NaN patterns, which then have nothing to
# test there.
PIPELINES: dict[str, tuple[module_patterns.Pattern, ...]] = {
  "tf_xla": (
    module_patterns.INLINE_COMPOSITES,
    module_patterns.DROP_EMPTY_CONCATENATE_OPERANDS,
    module_patterns.DOT_CONTRACTIONS_IN_ORDER,
    module_patterns.SWAP_OPERANDS_FOR_TRAILING_RHS_CONTRACTIONS,
    module_patterns.EMPTY_EIG_AS_CONSTANTS,
    module_patterns.HIDE_TRANSPOSES_FROM_CONSTANT_FIRST_OPS,
    module_patterns.REVERSE_ONE_RUN_AT_A_TIME,
    module_patterns.DROP_MIN_MAX_WITH_IDENTITY,
    module_patterns.MIN_MAX_OF_EXTREME_CONSTANTS_AS_SELECT,
    module_patterns.NARROW_SIGNED_CONVERTS_THROUGH_UNSIGNED,
    # For TF's TFLite converter too, which Google's LiteRT recipe hands this
    # module: XLA runs the same identities at the same cost.
    *integer_patterns.TFLITE_INTEGER_OPS,
    *dynamic_ops.DYNAMIC_OPS_FOR_TF_XLA,
    module_patterns.GATHER_STARTS_CLAMPED,
    module_patterns.INTEGER_DIVISION_BY_ZERO_AS_SELECT,
    module_patterns.NAN_AND_ZEROS_BESIDE_MIN_MAX_REDUCTIONS,
    module_patterns.CLAMP_WITH_ZERO_TIES_AS_MIN_OF_MAX,
    module_patterns.MAX_WITH_ZERO_AS_SELECT,
    module_patterns.PROPAGATE_NAN_IN_MIN_MAX,
    module_patterns.ORDER_ZEROS_IN_MIN_MAX,
    module_patterns.PROPAGATE_NAN_IN_CLAMP,
  ),
  "tflite": (
    *kernel_forms.composite_forms_for(TFLITE),
    *placement.DROP_PLACEMENT_ANNOTATIONS,
    module_patterns.INLINE_COMPOSITES,
    # Early, so that the window patterns below meet the window it writes.
    dynamic_ops.DYNAMIC_REDUCE_WINDOW_AS_PADDED_WINDOW,
    module_patterns.DROP_EMPTY_CONCATENATE_OPERANDS,
    module_patterns.DOT_CONTRACTIONS_IN_ORDER,
    module_patterns.SWAP_OPERANDS_FOR_TRAILING_RHS_CONTRACTIONS,
    module_patterns.EMPTY_EIG_AS_CONSTANTS,
    module_patterns.HIDE_TRANSPOSES_FROM_CONSTANT_FIRST_OPS,
    module_patterns.REVERSE_ONE_RUN_AT_A_TIME,
    module_patterns.DROP_MIN_MAX_WITH_IDENTITY,
    module_patterns.MIN_MAX_OF_EXTREME_CONSTANTS_AS_SELECT,
    # Before the patterns of single ops, which then meet the body's ops.
    reduce_folds.REDUCTION_OF_NOTHING_AS_RESHAPE,
    reduce_folds.REDUCTION_OF_NO_ELEMENTS_AS_INITS,
    reduce_folds.REDUCE_AS_FOLD,
    reduce_folds.WINDOW_AS_FOLD,
    reduce_folds.INIT_AFTER_REDUCTION,
    module_patterns.BOOL_OPS_AS_LOGIC,
    module_patterns.SCATTER_SUB_AS_ADD,
    module_patterns.PAD_NEGATIVE_ZERO_BY_NEGATION,
    *integer_patterns.TFLITE_INTEGER_OPS,
    *dynamic_ops.DYNAMIC_OPS_FOR_TFLITE,
    module_patterns.GATHER_STARTS_CLAMPED,
    # TF's converter lowers clamp in the other order, which the litert
    # pipeline fixes the same way.
    module_patterns.CLAMP_AS_MIN_OF_MAX,
    integer_patterns.SHIFTS_RIGHT_AS_XLA,
    *kernel_forms.patterns_for(TFLITE),
    *module_lanes.patterns_for(TFLITE),
  ),
  "litert": (
    *kernel_forms.composite_forms_for(LITERT),
    *placement.DROP_PLACEMENT_ANNOTATIONS,
    tflite_ops.TOP_K_OF_DYNAMIC_SHAPES_AS_TOPK_V2,
    tflite_ops.TFLITE_KERNEL_CALLS_AS_OPS,
    module_patterns.INLINE_COMPOSITES,
    # Early, so that the window patterns below meet the window it writes.
    dynamic_ops.DYNAMIC_REDUCE_WINDOW_AS_PADDED_WINDOW,
    loop_branches.CONDITIONALS_IN_LOOPS_AS_SELECTS,
    module_patterns.DROP_EMPTY_CONCATENATE_OPERANDS,
    module_patterns.DOT_CONTRACTIONS_IN_ORDER,
    module_patterns.SWAP_OPERANDS_FOR_TRAILING_RHS_CONTRACTIONS,
    module_patterns.EMPTY_EIG_AS_CONSTANTS,
    module_patterns.HIDE_TRANSPOSES_FROM_CONSTANT_FIRST_OPS,
    module_patterns.REVERSE_ONE_RUN_AT_A_TIME,
    module_patterns.DROP_MIN_MAX_WITH_IDENTITY,
    module_patterns.MIN_MAX_OF_EXTREME_CONSTANTS_AS_SELECT,
    reduce_folds.REDUCTION_OF_NOTHING_AS_RESHAPE,
    reduce_folds.REDUCTION_OF_NO_ELEMENTS_AS_INITS,
    reduce_folds.REDUCE_AS_FOLD,
    reduce_folds.WINDOW_AS_FOLD,
    reduce_folds.INIT_AFTER_REDUCTION,
    module_patterns.BOOL_OPS_AS_LOGIC,
    module_patterns.SCATTER_SUB_AS_ADD,
    module_patterns.MULTIPLY_BY_ZEROS_FROM_THE_OPERAND,
    module_patterns.PAD_NEGATIVE_ZERO_BY_NEGATION,
    *integer_patterns.TFLITE_INTEGER_OPS,
    tflite_ops.INT64_REMAINDER_FROM_FLOOR_MOD,
    tflite_ops.UNIFORM_FLOATS_FROM_RANDOM_UNIFORM,
    module_patterns.INTEGER_REMAINDER_FROM_DIVISION,
    module_patterns.INTEGER_DIVISION_BY_ZERO_AS_SELECT,
    module_patterns.NAN_AND_ZEROS_OUTSIDE_MIN_MAX_REDUCTIONS,
    module_patterns.FIRST_NAN_IN_ARG_REDUCTIONS,
    tflite_ops.ARG_REDUCTIONS_OF_DYNAMIC_SHAPES,
    module_patterns.NAN_BESIDE_MIN_MAX_SCATTERS,
    module_patterns.CLAMP_AS_MIN_OF_MAX,
    module_patterns.PROPAGATE_NAN_IN_MIN_MAX_BESIDE_SCATTERS,
    module_patterns.ORDER_ZEROS_IN_MIN_MAX,
    module_patterns.PROPAGATE_NAN_IN_CLAMP,
    # Before the dynamic ops, whose iota pattern meets the iotas it writes.
    tflite_ops.WINDOW_GATHER_OF_DYNAMIC_OPERAND,
    *dynamic_ops.DYNAMIC_OPS_FOR_TFLITE,
    module_patterns.GATHER_STARTS_CLAMPED,
    tflite_ops.GATHER_ND_OF_DYNAMIC_SHAPES,
    integer_patterns.SHIFTS_RIGHT_AS_XLA,
    *kernel_forms.patterns_for(LITERT),
    # Last, so that the ops the patterns above write compute in the lanes too.
    *module_lanes.patterns_for(LITERT),
  ),
}


# A quoted name in a location: a name JAX gave (`"jit(f)/mul"(...)`), not a
# file (`"model.py":3:7`).
_LOC_NAME = re.compile(r'"([^"]+)"(?!:)')


def primitive_of(location) -> str:
  """The JAX primitive that JAX's lowering named in an op's `location` (an
  MLIR location, of any MLIR binding, or its text), or "unknown"."""
  names = _LOC_NAME.findall(str(location))
  for n in names:
    if "/" in n or "(" not in n:
      return n.split("/")[-1]
  return names[0] if names else "unknown"


def _check_custom_calls(module, allowed_targets: frozenset, allow_all: bool):
  bad = []
  for op in ops_named(module, ("stablehlo.custom_call",)):
    target = ir.StringAttr(op.attributes["call_target_name"]).value
    if allow_all or target in TF_EXECUTABLE_CUSTOM_CALLS or target in allowed_targets:
      continue
    bad.append((primitive_of(op.location), target))
  if bad:
    raise UnsupportedCustomCallError(
      _unsupported_message(bad),
      primitives=sorted({p for p, _ in bad}),
      targets=sorted({t for _, t in bad}),
    )


def _unsupported_message(bad) -> str:
  def describe(p):
    return f"{p} ({_USER_NAMES[p]})" if p in _USER_NAMES else p

  desc = ", ".join(sorted({f"{describe(p)} (custom call {t!r})" for p, t in bad}))
  targets = sorted({t for _, t in bad})
  primitives = sorted({p for p, _ in bad})
  allow = (
    "native_serialization_disabled_checks=["
    + ", ".join(f"jax2tf.DisabledSafetyCheck.custom_call({t!r})" for t in targets)
    + "]"
  )
  msg = (
    f"Native serialization cannot convert {desc}: JAX lowers it to a custom call "
    "that TensorFlow has no handler for, so the converted function would fail "
    "inside TensorFlow."
  )
  nowhere = [p for p in primitives if p in NO_TF_LOWERING]
  if nowhere:
    msg += (
      f" No TensorFlow lowering of {', '.join(map(describe, nowhere))} exists in "
      "either serialization: graph serialization (native_serialization=False) "
      "has no rule for it either. Compute it differently (outside the converted "
      "function, or with other JAX operations)"
    )
  elif all(p in GRAPH_SERIALIZATION_CONVERTS for p in primitives):
    msg += (
      " Use graph serialization (native_serialization=False) for this "
      "function, which lowers it to TensorFlow ops (TF's Eig, which runs "
      "outside XLA: not under tf.function(jit_compile=True))"
    )
  else:
    msg += (
      " Graph serialization (native_serialization=False) converts it only if "
      "it has a rule for the primitive"
    )
  return msg + (
    f", or, if the TensorFlow that runs the module does provide the handler, pass {allow}."
  )


def _parse(module: str | bytes) -> ir.Module:
  """`module` as text, or as a portable artifact (an Exported's
  `mlir_module_serialized`), in the current context."""
  if isinstance(module, bytes):
    # Straight from the artifact: through text (Exported.mlir_module())
    # this cost a print and a parse, a third of a small model's export.
    return jex_mlir.deserialize_portable_artifact(module, ir.Context.current)
  return ir.Module.parse(module)


def _rewritten(module: str | bytes, pipeline: str, check, write):
  """`write(rewritten module)`, inside the module's context."""
  if pipeline not in PIPELINES:
    raise ValueError(f"pipeline: expected one of {sorted(PIPELINES)}, got {pipeline!r}")
  with mlir.make_ir_context() as context, ir.Location.unknown():
    # TFLite's own ops, which the litert pipeline writes (tflite_ops.py).
    context.allow_unregistered_dialects = True
    parsed = _parse(module)
    module_patterns.run(parsed, PIPELINES[pipeline])
    if check is not None:
      check(parsed)
    return write(parsed)


def rewrite(module: str | bytes, pipeline: str, *, check=None) -> str:
  """The text of `module` (text, or an Exported's portable artifact)
  rewritten with `PIPELINES[pipeline]`, with its locations (which name the
  JAX primitive of each op); `check(module)` may refuse the rewritten module
  first."""
  return _rewritten(
    module, pipeline, check, lambda m: str(m.operation.get_asm(enable_debug_info=True))
  )


def rewrite_and_serialize(
  module: str | bytes,
  consumer: ConsumerVersions,
  *,
  allowed_custom_calls=frozenset(),
  allow_all_custom_calls=False,
  use_mixed_serialization=False,
  pipeline: str = "tf_xla",
) -> bytes:
  """Rewrites `module` (text, or an Exported's portable artifact) with
  `PIPELINES[pipeline]`, checks its custom calls and serializes it at the
  consumer's StableHLO version.

  `use_mixed_serialization` keeps Shardy's `sdy` ops as they are (what JAX's
  own exports do); pass it when the consumer partitions with Shardy
  (XlaCallModule's use_shardy_partitioner). Without it they are written as
  `Sharding` custom calls carrying both partitioners' annotations, which a
  GSPMD consumer reads but TF's Shardy import cannot refine when their
  shapes are symbolic ("Module has dynamic shapes: 'stablehlo.custom_call'").
  """
  # Bytecode, not text, to the serializer: it parses that in a fraction of
  # the time, and the artifact it writes reads back as the same module.
  bytecode = _rewritten(
    module,
    pipeline,
    lambda m: _check_custom_calls(m, frozenset(allowed_custom_calls), allow_all_custom_calls),
    mlir.module_to_bytecode,
  )
  try:
    return jex_mlir.serialize_portable_artifact(
      bytecode, consumer.stablehlo_version, use_mixed_serialization
    )
  except Exception as e:  # the binding raises a plain ValueError/RuntimeError
    newer = _oldest_release_that_reads(bytecode, consumer, use_mixed_serialization)
    remedy = (
      "target a newer TensorFlow (target_tf_version / upgrade the serving TensorFlow)"
      if newer is None
      else f"target TensorFlow {newer} or newer (target_tf_version={newer!r}; its "
      f"StableHLO {versions.KNOWN_RELEASES[newer].stablehlo_version} expresses "
      "the module)"
    )
    raise ValueError(
      f"The converted module cannot be expressed in StableHLO "
      f"{consumer.stablehlo_version}, the newest version {consumer.description} "
      f"reads (the installed JAX writes up to {hlo.get_current_version()}): "
      f"{_first_errors(str(e))}. "
      f"Remedy: {remedy}, or avoid the newer operation or type."
    ) from e


def _first_errors(text: str, limit: int = 3, width: int = 400) -> str:
  # MLIR's diagnostic is followed by the call stack and a dump of the whole
  # module, which for a real model runs to megabytes.
  errors = [line.strip() for line in text.splitlines() if "error:" in line][:limit]
  if not errors:
    errors = [text.strip().splitlines()[0] if text.strip() else "(no detail)"]
  return "; ".join(e if len(e) <= width else e[:width] + "..." for e in errors)


def _oldest_release_that_reads(
  module: str | bytes, consumer: ConsumerVersions, use_mixed_serialization: bool
) -> str | None:
  """The oldest known TF release, newer than `consumer`, that can read the module.

  Only on the error path: one serialization attempt per newer release.
  """
  floor = versions.parse_version(consumer.stablehlo_version)
  candidates = sorted(
    (versions.parse_version(c.stablehlo_version), r) for r, c in versions.KNOWN_RELEASES.items()
  )
  for v, release in candidates:
    if v <= floor:
      continue
    try:
      jex_mlir.serialize_portable_artifact(
        module, versions.KNOWN_RELEASES[release].stablehlo_version, use_mixed_serialization
      )
    except Exception:  # the same plain error as above, for this version
      continue
    return release
  return None
