"""Reductions and windows that no TFLite kernel runs, as elementwise folds.

Both TFLite converters turn a reduction whose body is one add, multiply,
maximum or minimum (and JAX's argmax and argmin) into a reduce kernel.
Any other body (a bitwise and/or/xor of integers, several operands, a
function of JAX's `lax.reduce`) becomes STABLEHLO_REDUCE, which LiteRT has
no kernel for. Here such a reduction is the fold XLA's CPU backend
computes, in its order (jax2tf/targets/xla_fold.py): the operands padded
where a tree level's windows need it, split into (windows, positions) along
each reduced axis, and the body applied elementwise to the accumulators
and the slice of each position in turn, a padded position leaving the
accumulators as they were. A reduce_window of such a body (which LiteRT's
STABLEHLO_REDUCE_WINDOW refuses: it runs one-op bodies) is folded the same
way over its window's positions, strided slices of the padded, dilated
operand; at polymorphic sizes too (without base dilation), the slices sized
at run time and the padding found from a range. A reduction folds at static
shapes only. A level of at most FOLD_POSITIONS positions is unrolled; a
larger one is a loop (stablehlo.while) over its positions, each cut with a
dynamic slice. A window of more positions stays for the converter.

A reduction along an axis of no elements of an operand of polymorphic
sizes is its initial values, broadcast to the sizes read at run time
(REDUCTION_OF_NO_ELEMENTS_AS_INITS), which the converters take.

A float max/min reduction, or a window of one add or multiply, from another
init than its identity reduces from the identity and takes the init after
(INIT_AFTER_REDUCTION). A reduction along axes of length 1 is first the
reshape XLA makes of it (REDUCTION_OF_NOTHING_AS_RESHAPE).
"""

import dataclasses
import itertools
import math
import typing

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.native import stablehlo_values as values
from jax2tf.native.module_patterns import Pattern
from jax2tf.targets import xla_fold

# The positions one level may unroll: each is a copy of the body; a level
# of more positions loops over them.
FOLD_POSITIONS = 256

# Ops applied to each element on their own, which a body may hold.
_ELEMENTWISE = frozenset(
  "stablehlo." + name
  for name in (
    "abs add and atan2 bitcast_convert cbrt ceil clamp compare convert cosine "
    "count_leading_zeros divide exponential exponential_minus_one floor is_finite "
    "log log_plus_one logistic maximum minimum multiply negate not or popcnt power "
    "remainder round_nearest_afz round_nearest_even rsqrt select shift_left "
    "shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh xor"
  ).split()
)
# Single-op bodies the converters make a reduce kernel of.
_KERNEL_BODIES = frozenset(
  "stablehlo." + name for name in ("add", "multiply", "maximum", "minimum")
)
_BOOL_KERNEL_BODIES = frozenset({"stablehlo.and", "stablehlo.or"})
_MIN_MAX = frozenset({"stablehlo.maximum", "stablehlo.minimum"})
# On the body's scalars, these return their operand.
_SCALAR_IDENTITIES = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape"})


def _body_ops(op):
  """The body's ops before its return, or None where one is not elementwise
  on scalars (a constant is, broadcast)."""
  block = op.regions[0].blocks[0]
  ops = list(block.operations)
  for o in ops[:-1]:
    if o.name == "stablehlo.constant" or (
      o.name in _SCALAR_IDENTITIES and o.results[0].type == o.operands[0].type
    ):
      continue
    if o.name not in _ELEMENTWISE or len(o.regions):
      return None
  return ops


def _has_kernel(op, body) -> bool:
  if len(op.results) != 1:
    # JAX's argmax and argmin: values and an iota, which both converters
    # recognize as ARG_MAX/ARG_MIN.
    second = op.operands[1]
    return isinstance(second, ir.OpResult) and second.owner.name in (
      "stablehlo.iota",
      "stablehlo.dynamic_iota",
    )
  if len(body) != 2:
    return False
  if values.is_bool_tensor(op.results[0].type):
    # TFLite has REDUCE_ANY and REDUCE_ALL for bools, no maximum or minimum.
    return body[0].name in _BOOL_KERNEL_BODIES
  return body[0].name in _KERNEL_BODIES


