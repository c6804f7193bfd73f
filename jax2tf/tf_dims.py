"""Dimension variables as TF values, and shape checks at call time.

Both lowerings check the arguments against the polymorphic specs before the
lowered computation runs (otherwise TF reports a failed shape refinement, or an
op deep inside the graph fails, instead of the spec's message); graph
serialization also binds the dimension variables to values derived from
`tf.shape` of the arguments.

Where this lives: it is the TensorFlow half of shape polymorphism, and every
lowering uses it. api.py checks argument shapes with it for both lowerings;
graph serialization binds the dimension variables (graph/lowering.py) and
evaluates dimensions with `TFDimArithmetic` (graph/context.py); native
serialization binds them too, for the extra dimension arguments of a program
split around TF calls (native/split.py). jax2tf/shapes/ must stay free of
TensorFlow, and native/ never imports graph/, so neither package can hold it:
it sits beside api.py as one module that all three import, and it imports
nothing of theirs (only jax2tf.shapes, below all of them).
"""

from collections.abc import Sequence

import tensorflow as tf

from jax2tf.internals import jax_private, tf_private
from jax2tf.shapes import dim_eval


class TFDimArithmetic:
  """Dimension arithmetic on int32 TF scalars (Python semantics for // and %)."""

  constant = staticmethod(lambda c: tf.constant(c, tf.int32))
  add = staticmethod(tf.add)
  mul = staticmethod(tf.multiply)
  floordiv = staticmethod(tf.math.floordiv)
  mod = staticmethod(tf.math.floormod)
  max = staticmethod(tf.maximum)
  min = staticmethod(tf.minimum)


def is_polymorphic(avals) -> bool:
  return any(not dim_eval.is_constant(d) for a in avals for d in a.shape)


def check_argument_shapes(in_avals: Sequence, in_tree, args: Sequence[tf.Tensor]) -> list:
  """Checks the arguments against the specs: raises InvalidArgumentError now
  when their shapes are static, else returns TF assertion ops."""
  if not is_polymorphic(in_avals):
    return []
  _, constraints, synthetic = jax_private.solve_dim_vars(tuple(in_avals), in_tree)
  static_env = {}
  for name, arg_idx, dim_idx in synthetic:
    known = args[arg_idx].shape[dim_idx]
    if known is None:
      return _assertions(constraints, _DimsByName(synthetic, args))
    static_env[name] = int(known)
  _check_statically(constraints, static_env)
  return []


class _RunTimeDims:
  """An argument's dimensions as int32 TF scalars, from one Shape and one
  Unpack per argument: indexing the shape would add a StridedSlice and its
  three constants per dimension to every SavedModel."""

  def __init__(self, args: Sequence[tf.Tensor]):
    self._args = args
    self._unpacked: dict[int, list] = {}

  def __call__(self, arg_idx: int, dim_idx: int) -> tf.Tensor:
    if arg_idx not in self._unpacked:
      shape = tf.shape(self._args[arg_idx], out_type=tf.int32)
      self._unpacked[arg_idx] = tf.unstack(shape, num=self._args[arg_idx].shape.rank)
    return self._unpacked[arg_idx][dim_idx]


class _DimsByName(dict):
  """The arguments' dimensions by JAX's names for them ('args[0].shape[1]'),
  made into TF ops only when an expression reads them."""

  def __init__(self, synthetic, args: Sequence[tf.Tensor]):
    super().__init__()
    self.args = args
    self.where = {name: (a, d) for name, a, d in synthetic}
    self._dims = _RunTimeDims(args)

  def __contains__(self, name) -> bool:
    return name in self.where

  def __missing__(self, name: str) -> tf.Tensor:
    self[name] = self._dims(*self.where[name])
    return self[name]

  def made(self) -> set[str]:
    """The names whose dimensions are TF ops already."""
    return set(self.keys())


def bind_dimension_variables(
  in_avals: Sequence, in_tree, args: Sequence[tf.Tensor]
) -> dict[str, tf.Tensor]:
  """Values (int32 TF scalars) for every dimension variable of `in_avals`."""
  if not is_polymorphic(in_avals):
    return {}
  solution, _, synthetic = jax_private.solve_dim_vars(tuple(in_avals), in_tree)
  env = {}
  dims = _RunTimeDims(args)
  for name, arg_idx, dim_idx in synthetic:
    known = args[arg_idx].shape[dim_idx]
    env[name] = tf.constant(int(known), tf.int32) if known is not None else dims(arg_idx, dim_idx)
  return {v: dim_eval.evaluate(e, env, TFDimArithmetic) for v, e in solution.items()}


def _formatted(pieces) -> tf.Tensor:
  """The message of `pieces` (text, dimension values) as a string tensor: in
  one StringFormat op, which puts each value where its piece was, unless a
  text holds the op's placeholder "{}"."""
  texts = [p if isinstance(p, str) else str(p) for p in pieces if not isinstance(p, tf.Tensor)]
  if len(texts) == len(pieces):
    return tf.constant("".join(texts))
  if any("{}" in t for t in texts):
    return tf.strings.join([p if isinstance(p, str) else tf.strings.as_string(p) for p in pieces])
  template = "".join("{}" if isinstance(p, tf.Tensor) else str(p) for p in pieces)
  return tf.strings.format(template, [p for p in pieces if isinstance(p, tf.Tensor)])


def _message(constraint, env, arith) -> list:
  pieces = []
  for p in constraint.error_message_pieces:
    pieces.append(p if isinstance(p, str) else dim_eval.evaluate(p, env, arith))
  return pieces


def _holds(constraint, left, right):
  if constraint.comp == jax_private.Comparator.EQ:
    return left == right
  return left >= right


