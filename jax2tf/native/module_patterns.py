"""The rewrites of an exported module, each a pattern on one kind of op.

A `Pattern` names the ops it looks at and rewrites one of them at a time;
`run` applies a sequence of patterns in order, each over the ops the module
holds when its turn comes (so a pattern never meets the ops it inserted
itself). jax2tf/native/module_rewrite.py strings them into one pipeline
per consumer of the module; why each exists is written on it.
"""

import dataclasses
import functools
import math
import re
from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import func as func_dialect
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.native import stablehlo_values as values
from jax2tf.targets import quirks


@dataclasses.dataclass(frozen=True)
class Pattern:
  """A rewrite of single ops named in `ops`: `rewrite(op)` replaces or
  extends `op` in place, or leaves it where it does not apply."""

  name: str
  ops: tuple[str, ...]
  rewrite: Callable[[ir.Operation], None]


def run(module, patterns: Sequence[Pattern]) -> None:
  for pattern in patterns:
    for op in values.ops_named(module, pattern.ops):
      pattern.rewrite(op)


def replace(op, new_value):
  """Uses of `op`'s one result read `new_value`; `op` is erased."""
  op.results[0].replace_all_uses_with(new_value)
  op.erase()


def _redirect_uses(result, replacement, keep):
  """Uses of `result` read `replacement` instead, except in the ops `keep`
  (those that compute `replacement` from `result`)."""
  for use in list(result.uses):
    if use.owner not in keep:
      use.owner.operands[use.operand_number] = replacement


# --- Every consumer ----------------------------------------------------------


def _inline_composite(op):
  # StableHLO before 1.0 (TF 2.16) has no composite op, so a module with one
  # could not target those releases; its decomposition is a function.
  callee = ir.FlatSymbolRefAttr(op.attributes["decomposition"]).value
  with ir.InsertionPoint(op), op.location:
    call = func_dialect.CallOp([r.type for r in op.results], callee, list(op.operands))
  for old, new in zip(op.results, call.results):
    old.replace_all_uses_with(new)
  op.erase()


INLINE_COMPOSITES = Pattern("inline_composites", ("stablehlo.composite",), _inline_composite)


def _is_empty_along(value, axis: int) -> bool:
  t = value.type
  return isinstance(t, ir.RankedTensorType) and not t.is_dynamic_dim(axis) and t.shape[axis] == 0


def _drop_empty_concatenate_operands(op):
  # XLA's simplifier (TF's, and JAX's own at these versions) aborts the
  # process on a slice of a concatenate holding an operand that is empty
  # along its axis ("SmallVector unable to grow").
  axis = ir.IntegerAttr(op.attributes["dimension"]).value
  operands = list(op.operands)
  kept = [v for v in operands if not _is_empty_along(v, axis)] or operands[:1]
  if len(kept) == len(operands):
    return
  with ir.InsertionPoint(op), op.location:
    shorter = hlo.ConcatenateOp(kept, axis, results=[op.results[0].type])
  replace(op, shorter.result)


DROP_EMPTY_CONCATENATE_OPERANDS = Pattern(
  "drop_empty_concatenate_operands", ("stablehlo.concatenate",), _drop_empty_concatenate_operands
)


# The custom calls JAX lowers `eig` to: LAPACK's geev on CPU, cuSOLVER's or
# hipSOLVER's geev and the hybrid (MAGMA or host LAPACK) kernels on GPU.
_EIG_TARGETS = re.compile(r"lapack_[sdcz]geev_ffi|(cu|hip)solver_geev_ffi|(cu|hip)hybrid_eig_\w+")


def _zeros(t):
  """Zeros of the static tensor type `t`, of any element type (complex too)."""
  element = t.element_type
  if isinstance(element, ir.ComplexType):
    zero = values.scalar(element.element_type, 0)
    scalar = hlo.ComplexOp(zero, zero).result
  else:
    scalar = values.scalar(element, 0)
  return hlo.BroadcastInDimOp(t, scalar, []).result


def _empty_eig_as_constants(op):
  # TF has no handler for these custom calls (module_rewrite refuses them
  # before TF would fail). On an operand without elements (a batch or the
  # matrices of size 0, known statically) they compute nothing: every
  # eigenvalue and eigenvector result is empty, and the status (one per
  # matrix of a batch of 0x0 ones) is LAPACK's for n = 0, success.
  if not _EIG_TARGETS.fullmatch(ir.StringAttr(op.attributes["call_target_name"]).value):
    return
  operand = op.operands[0].type
  if not (isinstance(operand, ir.RankedTensorType) and operand.has_static_shape):
    return
  if 0 not in operand.shape or not all(r.type.has_static_shape for r in op.results):
    return
  with ir.InsertionPoint(op), op.location:
    zeros = [_zeros(r.type) for r in op.results]
  for old, new in zip(op.results, zeros):
    old.replace_all_uses_with(new)
  op.erase()


EMPTY_EIG_AS_CONSTANTS = Pattern(
  "empty_eig_as_constants", ("stablehlo.custom_call",), _empty_eig_as_constants
)


# --- What TF's TFLite converter and LiteRT need --------------------------------
# Modules for TF's XLA meet them too: `convert`'s output goes through TF's
# TFLite converter in the usual recipe (from a concrete function or a
# SavedModel), and each form below computes the same values under XLA.


def _transposed(value) -> bool:
  return quirks.transpose_moves_below(
    value,
    is_transpose=lambda v: isinstance(v, ir.OpResult) and v.owner.name == "stablehlo.transpose",
    varying_operands=lambda v: (
      [o for o in v.owner.operands if values.constant_of(o) is None]
      if isinstance(v, ir.OpResult)
      else []
    ),
  )


def _hide_transpose_from_constant_first_op(op):
  # TF's TFLite converter moves a transpose below a subtract or divide whose
  # other operand is a constant and rebuilds the op with the transposed
  # operand first (3 - transpose(a) became a - 3). A reshape to a leading
  # unit axis between hides the transpose from that rewrite.
  x, y = op.operands
  t = op.results[0].type
  if values.constant_of(x) is None or not _transposed(y) or not t.has_static_shape:
    return
  unit = ir.RankedTensorType.get([1, *t.shape], t.element_type)
  with ir.InsertionPoint(op), op.location:
    lifted = [hlo.ReshapeOp(unit, v).result for v in (x, y)]
    inner = (hlo.SubtractOp if op.name == "stablehlo.subtract" else hlo.DivOp)(*lifted)
    back = hlo.ReshapeOp(t, inner.result)
  replace(op, back.result)


HIDE_TRANSPOSES_FROM_CONSTANT_FIRST_OPS = Pattern(
  "hide_transposes_from_constant_first_ops",
  ("stablehlo.subtract", "stablehlo.divide"),
  _hide_transpose_from_constant_first_op,
)


