"""Gathers and slices of polymorphic arrays in forms TFLite's converters
legalize.

With a polymorphic dimension, JAX writes indexing as ops that neither TF's
TFLite converter (2.21) nor litert-converter (0.5.0) turns into TFLite
operators: `x[:, 0]` and `x[:, :-1]` become `stablehlo.dynamic_gather`,
which both leave as a VHLO op that LiteRT has no operator for; a dynamic
slice of a polymorphic operand (a scan over a polymorphic sequence reading
one step) stays a STABLEHLO_DYNAMIC_SLICE, which LiteRT (2.3) cannot run;
and litert-converter refuses a gather of a polymorphic operand ("'mhlo.gather'
op Dynamic shaped operand is not supported": `h[i]` of a polymorphic number
of rows). Both legalize `stablehlo.torch_index_select` (a gather of whole
slices along one axis) into GATHER, and `stablehlo.real_dynamic_slice` of a
polymorphic result into STRIDED_SLICE, at any shape. The patterns write the
three ops so, with the clamps of their starts that StableHLO defines:

* a gather of whole slices along one axis d (one start index per batch
  position, the slice one wide along d and whole along every other axis,
  which must be static, the batch dimensions where the select puts them;
  or with leading batch dimensions of the operand and the indices alike, as
  take_along_axis writes it) is the select of the indices along d, clamped
  into the axis;
* a dynamic slice of a polymorphic operand is, along each axis it does not
  take whole, the select of the consecutive indices from its start, clamped
  so that the slice fits (for TF's XLA, which has no shape rule for the
  select, a strided slice from the clamped starts);
* a dynamic gather of one start along one axis is the select of the
  consecutive indices from that start where the slice's width there is
  static (then cut, where the slice may not take another axis whole, to
  the slice's sizes read at run time), else a strided slice from it, and
  a reshape that drops the axis where the gather collapses it; a dynamic
  gather of whole slices along one axis, whose other sizes only the run
  time knows (`x[:, i]`), the select cut to those sizes; and one of a few
  starts of several indices (`x[1:, ::2]`), a strided slice per start,
  concatenated.

Beside them: a pad that crops a polymorphic operand is its growing part and
a strided slice; a window whose padding depends on the sizes (the
`stablehlo.dynamic_reduce_window` custom call) the initial value
concatenated around the operand and a window without padding.

The result is the op's own, element for element; the clamps read the
operand's sizes at run time.
"""

import functools

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.native import stablehlo_values as values
from jax2tf.native.module_patterns import Pattern


def _clamped(index, operand, axis: int, width):
  """`index` (integers) clamped into [0, size - width], the size of `operand`
  along `axis`: where a slice `width` wide (an int, or a rank-0 tensor of
  `index`'s type) starting there fits."""
  element = ir.RankedTensorType(index.type).element_type
  if isinstance(width, int):
    width = values.scalar(element, width)
  last = hlo.SubtractOp(values.dimension_size(operand, axis, element), width).result
  return hlo.ClampOp(values.scalar(element, 0), index, last).result


def _without_last_axis(indices):
  """`indices` without its last axis (of size 1)."""
  t = ir.RankedTensorType(indices.type)
  shape = t.shape[:-1]
  result = ir.RankedTensorType.get(shape, t.element_type)
  if t.has_static_shape:
    return hlo.ReshapeOp(result, indices).result
  sizes = values.shape_vector(indices)
  kept = hlo.SliceOp(sizes, [0], [len(shape)], [1]).result
  return hlo.DynamicReshapeOp(result, indices, kept).result


