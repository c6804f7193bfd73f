"""Rewrites of the exported StableHLO so that TensorFlow's XLA runs it as JAX would.

* `stablehlo.composite` ops (JAX emits them for chlo ops such as acos, erf,
  top_k) become calls of their decomposition: StableHLO before 1.0 (TF 2.16)
  has no composite op, so a module with one could not target those releases.
* Operands of `concatenate` that are empty along its axis are dropped: XLA's
  simplifier (TF's, and JAX's own at these versions) aborts the process on a
  slice of a concatenate holding one ("SmallVector unable to grow").
* For TF's TFLite converter, a subtract or divide of a constant by a
  varying value reaches it through reshapes (see
  _hide_transposes_from_constant_first_ops).
* An integer `convert` to a narrower signed type goes through the unsigned
  type of that width and a `bitcast_convert`: TF 2.21's XLA CPU compiler
  segfaults on an `and`/`or` of such a convert's result with another array
  (JAX 0.10's does too, JAX 0.12's does not).
* An integer `divide`/`remainder` whose divisor may be 0 divides by 1 there
  and selects XLA's answer: TF's XLA folds one whose operands it simplified
  to constants with a host division, which a 0 ends (SIGFPE).
* Float `maximum`/`minimum` propagate NaN explicitly: TF's XLA on CPU runs
  them in a mode that drops NaN, JAX propagates it.
* For TF's TFLite converter, a float `maximum`/`minimum` with a constant of
  infinities or largest finite floats is a compare and a select: the
  converter drops such an op whatever the constant's signs.
* Custom calls that TF cannot execute are refused at conversion time, naming
  the primitive that produced them.
Finally the module is serialized at the StableHLO version of the consumer.
"""

import re

import ml_dtypes
import numpy as np
from jax.extend import mlir as jex_mlir
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import func as func_dialect
from jax.extend.mlir.dialects import stablehlo as hlo
from jax.interpreters import mlir

from jax2tf.targets import quirks
from jax2tf.native import versions
from jax2tf.native.versions import ConsumerVersions

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
# not promise anything about graph serialization.
GRAPH_SERIALIZATION_CONVERTS = frozenset({"eig", "hessenberg", "tridiagonal", "geqp3"})
NO_TF_LOWERING = frozenset({"schur"})
# How users meet a primitive whose name is not what they called.
_USER_NAMES = {"geqp3": "qr with pivoting=True"}


def _walk(op, visit):
  op = op.operation if hasattr(op, "operation") else op
  visit(op)
  for region in op.regions:
    for block in region.blocks:
      for child in block.operations:
        _walk(child, visit)


def _ops_named(module, name):
  found = []
  _walk(module.operation, lambda op: found.append(op) if op.name == name else None)
  return found


def _inline_composites(module):
  for op in _ops_named(module, "stablehlo.composite"):
    callee = ir.FlatSymbolRefAttr(op.attributes["decomposition"]).value
    with ir.InsertionPoint(op), op.location:
      call = func_dialect.CallOp([r.type for r in op.results], callee, list(op.operands))
    for old, new in zip(op.results, call.results):
      old.replace_all_uses_with(new)
    op.erase()


def _is_empty_along(value, axis: int) -> bool:
  t = value.type
  return isinstance(t, ir.RankedTensorType) and not t.is_dynamic_dim(axis) and t.shape[axis] == 0


def _drop_empty_concatenate_operands(module):
  for op in _ops_named(module, "stablehlo.concatenate"):
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    operands = list(op.operands)
    kept = [v for v in operands if not _is_empty_along(v, axis)] or operands[:1]
    if len(kept) == len(operands):
      continue
    result = op.results[0]
    with ir.InsertionPoint(op), op.location:
      shorter = hlo.ConcatenateOp(kept, axis, results=[result.type])
    result.replace_all_uses_with(shorter.result)
    op.erase()


def _is_constant_value(value) -> bool:
  while isinstance(value, ir.OpResult):
    op = value.owner
    if op.name == "stablehlo.constant":
      return True
    if op.name not in _SHAPE_ONLY_OPS:
      return False
    value = op.operands[0]
  return False


def _transposed(value, depth: int = 16) -> bool:
  """Whether a transpose reaches `value` through ops whose other operands are
  constants (the converter moves transposes below such ops)."""
  for _ in range(depth):
    if not isinstance(value, ir.OpResult):
      return False
    if value.owner.name == "stablehlo.transpose":
      return True
    varying = [v for v in value.owner.operands if not _is_constant_value(v)]
    if len(varying) != 1:
      return False
    value = varying[0]
  return False