def _reverse_one_run_at_a_time(op):
  runs = quirks.reverse_runs(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
  if len(runs) < 2:
    return
  value = op.operands[0]
  with ir.InsertionPoint(op), op.location:
    for run_ in runs:
      value = hlo.ReverseOp(value, run_).result
  replace(op, value)


REVERSE_ONE_RUN_AT_A_TIME = Pattern(
  "reverse_one_run_at_a_time", ("stablehlo.reverse",), _reverse_one_run_at_a_time
)


def _drop_min_max_with_identity(op):
  # max(x, -inf) and min(x, +inf) are x, NaN and signed zeros included, as
  # JAX computes them: jax.nn.softmax floors its max reduction with -inf,
  # and the NaN tests and selects every target writes for it would guard
  # nothing.
  if not values.is_float_tensor(op.results[0].type):
    return
  identity = -np.inf if op.name == "stablehlo.maximum" else np.inf
  x, y = op.operands
  for a, c in ((x, y), (y, x)):
    # With a polymorphic batch the constant is broadcast to the dynamic shape.
    constant = values.constant_at_any_shape(c)
    if a.type != op.results[0].type or constant is None or constant.elements is None:
      continue
    elements = np.asarray(constant.elements, dtype=np.float64)
    if elements.size and (elements == identity).all():
      replace(op, a)
      return


DROP_MIN_MAX_WITH_IDENTITY = Pattern(
  "drop_min_max_with_identity",
  ("stablehlo.maximum", "stablehlo.minimum"),
  _drop_min_max_with_identity,
)


def _dot_contractions_in_order(op):
  # With several contracting dimensions, both converters pair them wrongly
  # unless the rhs lists them in the order of their lhs partners, both
  # ascending (lax.dot_general(a, b, (((1, 3), (3, 2)), ...)) came out up to
  # 12 off, with no error). The rhs is transposed so that its contracting
  # dimensions, in the places they hold, come in that order.
  dims = hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
  pairs = sorted(zip(dims.lhs_contracting_dimensions, dims.rhs_contracting_dimensions))
  places = sorted(r for _, r in pairs)
  partners = [r for _, r in pairs]
  if partners == places:
    return
  rhs = op.operands[1]
  permutation = list(range(ir.RankedTensorType(rhs.type).rank))
  for place, dim in zip(places, partners):
    permutation[place] = dim
  with ir.InsertionPoint(op), op.location:
    op.operands[1] = hlo.TransposeOp(rhs, ir.DenseI64ArrayAttr.get(permutation)).result
  op.attributes["dot_dimension_numbers"] = hlo.DotDimensionNumbers.get(
    lhs_batching_dimensions=list(dims.lhs_batching_dimensions),
    rhs_batching_dimensions=list(dims.rhs_batching_dimensions),
    lhs_contracting_dimensions=[lhs for lhs, _ in pairs],
    rhs_contracting_dimensions=places,
  )


# For TF's TFLite converter too, which Google's recipe hands the tf_xla
# module; XLA folds the transpose into the dot.
DOT_CONTRACTIONS_IN_ORDER = Pattern(
  "dot_contractions_in_order", ("stablehlo.dot_general",), _dot_contractions_in_order
)


def _operands_swapped_for_trailing_rhs_contractions(op):
  # Without batch dimensions, an rhs of rank over 2 contracted on its
  # trailing dimensions against an lhs contracted elsewhere makes both
  # converters' FULLY_CONNECTED read the lhs's free dimension as its
  # contracting one: einsum("bij,jk->bki"), a [j, k] lhs contracted on j,
  # failed to run ("5 != 4"). A transpose of the lhs is folded back into the
  # dot's dimensions; the dot of the swapped operands (their order the
  # converters do read) is transposed to the dot's result instead.
  dims = hlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
  if len(dims.lhs_batching_dimensions) or "algorithm" in op.attributes:
    return  # (an algorithm names its operands' roles)
  lhs, rhs = op.operands
  lhs_rank = ir.RankedTensorType(lhs.type).rank
  rhs_rank = ir.RankedTensorType(rhs.type).rank
  lhs_c, rhs_c = list(dims.lhs_contracting_dimensions), list(dims.rhs_contracting_dimensions)
  trailing = lambda c, rank: c == list(range(rank - len(c), rank))  # noqa: E731
  if rhs_rank <= 2 or not trailing(rhs_c, rhs_rank) or trailing(lhs_c, lhs_rank):
    return
  lhs_free = lhs_rank - len(lhs_c)
  rhs_free = rhs_rank - len(rhs_c)
  result = ir.RankedTensorType(op.results[0].type)
  shape = list(result.shape)
  swapped_shape = shape[lhs_free:] + shape[:lhs_free]
  with ir.InsertionPoint(op), op.location:
    swapped = hlo.DotGeneralOp(
      ir.RankedTensorType.get(swapped_shape, result.element_type),
      rhs,
      lhs,
      hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[],
        rhs_batching_dimensions=[],
        lhs_contracting_dimensions=rhs_c,
        rhs_contracting_dimensions=lhs_c,
      ),
      precision_config=op.attributes["precision_config"]
      if "precision_config" in op.attributes
      else None,
    )
    order = list(range(rhs_free, rhs_free + lhs_free)) + list(range(rhs_free))
    back = hlo.TransposeOp(swapped.result, ir.DenseI64ArrayAttr.get(order))
  replace(op, back.result)


SWAP_OPERANDS_FOR_TRAILING_RHS_CONTRACTIONS = Pattern(
  "swap_operands_for_trailing_rhs_contractions",
  ("stablehlo.dot_general",),
  _operands_swapped_for_trailing_rhs_contractions,
)


def _min_max_of_extreme_constant_as_select(op):
  # TF's TFLite converter drops such an op (quirks.tflite_drops_min_max_with).
  # One compare and a select instead, which keep the varying operand's NaN
  # (the constant has none, and no zero to tie with): JAX's answer under
  # XLA as well.
  if not values.is_float_tensor(op.results[0].type):
    return
  direction = "GT" if op.name == "stablehlo.maximum" else "LT"
  x, y = op.operands
  for a, c in ((x, y), (y, x)):
    constant = values.constant_of(c)
    if constant is None or constant.elements is None:
      continue
    if quirks.tflite_drops_min_max_with(constant.elements):
      with ir.InsertionPoint(op), op.location:
        select = hlo.SelectOp(values.compare(c, a, direction), c, a)
      replace(op, select.result)
      return


MIN_MAX_OF_EXTREME_CONSTANTS_AS_SELECT = Pattern(
  "min_max_of_extreme_constants_as_select",
  ("stablehlo.maximum", "stablehlo.minimum"),
  _min_max_of_extreme_constant_as_select,
)


def _gather_bounds(op):
  """Per entry of a gather's index vectors, (operand axis, the largest start
  at which its slice fits there)."""
  numbers = hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
  sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
  return [(axis, sizes[axis]) for axis in numbers.start_index_map], numbers.index_vector_dim


def _in_bounds(indices, operand, bounds, vector_axis: int) -> bool:
  """Whether the constant `indices` (None: not constant) start every slice
  inside the static `operand`."""
  c = values.constant_of(indices)
  t = ir.RankedTensorType(operand.type)
  if c is None or c.elements is None or not t.has_static_shape:
    return False
  it = ir.RankedTensorType(indices.type)
  elements = np.broadcast_to(c.elements, it.shape)
  if vector_axis == it.rank:
    elements = elements[..., None]
  else:
    elements = np.moveaxis(elements, vector_axis, -1)
  last = np.array([t.shape[axis] - size for axis, size in bounds])
  return bool(((elements >= 0) & (elements <= last)).all())


def _gather_starts_clamped(op):
  # StableHLO clamps a gather's starts so that each slice fits (JAX's
  # "fill" and "clip" modes and jnp.take rely on it); both TFLite
  # converters write GATHER_ND from the starts as they are, which LiteRT
  # refuses out of range ("gather_nd index out of bounds", or for a
  # negative start "indices_has_only_positive_elements"). The clamp,
  # written out, reads the operand's sizes at run time where they are
  # polymorphic; XLA's own clamp then has nothing to do.
  operand, indices = op.operands
  bounds, vector_axis = _gather_bounds(op)
  if not bounds or _in_bounds(indices, operand, bounds, vector_axis):
    return
  it = ir.RankedTensorType(indices.type)
  element = it.element_type
  one = ir.RankedTensorType.get([1], element)
  with ir.InsertionPoint(op), op.location:
    lasts = [
      hlo.SubtractOp(
        values.dimension_size(operand, axis, element), values.scalar(element, size)
      ).result
      for axis, size in bounds
    ]
    if vector_axis == it.rank:
      (last,) = lasts
      highest = values.broadcast_like(last, indices)
    else:
      vector = hlo.ConcatenateOp([hlo.ReshapeOp(one, v).result for v in lasts], 0).result
      highest = values.broadcast_like(vector, indices, [vector_axis])
    clamped = hlo.MaxOp(hlo.MinOp(indices, highest).result, values.filled_like(indices, 0))
  op.operands[1] = clamped.result


