"""The order in which XLA's CPU backend folds a reduction with a custom body.

StableHLO leaves that order open; a body that is neither associative nor
commutative (or one that rounds) gives a result that depends on it. Measured
against `jax.jit`: each output element starts from the init values and folds
in its elements one at a time, in row-major order of the reduced positions.
A reduction of one operand along an axis longer than TREE_WINDOW goes as a
tree first (XLA's tree-reduction rewriter): windows of at most TREE_WINDOW
elements per reduced axis, SAME-padded, each folded from the init with the
padding skipped, then the windows' results the same way, until no reduced
axis is longer; variadic reductions fold straight through.

A reduction whose result holds as many elements as its operand (every
reduced axis of length 1) is no fold at all: XLA's simplifier makes it a
reshape of the operand, so neither the init nor the body is applied
(`reduce(x, 7, f)` over such axes is `x`, whatever `f`; a sum keeps -0.0).

No TensorFlow or JAX here: the graph rule (jax2tf/graph/rules/reductions.py)
and the StableHLO rewrite (jax2tf/native/reduce_folds.py) read it, each in
its own IR.
"""

TREE_WINDOW = 32


def needs_tree(lengths) -> bool:
  """Whether a reduction of one operand along axes of these lengths goes
  through one more tree level before its final fold."""
  return any(d > TREE_WINDOW for d in lengths)


def tree_windows(lengths) -> list[int]:
  """The window along each reduced axis at a tree level."""
  return [min(d, TREE_WINDOW) for d in lengths]


def same_padding(length: int, window: int) -> tuple[int, int]:
  """The (low, high) padding that makes windows of `window` elements, placed
  end to end, cover `length` elements, split as SAME splits it."""
  total = -(-length // window) * window - length
  return total // 2, total - total // 2


def reduces_nothing(reduced_lengths) -> bool:
  """Whether XLA gives a reduction along axes of these lengths as its
  operand reshaped (all of them 1; at least one axis)."""
  lengths = list(reduced_lengths)
  return bool(lengths) and all(d == 1 for d in lengths)