def _hide_transposes_from_constant_first_ops(module):
  # TF's TFLite converter moves a transpose below a subtract or divide whose
  # other operand is a constant and rebuilds the op with the transposed
  # operand first (3 - transpose(a) became a - 3). A reshape to a leading
  # unit axis between hides the transpose from that rewrite.
  for name in ("stablehlo.subtract", "stablehlo.divide"):
    for op in _ops_named(module, name):
      x, y = op.operands
      result = op.results[0]
      t = result.type
      if not (_is_constant_value(x) and _transposed(y)) or not t.has_static_shape:
        continue
      unit = ir.RankedTensorType.get([1, *t.shape], t.element_type)
      with ir.InsertionPoint(op), op.location:
        lifted = [hlo.ReshapeOp(unit, v).result for v in (x, y)]
        inner = (hlo.SubtractOp if name.endswith("subtract") else hlo.DivOp)(*lifted)
        back = hlo.ReshapeOp(t, inner.result)
      result.replace_all_uses_with(back.result)
      op.erase()


def _reverse_one_run_at_a_time(module):
  for op in _ops_named(module, "stablehlo.reverse"):
    runs = quirks.reverse_runs(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    if len(runs) < 2:
      continue
    value = op.operands[0]
    with ir.InsertionPoint(op), op.location:
      for run in runs:
        value = hlo.ReverseOp(value, run).result
    op.results[0].replace_all_uses_with(value)
    op.erase()


# The largest finite value of each float element type, by its printed name.
_LARGEST_FLOAT = {
  name: float(ml_dtypes.finfo(dtype).max)
  for name, dtype in (
    ("f16", np.float16),
    ("bf16", ml_dtypes.bfloat16),
    ("f32", np.float32),
    ("f64", np.float64),
  )
}


def _constant_elements(value) -> np.ndarray | None:
  """The elements of `value` where it is a constant, possibly broadcast or
  reshaped (a splat as one element), else None."""
  while isinstance(value, ir.OpResult):
    op = value.owner
    if op.name in ("stablehlo.broadcast_in_dim", "stablehlo.reshape"):
      value = op.operands[0]
      continue
    if op.name != "stablehlo.constant":
      return None
    dense = ir.DenseElementsAttr(op.attributes["value"])
    try:
      if dense.is_splat:
        splat = dense.get_splat_value()
        is_float = isinstance(ir.ShapedType(dense.type).element_type, ir.FloatType)
        return np.array([(ir.FloatAttr(splat) if is_float else ir.IntegerAttr(splat)).value])
      return np.array(dense)
    except (TypeError, ValueError, RuntimeError):  # a type NumPy cannot read
      return None
  return None


def _is_extreme_constant(value) -> bool:
  """Whether every element of `value` is a constant infinity or largest
  finite float, of either sign."""
  largest = _LARGEST_FLOAT.get(str(value.type.element_type))
  elements = _constant_elements(value)
  if largest is None or elements is None or elements.size == 0:
    return False
  return bool((np.abs(elements.astype(np.float64)) >= largest).all())


def _select_for_min_max_of_extreme_constants(module):
  # TF's TFLite converter drops a maximum or minimum whose other operand is
  # such a constant, whatever its signs: min(x, -inf) became x. One compare
  # and a select instead, which keep x's NaN (the constant has none).
  for name, direction in (("stablehlo.maximum", "GT"), ("stablehlo.minimum", "LT")):
    for op in _ops_named(module, name):
      if not _is_float_tensor(op.results[0].type):
        continue
      x, y = op.operands
      for a, c in ((x, y), (y, x)):
        if _is_extreme_constant(c):
          with ir.InsertionPoint(op), op.location:
            beats = hlo.CompareOp(
              c,
              a,
              hlo.ComparisonDirectionAttr.get(direction),
              compare_type=hlo.ComparisonTypeAttr.get("FLOAT"),
            )
            select = hlo.SelectOp(beats.result, c, a)
          op.results[0].replace_all_uses_with(select.result)
          op.erase()
          break


def _narrowing_to_signed(op) -> ir.IntegerType | None:
  """The unsigned type a `convert` to a narrower signed integer can go
  through, or None where it converts something else."""
  source, target = op.operands[0].type, op.results[0].type
  if not (isinstance(source, ir.RankedTensorType) and isinstance(target, ir.RankedTensorType)):
    return None
  a, b = source.element_type, target.element_type
  if not (isinstance(a, ir.IntegerType) and isinstance(b, ir.IntegerType)):
    return None
  if not b.is_signless or b.width == 1 or b.width >= a.width:
    return None
  return ir.IntegerType.get_unsigned(b.width)


def _narrow_signed_converts_through_unsigned(module):
  # Only those an and/or reads: shape computations convert dimension sizes
  # from i64 to i32, and TF's shape refinement folds a convert but not a
  # bitcast_convert.
  for op in _ops_named(module, "stablehlo.convert"):
    unsigned = _narrowing_to_signed(op)
    result = op.results[0]
    if unsigned is None or not any(
      use.owner.name in ("stablehlo.and", "stablehlo.or") for use in result.uses
    ):
      continue
    t = result.type
    through = ir.RankedTensorType.get(t.shape, unsigned, t.encoding)
    with ir.InsertionPoint(op), op.location:
      converted = hlo.ConvertOp(through, op.operands[0])
      same_bits = hlo.BitcastConvertOp(t, converted.result)
    result.replace_all_uses_with(same_bits.result)
    op.erase()


def _is_integer_tensor(t) -> bool:
  return isinstance(t, ir.RankedTensorType) and isinstance(t.element_type, ir.IntegerType)


def _is_nonzero_constant(value) -> bool:
  elements = _constant_elements(value)
  return elements is not None and bool(np.all(elements != 0))


def _integer_splat(t, value: int):
  """A constant of type `t` (static) with every element `value`, or None
  for a dynamic shape."""
  if not t.has_static_shape:
    return None
  element = ir.IntegerType(t.element_type)
  # -1 is all bits set in an unsigned type too (and 2**64 - 1 does not fit
  # the binding's int64).
  return hlo.ConstantOp(
    ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(element, value))
  ).result