def _gather_along_dynamic_axis_as_index_select(op):
  operand, indices = op.operands[:2]
  t = ir.RankedTensorType(operand.type)
  if t.has_static_shape:
    return  # the converter's own legalization
  numbers = hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
  # Batch dimensions (take_along_axis) lead in the operand and the indices
  # alike: the select's batch_dims.
  batching = list(numbers.operand_batching_dims)
  if list(numbers.start_indices_batching_dims) != batching or batching != list(
    range(len(batching))
  ):
    return
  start_map = list(numbers.start_index_map)
  if len(start_map) != 1 or list(numbers.collapsed_slice_dims) not in ([], start_map):
    return
  (axis,) = start_map
  if axis < len(batching):
    return
  it = ir.RankedTensorType(indices.type)
  dynamic = op.name == "stablehlo.dynamic_gather"
  if not list(numbers.collapsed_slice_dims):
    # One slice, the axis kept (x[:1]): the select of a one-index list.
    one_start = it.rank == 1 and numbers.index_vector_dim == 0 and it.shape == [1]
    if (
      not dynamic
      and not batching
      and one_start
      and list(numbers.offset_dims) == list(range(t.rank))
    ):
      _select_along(op, operand, indices, axis, 0)
    return
  # The sizes of the slices, None where only the run time knows them (a
  # dynamic gather's `x[:, i]` of a polymorphic x: whole along the other
  # axes, which the select takes whole and then cuts to those sizes).
  if dynamic:
    sizes = _size_elements(op.operands[2])
    if sizes is None:
      return
  else:
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
  cut = False
  for k, size in enumerate(sizes):
    if k == axis or k in batching:
      if size != 1:
        return
    elif size is None or t.is_dynamic_dim(k) or size != t.shape[k]:
      if not dynamic:
        return
      cut = True
  vector_dim = numbers.index_vector_dim
  if vector_dim == it.rank:
    batch = it.rank
  elif vector_dim == it.rank - 1 and not it.is_dynamic_dim(vector_dim) and it.shape[-1] == 1:
    batch = it.rank - 1
  else:
    return
  # The select puts the indices' dimensions (after the batch dimensions)
  # where the axis was.
  nb = len(batching)
  kept = list(range(nb, axis)) + list(range(axis + batch - nb, t.rank - 1 - nb + batch))
  if list(numbers.offset_dims) != kept:
    return
  with ir.InsertionPoint(op), op.location:
    index = indices if batch == it.rank else _without_last_axis(indices)
  if not cut:
    _select_along(op, operand, index, axis, nb)
    return
  with ir.InsertionPoint(op), op.location:
    x = _selected_slices(operand, index, axis, nb)
    x = _cut_to(x, op.operands[2], index, axis, nb, op.results[0].type)
  op.results[0].replace_all_uses_with(x)
  op.erase()


def _select_along(op, operand, index, axis: int, batch_dims: int):
  """Replaces the gather `op` with the select of `index` along `axis`."""
  with ir.InsertionPoint(op), op.location:
    select = hlo.TorchIndexSelectOp(
      op.results[0].type, operand, _clamped(index, operand, axis, 1), axis, batch_dims
    )
  op.results[0].replace_all_uses_with(select.result)
  op.erase()


def _selected_slices(operand, index, axis: int, batch_dims: int):
  """The select of `index` along `axis` of `operand`, of the type it has."""
  t = ir.RankedTensorType(operand.type)
  it = ir.RankedTensorType(index.type)
  dims = [
    ir.ShapedType.get_dynamic_size() if t.is_dynamic_dim(k) else t.shape[k] for k in range(axis)
  ]
  dims += [
    ir.ShapedType.get_dynamic_size() if it.is_dynamic_dim(k) else it.shape[k]
    for k in range(batch_dims, it.rank)
  ]
  dims += [
    ir.ShapedType.get_dynamic_size() if t.is_dynamic_dim(k) else t.shape[k]
    for k in range(axis + 1, t.rank)
  ]
  selected = ir.RankedTensorType.get(dims, t.element_type)
  return hlo.TorchIndexSelectOp(
    selected, operand, _clamped(index, operand, axis, 1), axis, batch_dims
  ).result


def _cut_to(x, slice_sizes, index, axis: int, batch_dims: int, result_type):
  """The select `x` cut, along the operand's axes, to the gather's
  `slice_sizes` (from the start: a gather's other starts are 0)."""
  st = ir.RankedTensorType(slice_sizes.type)
  element = st.element_type
  one = ir.RankedTensorType.get([1], element)
  rank = st.shape[0]
  pieces = [hlo.SliceOp(slice_sizes, [k], [k + 1], [1]).result for k in range(axis)]
  pieces += [
    hlo.ReshapeOp(one, values.dimension_size(index, k, element)).result
    for k in range(batch_dims, ir.RankedTensorType(index.type).rank)
  ]
  pieces += [hlo.SliceOp(slice_sizes, [k], [k + 1], [1]).result for k in range(axis + 1, rank)]
  limit = hlo.ConcatenateOp(pieces, 0).result
  vector = ir.RankedTensorType.get([len(pieces)], element)
  return hlo.RealDynamicSliceOp(
    result_type, x, values.constant_splat(vector, 0), limit, values.constant_splat(vector, 1)
  ).result