GATHER_STARTS_CLAMPED = Pattern(
  "gather_starts_clamped", ("stablehlo.gather",), _gather_starts_clamped
)


# Ops whose region is a computation applied to elements, not control flow.
_COMPUTATION_REGIONS = frozenset(
  "stablehlo." + name
  for name in ("reduce", "reduce_window", "scatter", "select_and_scatter", "sort")
)


def _bool_op_as_logic(op):
  # TFLite has no MAXIMUM, MINIMUM, ADD, clamp, ordered comparison or XOR
  # of bools (the targets' kernel lists), but LOGICAL_AND, LOGICAL_OR and
  # LOGICAL_NOT, which compute them on bools exactly (False < True; XLA's
  # sum of bools, a gradient's, is their or).
  if not all(values.is_bool_tensor(v.type) for v in op.operands):
    return
  parent = op.parent
  if parent is not None and parent.name in _COMPUTATION_REGIONS:
    # A body the converters recognize as a whole (JAX's argmax of bools
    # compares them, and becomes ARG_MAX); reduce_folds.py has already
    # unrolled the bodies that no kernel runs.
    return
  if op.name == "stablehlo.clamp":
    low, x, high = op.operands
    with ir.InsertionPoint(op), op.location:
      replace(op, hlo.AndOp(hlo.OrOp(x, low).result, high).result)
    return
  a, b = op.operands
  with ir.InsertionPoint(op), op.location:
    if op.name in ("stablehlo.maximum", "stablehlo.add"):
      logic = hlo.OrOp(a, b).result
    elif op.name == "stablehlo.minimum":
      logic = hlo.AndOp(a, b).result
    elif op.name == "stablehlo.xor":
      logic = hlo.AndOp(hlo.OrOp(a, b).result, hlo.NotOp(hlo.AndOp(a, b).result).result).result
    else:
      direction = str(hlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value)
      forms = {
        "GT": lambda: hlo.AndOp(a, hlo.NotOp(b).result),
        "GE": lambda: hlo.OrOp(a, hlo.NotOp(b).result),
        "LT": lambda: hlo.AndOp(hlo.NotOp(a).result, b),
        "LE": lambda: hlo.OrOp(hlo.NotOp(a).result, b),
      }
      if direction not in forms:
        return  # EQ and NE have bool kernels
      logic = forms[direction]().result
  replace(op, logic)


BOOL_OPS_AS_LOGIC = Pattern(
  "bool_ops_as_logic",
  tuple("stablehlo." + name for name in "maximum minimum add multiply clamp xor compare".split()),
  _bool_op_as_logic,
)

# --- What TF's XLA needs to compute JAX's values -------------------------------


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


def _narrow_signed_convert_through_unsigned(op):
  # TF 2.21's XLA CPU compiler segfaults on an and/or of such a convert's
  # result with another array (JAX 0.10's does too, JAX 0.12's does not); the
  # unsigned type of that width and a bitcast_convert give the same bits.
  # Only those an and/or reads: shape computations convert dimension sizes
  # from i64 to i32, and TF's shape refinement folds a convert but not a
  # bitcast_convert.
  unsigned = _narrowing_to_signed(op)
  result = op.results[0]
  if unsigned is None or not any(
    use.owner.name in ("stablehlo.and", "stablehlo.or") for use in result.uses
  ):
    return
  t = result.type
  through = ir.RankedTensorType.get(t.shape, unsigned, t.encoding)
  with ir.InsertionPoint(op), op.location:
    converted = hlo.ConvertOp(through, op.operands[0])
    same_bits = hlo.BitcastConvertOp(t, converted.result)
  replace(op, same_bits.result)


NARROW_SIGNED_CONVERTS_THROUGH_UNSIGNED = Pattern(
  "narrow_signed_converts_through_unsigned",
  ("stablehlo.convert",),
  _narrow_signed_convert_through_unsigned,
)


def _is_nonzero_constant(value) -> bool:
  c = values.constant_at_any_shape(value)
  return c is not None and c.elements is not None and bool((c.elements != 0).all())


def _integer_division_by_zero_as_select(op):
  # TF's XLA simplifies x - x to 0 and then folds an integer divide or
  # remainder of constants with the host's division: a zero divisor ends the
  # process (SIGFPE). The divisor is 1 there, and a select gives XLA's
  # answer for a zero divisor: all bits set for a divide (-1 if signed), the
  # dividend for a remainder.
  result = op.results[0]
  x, y = op.operands
  if not values.is_integer_tensor(result.type) or _is_nonzero_constant(y):
    return
  with ir.InsertionPoint(op), op.location:
    # Constants where the shape is static: TF refines a polymorphic
    # module's dimension arithmetic to constants first, folding only some
    # ops (no convert of a boolean, no not).
    zero = values.constant_splat(y.type, 0)
    if zero is None:
      zero = hlo.SubtractOp(y, y).result
    is_zero = hlo.CompareOp(y, zero, hlo.ComparisonDirectionAttr.get("EQ")).result
    one = values.constant_splat(y.type, 1)
    if one is None:
      divisor = hlo.AddOp(y, hlo.ConvertOp(y.type, is_zero).result).result
    else:
      divisor = hlo.SelectOp(is_zero, one, y).result
    if op.name == "stablehlo.divide":
      all_bits = values.constant_splat(y.type, -1)
      if all_bits is None:
        all_bits = hlo.NotOp(zero).result
      fixed = hlo.SelectOp(is_zero, all_bits, hlo.DivOp(x, divisor).result)
    else:
      fixed = hlo.SelectOp(is_zero, x, hlo.RemOp(x, divisor).result)
  replace(op, fixed.result)


def _integer_remainder_from_division(op):
  # LiteRT computes an integer remainder as a floored modulo (FLOOR_MOD):
  # -7 rem 2 gave 1 where XLA's remainder, truncated, is -1. Its integer DIV
  # truncates as XLA's divide does, so x - (x / y) * y is XLA's remainder. A
  # divisor of -1 becomes 1 (the remainder is 0 either way), so that
  # INT_MIN / -1 does not overflow; a zero divisor is left to
  # INTEGER_DIVISION_BY_ZERO_AS_SELECT, which must run after this pattern.
  result = op.results[0]
  if not values.is_integer_tensor(result.type):
    return
  x, y = op.operands
  signed = values.numpy_dtype(ir.RankedTensorType(y.type).element_type).kind == "i"
  with ir.InsertionPoint(op), op.location:
    divisor = y
    if signed:
      zero = hlo.SubtractOp(y, y).result
      minus_one = hlo.NotOp(zero).result
      is_minus_one = hlo.CompareOp(y, minus_one, hlo.ComparisonDirectionAttr.get("EQ")).result
      divisor = hlo.SelectOp(is_minus_one, hlo.NegOp(minus_one).result, y).result
    quotient = hlo.DivOp(x, divisor).result
    remainder = hlo.SubtractOp(x, hlo.MulOp(quotient, divisor).result)
  replace(op, remainder.result)


INTEGER_REMAINDER_FROM_DIVISION = Pattern(
  "integer_remainder_from_division", ("stablehlo.remainder",), _integer_remainder_from_division
)


