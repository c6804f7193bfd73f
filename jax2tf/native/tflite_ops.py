"""TFLite's own operators written into a module for litert-converter, where
it has no legalization of the StableHLO at the shapes JAX writes.

litert-converter parses its input in a context that knows TFLite's dialect,
and its passes keep the `tfl` ops they meet; so a module may carry, in
MLIR's generic form, an operator whose StableHLO counterpart the converter
legalizes only at static sizes. Only the litert pipeline writes them
(TF's converter reads the module serialized as VHLO, which holds no `tfl`
op); `rewrite` in jax2tf/native/module_rewrite.py lets the module hold ops
of a dialect that JAX's MLIR does not register.

* TopK of integers of polymorphic sizes: JAX writes a top_k of a static k
  as a `chlo.top_k` composite, which the converter writes as
  STABLEHLO_SORT once the operand's sizes are polymorphic, and a top_k of a
  symbolic k (the sort forms' TopK of a whole axis) as the
  `stablehlo.dynamic_top_k` custom call, which it does not convert;
  LiteRT runs neither. TOPK_V2 takes k as a tensor, at any size. Integers
  only (the sort forms' order keys, jax2tf/jax_forms/sorting.py): on them
  TopK orders as JAX does, the lower index first among equal values, where
  on floats it knows no NaN.
* A gather of single elements, or of whole trailing slices, of a
  polymorphic operand indexed along its leading axes (`x[::-1]` of a
  polymorphic x is one): the converter refuses "'mhlo.gather' op Dynamic
  shaped operand"; it is LiteRT's GATHER_ND, from the starts as clamped
  before (module_patterns.GATHER_STARTS_CLAMPED).
* A gather of whole windows of a polymorphic operand, one start per batch
  position indexing every axis (`jax.vmap` of a `dynamic_slice`: batched
  crops at per-example offsets): the converter refuses the gather; it is
  GATHER_ND of every element of every window, the index of each its
  window's start (clamped as StableHLO clamps it) plus its place in the
  window.
* An argmax or argmin (JAX's reduction of values and their iota) of
  polymorphic sizes: the converter, which writes ARG_MAX and ARG_MIN at
  static ones, fails casting a polymorphic axis's size ("'arith.index_cast'
  op operand type 'tensor<4xi32>' and result type 'tensor<4xi64>' are cast
  incompatible") and fails to legalize the reduction along a static axis of
  a polymorphic operand (the pivot search of a batched `solve`). The index
  is LiteRT's ARG_MAX or ARG_MIN (of 16-bit floats and narrow integers
  converted to float32 and int32), the value
  (where read: the NaN flags of module_patterns.FIRST_NAN_IN_ARG_REDUCTIONS,
  which runs first and makes both kernels' answers JAX's for NaN) a
  maximum or minimum reduction; both kernels keep the first of equal
  values, as JAX's body does.
* An int64 remainder: LiteRT has no int64 DIV, which the remainder's form
  from a division (module_patterns.INTEGER_REMAINDER_FROM_DIVISION) needs,
  but FLOOR_MOD of int64: XLA's truncated remainder is the floored one
  moved by the divisor where their signs differ, the dividend for a zero
  divisor (which FLOOR_MOD, like a divisor of -1 for the smallest int64,
  never meets: the divisor is 1 there).
* XLA's stateful RngUniform of float32 (`lax.rng_uniform`): the converter
  writes it as an operator LiteRT has no kernel for. JAX promises no bits
  there, only values in [minval, maxval); LiteRT's RANDOM_UNIFORM (unseeded,
  so different on each run, as XLA's) draws in [0, 1), scaled to the range,
  and a value the scaling rounds up to maxval becomes minval.
* The custom calls of jax2tf/jax_forms/tflite_kernels.py (`tfl.cumsum`),
  which the forms of a target that reads TFLite's ops write: the operator
  they name, on their operands (without the shape operands JAX adds where
  the results' shapes are polymorphic), with their attributes.
"""

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.jax_forms import tflite_kernels
from jax2tf.native import stablehlo_values as values
from jax2tf.native.module_patterns import Pattern, arg_direction


def _top_k_operands(op):
  """The operand and k (a constant, or a value) of a TopK of integers of
  polymorphic sizes along their last axis, or None where `op` is not one."""
  if op.name == "stablehlo.composite":
    if ir.StringAttr(op.attributes["name"]).value != "chlo.top_k":
      return None
    (x,) = op.operands
    attrs = ir.DictAttr(op.attributes["composite_attributes"])
    k = ir.IntegerAttr(attrs["k"]).value
  else:
    if ir.StringAttr(op.attributes["call_target_name"]).value != "stablehlo.dynamic_top_k":
      return None
    x, k = op.operands
  t = x.type
  if t.has_static_shape or not values.is_integer_tensor(t) or values.is_bool_tensor(t):
    return None
  indices = op.results[1].type
  if str(indices.element_type) != "i32":
    return None  # TOPK_V2's indices are int32, as JAX's are
  return x, k