GATHER_ALONG_DYNAMIC_AXIS_AS_INDEX_SELECT = Pattern(
  "gather_along_dynamic_axis_as_index_select",
  ("stablehlo.gather", "stablehlo.dynamic_gather"),
  _gather_along_dynamic_axis_as_index_select,
)


def _dynamic_slice_of_dynamic_operand(op, form):
  """Replaces a dynamic slice of a polymorphic operand with what
  `form(operand, starts, sizes, result_type)` writes."""
  operand, *starts = op.operands
  if ir.RankedTensorType(operand.type).has_static_shape:
    return  # the converter's own legalization
  sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
  with ir.InsertionPoint(op), op.location:
    x = form(operand, starts, sizes, op.results[0].type)
  op.results[0].replace_all_uses_with(x)
  op.erase()


def _as_index_selects(operand, starts, sizes, result_type):
  t = ir.RankedTensorType(operand.type)
  x = operand
  for axis, (start, size) in enumerate(zip(starts, sizes)):
    if not t.is_dynamic_dim(axis) and t.shape[axis] == size:
      continue  # whole: the start clamps to 0
    x = _selected(x, start, axis, size)
  return x


def _as_strided_slice(operand, starts, sizes, result_type):
  # For the module of plain `convert`. TF's converter legalizes a strided
  # slice of any shape, but not a dynamic slice of a polymorphic operand,
  # and it turns a strided slice of constant widths back into one. So each
  # width is min(width, size along the axis): the width itself, wherever
  # the slice is defined, and a constant only once XlaCallModule has
  # refined the operand's sizes, when TF's XLA gets its dynamic slice back.
  # The slice, polymorphic along those axes, is reshaped to its own sizes.
  t = ir.RankedTensorType(operand.type)
  element = ir.RankedTensorType(starts[0].type).element_type
  one = ir.RankedTensorType.get([1], element)
  begins, widths = [], []
  for axis, (start, size) in enumerate(zip(starts, sizes)):
    begins.append(hlo.ReshapeOp(one, _clamped(start, operand, axis, size)).result)
    width = values.scalar(element, size)
    if t.is_dynamic_dim(axis):
      width = hlo.MinOp(width, values.dimension_size(operand, axis, element)).result
    widths.append(hlo.ReshapeOp(one, width).result)
  begin = hlo.ConcatenateOp(begins, 0).result
  limit = hlo.AddOp(begin, hlo.ConcatenateOp(widths, 0).result).result
  vector = ir.RankedTensorType.get([t.rank], element)
  dims = [
    ir.ShapedType.get_dynamic_size() if t.is_dynamic_dim(k) else s for k, s in enumerate(sizes)
  ]
  sliced = hlo.RealDynamicSliceOp(
    ir.RankedTensorType.get(dims, t.element_type),
    operand,
    begin,
    limit,
    values.constant_splat(vector, 1),
  ).result
  shape = np.asarray(sizes, values.numpy_dtype(element))
  return hlo.DynamicReshapeOp(
    result_type, sliced, hlo.ConstantOp(ir.DenseElementsAttr.get(shape, type=vector)).result
  ).result


DYNAMIC_SLICE_OF_DYNAMIC_OPERAND_AS_INDEX_SELECTS = Pattern(
  "dynamic_slice_of_dynamic_operand_as_index_selects",
  ("stablehlo.dynamic_slice",),
  functools.partial(_dynamic_slice_of_dynamic_operand, form=_as_index_selects),
)

DYNAMIC_SLICE_OF_DYNAMIC_OPERAND_AS_STRIDED_SLICE = Pattern(
  "dynamic_slice_of_dynamic_operand_as_strided_slice",
  ("stablehlo.dynamic_slice",),
  functools.partial(_dynamic_slice_of_dynamic_operand, form=_as_strided_slice),
)


def _size_elements(value) -> list | None:
  """The elements of a rank-1 slice-sizes tensor, each an int where it is a
  constant, else None; or None where the tensor is not built of pieces
  (concatenated constants and reshaped scalars) that say."""
  t = ir.RankedTensorType(value.type)
  if t.rank != 1 or t.is_dynamic_dim(0):
    return None
  c = values.constant_of(value)
  if c is not None:
    if c.elements is None:
      return None
    return [int(e) for e in np.broadcast_to(c.elements, (t.shape[0],))]
  if not isinstance(value, ir.OpResult):
    return [None] * t.shape[0]
  op = value.owner
  if op.name == "stablehlo.concatenate":
    elements: list = []
    for v in op.operands:
      piece = _size_elements(v)
      if piece is None:
        return None
      elements += piece
    return elements
  return [None] * t.shape[0]