INTEGER_DIVISION_BY_ZERO_AS_SELECT = Pattern(
  "integer_division_by_zero_as_select",
  ("stablehlo.divide", "stablehlo.remainder"),
  _integer_division_by_zero_as_select,
)


# TF's XLA on CPU runs float maximum and minimum in a mode that drops NaN
# (an operand's or a reduction's), JAX's propagates it. The patterns below
# test for NaN beside the op and select it, and leave every reduction's body
# a single maximum or minimum: TF's TFLite converter legalizes only such
# bodies (into pools and REDUCE_MAX/MIN), and XLA's CPU loops run them
# fastest.

_REDUCTIONS = ("stablehlo.reduce", "stablehlo.reduce_window")
_MIN_MAX = ("stablehlo.maximum", "stablehlo.minimum")


def _min_max_body(op) -> str | None:
  """The name of the maximum or minimum that is the whole body of the float
  reduction, reduce_window or scatter `op` of one operand, or None."""
  if op.name not in (*_REDUCTIONS, "stablehlo.scatter") or len(op.results) != 1:
    return None
  t = op.results[0].type
  if not values.is_float_tensor(t) or values.numpy_dtype(t.element_type) is None:
    return None
  block = op.regions[0].blocks[0]
  body = list(block.operations)
  if len(body) != 2 or body[0].name not in _MIN_MAX or body[1].name != "stablehlo.return":
    return None
  combine, ret = body
  a, b = block.arguments
  if list(combine.operands) not in ([a, b], [b, a]) or list(ret.operands) != [combine.results[0]]:
    return None
  return combine.name


def _any(pred):
  """Whether any element of the boolean tensor `pred` is true (a scalar)."""
  t = pred.type
  if t.rank == 0:
    return pred
  scalar = ir.RankedTensorType.get([], t.element_type)
  reduce = hlo.ReduceOp([scalar], [pred], [values.scalar(t.element_type, 0)], list(range(t.rank)))
  block = reduce.regions[0].blocks.append(scalar, scalar)
  with ir.InsertionPoint(block):
    hlo.ReturnOp([hlo.OrOp(*block.arguments).result])
  return reduce.results[0]


# Ops that XLA fuses into the loop of their consumer: elementwise ones,
# broadcasts, reshapes and transposes. A value they compute is not written
# to memory unless something needs it there.
_FUSIBLE = frozenset(
  "stablehlo." + name
  for name in (
    "abs add and atan2 bitcast_convert broadcast_in_dim cbrt ceil clamp compare "
    "constant convert cosine divide dynamic_broadcast_in_dim exponential "
    "exponential_minus_one floor iota is_finite log log_plus_one logistic maximum "
    "minimum multiply negate not or power remainder reshape round_nearest_afz "
    "round_nearest_even rsqrt select sign sine sqrt subtract tan tanh transpose xor"
  ).split()
)
_MOST_RECOMPUTED = 256


def _callee(call):
  """The function a func.call calls."""
  module = values.enclosing(call, "builtin.module")
  if module is None:
    return None
  return ir.SymbolTable(module)[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]


def _is_fusible(op) -> bool:
  """Whether XLA fuses `op` into its consumer's loop: a fusible op, or a
  call (JAX's `jnp.where` is one) of a function made of them, which XLA
  inlines."""
  if op.name in _FUSIBLE:
    return not len(op.regions)
  if op.name != "func.call":
    return False
  callee = _callee(op)
  if callee is None:
    return False
  body = list(callee.regions[0].blocks[0].operations)
  return all(o.name == "func.return" or _is_fusible(o) for o in body)


def _recomputed(value):
  """`value`, computed again at the insertion point from the values that
  XLA writes to memory anyway (results of dots, convolutions, reductions,
  arguments): its fusible producers are cloned there. An operand of a
  conditional that is itself the result of a fusion would be written out
  before the conditional on every call, where a branch that recomputes it
  reads only what is already in memory. Past `_MOST_RECOMPUTED` producers,
  `value` itself."""
  chain: list = []
  seen: set = set()

  def visit(v) -> bool:
    if not isinstance(v, ir.OpResult):
      return True
    owner = v.owner
    if owner in seen or not _is_fusible(owner):
      return True
    seen.add(owner)
    if not all(visit(o) for o in owner.operands):
      return False
    chain.append(owner)
    return len(chain) <= _MOST_RECOMPUTED

  if not visit(value) or not chain:
    return value
  clones: dict = {}
  for owner in chain:
    clone = owner.clone()
    for i, o in enumerate(owner.operands):
      if isinstance(o, ir.OpResult) and o.owner in clones:
        clone.operands[i] = clones[o.owner].results[o.result_number]
    clones[owner] = clone
  return clones[value.owner].results[value.result_number]


def _nan_flags(x, is_max: bool):
  """1.0 where the float tensor `x` is NaN, else 0.0; negated for a
  minimum, so that the same maximum (minimum) of flags passes 0 exactly
  where it met a NaN."""
  flags = hlo.ConvertOp(x.type, values.is_nan(x)).result
  return flags if is_max else hlo.NegOp(flags).result


def _nan_where_flags_reached(flagged, result, is_max: bool):
  """`result`, NaN wherever `flagged`, the same combination of the NaN
  flags (`_nan_flags`), passed 0."""
  reached = values.compare(flagged, values.filled_like(flagged, 0.0), "GT" if is_max else "LT")
  # The NaNs take their sizes from `flagged`, not `result`: a caller may
  # redirect every use of `result` but the select to the select.
  return hlo.SelectOp(reached, values.filled_like(flagged, float("nan")), result).result


def _nan_where_flagged(op, x, init, is_max: bool):
  """The result of the float max or min reduction `op` of `x` from `init`,
  NaN wherever its window or slice holds a NaN: the same reduction (a clone:
  dimensions, window, padding, body) of a NaN flag, 1.0 where NaN, from
  -inf (for a minimum negated, from +inf), selects it."""
  result = op.results[0]
  element = result.type.element_type
  hit, miss = (1.0, float("-inf")) if is_max else (-1.0, float("inf"))
  flags = _nan_flags(x, is_max)
  if values.is_nan_free_constant(init):
    flag_init = values.scalar(element, miss)
  else:
    flag_init = hlo.SelectOp(
      values.is_nan(init), values.scalar(element, hit), values.scalar(element, miss)
    ).result
  flagged = op.clone()
  flagged.operands[0] = flags
  flagged.operands[1] = flag_init
  return _nan_where_flags_reached(flagged.results[0], result, is_max)


# Marks of the values a float max (min) reduction meets, reduced by a clone
# of it: the largest (smallest) mark says what the window or slice held.
_NAN_MARK, _DECISIVE_ZERO_MARK = 2.0, 1.0


def _is_decisive_zero(x, is_max: bool):
  """Where `x` is the zero that wins a tie of zeros in XLA's max (+0.0) or
  min (-0.0)."""
  negative = values.zero_is_negative(x)
  sign = hlo.NotOp(negative).result if is_max else negative
  return hlo.AndOp(values.compare(x, values.filled_like(x, 0.0), "EQ"), sign).result


def _marks(x, is_max: bool):
  """`_NAN_MARK` where `x` is NaN, `_DECISIVE_ZERO_MARK` where it is the
  zero that decides a tie, else 0.0; negated for a minimum."""
  nan = hlo.ConvertOp(x.type, values.is_nan(x)).result
  zero = hlo.ConvertOp(x.type, _is_decisive_zero(x, is_max)).result
  marks = hlo.AddOp(hlo.AddOp(nan, nan).result, zero).result
  return marks if is_max else hlo.NegOp(marks).result