def _check_statically(constraints, env):
  for c in constraints.constraints:
    left = dim_eval.evaluate(c.left, env, dim_eval.IntArithmetic)
    right = dim_eval.evaluate(c.right, env, dim_eval.IntArithmetic)
    if not _holds(c, left, right):
      msg = "".join(str(p) for p in _message(c, env, dim_eval.IntArithmetic))
      raise tf.errors.InvalidArgumentError(None, None, msg)


def _dimension_at_least_one(constraint) -> str | None:
  """The name of the dimension if `constraint` is `dimension >= 1` (JAX's
  check of a dimension variable read directly from a shape): it fails only
  where that dimension is 0."""
  if constraint.comp != jax_private.Comparator.GEQ or not dim_eval.is_constant(constraint.right):
    return None
  if int(constraint.right) != 1 or dim_eval.is_constant(constraint.left):
    return None
  names = dim_eval.variables(constraint.left)
  # The expression is the dimension itself (a name prints as itself), not,
  # say, 'b - 2' from a spec 'b + 2', which fails for more than 0.
  if len(names) != 1 or str(constraint.left) not in names:
    return None
  return str(constraint.left)


def _pieces_where_zero(constraint, name: str, dims: _DimsByName) -> list:
  """The message of a failing `name >= 1`: `name` is 0 there, so the pieces
  that read only it are text now and cost no op."""
  pieces = []
  for p in constraint.error_message_pieces:
    if isinstance(p, str):
      pieces.append(p)
    elif dim_eval.variables(p) <= {name}:
      pieces.append(str(dim_eval.evaluate(p, {name: 0}, dim_eval.IntArithmetic)))
    else:
      pieces.append(dim_eval.evaluate(p, dims, TFDimArithmetic))
  return pieces


def _count(name: str, dims: _DimsByName, read_elsewhere: set[str]) -> tf.Tensor:
  """An integer TF scalar that is 0 exactly where dimension `name` is: the
  size of its argument when no other check reads that argument's dimensions
  and its other dimensions are static and nonzero (one op, Size), else the
  dimension itself."""
  arg_idx, dim_idx = dims.where[name]
  arg = dims.args[arg_idx]
  others = [s for i, s in enumerate(arg.shape) if i != dim_idx]
  siblings = {n for n, (a, _) in dims.where.items() if a == arg_idx}
  shape_read = siblings & (read_elsewhere | dims.made())
  if all(s is not None and s > 0 for s in others) and not shape_read:
    return tf.size(arg, out_type=tf.int64)
  return dims[name]


def _fails_where_zero(count: tf.Tensor, message: str):
  """A check that raises `message` where `count` is 0, in four ops: the
  reciprocal of the count is infinite exactly there, and CheckNumerics
  raises its message attribute as it is (an Assert escapes the quotes of its
  data, and its message as data costs a Select, two strings and a
  StringToNumber). CheckNumerics is stateful, so it is neither pruned nor
  folded; TF's TFLite converter drops it as it drops Asserts."""
  inverse = tf.math.reciprocal(tf.cast(count, tf.float32))
  return tf.debugging.check_numerics(inverse, message).op


def _assertions(constraints, dims: _DimsByName) -> list:
  """One check per constraint, chained by control edges so that of several
  failing checks the first in JAX's order raises (TF runs independent ops in
  any order).

  The common `b >= 1` of a dimension read from a shape costs the fewest ops
  (every SavedModel of a function with a dynamic batch carries it): the
  dimension (or the argument's size) read as a count instead of compared
  with a constant, and its message as text where it fails, raised by a
  CheckNumerics where no other dimension's value is in it, else by an
  Assert."""
  at_least_one = {id(c): _dimension_at_least_one(c) for c in constraints.constraints}
  read_elsewhere: set[str] = set()
  for c in constraints.constraints:
    name = at_least_one[id(c)]
    exprs = [p for p in c.error_message_pieces if not isinstance(p, str)]
    if name is None:
      exprs += [c.left, c.right]
    for e in exprs:
      read_elsewhere |= dim_eval.variables(e) - ({name} if name else set())
  ops: list = []
  for c in constraints.constraints:
    name = at_least_one[id(c)]
    if name is not None:
      count = _count(name, dims, read_elsewhere)
      pieces = _pieces_where_zero(c, name, dims)
      if all(isinstance(p, str) for p in pieces) and not tf_private.tracing_for_xla():
        with tf.control_dependencies(ops[-1:]):
          ops.append(_fails_where_zero(count, "".join(pieces)))
        continue
      ok = tf.cast(count, tf.bool)
    else:
      left = dim_eval.evaluate(c.left, dims, TFDimArithmetic)
      right = dim_eval.evaluate(c.right, dims, TFDimArithmetic)
      ok = (
        tf.equal(left, right)
        if c.comp == jax_private.Comparator.EQ
        else tf.greater_equal(left, right)
      )
      pieces = _message(c, dims, TFDimArithmetic)
    message = _formatted(pieces)
    with tf.control_dependencies(ops[-1:]):
      if not tf_private.tracing_for_xla():
        # Assert prints its data escaped (\'d\' for JAX's 'd'); StringToNumber
        # quotes the string it cannot read as it is. Fed the message where the
        # check fails ("0" where it holds), it raises JAX's words first. The
        # Assert stays: it keeps this stateless op from being pruned (a
        # control edge alone does not), and XLA, TF's TFLite converter and
        # to_tfjs know it. Under XLA, which drops Asserts with their data,
        # the string ops could not compile.
        message = tf.strings.to_number(tf.where(ok, "0", message), out_type=tf.int32)
      ops.append(tf.debugging.Assert(ok, [message]))
  return ops