def _dynamic_gather_of_one_start(op, *, select_static_widths: bool):
  operand, indices, slice_sizes = op.operands
  t = ir.RankedTensorType(operand.type)
  it = ir.RankedTensorType(indices.type)
  numbers = hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
  if list(numbers.operand_batching_dims) or list(numbers.start_indices_batching_dims):
    return
  start_map = list(numbers.start_index_map)
  collapsed = list(numbers.collapsed_slice_dims)
  if len(start_map) != 1 or not set(collapsed) <= set(start_map):
    return
  (axis,) = start_map
  # One start: the indices hold a single index vector, of one index.
  if not it.has_static_shape or int(np.prod(it.shape)) != 1:
    return
  result = ir.RankedTensorType(op.results[0].type)
  if list(numbers.offset_dims) != list(range(result.rank)):
    return
  sizes = _size_elements(slice_sizes)
  if sizes is None or (collapsed and sizes[axis] != 1):
    return
  if not collapsed and _sized(t, sizes) != result:
    return  # a result type more static than the sizes say
  st = ir.RankedTensorType(slice_sizes.type)
  with ir.InsertionPoint(op), op.location:
    start = hlo.ReshapeOp(ir.RankedTensorType.get([], it.element_type), indices).result
    if sizes[axis] is None or not select_static_widths:
      x = _strided_slice(operand, start, axis, slice_sizes, sizes)
    else:
      x = _selected(operand, start, axis, sizes[axis])
      # Axes the slice may not take whole: cut to the slice's sizes.
      if any(
        k != axis and (size is None or t.is_dynamic_dim(k) or size != t.shape[k])
        for k, size in enumerate(sizes)
      ):
        x = hlo.RealDynamicSliceOp(
          _sized(t, sizes),
          x,
          values.constant_splat(st, 0),
          slice_sizes,
          values.constant_splat(st, 1),
        ).result
    if collapsed:
      kept = [
        hlo.SliceOp(slice_sizes, [k], [k + 1], [1]).result for k in range(t.rank) if k != axis
      ]
      if kept:
        target = hlo.ConcatenateOp(kept, 0).result
      else:
        target = values.constant_splat(ir.RankedTensorType.get([0], st.element_type), 0)
      x = hlo.DynamicReshapeOp(result, x, target).result
  op.results[0].replace_all_uses_with(x)
  op.erase()


def _sized(t, sizes):
  """Tensor type `t` with the dimensions `sizes` (None: dynamic)."""
  dims = [ir.ShapedType.get_dynamic_size() if s is None else s for s in sizes]
  return ir.RankedTensorType.get(dims, t.element_type)


def _selected(operand, start, axis: int, width: int):
  """The `width` consecutive slices of `operand` along `axis` from `start`
  (clamped so that they fit, as a gather and a dynamic slice clamp it), as
  a select."""
  t = ir.RankedTensorType(operand.type)
  vector = ir.RankedTensorType.get([width], ir.RankedTensorType(start.type).element_type)
  first = hlo.BroadcastInDimOp(vector, _clamped(start, operand, axis, width), []).result
  index = hlo.AddOp(first, hlo.IotaOp(vector, 0).result).result
  shape = list(t.shape)
  shape[axis] = width
  selected = ir.RankedTensorType.get(shape, t.element_type)
  return hlo.TorchIndexSelectOp(selected, operand, index, axis, 0).result


def _strided_slice(operand, start, axis: int, slice_sizes, sizes):
  """The slice of `operand` of the sizes `slice_sizes` (whose elements
  `sizes` says where constant) starting at `start` along `axis` (clamped
  as a gather clamps it) and at 0 elsewhere."""
  t = ir.RankedTensorType(operand.type)
  st = ir.RankedTensorType(slice_sizes.type)
  element = st.element_type
  scalar = ir.RankedTensorType.get([], element)
  one = ir.RankedTensorType.get([1], element)
  width = hlo.ReshapeOp(scalar, hlo.SliceOp(slice_sizes, [axis], [axis + 1], [1]).result).result
  if start.type != scalar:
    start = hlo.ConvertOp(scalar, start).result
  first = _clamped(start, operand, axis, width)
  pieces = [
    hlo.ReshapeOp(one, first).result if k == axis else values.constant_splat(one, 0)
    for k in range(t.rank)
  ]
  begin = hlo.ConcatenateOp(pieces, 0).result
  limit = hlo.AddOp(begin, slice_sizes).result
  return hlo.RealDynamicSliceOp(
    _sized(t, sizes), operand, begin, limit, values.constant_splat(st, 1)
  ).result