def _mark_of_constant(element, is_max: bool) -> float:
  v = float(element)
  if math.isnan(v):
    mark = _NAN_MARK
  elif v == 0 and (math.copysign(1.0, v) < 0) != is_max:
    mark = _DECISIVE_ZERO_MARK
  else:
    return float("-inf") if is_max else float("inf")  # no mark: the identity
  return mark if is_max else -mark


def _nan_and_zeros_where_marked(op, x, init, is_max: bool):
  """The result of the float max or min reduction `op` of `x` from `init`
  as XLA computes it, whichever zero of a tie and whether NaN the kernel
  returned: the same reduction of `_marks` says where a NaN and where the
  decisive zero was met (the graph route's pools mark them the same way)."""
  result = op.results[0]
  element = result.type.element_type
  init_constant = values.constant_of(init)
  if init_constant is not None and init_constant.elements is not None:
    mark_init = values.scalar(element, _mark_of_constant(init_constant.elements[0], is_max))
  else:
    mark_init = _marks(init, is_max)
  marks = _marks(x, is_max)
  marked = op.clone()
  marked.operands[0] = marks
  marked.operands[1] = mark_init
  reached = marked.results[0]

  def met(mark: float):
    threshold = mark - 0.5 if is_max else 0.5 - mark
    return values.compare(reached, values.filled_like(reached, threshold), "GT" if is_max else "LT")

  # Zeros from the result at run time, not constants: the converters write
  # a constant -0.0 as +0.0.
  positive = hlo.AbsOp(result).result
  negative = hlo.NegOp(positive).result
  decisive, other = (positive, negative) if is_max else (negative, positive)
  signed_zero = hlo.SelectOp(met(_DECISIVE_ZERO_MARK), decisive, other).result
  is_zero = values.compare(result, values.filled_like(result, 0.0), "EQ")
  fixed = hlo.SelectOp(is_zero, signed_zero, result).result
  return hlo.SelectOp(met(_NAN_MARK), values.filled_like(reached, float("nan")), fixed).result


def _returned(value):
  """What computes `value` where it is a call's result (JAX's jnp.where or
  nn.relu are calls): the callee's returned value, itself where it is one of
  the callee's arguments, the call's operand."""
  while isinstance(value, ir.OpResult) and value.owner.name == "func.call":
    call = value.owner
    callee = _callee(call)
    if callee is None:
      return value
    ret = list(callee.regions[0].blocks[0].operations)[-1]
    inner = ret.operands[value.result_number]
    if isinstance(inner, ir.BlockArgument):
      inner = call.operands[inner.arg_number]
    value = inner
  return value


def _has_no_negative_zero(value) -> bool:
  """Whether the float `value` is known never to be -0.0: a constant
  without one, an abs, or a max with a constant whose elements are all at
  least +0.0 (a ReLU: XLA's max puts +0.0 above -0.0, which the pipelines
  keep)."""
  value = _returned(value)
  c = values.constant_at_any_shape(value)
  if c is not None:
    return c.elements is not None and not bool(np.any((c.elements == 0) & np.signbit(c.elements)))
  if not isinstance(value, ir.OpResult):
    return False
  owner = value.owner
  if owner.name == "stablehlo.abs":
    return True
  if owner.name != "stablehlo.maximum":
    return False
  for o in owner.operands:
    c = values.constant_at_any_shape(o)
    if c is not None and c.elements is not None and not bool(np.any(np.signbit(c.elements))):
      return True
  return False


_BROADCASTS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.dynamic_broadcast_in_dim"})
_SHAPE_ONLY = _BROADCASTS | {"stablehlo.reshape", "stablehlo.dynamic_reshape"}


def _through_shapes(value):
  while isinstance(value, ir.OpResult) and value.owner.name in _SHAPE_ONLY:
    value = value.owner.operands[0]
  return value


def _single_op_body(reduction) -> str | None:
  body = list(reduction.regions[0].blocks[0].operations)
  return body[0].name if len(body) == 2 else None


def _is_log_sum_exp(value, shifted, dimensions) -> bool:
  """Whether `value` is, through reshapes and broadcasts, the log of the
  sum over `dimensions` of exp(`shifted`)."""
  log = _through_shapes(value)
  if not isinstance(log, ir.OpResult) or log.owner.name != "stablehlo.log":
    return False
  total = _through_shapes(log.owner.operands[0])
  if not isinstance(total, ir.OpResult) or total.owner.name != "stablehlo.reduce":
    return False
  reduce = total.owner
  if _single_op_body(reduce) != "stablehlo.add" or reduce.attributes["dimensions"] != dimensions:
    return False
  exp = reduce.operands[0]
  return (
    isinstance(exp, ir.OpResult)
    and exp.owner.name == "stablehlo.exponential"
    and exp.owner.operands[0] == shifted
  )


def _zero_sign_unread(reduction) -> bool:
  """Whether no use of the float max or min `reduction`'s result can tell
  -0.0 from +0.0. Its sign is wrong only where the slice held both zeros;
  softmax and log_softmax shift by it, x - max(x), and read the shift only
  through exp (exp(-0.0) = exp(+0.0)) or, for log_softmax, less the log of
  the sum of those exps over the same slice, which is then at least log 2,
  so that the difference is never a zero."""
  dimensions = reduction.attributes["dimensions"] if reduction.name == "stablehlo.reduce" else None

  def unread(value) -> bool:
    uses = list(value.uses)
    for use in uses:
      owner = use.owner
      if owner.name in _SHAPE_ONLY and use.operand_number == 0:
        if not unread(owner.results[0]):
          return False
        continue
      if owner.name != "stablehlo.subtract" or use.operand_number != 1:
        return False
      shifted = owner.results[0]
      readers = list(shifted.uses)
      if not readers:
        return False
      for r in readers:
        reader = r.owner
        if reader.name == "stablehlo.exponential":
          continue
        if not (
          dimensions is not None
          and reader.name == "stablehlo.subtract"
          and r.operand_number == 0
          and _is_log_sum_exp(reader.operands[1], shifted, dimensions)
        ):
          return False
    return bool(uses)

  return unread(reduction.results[0])


def _slices_reached(value, dims_of_operand, through=frozenset()):
  """The uses that read `value` broadcast back (through broadcast_in_dim,
  or dynamic_broadcast_in_dim where a dimension is polymorphic, and the
  elementwise ops `through`), each with the operand dimension each of its
  dimensions stands for (None where a broadcast added it). `value` is a
  reduction's result, whose dimensions stand for `dims_of_operand`."""
  for use in value.uses:
    owner = use.owner
    if owner.name in through:
      yield from _slices_reached(owner.results[0], dims_of_operand, through)
    elif owner.name in _BROADCASTS and use.operand_number == 0:
      placed: list = [None] * owner.results[0].type.rank
      for i, d in enumerate(ir.DenseI64ArrayAttr(owner.attributes["broadcast_dimensions"])):
        placed[d] = dims_of_operand[i]
      yield from _slices_reached(owner.results[0], placed, through)
    else:
      yield use, dims_of_operand


def _sum_reading(use, dimensions):
  """The result of the sum over `dimensions`, from a NaN-free constant,
  that `use` reads as its operand; else None."""
  total = use.owner
  if (
    total.name != "stablehlo.reduce"
    or use.operand_number != 0
    or len(total.results) != 1
    or _single_op_body(total) != "stablehlo.add"
    or list(ir.DenseI64ArrayAttr(total.attributes["dimensions"])) != dimensions
    or not values.is_nan_free_constant(total.operands[1])
  ):
    return None
  return total.results[0]


