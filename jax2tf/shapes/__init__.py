"""Shape polymorphism: parsing specs into symbolic shapes (no TensorFlow here)."""

from jax2tf.shapes.evaluate import eval_polymorphic_shape
from jax2tf.shapes.specs import (
  ArgLeaf,
  PolyShape,
  spec_for_each_leaf,
  symbolic_avals,
)

__all__ = [
  "PolyShape",
  "ArgLeaf",
  "spec_for_each_leaf",
  "symbolic_avals",
  "eval_polymorphic_shape",
]