DYNAMIC_GATHER_OF_ONE_START_AS_INDEX_SELECT = Pattern(
  "dynamic_gather_of_one_start_as_index_select",
  ("stablehlo.dynamic_gather",),
  functools.partial(_dynamic_gather_of_one_start, select_static_widths=True),
)

DYNAMIC_GATHER_OF_ONE_START_AS_STRIDED_SLICE = Pattern(
  "dynamic_gather_of_one_start_as_strided_slice",
  ("stablehlo.dynamic_gather",),
  functools.partial(_dynamic_gather_of_one_start, select_static_widths=False),
)


# At most this many starts are written out, one strided slice each.
_STATIC_STARTS = 16


def _dynamic_gather_of_static_starts(op):
  # A dynamic gather of a few starts, each of several indices (`x[1:, ::2]`
  # of a polymorphic x: the row offset and each column), which neither
  # converter takes: each start's slice is a strided slice from its
  # clamped indices, reshaped to the gather's slice, and the slices are
  # concatenated along the gather's batch dimension.
  operand, indices, slice_sizes = op.operands
  t = ir.RankedTensorType(operand.type)
  it = ir.RankedTensorType(indices.type)
  if t.has_static_shape or not it.has_static_shape or it.rank != 2:
    return
  numbers = hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
  if list(numbers.operand_batching_dims) or numbers.index_vector_dim != 1:
    return
  starts, width = it.shape
  start_map = list(numbers.start_index_map)
  if not 1 <= starts <= _STATIC_STARTS or width != len(start_map):
    return
  sizes = _size_elements(slice_sizes)
  collapsed = list(numbers.collapsed_slice_dims)
  if sizes is None or any(sizes[d] != 1 for d in collapsed):
    return
  result = ir.RankedTensorType(op.results[0].type)
  offset_dims = list(numbers.offset_dims)
  kept = [d for d in range(t.rank) if d not in collapsed]
  if len(offset_dims) != len(kept) or result.rank != len(kept) + 1:
    return
  (batch_axis,) = [a for a in range(result.rank) if a not in offset_dims]
  st = ir.RankedTensorType(slice_sizes.type)
  element = st.element_type
  one = ir.RankedTensorType.get([1], element)
  with ir.InsertionPoint(op), op.location:
    # The shape of one start's slice in the result: the kept sizes, and 1
    # for the batch dimension.
    pieces_of_shape = [hlo.SliceOp(slice_sizes, [d], [d + 1], [1]).result for d in kept]
    pieces_of_shape.insert(batch_axis, values.constant_splat(one, 1))
    shape = hlo.ConcatenateOp(pieces_of_shape, 0).result
    dims = list(result.shape)
    dims[batch_axis] = 1
    piece_type = ir.RankedTensorType.get(dims, t.element_type)
    slices = []
    for k in range(starts):
      begin = []
      for d in range(t.rank):
        if d not in start_map:
          begin.append(values.constant_splat(one, 0))
          continue
        j = start_map.index(d)
        index = hlo.SliceOp(indices, [k, j], [k + 1, j + 1], [1, 1]).result
        index = hlo.ReshapeOp(ir.RankedTensorType.get([], it.element_type), index).result
        if it.element_type != element:
          index = hlo.ConvertOp(ir.RankedTensorType.get([], element), index).result
        width_d = hlo.ReshapeOp(
          ir.RankedTensorType.get([], element), hlo.SliceOp(slice_sizes, [d], [d + 1], [1]).result
        ).result
        clamped = _clamped(index, operand, d, width_d)
        begin.append(hlo.ReshapeOp(one, clamped).result)
      begin = hlo.ConcatenateOp(begin, 0).result
      limit = hlo.AddOp(begin, slice_sizes).result
      piece = hlo.RealDynamicSliceOp(
        _sized(t, sizes), operand, begin, limit, values.constant_splat(st, 1)
      ).result
      slices.append(hlo.DynamicReshapeOp(piece_type, piece, shape).result)
    gathered = slices[0] if starts == 1 else hlo.ConcatenateOp(slices, batch_axis).result
  op.results[0].replace_all_uses_with(gathered)
  op.erase()


DYNAMIC_GATHER_OF_STATIC_STARTS_AS_SLICES = Pattern(
  "dynamic_gather_of_static_starts_as_slices",
  ("stablehlo.dynamic_gather",),
  _dynamic_gather_of_static_starts,
)