def _top_k_of_dynamic_shapes(op):
  found = _top_k_operands(op)
  if found is None:
    return
  x, k = found
  i32 = ir.IntegerType.get_signless(32)
  scalar = ir.RankedTensorType.get([], i32)
  with ir.InsertionPoint(op), op.location:
    if isinstance(k, int):
      k = values.scalar(i32, k)
    elif k.type != scalar:
      k = hlo.ConvertOp(scalar, k).result  # an int64 size
    top_k = ir.Operation.create(
      "tfl.topk_v2", results=[r.type for r in op.results], operands=[x, k]
    )
  for old, new in zip(op.results, top_k.results):
    old.replace_all_uses_with(new)
  op.erase()


TOP_K_OF_DYNAMIC_SHAPES_AS_TOPK_V2 = Pattern(
  "top_k_of_dynamic_shapes_as_topk_v2",
  ("stablehlo.composite", "stablehlo.custom_call"),
  _top_k_of_dynamic_shapes,
)


def _tflite_kernel_call(op):
  target = ir.StringAttr(op.attributes["call_target_name"]).value
  if not target.startswith(tflite_kernels.PREFIX):
    return
  shape_operands = set()
  if "indices_of_shape_operands" in op.attributes:
    shape_operands = {
      int(i) for i in ir.DenseIntElementsAttr(op.attributes["indices_of_shape_operands"])
    }
  operands = [v for i, v in enumerate(op.operands) if i not in shape_operands]
  config = ir.DictAttr(op.attributes["mhlo.backend_config"])
  attributes = {config[i].name: config[i].attr for i in range(len(config))}
  with ir.InsertionPoint(op), op.location:
    kernel = ir.Operation.create(
      target, results=[r.type for r in op.results], operands=operands, attributes=attributes
    )
  for old, new in zip(op.results, kernel.results):
    old.replace_all_uses_with(new)
  op.erase()


TFLITE_KERNEL_CALLS_AS_OPS = Pattern(
  "tflite_kernel_calls_as_ops", ("stablehlo.custom_call",), _tflite_kernel_call
)


def _is_gather_nd(op) -> bool:
  """Whether the gather `op` indexes its operand's leading axes with the
  index vectors along the indices' last axis, taking one element along
  each and whole slices of the rest after the indices' other axes."""
  operand, indices = op.operands
  t, it = operand.type, indices.type
  numbers = hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
  if list(numbers.operand_batching_dims) or list(numbers.start_indices_batching_dims):
    return False
  k = len(numbers.start_index_map)
  if list(numbers.start_index_map) != list(range(k)) or list(numbers.collapsed_slice_dims) != list(
    range(k)
  ):
    return False
  if numbers.index_vector_dim != it.rank - 1 or it.is_dynamic_dim(it.rank - 1) or it.shape[-1] != k:
    return False
  sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
  if sizes[:k] != [1] * k:
    return False
  if any(t.is_dynamic_dim(d) or sizes[d] != t.shape[d] for d in range(k, t.rank)):
    return False
  batch = it.rank - 1
  return list(numbers.offset_dims) == list(range(batch, batch + t.rank - k))


def _gather_nd_of_dynamic_shapes(op):
  if op.operands[0].type.has_static_shape or not _is_gather_nd(op):
    return  # the converter's own legalization
  with ir.InsertionPoint(op), op.location:
    gather = ir.Operation.create(
      "tfl.gather_nd", results=[op.results[0].type], operands=list(op.operands)
    )
  op.results[0].replace_all_uses_with(gather.results[0])
  op.erase()


GATHER_ND_OF_DYNAMIC_SHAPES = Pattern(
  "gather_nd_of_dynamic_shapes", ("stablehlo.gather",), _gather_nd_of_dynamic_shapes
)


def _is_iota_along(value, axis: int) -> bool:
  if not isinstance(value, ir.OpResult):
    return False
  op = value.owner
  if op.name not in ("stablehlo.iota", "stablehlo.dynamic_iota"):
    return False
  return ir.IntegerAttr(op.attributes["iota_dimension"]).value == axis


