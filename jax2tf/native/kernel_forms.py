"""Where a target lacks the kernel of an op, a module writes the form the
graph's rules write for it (the target's `missing_kernels_by_dtype`,
jax2tf/targets/target.py): the same knowledge, read for StableHLO ops.

* `Neg` on floats: LiteRT's NEG (XNNPack's too) gives +0.0 for -0.0, so -x
  is x * -1, which is exact and keeps the signs of zeros, NaN and
  infinities (jax2tf/graph/semantics.py `negate_float`).
"""

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo

from jax2tf.native import module_patterns
from jax2tf.native import stablehlo_values as values
from jax2tf.targets import Target


def _negate_as_product(target: Target):
  def rewrite(op):
    t = op.results[0].type
    if not values.is_float_tensor(t):
      return
    dtype = values.numpy_dtype(ir.RankedTensorType(t).element_type)
    if dtype is None or not target.lacks_kernel("Neg", dtype.name):
      return
    x = op.operands[0]
    with ir.InsertionPoint(op), op.location:
      product = hlo.MulOp(x, values.filled_like(x, -1.0)).result
    op.results[0].replace_all_uses_with(product)
    op.erase()

  return rewrite


def patterns_for(target: Target) -> tuple[module_patterns.Pattern, ...]:
  """The forms of the ops `target` lacks kernels for, as module patterns."""
  return (
    module_patterns.Pattern(
      f"negate_as_product_for_{target.name}", ("stablehlo.negate",), _negate_as_product(target)
    ),
  )