def _zero_padded(x, axis: int, low, high, fill=None):
  """`x` with zeros (or the rank-0 tensor `fill`) concatenated before and
  after it along `axis`, as many as the rank-1 tensors of one element `low`
  and `high` say."""
  t = ir.RankedTensorType(x.type)
  element = ir.RankedTensorType(low.type).element_type
  shape = list(t.shape)
  shape[axis] = ir.ShapedType.get_dynamic_size()
  padded = ir.RankedTensorType.get(shape, t.element_type)

  def zeros(size):
    c = values.constant_of(size)
    if c is not None and c.elements is not None and not c.elements.any():
      return []  # no padding on this side
    value = values.scalar(t.element_type, 0) if fill is None else fill
    sizes = values.shape_vector(x, element, {axis: size})
    return [hlo.DynamicBroadcastInDimOp(padded, value, sizes, []).result]

  pieces = [*zeros(low), x, *zeros(high)]
  return x if len(pieces) == 1 else hlo.ConcatenateOp(pieces, axis).result


def _padded_axes(x, padding, fill=None):
  """`x` padded along each axis by the rows (low, high) of the rank-2
  tensor `padding` (its axes in order, or none where it is all zeros)."""
  pt = ir.RankedTensorType(padding.type)
  one = ir.RankedTensorType.get([1], pt.element_type)
  for axis in range(pt.shape[0]):
    low, high = (
      hlo.ReshapeOp(
        one, hlo.SliceOp(padding, [axis, side], [axis + 1, side + 1], [1, 1]).result
      ).result
      for side in (0, 1)
    )
    x = _zero_padded(x, axis, low, high, fill)
  return x


def _is_trivial(op, name: str) -> bool:
  """Whether the convolution's attribute `name` is absent or changes nothing
  (dilations of 1, no reversal)."""
  if name not in op.attributes:
    return True
  if name == "window_reversal":
    return not any(ir.DenseBoolArrayAttr(op.attributes[name]))
  return all(v == 1 for v in ir.DenseI64ArrayAttr(op.attributes[name]))


def _dynamic_conv_as_padded_convolution(op):
  # JAX writes a convolution with "SAME" padding of polymorphic images as
  # `dynamic_conv`, its padding computed from the sizes at run time; no
  # converter legalizes it. The padding is zeros concatenated around the
  # image (TFLite's PAD has no dynamic form in either converter), then a
  # convolution without padding: the same sums, of the same zeros.
  lhs, rhs, padding = op.operands
  if not (_is_trivial(op, "lhs_dilation") and _is_trivial(op, "window_reversal")):
    return  # the padding would apply to the dilated or reversed image
  numbers = hlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
  spatial = list(numbers.input_spatial_dimensions)
  pt = ir.RankedTensorType(padding.type)
  if pt.shape != [len(spatial), 2]:
    return
  one = ir.RankedTensorType.get([1], pt.element_type)
  with ir.InsertionPoint(op), op.location:
    x = lhs
    for i, axis in enumerate(spatial):
      low, high = (
        hlo.ReshapeOp(one, hlo.SliceOp(padding, [i, side], [i + 1, side + 1], [1, 1]).result).result
        for side in (0, 1)
      )
      x = _zero_padded(x, axis, low, high)
    attributes = {name: op.attributes[name] for name in op.attributes}
    convolution = ir.Operation.create(
      "stablehlo.convolution",
      results=[op.results[0].type],
      operands=[x, rhs],
      attributes=attributes,
    )
  op.results[0].replace_all_uses_with(convolution.results[0])
  op.erase()


DYNAMIC_CONV_AS_PADDED_CONVOLUTION = Pattern(
  "dynamic_conv_as_padded_convolution",
  ("stablehlo.dynamic_conv",),
  _dynamic_conv_as_padded_convolution,
)