# The value types of JAX's argmax that LiteRT's ARG_MAX takes here, and the
# narrower ones it takes widened (the lanes leave an argmax's operand
# narrow): each converts to the wider type exactly, in the same order.
_ARG_KERNEL_TYPES = frozenset({"f32", "i32"})
_ARG_WIDENED = {"f16": "f32", "bf16": "f32", "i8": "i32", "i16": "i32", "ui8": "i32", "ui16": "i32"}


def _arg_reduction_of_dynamic_shape(op):
  direction = arg_direction(op, floats_only=False)
  if direction is None:
    return
  dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
  x, positions = op.operands[:2]
  element_name = str(x.type.element_type)
  if element_name not in _ARG_KERNEL_TYPES and element_name not in _ARG_WIDENED:
    return
  if len(dims) != 1 or x.type.has_static_shape:
    return
  (axis,) = dims
  if not _is_iota_along(positions, axis):
    return
  value, index = op.results
  is_max = direction == "GT"
  i32 = ir.IntegerType.get_signless(32)
  with ir.InsertionPoint(op), op.location:
    keys = x
    if element_name in _ARG_WIDENED:
      wide = ir.F32Type.get() if _ARG_WIDENED[element_name] == "f32" else i32
      keys = hlo.ConvertOp(values.retyped(x, wide), x).result
    arg = ir.Operation.create(
      "tfl.arg_max" if is_max else "tfl.arg_min",
      results=[index.type],
      operands=[keys, values.scalar(i32, axis)],
    )
    if list(value.uses):
      element = ir.RankedTensorType.get([], x.type.element_type)
      reduce = hlo.ReduceOp([value.type], [x], [op.operands[2]], [axis])
      block = reduce.regions[0].blocks.append(element, element)
      with ir.InsertionPoint(block):
        combine = hlo.MaxOp if is_max else hlo.MinOp
        hlo.ReturnOp([combine(*block.arguments).result])
      value.replace_all_uses_with(reduce.results[0])
  index.replace_all_uses_with(arg.results[0])
  op.erase()


ARG_REDUCTIONS_OF_DYNAMIC_SHAPES = Pattern(
  "arg_reductions_of_dynamic_shapes", ("stablehlo.reduce",), _arg_reduction_of_dynamic_shape
)


def _int64_remainder_from_floor_mod(op):
  result = op.results[0]
  if str(result.type.element_type) != "i64":
    return
  x, y = op.operands

  def compare(a, b, direction):
    return values.compare(a, b, direction, "SIGNED")

  with ir.InsertionPoint(op), op.location:
    zero, one = values.filled_like(y, 0), values.filled_like(y, 1)
    # Selects, not boolean and/or, which LiteRT lacks.
    divisor = hlo.SelectOp(compare(y, values.filled_like(y, -1), "EQ"), one, y).result
    divisor = hlo.SelectOp(compare(y, zero, "EQ"), one, divisor).result
    floored = ir.Operation.create(
      "tfl.floor_mod", results=[result.type], operands=[x, divisor]
    ).results[0]
    signs_differ = values.compare(
      compare(floored, zero, "LT"), compare(x, zero, "LT"), "NE", "UNSIGNED"
    )
    moved = hlo.SelectOp(signs_differ, hlo.SubtractOp(floored, divisor).result, floored).result
    truncated = hlo.SelectOp(compare(floored, zero, "EQ"), floored, moved).result
    remainder = hlo.SelectOp(compare(y, zero, "EQ"), x, truncated).result
  result.replace_all_uses_with(remainder)
  op.erase()


INT64_REMAINDER_FROM_FLOOR_MOD = Pattern(
  "int64_remainder_from_floor_mod", ("stablehlo.remainder",), _int64_remainder_from_floor_mod
)


def _window_gather_parts(op):
  """The operand, starts, window sizes (a rank-1 tensor, or a list where
  they are static) and number of leading batch dimensions of a gather of
  whole windows, one start per batch position indexing every axis but the
  batch ones, the batch dimensions first in the result; or None where
  `op` is not one."""
  operand, indices = op.operands[:2]
  t, it = operand.type, indices.type
  if t.has_static_shape:
    return None  # the converter's own legalization
  numbers = hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
  nb = len(numbers.operand_batching_dims)
  if list(numbers.operand_batching_dims) != list(range(nb)):
    return None
  if list(numbers.start_indices_batching_dims) != list(range(nb)):
    return None
  if list(numbers.collapsed_slice_dims) or list(numbers.start_index_map) != list(range(nb, t.rank)):
    return None
  if numbers.index_vector_dim != it.rank - 1 or it.is_dynamic_dim(it.rank - 1):
    return None
  batch = it.rank - 1
  if list(numbers.offset_dims) != list(range(batch, batch + t.rank - nb)):
    return None
  if op.name == "stablehlo.dynamic_gather":
    return operand, indices, op.operands[2], nb
  return operand, indices, list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"])), nb


