"""Running a TF callable in the three TF execution modes the tests compare."""

import numpy as np
import tensorflow as tf
from jax import export

from tests.support.case import TF_MODES  # noqa: F401  (the one definition of the modes)


def in_mode(f_tf, mode: str):
  if mode == "eager":
    return f_tf
  if mode == "graph":
    return tf.function(f_tf, autograph=False)
  if mode == "compiled":
    return tf.function(f_tf, autograph=False, jit_compile=True)
  raise ValueError(f"unknown TF mode {mode!r}")


def run_in_mode(f_tf, mode: str, *args, **kwargs):
  return in_mode(f_tf, mode)(*args, **kwargs)


def to_numpy(tree):
  return tf.nest.map_structure(lambda x: x.numpy() if hasattr(x, "numpy") else np.asarray(x), tree)


def tensor_specs(args, polymorphic_shapes=None) -> list:
  """TensorSpecs for `args`, with None for every dimension that
  `polymorphic_shapes` makes symbolic, so that a tf.function traced with them
  sees unknown shapes (and dimension values become TF tensors at run time)."""
  if polymorphic_shapes is None:
    polymorphic_shapes = [None] * len(args)
  # jax.export parses the specs; only the shapes matter here.
  shapes = [np.zeros(np.shape(a), np.float32) for a in args]
  symbolic = export.symbolic_args_specs(shapes, list(polymorphic_shapes))
  return [
    tf.TensorSpec(
      [d if isinstance(d, int) else None for d in s.shape], tf.as_dtype(np.asarray(a).dtype)
    )
    for a, s in zip(args, symbolic)
  ]


def graph_op_types(concrete_fn) -> set:
  """The op types of a concrete function's graph, nested functions included."""
  graph_def = concrete_fn.graph.as_graph_def()
  ops = {n.op for n in graph_def.node}
  for fn in graph_def.library.function:
    ops |= {n.op for n in fn.node_def}
  return ops