def _dynamic_iota_as_broadcast_range(op):
  # Both converters fail on a dynamic iota of rank above 1, or of other
  # than int32 or float32 elements ("'arith.index_cast' op operand type
  # 'tensor<2xi32>' and result type 'tensor<2xi64>' are cast incompatible":
  # threefry's counters of a polymorphic batch); a 1-D int32 one is RANGE.
  # The iota is that range along its axis, converted and broadcast.
  (shape,) = op.operands
  result = ir.RankedTensorType(op.results[0].type)
  axis = ir.IntegerAttr(op.attributes["iota_dimension"]).value
  i32 = ir.IntegerType.get_signless(32)
  if result.rank == 1 and result.element_type in (i32, ir.F32Type.get()):
    return  # what the converters take
  if any(use.owner.name == "stablehlo.reduce" for use in op.results[0].uses):
    # The indices of an argmax or argmin, which the converters recognize
    # with the iota itself (into ARG_MAX/ARG_MIN) and not from a broadcast.
    return
  with ir.InsertionPoint(op), op.location:
    if result.is_dynamic_dim(axis):
      size = hlo.SliceOp(shape, [axis], [axis + 1], [1]).result
      st = ir.RankedTensorType(size.type)
      if st.element_type != i32:
        size = hlo.ConvertOp(ir.RankedTensorType.get([1], i32), size).result
      vector = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()], i32)
      line = hlo.DynamicIotaOp(vector, size, 0).result
    else:
      line = hlo.IotaOp(ir.RankedTensorType.get([result.shape[axis]], i32), 0).result
    lt = ir.RankedTensorType(line.type)
    if result.element_type != i32:
      line = hlo.ConvertOp(ir.RankedTensorType.get(lt.shape, result.element_type), line).result
    iota = hlo.DynamicBroadcastInDimOp(result, line, shape, [axis]).result
  op.results[0].replace_all_uses_with(iota)
  op.erase()


DYNAMIC_IOTA_AS_BROADCAST_RANGE = Pattern(
  "dynamic_iota_as_broadcast_range", ("stablehlo.dynamic_iota",), _dynamic_iota_as_broadcast_range
)


def _dynamic_reduce_window_as_padded_window(op):
  # JAX writes a window of polymorphic images whose padding depends on
  # their sizes ("SAME" with strides: a max pool) as the
  # `stablehlo.dynamic_reduce_window` custom call, which neither converter
  # takes. Where only the padding is not constant, it is the window's
  # initial value concatenated around the operand (as a padded window reads
  # it), then the window without padding, which both converters take (a
  # MAX_POOL_2D): the same reduction of the same values.
  if ir.StringAttr(op.attributes["call_target_name"]).value != "stablehlo.dynamic_reduce_window":
    return
  if len(op.operands) != 7 or len(op.results) != 1:
    return  # several operands
  x, init, window, strides, base_dilations, window_dilations, padding = op.operands
  constants = [_size_elements(v) for v in (window, strides, base_dilations, window_dilations)]
  if any(c is None or None in c for c in constants) or any(d != 1 for d in constants[2]):
    return  # a dilated base is padded after its dilation
  body = _called(op)
  if body is None:
    return
  window, strides, _, window_dilations = constants
  rank = len(window)
  with ir.InsertionPoint(op), op.location:
    padded = _padded_axes(x, padding, init)
    reduce = hlo.ReduceWindowOp(
      [op.results[0].type],
      [padded],
      [init],
      window_dimensions=window,
      window_strides=strides,
      window_dilations=window_dilations,
      padding=ir.DenseElementsAttr.get(
        np.zeros((rank, 2), np.int64),
        type=ir.RankedTensorType.get([rank, 2], ir.IntegerType.get_signless(64)),
      ),
    )
    _inline_body(reduce, body)
  op.results[0].replace_all_uses_with(reduce.results[0])
  op.erase()


def _called(op):
  """The function of the custom call `op`'s `called_computations`."""
  module = values.enclosing(op, "builtin.module")
  called = op.attributes["called_computations"] if "called_computations" in op.attributes else None
  if module is None or called is None or len(ir.ArrayAttr(called)) != 1:
    return None
  name = ir.FlatSymbolRefAttr(ir.ArrayAttr(called)[0]).value
  return ir.SymbolTable(module)[name]


def _inline_body(op, function):
  """The body of the region op `op`: `function`'s ops, on the block's
  arguments, its return a `stablehlo.return`."""
  source = function.regions[0].blocks[0]
  block = op.regions[0].blocks.append(*[a.type for a in source.arguments])
  mapping = dict(zip(source.arguments, block.arguments))
  with ir.InsertionPoint(block):
    for inner in source.operations:
      if inner.name == "func.return":
        hlo.ReturnOp([mapping[v] for v in inner.operands])
        break
      clone = inner.clone()
      for i, v in enumerate(inner.operands):
        if v in mapping:
          clone.operands[i] = mapping[v]
      mapping.update(zip(inner.results, clone.results))