def _only_shifts_a_softmax(reduction) -> bool:
  """Whether the float max or min `reduction`, from a NaN-free constant,
  only shifts its own operand for a softmax or log_softmax over the same
  slices: m is read only by x - m, which only exp reads and the
  difference with the log of the sum (log_softmax), and exp(x - m) only a
  sum over the slices and a division by it (softmax). Then neither the
  NaN nor the sign of a zero m is read: a slice that holds a NaN puts a
  NaN in its sum, and so in every result of the slice, as a NaN shift does
  in JAX; and exp(+0.0) = exp(-0.0). TF's XLA, whose maximum may drop a
  NaN, gives JAX's results from the reduction as it is."""
  if reduction.name != "stablehlo.reduce" or len(reduction.results) != 1:
    return False
  x, init = reduction.operands
  if not values.is_nan_free_constant(init):
    return False
  rank = x.type.rank
  dimensions = list(ir.DenseI64ArrayAttr(reduction.attributes["dimensions"]))
  kept = [d for d in range(rank) if d not in dimensions]
  # How a result broadcast back over its slices stands: the operand's own
  # dimensions, the reduced ones added.
  over_slices = [None if d in dimensions else d for d in range(rank)]

  def broadcast_back(operand, sums) -> bool:
    """Whether `operand` is one of `sums` (or its log) broadcast back over
    the slices."""
    return any(
      use.owner.operands[use.operand_number] == operand and placed == over_slices
      for total in sums
      for use, placed in _slices_reached(total, kept, frozenset({"stablehlo.log"}))
    )

  shifts = list(_slices_reached(reduction.results[0], kept))
  if not shifts:
    return False
  for use, placed in shifts:
    shift = use.owner
    if not (
      placed == over_slices
      and shift.name == "stablehlo.subtract"
      and use.operand_number == 1
      and shift.operands[0] == x
    ):
      return False
    shifted = shift.results[0]
    exps = [r.owner.results[0] for r in shifted.uses if r.owner.name == "stablehlo.exponential"]
    sums = [t for e in exps for u in e.uses if (t := _sum_reading(u, dimensions)) is not None]
    for e in exps:
      for u in e.uses:
        divided = (
          u.owner.name == "stablehlo.divide"
          and u.operand_number == 0
          and broadcast_back(u.owner.operands[1], sums)
        )
        if not divided and _sum_reading(u, dimensions) is None:
          return False
    for r in shifted.uses:
      if r.owner.name == "stablehlo.exponential":
        continue
      if not (
        r.owner.name == "stablehlo.subtract"
        and r.operand_number == 0
        and broadcast_back(r.owner.operands[1], sums)
      ):
        return False
    if not list(shifted.uses):
      return False
  return True


def _zeros_may_tie(reduction) -> bool:
  """Whether the float max or min `reduction` may meet both zeros in a
  window or slice and a use may read which one won: not where neither its
  operand nor its initial value holds -0.0 (a ReLU's result, which a CNN
  pools), nor where no use reads the sign (a softmax's maximum)."""
  x, init = reduction.operands
  no_negative_zero = _has_no_negative_zero(x) and _has_no_negative_zero(init)
  return not (no_negative_zero or _zero_sign_unread(reduction))


def _nan_and_zeros_outside_min_max_reduction(op):
  # LiteRT's pools and REDUCE_MAX/MIN skip NaN and return whichever zero of
  # a tie they meet first; XLA's propagate NaN and put +0.0 above -0.0.
  # NaN stands in the reduction as the largest finite float (its negation
  # for a minimum), so the reduction itself is unchanged and still a pool
  # or a REDUCE_MAX/MIN. A result at or beyond the stand-in may be NaN (its
  # window or slice held a NaN) or a value of the data, and a zero result
  # may have the wrong sign; only when some result is one of those does a
  # conditional tell them apart, with the same reduction (a clone:
  # dimensions, window, padding, body) of marks (`_marks`). A second
  # reduction on every call would double the cost of pools. Zeros need no
  # test where the operand and the initial value hold no -0.0 (a ReLU's
  # result, which a CNN pools: every zero met is then +0.0), nor where no
  # use reads the sign. A softmax's maximum needs neither
  # (`_only_shifts_a_softmax`). The stand-in is
  # finite because the converters write an infinite constant as the largest
  # finite float: the test "at or beyond" holds for either.
  combine = _min_max_body(op)
  if combine is None or _only_shifts_a_softmax(op):
    return
  is_max = combine == "stablehlo.maximum"
  x, init = op.operands
  result = op.results[0]
  zeros_may_tie = _zeros_may_tie(op)
  element = result.type.element_type
  largest = float(ml_dtypes.finfo(values.numpy_dtype(element)).max)
  wins, beyond = (largest, "GE") if is_max else (-largest, "LE")
  uses = [(use.owner, use.operand_number) for use in result.uses]
  with ir.InsertionPoint(op), op.location:
    x_is_nan = values.is_nan(x)
    op.operands[0] = hlo.SelectOp(x_is_nan, values.filled_like(x, wins), x).result
    if not values.is_nan_free_constant(init):
      op.operands[1] = hlo.SelectOp(values.is_nan(init), values.scalar(element, wins), init).result
  with ir.InsertionPoint.after(op), op.location:
    doubtful = values.compare(result, values.filled_like(result, wins), beyond)
    if zeros_may_tie:
      is_zero = values.compare(result, values.filled_like(result, 0.0), "EQ")
      doubtful = hlo.OrOp(doubtful, is_zero).result
    branch = hlo.IfOp([result.type], _any(doubtful))
    with ir.InsertionPoint(branch.true_branch.blocks.append()):
      # The marks are made here, where the branch runs, not from the test
      # above: a conditional is handed its operands in memory, and a mask
      # made outside would be written out on every call.
      x_again = _recomputed(x)
      if zeros_may_tie:
        exact = _nan_and_zeros_where_marked(op, x_again, init, is_max)
      else:
        exact = _nan_where_flagged(op, x_again, init, is_max)
      hlo.ReturnOp([exact])
    with ir.InsertionPoint(branch.false_branch.blocks.append()):
      hlo.ReturnOp([result])
  for owner, position in uses:
    owner.operands[position] = branch.results[0]


NAN_AND_ZEROS_OUTSIDE_MIN_MAX_REDUCTIONS = Pattern(
  "nan_and_zeros_outside_min_max_reductions", _REDUCTIONS, _nan_and_zeros_outside_min_max_reduction
)


def _nan_beside_min_max_scatter(op):
  # LiteRT's STABLEHLO_SCATTER runs a region of one maximum or minimum,
  # which keeps a NaN of neither side. The same scatter of NaN flags (1.0
  # where NaN; for a minimum negated) beside it says where a NaN reached
  # each element, from the operand or from an update; a select writes NaN
  # there, and the region stays one op.
  combine = _min_max_body(op)
  if op.name != "stablehlo.scatter" or combine is None:
    return
  is_max = combine == "stablehlo.maximum"
  operand, indices, updates = op.operands
  result = op.results[0]
  uses = [(use.owner, use.operand_number) for use in result.uses]
  with ir.InsertionPoint(op), op.location:
    operand_flags, update_flags = _nan_flags(operand, is_max), _nan_flags(updates, is_max)
    flagged = op.clone()
  flagged.operands[0] = operand_flags
  flagged.operands[2] = update_flags
  with ir.InsertionPoint.after(op), op.location:
    nan = _nan_where_flags_reached(flagged.results[0], result, is_max)
  for owner, position in uses:
    owner.operands[position] = nan


NAN_BESIDE_MIN_MAX_SCATTERS = Pattern(
  "nan_beside_min_max_scatters", ("stablehlo.scatter",), _nan_beside_min_max_scatter
)