def _integer_division_by_zero_as_select(module):
  # TF's XLA simplifies x - x to 0 and then folds an integer divide or
  # remainder of constants with the host's division: a zero divisor ends the
  # process (SIGFPE). The divisor is 1 there, and a select gives XLA's
  # answer for a zero divisor: all bits set for a divide (-1 if signed), the
  # dividend for a remainder.
  for name in ("stablehlo.divide", "stablehlo.remainder"):
    for op in _ops_named(module, name):
      result = op.results[0]
      x, y = op.operands
      if not _is_integer_tensor(result.type) or _is_nonzero_constant(y):
        continue
      with ir.InsertionPoint(op), op.location:
        # Constants where the shape is static: TF refines a polymorphic
        # module's dimension arithmetic to constants first, folding only some
        # ops (no convert of a boolean, no not).
        zero = _integer_splat(y.type, 0)
        if zero is None:
          zero = hlo.SubtractOp(y, y).result
        is_zero = hlo.CompareOp(y, zero, hlo.ComparisonDirectionAttr.get("EQ")).result
        one = _integer_splat(y.type, 1)
        if one is None:
          divisor = hlo.AddOp(y, hlo.ConvertOp(y.type, is_zero).result).result
        else:
          divisor = hlo.SelectOp(is_zero, one, y).result
        if name.endswith("divide"):
          all_bits = _integer_splat(y.type, -1)
          if all_bits is None:
            all_bits = hlo.NotOp(zero).result
          fixed = hlo.SelectOp(is_zero, all_bits, hlo.DivOp(x, divisor).result)
        else:
          fixed = hlo.SelectOp(is_zero, x, hlo.RemOp(x, divisor).result)
      result.replace_all_uses_with(fixed.result)
      op.erase()


def _is_float_tensor(t) -> bool:
  return isinstance(t, ir.RankedTensorType) and isinstance(t.element_type, ir.FloatType)


_SHAPE_ONLY_OPS = ("stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.convert")


def _is_nan_free_constant(value) -> bool:
  """Whether `value` is a constant (possibly broadcast) that holds no NaN.

  Such operands need no NaN check: ReLU's max(x, 0) then costs one select
  instead of two compares and two selects.
  """
  while isinstance(value, ir.OpResult):
    op = value.owner
    if op.name in _SHAPE_ONLY_OPS:
      value = op.operands[0]
      continue
    if op.name != "stablehlo.constant":
      return False
    # Printed NaNs (and infinities) are hex literals or the word nan.
    text = str(op.attributes["value"])
    return "0x" not in text and "nan" not in text.lower()
  return False


def _is_nan(v):
  return hlo.CompareOp(
    v, v, hlo.ComparisonDirectionAttr.get("NE"), compare_type=hlo.ComparisonTypeAttr.get("FLOAT")
  ).result


def _redirect_uses(result, replacement, keep):
  for use in list(result.uses):
    if use.owner not in keep:
      use.owner.operands[use.operand_number] = replacement