def _apply(body, block, accumulators, elements, shape, sizes=None):
  """The body's results for tensors of `shape`: each op of the body on
  whole tensors, the block's arguments being `accumulators` then
  `elements`. `sizes`: the shape as a vector read at run time, where it
  is not static."""
  mapped = dict(zip(block.arguments, [*accumulators, *elements]))

  def widened(scalar):
    wide = ir.RankedTensorType.get(shape, ir.RankedTensorType(scalar.type).element_type)
    if sizes is None:
      return hlo.BroadcastInDimOp(wide, scalar, []).result
    return hlo.DynamicBroadcastInDimOp(wide, scalar, sizes, []).result

  def value(v):
    if v not in mapped:
      # A scalar from outside the body (a constant hoisted out of it).
      mapped[v] = widened(v)
    return mapped[v]

  for o in body[:-1]:
    if o.name == "stablehlo.constant":
      mapped[o.results[0]] = widened(hlo.ConstantOp(o.attributes["value"]).result)
      continue
    if o.name in _SCALAR_IDENTITIES:
      mapped[o.results[0]] = value(o.operands[0])
      continue
    results = [
      ir.RankedTensorType.get(shape, ir.RankedTensorType(r.type).element_type) for r in o.results
    ]
    attributes = {name: o.attributes[name] for name in o.attributes}
    clone = ir.Operation.create(
      o.name, results=results, operands=[value(v) for v in o.operands], attributes=attributes
    )
    for old, new in zip(o.results, clone.results):
      mapped[old] = new
  return [value(v) for v in body[-1].operands]