def _scatter_sub_as_add(op):
  # LiteRT's STABLEHLO_SCATTER combines by add, multiply, maximum or minimum
  # only. x - u is x + (-u) exactly (IEEE defines subtraction so; integers
  # wrap the same), NaN and signed zeros included, in the same order.
  if op.name != "stablehlo.scatter" or len(op.results) != 1:
    return
  block = op.regions[0].blocks[0]
  body = list(block.operations)
  if len(body) != 2 or body[0].name != "stablehlo.subtract":
    return
  a, b = block.arguments
  if list(body[0].operands) != [a, b] or list(body[1].operands) != [body[0].results[0]]:
    return
  updates = op.operands[2]
  element = ir.RankedTensorType(updates.type).element_type
  if not values.is_float_tensor(updates.type) and not (
    isinstance(element, ir.IntegerType) and ir.IntegerType(element).is_signless
  ):
    return  # TFLite negates no unsigned integers
  with ir.InsertionPoint(op), op.location:
    op.operands[2] = hlo.NegOp(updates).result
  with ir.InsertionPoint(body[0]), body[0].location:
    replace(body[0], hlo.AddOp(a, b).result)


SCATTER_SUB_AS_ADD = Pattern("scatter_sub_as_add", ("stablehlo.scatter",), _scatter_sub_as_add)


def zeros_sign(value) -> bool | None:
  """Whether a float constant of zeros, all of one sign, is -0.0; None
  where `value` is no such constant."""
  c = values.constant_at_any_shape(value)
  if c is None or c.elements is None or c.elements.size == 0 or np.any(c.elements != 0):
    return None
  signs = np.signbit(c.elements)
  return bool(signs[0]) if np.all(signs == signs[0]) else None


def _multiply_by_zeros_from_the_operand(op):
  # litert-converter folds x * 0.0 into zeros, where IEEE (and XLA) give NaN
  # for an infinite or NaN x and -0.0 for a negative one. x - x is +0.0
  # where x is finite and NaN where it is not, so x * (x - x) is x * 0.0,
  # and the converter folds none of it.
  if not values.is_float_tensor(op.results[0].type):
    return
  for zeros, x in (op.operands, reversed(list(op.operands))):
    negative = zeros_sign(zeros)
    if negative is None or values.constant_of(x) is not None:
      continue
    with ir.InsertionPoint(op), op.location:
      factor = hlo.SubtractOp(x, x).result
      if negative:
        factor = hlo.NegOp(factor).result
      replace(op, hlo.MulOp(x, factor).result)
    return


MULTIPLY_BY_ZEROS_FROM_THE_OPERAND = Pattern(
  "multiply_by_zeros_from_the_operand", ("stablehlo.multiply",), _multiply_by_zeros_from_the_operand
)


# The same NaN semantics for XLA's reductions and windows: the reduction as
# it is, a single maximum or minimum, and beside it the same reduction of
# marks (`_marks`: NaN, and the zero that wins a tie where both zeros may
# meet and a use reads the sign) or, where no zeros may tie, of NaN flags;
# a select after it writes NaN and the winning zero where they were met.
# The second reduction runs on every call, but XLA runs the pair at about
# half the cost of one reduction of integer keys of the floats (bits with
# the magnitude of negatives flipped and NaN as the extreme integer), and
# far below a conditional that runs the marks only when the result is in
# doubt, which XLA compiles again at each new shape (a small CNN's first
# call at a new batch: about 90 ms with it, 60 ms with the second pool,
# 40 ms with no NaN handling). TF's TFLite converter makes a float
# MAX_POOL_2D or REDUCE_MAX of each of the two.


def _nan_and_zeros_beside_min_max_reduction(op):
  combine = _min_max_body(op)
  if combine is None:
    return
  x, init = op.operands
  zeros_may_tie = _zeros_may_tie(op)
  nan_free = values.is_nan_free_constant(x) and values.is_nan_free_constant(init)
  if (nan_free and not zeros_may_tie) or _only_shifts_a_softmax(op):
    return
  is_max = combine == "stablehlo.maximum"
  result = op.results[0]
  uses = [(use.owner, use.operand_number) for use in result.uses]
  with ir.InsertionPoint.after(op), op.location:
    if zeros_may_tie:
      exact = _nan_and_zeros_where_marked(op, x, init, is_max)
    else:
      exact = _nan_where_flagged(op, x, init, is_max)
  for owner, position in uses:
    owner.operands[position] = exact


NAN_AND_ZEROS_BESIDE_MIN_MAX_REDUCTIONS = Pattern(
  "nan_and_zeros_beside_min_max_reductions", _REDUCTIONS, _nan_and_zeros_beside_min_max_reduction
)


def arg_direction(op, *, floats_only: bool = True) -> str | None:
  """The direction, GT or LT, in which the body of `op` compares values,
  where `op` is the reduction JAX writes for a float (or, unless
  `floats_only`, integer) argmax or argmin (which the converters write as
  ARG_MAX and ARG_MIN): a value and its index; else None."""
  if op.name != "stablehlo.reduce" or len(op.results) != 2:
    return None
  value_type = op.results[0].type
  if not values.is_float_tensor(value_type) and (
    floats_only or not values.is_integer_tensor(value_type)
  ):
    return None
  if not values.is_integer_tensor(op.results[1].type):
    return None
  block = op.regions[0].blocks[0]
  acc, _, x, _ = block.arguments
  for inner in block.operations:
    if inner.name == "stablehlo.compare" and list(inner.operands) == [acc, x]:
      direction = hlo.ComparisonDirectionAttr(inner.attributes["comparison_direction"]).value
      if direction in ("GT", "LT"):
        return direction
  return None


def _first_nan_in_arg_reduction(op):
  # LiteRT's ARG_MAX and ARG_MIN never pick a NaN; JAX's argmax and argmin
  # pick the first NaN of the slice, as the graph route's rule does. The
  # same reduction of NaN flags (1.0 where NaN, -1.0 for an argmin) finds
  # it and says whether there is one.
  direction = arg_direction(op)
  if direction is None:
    return
  is_max = direction == "GT"
  value, index = op.results
  value_read = bool(list(value.uses))
  with ir.InsertionPoint(op), op.location:
    flags = _nan_flags(op.operands[0], is_max)
    flagged = op.clone()
  flagged.operands[0] = flags
  flag, first_nan = flagged.results
  with ir.InsertionPoint.after(op), op.location:
    met = values.compare(flag, values.filled_like(flag, 0.0), "GT" if is_max else "LT")
    new_index = hlo.SelectOp(met, first_nan, index)
    # (The NaNs take their sizes from the flags: every use of `value` but
    # the select's is redirected.)
    new_value = (
      hlo.SelectOp(met, values.filled_like(flag, float("nan")), value) if value_read else None
    )
  _redirect_uses(index, new_index.result, {new_index.operation})
  if new_value is not None:
    _redirect_uses(value, new_value.result, {new_value.operation})


FIRST_NAN_IN_ARG_REDUCTIONS = Pattern(
  "first_nan_in_arg_reductions", ("stablehlo.reduce",), _first_nan_in_arg_reduction
)


def _propagate_nan_in_min_max(op, scatters_outside: bool):
  result = op.results[0]
  if not values.is_float_tensor(result.type):
    return
  parent = op.parent
  if parent is not None and _min_max_body(parent) is not None:
    if parent.name != "stablehlo.scatter" or scatters_outside:
      return  # NaN is tested outside the reduction or scatter (above)
  # A constant without NaN needs no test: ReLU's max(x, 0) costs one select.
  checked = [v for v in op.operands if not values.is_nan_free_constant(v)]
  if not checked:
    return
  keep, current = set(), result
  with ir.InsertionPoint.after(op), op.location:
    # The first operand is checked last so that it wins when both are NaN.
    for v in reversed(checked):
      select = hlo.SelectOp(values.is_nan(v), v, current)
      keep.add(select.operation)
      current = select.result
  _redirect_uses(result, current, keep)