def _propagate_nan_in_min_max(module):
  for name in ("stablehlo.maximum", "stablehlo.minimum"):
    for op in _ops_named(module, name):
      result = op.results[0]
      if not _is_float_tensor(result.type):
        continue
      checked = [v for v in op.operands if not _is_nan_free_constant(v)]
      if not checked:
        continue
      keep, current = set(), result
      with ir.InsertionPoint.after(op), op.location:
        # The first operand is checked last so that it wins when both are NaN.
        for v in reversed(checked):
          select = hlo.SelectOp(_is_nan(v), v, current)
          keep.add(select.operation)
          current = select.result
      _redirect_uses(result, current, keep)


def _propagate_nan_in_clamp(module):
  # TF's XLA CPU clamp drops NaN in any of its three operands, JAX's returns
  # NaN. The bounds may be scalars, so a NaN bound selects a NaN tensor built
  # from the result itself ((r - r) / (r - r) is NaN for every r), which
  # also works for dynamic shapes.
  for op in _ops_named(module, "stablehlo.clamp"):
    result = op.results[0]
    if not _is_float_tensor(result.type):
      continue
    lo, x, hi = op.operands
    with ir.InsertionPoint.after(op), op.location:
      keep_x_nan = hlo.SelectOp(_is_nan(x), x, result)
      keep, current = {keep_x_nan.operation}, keep_x_nan.result
      bounds = [b for b in (lo, hi) if not _is_nan_free_constant(b)]
      if bounds:
        zero_or_nan = hlo.SubtractOp(result, result)
        nan = hlo.DivOp(zero_or_nan.result, zero_or_nan.result)
        keep.add(zero_or_nan.operation)
        for b in bounds:
          select = hlo.SelectOp(_is_nan(b), nan.result, current)
          keep.add(select.operation)
          current = select.result
    _redirect_uses(result, current, keep)


_LOC_NAME = re.compile(r'"([^"]+)"')


def _primitive_of(op) -> str:
  names = _LOC_NAME.findall(str(op.location))
  for n in names:
    if "/" in n or "(" not in n:
      return n.split("/")[-1]
  return names[0] if names else "unknown"


def _check_custom_calls(module, allowed_targets: frozenset, allow_all: bool):
  bad = []
  for op in _ops_named(module, "stablehlo.custom_call"):
    target = ir.StringAttr(op.attributes["call_target_name"]).value
    if allow_all or target in TF_EXECUTABLE_CUSTOM_CALLS or target in allowed_targets:
      continue
    bad.append((_primitive_of(op), target))
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


def rewrite_and_serialize(
  module_text: str,
  consumer: ConsumerVersions,
  *,
  allowed_custom_calls=frozenset(),
  allow_all_custom_calls=False,
  use_mixed_serialization=False,
  match_jax_in_tf_xla=True,
) -> bytes:
  """Makes the module TF-executable and serializes it at the consumer's version.

  With `match_jax_in_tf_xla`, NaN handling is rewritten where TF's XLA differs
  from JAX's (min/max, clamp); without, the module keeps JAX's own ops, as
  TF's TFLite converter needs: it legalizes only single-op reduction bodies
  (and a reverse over axes that are not adjacent becomes one per run of
  them, as LiteRT's REVERSE_V2 takes; and a max/min with an infinite
  constant is a select, which the converter keeps).
  """
  with mlir.make_ir_context(), ir.Location.unknown():
    module = ir.Module.parse(module_text)
    _inline_composites(module)
    _drop_empty_concatenate_operands(module)
    if match_jax_in_tf_xla:
      _narrow_signed_converts_through_unsigned(module)
      _integer_division_by_zero_as_select(module)
      _propagate_nan_in_min_max(module)
      _propagate_nan_in_clamp(module)
    else:
      _hide_transposes_from_constant_first_ops(module)
      _reverse_one_run_at_a_time(module)
      _select_for_min_max_of_extreme_constants(module)
    _check_custom_calls(module, frozenset(allowed_custom_calls), allow_all_custom_calls)
    text = str(module.operation.get_asm(enable_debug_info=True))
  try:
    return jex_mlir.serialize_portable_artifact(
      text, consumer.stablehlo_version, use_mixed_serialization
    )
  except Exception as e:  # the binding raises a plain ValueError/RuntimeError
    newer = _oldest_release_that_reads(text, consumer, use_mixed_serialization)
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
  text: str, consumer: ConsumerVersions, use_mixed_serialization: bool
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
        text, versions.KNOWN_RELEASES[release].stablehlo_version, use_mixed_serialization
      )
    except Exception:  # the same plain error as above, for this version
      continue
    return release
  return None