def _level(xs, inits, axes, windows, body, block):
  """One level of the fold: along each reduced axis, windows of
  `windows[axis]` positions, SAME-padded; the accumulators per window.
  Up to FOLD_POSITIONS positions unrolled, beyond that in a loop."""
  shape = list(ir.RankedTensorType(xs[0].type).shape)
  padding = {a: xla_fold.same_padding(shape[a], windows[a]) for a in axes}
  counts = {a: -(-shape[a] // windows[a]) for a in axes}
  split, out = [], []
  for axis, d in enumerate(shape):
    if axis in axes:
      split += [counts[axis], windows[axis]]
      out.append(counts[axis])
    else:
      split.append(d)
      out.append(d)
  pieces = []
  for x, init in zip(xs, inits):
    t = ir.RankedTensorType(x.type)
    if any(padding[a] != (0, 0) for a in axes):
      low = [padding[a][0] if a in axes else 0 for a in range(t.rank)]
      high = [padding[a][1] if a in axes else 0 for a in range(t.rank)]
      x = hlo.PadOp(x, init, low, high, [0] * t.rank).result
    pieces.append(hlo.ReshapeOp(ir.RankedTensorType.get(split, t.element_type), x).result)
  accumulators = [
    hlo.BroadcastInDimOp(ir.RankedTensorType.get(out, init.type.element_type), init, []).result
    for init in inits
  ]
  # Where each split axis holds a position, in `split`'s axes.
  position_axis = {}
  k = 0
  for axis in range(len(shape)):
    if axis in axes:
      position_axis[axis] = k + 1
      k += 2
    else:
      k += 1
  geometry = _LevelGeometry(shape, axes, windows, counts, padding, split, out, position_axis)
  if math.prod(windows[a] for a in axes) > FOLD_POSITIONS:
    return _level_loop(pieces, accumulators, body, block, geometry)
  for position in itertools.product(*(range(windows[a]) for a in axes)):
    at = dict(zip(axes, position))
    start = [0] * len(split)
    limit = list(split)
    for axis, p in at.items():
      start[position_axis[axis]] = p
      limit[position_axis[axis]] = p + 1
    elements = []
    for piece in pieces:
      element = ir.RankedTensorType(piece.type).element_type
      cut = hlo.SliceOp(piece, start, limit, [1] * len(split)).result
      elements.append(hlo.ReshapeOp(ir.RankedTensorType.get(out, element), cut).result)
    folded = _apply(body, block, accumulators, elements, out)
    valid = _valid(at, shape, windows, counts, padding, out)
    if valid is not None:
      folded = [hlo.SelectOp(valid, f, a).result for f, a in zip(folded, accumulators)]
    accumulators = folded
  return accumulators


@dataclasses.dataclass(frozen=True)
class _LevelGeometry:
  """How `_level` splits the operands: each reduced axis `a` of `shape`
  into (counts[a] windows, windows[a] positions), after `padding[a]`, as
  the axes of `split`; the position's axis of `split` is position_axis[a];
  the accumulators have the shape `out`."""

  shape: list
  axes: list
  windows: dict
  counts: dict
  padding: dict
  split: list
  out: list
  position_axis: dict


def _level_loop(pieces, accumulators, body, block, g: _LevelGeometry):
  """`_level`'s fold as a stablehlo.while over the positions, in the same
  row-major order: step i takes the position whose index along the
  reduced axes is i's digits in the windows' sizes, cuts each piece there
  with a dynamic slice and keeps the accumulators where the position is
  padding (found from a range along each padded axis)."""
  i32 = ir.IntegerType.get_signless(32)
  rank0 = ir.RankedTensorType.get([], i32)
  total = math.prod(g.windows[a] for a in g.axes)
  state = [values.scalar(i32, 0), *accumulators]
  loop = hlo.WhileOp([v.type for v in state], state)
  condition = loop.cond.blocks.append(*[v.type for v in state])
  with ir.InsertionPoint(condition):
    going = values.compare(condition.arguments[0], values.scalar(i32, total), "LT", "SIGNED")
    hlo.ReturnOp([going])
  step = loop.body.blocks.append(*[v.type for v in state])
  with ir.InsertionPoint(step):
    i, *accs = step.arguments
    at, stride = {}, 1
    for axis in reversed(g.axes):
      digit = hlo.DivOp(i, values.scalar(i32, stride)).result
      at[axis] = hlo.RemOp(digit, values.scalar(i32, g.windows[axis])).result
      stride *= g.windows[axis]
    zero = values.scalar(i32, 0)
    starts = [zero] * len(g.split)
    sizes = list(g.split)
    for axis, p in at.items():
      starts[g.position_axis[axis]] = p
      sizes[g.position_axis[axis]] = 1
    elements = []
    for piece in pieces:
      element = ir.RankedTensorType(piece.type).element_type
      cut = hlo.DynamicSliceOp(piece, starts, sizes).result
      elements.append(hlo.ReshapeOp(ir.RankedTensorType.get(g.out, element), cut).result)
    folded = _apply(body, block, accs, elements, g.out)
    valid = _valid_at_run_time(at, g)
    if valid is not None:
      folded = [hlo.SelectOp(valid, f, a).result for f, a in zip(folded, accs)]
    next_i = hlo.AddOp(i, values.scalar(i32, 1)).result
    assert next_i.type == rank0
    hlo.ReturnOp([next_i, *folded])
  return list(loop.results[1:])


def _valid_at_run_time(at, g: _LevelGeometry):
  """`_valid` for positions `at` read at run time (rank-0 int32 values)."""
  i32 = ir.IntegerType.get_signless(32)
  out_bools = ir.RankedTensorType.get(g.out, ir.IntegerType.get_signless(1))
  mask = None
  for axis, p in at.items():
    if g.padding[axis] == (0, 0):
      continue
    low = g.padding[axis][0]
    count = g.counts[axis]
    along = ir.RankedTensorType.get([count], i32)
    first = np.arange(count, dtype=np.int32) * g.windows[axis] - low
    index = hlo.AddOp(
      hlo.ConstantOp(ir.DenseElementsAttr.get(first, type=i32)).result,
      hlo.BroadcastInDimOp(along, p, []).result,
    ).result
    inside = _within(index, values.filled_like(index, g.shape[axis]))
    inside = hlo.BroadcastInDimOp(out_bools, inside, [axis]).result
    mask = inside if mask is None else hlo.AndOp(mask, inside).result
  return mask


def _within(index, size):
  """0 <= index < size, elementwise, for int32 tensors of one shape: where a
  window position reads the operand rather than its padding."""
  return hlo.AndOp(
    values.compare(index, values.filled_like(index, 0), "GE", "SIGNED"),
    values.compare(index, size, "LT", "SIGNED"),
  ).result


def _valid(at, shape, windows, counts, padding, out):
  """Where the elements at window positions `at` are the operand's, not
  padding, as a boolean constant of shape `out`; None where they all are."""
  mask = np.ones(out, bool)
  for axis, p in at.items():
    index = np.arange(counts[axis]) * windows[axis] + p - padding[axis][0]
    inside = (index >= 0) & (index < shape[axis])
    if inside.all():
      continue
    along = [1] * len(out)
    along[axis] = counts[axis]
    mask &= inside.reshape(along)
  return None if mask.all() else _bool_constant(mask)


def _reduction_of_nothing_as_reshape(op):
  # XLA makes a reduce along axes of length 1 a reshape of its operands
  # (xla_fold.reduces_nothing); LiteRT's SUM adds a -0.0 to +0.0, and a
  # fold would apply the init and the body XLA never applies.
  n = len(op.results)
  shape = ir.RankedTensorType(op.operands[0].type)
  if not shape.has_static_shape:
    return
  axes = ir.DenseI64ArrayAttr(op.attributes["dimensions"])
  if not xla_fold.reduces_nothing(shape.shape[a] for a in axes):
    return
  with ir.InsertionPoint(op), op.location:
    reshaped = [hlo.ReshapeOp(r.type, x).result for r, x in zip(op.results, op.operands[:n])]
  for result, new in zip(op.results, reshaped):
    result.replace_all_uses_with(new)
  op.erase()


REDUCTION_OF_NOTHING_AS_RESHAPE = Pattern(
  "reduction_of_nothing_as_reshape", ("stablehlo.reduce",), _reduction_of_nothing_as_reshape
)


def _reduction_of_no_elements_as_inits(op):
  # A reduction along an axis of no elements is its initial values (XLA
  # applies no body). At polymorphic kept sizes the converters write it as
  # a BROADCAST_TO of a shape they cannot legalize ("tfl.broadcast_to on
  # int32, index"); the inits broadcast to the sizes read at run time are
  # what they take. (Static shapes fold it, below.)
  n = len(op.results)
  shape = ir.RankedTensorType(op.operands[0].type)
  if shape.has_static_shape:
    return
  axes = sorted(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
  if not any(not shape.is_dynamic_dim(a) and shape.shape[a] == 0 for a in axes):
    return
  kept = [a for a in range(shape.rank) if a not in axes]
  with ir.InsertionPoint(op), op.location:
    sizes = values.shape_vector(op.operands[0])
    i32 = ir.IntegerType.get_signless(32)
    if kept:
      pieces = [hlo.SliceOp(sizes, [a], [a + 1], [1]).result for a in kept]
      target = hlo.ConcatenateOp(pieces, 0).result
    else:
      target = values.constant_splat(ir.RankedTensorType.get([0], i32), 0)
    inits = [
      hlo.DynamicBroadcastInDimOp(r.type, init, target, []).result
      for r, init in zip(op.results, op.operands[n:])
    ]
  for old, new in zip(op.results, inits):
    old.replace_all_uses_with(new)
  op.erase()


REDUCTION_OF_NO_ELEMENTS_AS_INITS = Pattern(
  "reduction_of_no_elements_as_inits", ("stablehlo.reduce",), _reduction_of_no_elements_as_inits
)


def _reduce_as_fold(op):
  n = len(op.results)
  xs, inits = list(op.operands[:n]), list(op.operands[n:])
  body = _body_ops(op)
  if body is None or _has_kernel(op, body):
    return
  shape = ir.RankedTensorType(xs[0].type)
  if not shape.has_static_shape:
    return
  shape = list(shape.shape)
  axes = sorted(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
  block = op.regions[0].blocks[0]
  with ir.InsertionPoint(op), op.location:
    if any(shape[a] == 0 for a in axes):  # nothing to fold in: the inits
      results = [
        hlo.BroadcastInDimOp(r.type, init, []).result for r, init in zip(op.results, inits)
      ]
    else:
      results = _folded(xs, inits, axes, shape, body, block)
      results = [hlo.ReshapeOp(r.type, v).result for r, v in zip(op.results, results)]
  for old, new in zip(op.results, results):
    old.replace_all_uses_with(new)
  op.erase()


def _folded(xs, inits, axes, shape, body, block):
  """The accumulators of every level."""
  lengths = [shape[a] for a in axes]
  plan = []
  while len(xs) == 1 and xla_fold.needs_tree(lengths):
    windows = xla_fold.tree_windows(lengths)
    plan.append(windows)
    lengths = [-(-d // w) for d, w in zip(lengths, windows)]
  plan.append(lengths)
  for windows in plan:
    xs = _level(xs, inits, axes, dict(zip(axes, windows)), body, block)
  return xs


REDUCE_AS_FOLD = Pattern("reduce_as_fold", ("stablehlo.reduce",), _reduce_as_fold)


_COMBINE = {
  "stablehlo.add": hlo.AddOp,
  "stablehlo.multiply": hlo.MulOp,
  "stablehlo.maximum": hlo.MaxOp,
  "stablehlo.minimum": hlo.MinOp,
}


def identity(name: str, dtype: np.dtype):
  """The identity of the StableHLO combiner `name` (add, multiply, maximum,
  minimum) on `dtype`."""
  if name == "stablehlo.add":
    return 0
  if name == "stablehlo.multiply":
    return 1
  is_max = name == "stablehlo.maximum"
  if dtype == np.bool_:
    return not is_max
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    return info.min if is_max else info.max
  return -np.inf if is_max else np.inf  # floats, bfloat16 among them


def _init_after(op):
  # The converters make REDUCE_MAX/MIN of a float maximum or minimum only
  # from its identity (-inf, +inf), and LiteRT's STABLEHLO_REDUCE_WINDOW
  # folds another init of a sum or product in again wherever the window
  # meets padding, which XLA's CPU loop skips. XLA's fold from another init
  # is the reduction from the identity combined with the init once: the
  # same values (for a float sum or product, rounded in another order), NaN
  # included, which the elementwise patterns after this one then keep as
  # JAX does. A reduce of a sum or product keeps its init (the converters
  # take it), and so does a window of a maximum or minimum, for which
  # folding the init in again changes nothing.
  if len(op.results) != 1:
    return
  body = _body_ops(op)
  if body is None or len(body) != 2 or body[0].name not in _COMBINE:
    return
  if (op.name == "stablehlo.reduce") != (body[0].name in _MIN_MAX):
    return
  x, init = op.operands
  t = ir.RankedTensorType(op.results[0].type)
  dtype = values.numpy_dtype(t.element_type)
  if dtype is None or dtype.kind not in "fiu" or dtype == np.bool_:
    return
  identity_value = identity(body[0].name, dtype)
  constant = values.constant_of(init)
  if constant is not None and constant.elements is not None:
    if (np.asarray(constant.elements, np.float64) == identity_value).all():
      return
  result = op.results[0]
  uses = [(use.owner, use.operand_number) for use in result.uses]
  with ir.InsertionPoint(op), op.location:
    op.operands[1] = values.scalar(t.element_type, identity_value)
  with ir.InsertionPoint.after(op), op.location:
    after = _COMBINE[body[0].name](result, values.broadcast_like(init, result)).result
  for owner, position in uses:
    owner.operands[position] = after


INIT_AFTER_REDUCTION = Pattern(
  "init_after_reduction", ("stablehlo.reduce", "stablehlo.reduce_window"), _init_after
)


def _ints_attribute(op, name: str, default: list[int]) -> list[int]:
  if name not in op.attributes:
    return default
  return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _window_as_fold(op):
  # The same for a reduce_window whose body LiteRT's STABLEHLO_REDUCE_WINDOW
  # refuses ("Only one kernel is allowed within stablehlo.reduce_window
  # body"): each output element folds the elements of its window in, in
  # row-major order of the window's positions, from the init, skipping the
  # padding and the holes of a base dilation (XLA's CPU loop, measured
  # against jax.jit by the graph route's fold, jax2tf/graph/windowing.py).
  n = len(op.results)
  xs, inits = list(op.operands[:n]), list(op.operands[n:])
  body = _body_ops(op)
  if body is None or (
    len(body) == 2
    and body[0].name in _KERNEL_BODIES
    and not values.is_bool_tensor(op.results[0].type)
  ):
    return
  t = ir.RankedTensorType(xs[0].type)
  result = ir.RankedTensorType(op.results[0].type)
  rank = t.rank
  window = _ints_attribute(op, "window_dimensions", [])
  strides = _ints_attribute(op, "window_strides", [1] * rank)
  base = _ints_attribute(op, "base_dilations", [1] * rank)
  dilations = _ints_attribute(op, "window_dilations", [1] * rank)
  if "padding" in op.attributes:
    pads = np.asarray(ir.DenseIntElementsAttr(op.attributes["padding"])).reshape(rank, 2)
  else:
    pads = np.zeros((rank, 2), int)
  if math.prod(window) > FOLD_POSITIONS:
    return
  low, high = [int(p) for p in pads[:, 0]], [int(p) for p in pads[:, 1]]
  interior = [b - 1 for b in base]
  static = t.has_static_shape and result.has_static_shape
  if not static and (any(interior) or min(low + high) < 0 or 0 in window):
    return
  out = list(result.shape)
  block = op.regions[0].blocks[0]
  with ir.InsertionPoint(op), op.location:
    if not static:
      geometry = _Geometry(window, strides, dilations, low, high)
      results = _dynamic_window_fold(op, xs, inits, body, geometry)
    elif 0 in out or 0 in window:  # no output, or windows of no position: the inits
      results = [
        hlo.BroadcastInDimOp(r.type, init, []).result for r, init in zip(op.results, inits)
      ]
    else:
      valid = _window_valid(list(t.shape), low, high, interior)
      padded = [
        hlo.PadOp(x, init, low, high, interior).result if any(low + high + interior) else x
        for x, init in zip(xs, inits)
      ]
      accumulators = [
        hlo.BroadcastInDimOp(ir.RankedTensorType.get(out, init.type.element_type), init, []).result
        for init in inits
      ]
      for position in itertools.product(*(range(w) for w in window)):
        start = [p * d for p, d in zip(position, dilations)]
        limit = [s + (o - 1) * st + 1 for s, o, st in zip(start, out, strides)]
        elements = [hlo.SliceOp(x, start, limit, strides).result for x in padded]
        folded = _apply(body, block, accumulators, elements, out)
        keep = valid[tuple(slice(s, lim, st) for s, lim, st in zip(start, limit, strides))]
        if not keep.all():
          mask = _bool_constant(keep)
          folded = [hlo.SelectOp(mask, f, a).result for f, a in zip(folded, accumulators)]
        accumulators = folded
      results = accumulators
  for old, new in zip(op.results, results):
    old.replace_all_uses_with(new)
  op.erase()


@dataclasses.dataclass(frozen=True)
class _Geometry:
  """A window's shape along each axis, with padding that adds, not crops."""

  window: list
  strides: list
  dilations: list
  low: list
  high: list


def _dynamic_window_fold(op, xs, inits, body, g: _Geometry):
  """`_window_as_fold` at sizes read at run time: the slice of each window
  position is a strided slice to the output's sizes, and whether it meets
  the padding is computed along each padded axis from a range."""
  rank = len(g.window)
  i32 = ir.IntegerType.get_signless(32)
  vector = ir.RankedTensorType.get([rank], i32)

  def constant(numbers):
    return hlo.ConstantOp(
      ir.DenseElementsAttr.get(np.asarray(numbers, np.int32), type=vector)
    ).result

  # The sizes are read once, as vectors every broadcast and slice below
  # takes: values.broadcast_like would read a slice's sizes again at each
  # window position, a SHAPE and more in the model at each (70 ops against
  # 51 for a SAME 2x2 window).
  sizes = values.shape_vector(xs[0])
  padded_sizes = hlo.AddOp(sizes, constant([lo + hi for lo, hi in zip(g.low, g.high)])).result
  # floor((padded - span) / stride) + 1 outputs, at least none, a window
  # spanning (w - 1) * d + 1: max(padded - span + stride, 0) / stride.
  spans = constant([(w - 1) * d + 1 for w, d in zip(g.window, g.dilations)])
  strides = constant(g.strides)
  zeros = constant([0] * rank)
  room = hlo.AddOp(hlo.SubtractOp(padded_sizes, spans).result, strides).result
  out = hlo.DivOp(hlo.MaxOp(room, zeros).result, strides).result
  # What a slice spans: (out - 1) * stride + 1, or nothing.
  extent = hlo.SubtractOp(hlo.MulOp(out, strides).result, strides).result
  extent = hlo.MaxOp(hlo.AddOp(extent, constant([1] * rank)).result, zeros).result
  padded = [
    hlo.PadOp(x, init, g.low, g.high, [0] * rank).result if any(g.low + g.high) else x
    for x, init in zip(xs, inits)
  ]
  accumulators = [
    hlo.DynamicBroadcastInDimOp(r.type, init, out, []).result for r, init in zip(op.results, inits)
  ]
  block = op.regions[0].blocks[0]
  for position in itertools.product(*(range(w) for w in g.window)):
    offsets = [p * d for p, d in zip(position, g.dilations)]
    limit = hlo.AddOp(extent, constant(offsets)).result
    elements = [
      hlo.RealDynamicSliceOp(
        values.retyped(op.results[0], ir.RankedTensorType(x.type).element_type),
        x,
        constant(offsets),
        limit,
        strides,
      ).result
      for x in padded
    ]
    shape = list(ir.RankedTensorType(op.results[0].type).shape)
    folded = _apply(body, block, accumulators, elements, shape, out)
    keep = _dynamic_inside(op.results[0], out, sizes, offsets, g)
    if keep is not None:
      folded = [hlo.SelectOp(keep, f, a).result for f, a in zip(folded, accumulators)]
    accumulators = folded
  return accumulators


def _dynamic_inside(like, out, sizes, offsets, g: _Geometry):
  """Where the elements at a window position (`offsets` into the padded
  operand) are the operand's, as booleans of `like`'s type's shape, sized
  by `out` at run time; None where they all are. Output i of an axis reads
  the operand's element i * stride + offset - low."""
  i32 = ir.IntegerType.get_signless(32)
  shape = ir.RankedTensorType(like.type).shape
  mask = None
  for axis, (offset, stride, w, d) in enumerate(zip(offsets, g.strides, g.window, g.dilations)):
    before = offset < g.low[axis]
    # The last element read is at most size + high - (w - 1) * d - 1 + offset.
    after = g.high[axis] + offset - (w - 1) * d > 0
    if not (before or after):
      continue
    count = hlo.SliceOp(out, [axis], [axis + 1], [1]).result
    line_type = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()], i32)
    index = hlo.DynamicIotaOp(line_type, count, 0).result
    index = hlo.AddOp(
      hlo.MulOp(index, values.filled_like(index, stride)).result,
      values.filled_like(index, offset - g.low[axis]),
    ).result
    size = hlo.DynamicBroadcastInDimOp(
      line_type,
      hlo.ReshapeOp(
        ir.RankedTensorType.get([], i32), hlo.SliceOp(sizes, [axis], [axis + 1], [1]).result
      ).result,
      count,
      [],
    ).result
    inside = _within(index, size)
    wide = hlo.DynamicBroadcastInDimOp(
      ir.RankedTensorType.get(shape, ir.IntegerType.get_signless(1)), inside, out, [axis]
    ).result
    mask = wide if mask is None else hlo.AndOp(mask, wide).result
  return mask


def _window_valid(shape, low, high, interior) -> np.ndarray:
  """Where the padded, base-dilated operand holds the operand's elements."""
  valid = np.ones(shape, bool)
  for axis, (lo, hi, gap) in enumerate(zip(low, high, interior)):
    if gap:
      spread = np.zeros(
        [*valid.shape[:axis], (valid.shape[axis] - 1) * (gap + 1) + 1, *valid.shape[axis + 1 :]],
        bool,
      )
      index = [slice(None)] * valid.ndim
      index[axis] = slice(None, None, gap + 1)
      spread[tuple(index)] = valid
      valid = spread
    # Negative padding crops.
    index = [slice(None)] * valid.ndim
    index[axis] = slice(max(-lo, 0), valid.shape[axis] - max(-hi, 0))
    valid = valid[tuple(index)]
    widths = [(0, 0)] * valid.ndim
    widths[axis] = (max(lo, 0), max(hi, 0))
    valid = np.pad(valid, widths)
  return valid


def _bool_constant(mask: np.ndarray):
  # Any: numpy's stubs do not declare an array a Buffer, which it is.
  data: typing.Any = np.ascontiguousarray(mask)
  i1 = ir.IntegerType.get_signless(1)
  return hlo.ConstantOp(
    ir.DenseElementsAttr.get(data, type=ir.RankedTensorType.get(list(mask.shape), i1))
  ).result


WINDOW_AS_FOLD = Pattern("window_as_fold", ("stablehlo.reduce_window",), _window_as_fold)