def _is_elementwise_float_min_max(op) -> bool:
  """Whether the max or min `op` is on floats and not the body of a
  reduction, window or scatter (whose patterns handle it outside)."""
  if not values.is_float_tensor(op.results[0].type):
    return False
  parent = op.parent
  return parent is None or _min_max_body(parent) is None


def _order_zeros_in_min_max(op):
  # XLA orders -0.0 below +0.0 in max and min; LiteRT's MAXIMUM and MINIMUM
  # return either zero of a tie, TF's XLA the first operand. Where both are
  # zeros the result is the operand XLA picks, told apart by 1/x (-inf for
  # -0.0), as the graph route's semantics.maximum does. A constant operand
  # is left alone: ReLU's zero is fixed on the flatbuffer (lite/rewrite.py)
  # and under TF's XLA by MAX_WITH_ZERO_AS_SELECT, and another constant ties
  # no zero or is rare.
  if not _is_elementwise_float_min_max(op):
    return
  result = op.results[0]
  x, y = op.operands
  if any(values.constant_at_any_shape(v) is not None for v in (x, y)):
    return
  is_max = op.name == "stablehlo.maximum"
  with ir.InsertionPoint.after(op), op.location:
    zero = values.filled_like(x, 0.0)
    both_zero = hlo.AndOp(values.compare(x, zero, "EQ"), values.compare(y, zero, "EQ")).result
    x_negative = values.zero_is_negative(x)
    tie = hlo.SelectOp(x_negative, y, x) if is_max else hlo.SelectOp(x_negative, x, y)
    select = hlo.SelectOp(both_zero, tie.result, result)
  _redirect_uses(result, select.result, {select.operation})


ORDER_ZEROS_IN_MIN_MAX = Pattern("order_zeros_in_min_max", _MIN_MAX, _order_zeros_in_min_max)


def _max_with_zero_as_select(op):
  # TF's XLA returns the first operand of a tie and moves a constant to the
  # right, so ReLU's max(x, +0.0) kept x's -0.0 where JAX gives +0.0 (and
  # min(x, -0.0) x's +0.0). select(x <= 0, +0.0, x) gives the zero there and
  # keeps x's NaN (no comparison with NaN holds): a compare and a select
  # where the max with its NaN test took three ops. XLA leaves the select
  # as it is.
  if not _is_elementwise_float_min_max(op):
    return
  is_max = op.name == "stablehlo.maximum"
  x, y = op.operands
  for a, c in ((x, y), (y, x)):
    if zeros_sign(c) is (not is_max):
      with ir.InsertionPoint(op), op.location:
        select = hlo.SelectOp(values.compare(a, c, "LE" if is_max else "GE"), c, a)
      replace(op, select.result)
      return


# Before PROPAGATE_NAN_IN_MIN_MAX, which then meets no such max or min.
MAX_WITH_ZERO_AS_SELECT = Pattern("max_with_zero_as_select", _MIN_MAX, _max_with_zero_as_select)


PROPAGATE_NAN_IN_MIN_MAX = Pattern(
  "propagate_nan_in_min_max",
  _MIN_MAX,
  functools.partial(_propagate_nan_in_min_max, scatters_outside=False),
)
# Where NAN_BESIDE_MIN_MAX_SCATTERS has tested a scatter's NaN outside it.
PROPAGATE_NAN_IN_MIN_MAX_BESIDE_SCATTERS = Pattern(
  "propagate_nan_in_min_max_beside_scatters",
  _MIN_MAX,
  functools.partial(_propagate_nan_in_min_max, scatters_outside=True),
)


def _pad_negative_zero_by_negation(op):
  # The converters write a constant -0.0 as +0.0, so a pad with -0.0 would
  # write +0.0. -x padded with +0.0 and negated back is the same numbers,
  # zeros and NaN included, as the graph route pads for LiteRT.
  x, value = op.operands
  c = values.constant_of(value)
  if c is None or c.elements is None or not values.is_float_tensor(x.type):
    return
  element = c.elements[0]
  if element != 0 or not np.signbit(element):
    return
  with ir.InsertionPoint(op), op.location:
    negated = hlo.NegOp(x).result
    zero = values.scalar(ir.RankedTensorType(value.type).element_type, 0.0)
    padded = op.clone()
    padded.operands[0] = negated
    padded.operands[1] = zero
    replace(op, hlo.NegOp(padded.results[0]).result)


PAD_NEGATIVE_ZERO_BY_NEGATION = Pattern(
  "pad_negative_zero_by_negation", ("stablehlo.pad",), _pad_negative_zero_by_negation
)


def _clamp_as_min_of_max(op):
  # XLA's clamp is min(max(x, lo), hi): where lo > hi it gives hi. The
  # converters lower it as max(min(x, hi), lo), which gives lo there. Written
  # as XLA computes it, with bounds given as scalars broadcast to x; the NaN
  # patterns then see a plain maximum and minimum.
  lo, x, hi = op.operands
  with ir.InsertionPoint(op), op.location:
    shaped = [
      values.broadcast_like(b, x) if b.type.rank == 0 and x.type.rank else b for b in (lo, hi)
    ]
    low = hlo.MaxOp(x, shaped[0]).result
    replace(op, hlo.MinOp(low, shaped[1]).result)


CLAMP_AS_MIN_OF_MAX = Pattern("clamp_as_min_of_max", ("stablehlo.clamp",), _clamp_as_min_of_max)


def _clamp_with_zero_ties_as_min_of_max(op):
  # TF's XLA clamp gives the first operand of a tie: clamp(+0.0, -0.0, 6.0)
  # is -0.0 where JAX's is +0.0. Where a bound may tie a zero (an array, or
  # a constant with zeros) the clamp is XLA's min(max(x, lo), hi), whose
  # max and min the patterns after this give JAX's zeros and NaN; a clamp
  # between nonzero constants stays one op.
  if values.is_float_tensor(op.results[0].type) and any(
    not _is_nonzero_constant(b) for b in (op.operands[0], op.operands[2])
  ):
    _clamp_as_min_of_max(op)


CLAMP_WITH_ZERO_TIES_AS_MIN_OF_MAX = Pattern(
  "clamp_with_zero_ties_as_min_of_max", ("stablehlo.clamp",), _clamp_with_zero_ties_as_min_of_max
)


def _propagate_nan_in_clamp(op):
  # TF's XLA CPU clamp drops NaN in any of its three operands, JAX's returns
  # NaN. The bounds may be scalars, so a NaN bound selects a NaN tensor built
  # from the result itself ((r - r) / (r - r) is NaN for every r), which
  # also works for dynamic shapes.
  result = op.results[0]
  if not values.is_float_tensor(result.type):
    return
  lo, x, hi = op.operands
  with ir.InsertionPoint.after(op), op.location:
    keep_x_nan = hlo.SelectOp(values.is_nan(x), x, result)
    keep, current = {keep_x_nan.operation}, keep_x_nan.result
    bounds = [b for b in (lo, hi) if not values.is_nan_free_constant(b)]
    if bounds:
      zero_or_nan = hlo.SubtractOp(result, result)
      nan = hlo.DivOp(zero_or_nan.result, zero_or_nan.result)
      keep.add(zero_or_nan.operation)
      for b in bounds:
        select = hlo.SelectOp(values.is_nan(b), nan.result, current)
        keep.add(select.operation)
        current = select.result
  _redirect_uses(result, current, keep)


PROPAGATE_NAN_IN_CLAMP = Pattern(
  "propagate_nan_in_clamp", ("stablehlo.clamp",), _propagate_nan_in_clamp
)