DYNAMIC_REDUCE_WINDOW_AS_PADDED_WINDOW = Pattern(
  "dynamic_reduce_window_as_padded_window",
  ("stablehlo.custom_call",),
  _dynamic_reduce_window_as_padded_window,
)


def _pad_of_dynamic_operand_cropping(op):
  # Both converters end the process on a pad of a polymorphic operand that
  # crops (a negative edge padding): they write the crop as a slice whose
  # type they cannot infer. The pad keeps its growing edges and interior,
  # and a strided slice, which they take at any shape, crops after it, as
  # XLA crops after padding.
  operand, value = op.operands
  if ir.RankedTensorType(operand.type).has_static_shape:
    return
  low = list(ir.DenseI64ArrayAttr(op.attributes["edge_padding_low"]))
  high = list(ir.DenseI64ArrayAttr(op.attributes["edge_padding_high"]))
  interior = list(ir.DenseI64ArrayAttr(op.attributes["interior_padding"]))
  if min(low + high) >= 0:
    return
  result = ir.RankedTensorType(op.results[0].type)
  t = ir.RankedTensorType(operand.type)
  dims = []
  for axis in range(t.rank):
    if t.is_dynamic_dim(axis):
      dims.append(ir.ShapedType.get_dynamic_size())
    else:
      grown = t.shape[axis] + max(low[axis], 0) + max(high[axis], 0)
      dims.append(grown + max(t.shape[axis] - 1, 0) * interior[axis])
  i32 = ir.IntegerType.get_signless(32)
  vector = ir.RankedTensorType.get([t.rank], i32)
  with ir.InsertionPoint(op), op.location:
    padded = hlo.PadOp(
      operand,
      value,
      [max(n, 0) for n in low],
      [max(n, 0) for n in high],
      interior,
    ).result
    padded.set_type(ir.RankedTensorType.get(dims, t.element_type))
    begin = np.asarray([max(-n, 0) for n in low], np.int32)
    crop_end = np.asarray([max(-n, 0) for n in high], np.int32)
    limit = hlo.SubtractOp(
      values.shape_vector(padded), hlo.ConstantOp(ir.DenseElementsAttr.get(crop_end, type=vector))
    ).result
    cropped = hlo.RealDynamicSliceOp(
      result,
      padded,
      hlo.ConstantOp(ir.DenseElementsAttr.get(begin, type=vector)).result,
      limit,
      values.constant_splat(vector, 1),
    ).result
  op.results[0].replace_all_uses_with(cropped)
  op.erase()


PAD_OF_DYNAMIC_OPERAND_CROPPING_AFTER = Pattern(
  "pad_of_dynamic_operand_cropping_after", ("stablehlo.pad",), _pad_of_dynamic_operand_cropping
)


# For the module of plain `convert`, which TF's XLA runs and Google's LiteRT
# recipe hands TF's converter: XlaCallModule refines the padding, the range
# and a strided slice of a polymorphic size to static shapes, but has no
# shape rule for `torch_index_select` ("has dynamic shapes"). So a dynamic
# gather of one start and a dynamic slice of a polymorphic operand (a
# scan's read of one step) are strided slices there, whose widths the
# converter cannot fold back into a `dynamic_slice`; a gather of many
# indices stays.
DYNAMIC_OPS_FOR_TF_XLA = (
  DYNAMIC_GATHER_OF_ONE_START_AS_STRIDED_SLICE,
  DYNAMIC_SLICE_OF_DYNAMIC_OPERAND_AS_STRIDED_SLICE,
  DYNAMIC_CONV_AS_PADDED_CONVOLUTION,
  DYNAMIC_IOTA_AS_BROADCAST_RANGE,
  PAD_OF_DYNAMIC_OPERAND_CROPPING_AFTER,
  DYNAMIC_REDUCE_WINDOW_AS_PADDED_WINDOW,
)

DYNAMIC_OPS_FOR_TFLITE = (
  GATHER_ALONG_DYNAMIC_AXIS_AS_INDEX_SELECT,
  DYNAMIC_SLICE_OF_DYNAMIC_OPERAND_AS_INDEX_SELECTS,
  DYNAMIC_GATHER_OF_ONE_START_AS_INDEX_SELECT,
  DYNAMIC_GATHER_OF_STATIC_STARTS_AS_SLICES,
  DYNAMIC_CONV_AS_PADDED_CONVOLUTION,
  DYNAMIC_IOTA_AS_BROADCAST_RANGE,
  PAD_OF_DYNAMIC_OPERAND_CROPPING_AFTER,
)