def _window_gather_of_dynamic_operand(op):
  parts = _window_gather_parts(op)
  if parts is None:
    return
  operand, indices, sizes, nb = parts
  t, it = operand.type, indices.type
  i32 = ir.IntegerType.get_signless(32)
  one = ir.RankedTensorType.get([1], i32)
  result = op.results[0].type
  batch = it.rank - 1
  window_rank = t.rank - nb
  with ir.InsertionPoint(op), op.location:
    if isinstance(sizes, list):
      sizes = hlo.ConstantOp(ir.DenseElementsAttr.get(np.asarray(sizes, np.int32))).result
    if ir.RankedTensorType(sizes.type).element_type != i32:
      sizes = hlo.ConvertOp(ir.RankedTensorType.get([t.rank], i32), sizes).result
    window = hlo.SliceOp(sizes, [nb], [t.rank], [1]).result
    starts = indices
    if it.element_type != i32:
      starts = hlo.ConvertOp(ir.RankedTensorType.get(it.shape, i32), indices).result
    # Each start clamped so that its window fits, as StableHLO clamps it.
    room = hlo.SubtractOp(values.shape_vector(operand), sizes).result
    last = hlo.SliceOp(room, [nb], [t.rank], [1]).result
    lasts = values.broadcast_like(last, starts, [batch])
    starts = hlo.MaxOp(hlo.MinOp(starts, lasts).result, values.filled_like(starts, 0)).result
    # Every element's index: (batch..., window..., rank). Along a batch axis,
    # the position in the batch; along the others, the start plus the place
    # in the window.
    dims = list(result.shape) + [t.rank]
    batch_sizes = hlo.SliceOp(values.shape_vector(starts), [0], [batch], [1]).result

    def sized(width):
      """The type and sizes of (batch..., window..., width)."""
      shape = hlo.ConcatenateOp([batch_sizes, window, values.constant_splat(one, width)], 0)
      return ir.RankedTensorType.get(dims[:-1] + [width], i32), shape.result

    column, column_shape = sized(1)
    positions = [hlo.DynamicIotaOp(column, column_shape, k).result for k in range(nb)]
    places = [hlo.DynamicIotaOp(column, column_shape, batch + d).result for d in range(window_rank)]
    offsets = hlo.ConcatenateOp(
      [values.filled_like(p, 0) for p in positions] + places, len(dims) - 1
    ).result
    starts_type, starts_shape = sized(window_rank)
    at_starts = hlo.DynamicBroadcastInDimOp(
      starts_type, starts, starts_shape, list(range(batch)) + [len(dims) - 1]
    ).result
    if nb:
      at_starts = hlo.ConcatenateOp(positions + [at_starts], len(dims) - 1).result
    element_indices = hlo.AddOp(at_starts, offsets).result
    gathered = ir.Operation.create(
      "tfl.gather_nd", results=[result], operands=[operand, element_indices]
    )
  op.results[0].replace_all_uses_with(gathered.results[0])
  op.erase()


WINDOW_GATHER_OF_DYNAMIC_OPERAND = Pattern(
  "window_gather_of_dynamic_operand",
  ("stablehlo.gather", "stablehlo.dynamic_gather"),
  _window_gather_of_dynamic_operand,
)


def _uniform_floats_from_random_uniform(op):
  if "UNIFORM" not in str(op.attributes["rng_distribution"]):
    return
  result = op.results[0]
  if str(result.type.element_type) != "f32":
    return
  lo, hi, shape = op.operands
  i32 = ir.IntegerType.get_signless(32)
  with ir.InsertionPoint(op), op.location:
    if str(shape.type.element_type) != "i32":
      shape = hlo.ConvertOp(ir.RankedTensorType.get(shape.type.shape, i32), shape).result
    unit = ir.Operation.create(
      "tfl.random_uniform", results=[result.type], operands=[shape]
    ).results[0]
    low, high = values.broadcast_like(lo, unit), values.broadcast_like(hi, unit)
    scaled = hlo.AddOp(low, hlo.MulOp(hlo.SubtractOp(high, low).result, unit).result).result
    inside = hlo.SelectOp(values.compare(scaled, high, "LT"), scaled, low).result
  result.replace_all_uses_with(inside)
  op.erase()


UNIFORM_FLOATS_FROM_RANDOM_UNIFORM = Pattern(
  "uniform_floats_from_random_uniform", ("stablehlo.rng",), _uniform_floats_from_random_uniform
)
