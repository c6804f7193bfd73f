"""Output shapes of a function under shape polymorphism, without lowering it."""

from collections.abc import Callable

import jax
import numpy as np

from jax2tf.shapes.specs import ArgLeaf, spec_for_each_leaf, symbolic_avals


def eval_polymorphic_shape(
  fun_jax: Callable, *, polymorphic_shapes=None, polymorphic_constraints=()
) -> Callable:
  """Returns a function that computes `fun_jax`'s output shapes symbolically.

  Call the result with arguments that have `.shape` and `.dtype` (arrays,
  `jax.ShapeDtypeStruct`, `tf.TensorSpec`, ...). It returns a pair: the pytree
  of output `jax.ShapeDtypeStruct` (with symbolic dimensions) and the pytree of
  their shapes as spec strings, ready to use as `polymorphic_shapes` of a
  following conversion.
  """

  def do_eval(*args_specs):
    leaves, treedef = jax.tree_util.tree_flatten(args_specs)
    paths = [
      jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(args_specs)[0]
    ]
    arg_leaves = [ArgLeaf(f"args{p}", _shape_of(x), _dtype_of(x)) for p, x in zip(paths, leaves)]
    specs = spec_for_each_leaf(_as_sequence(polymorphic_shapes, len(args_specs)), tuple(args_specs))
    avals = symbolic_avals(arg_leaves, specs, polymorphic_constraints)
    res = jax.eval_shape(fun_jax, *jax.tree_util.tree_unflatten(treedef, avals))
    res_specs = jax.tree_util.tree_map(lambda r: str(r.shape).replace(",)", ")"), res)
    return res, res_specs

  return do_eval


def _as_sequence(polymorphic_shapes, nargs):
  if polymorphic_shapes is None:
    return (None,) * nargs
  if isinstance(polymorphic_shapes, (str,)) or type(polymorphic_shapes).__name__ == "PolyShape":
    return (polymorphic_shapes,)
  return tuple(polymorphic_shapes)


def _shape_of(x) -> tuple:
  shape = x.shape
  if hasattr(shape, "as_list"):  # tf.TensorShape without importing TF here
    shape = shape.as_list() if shape.rank is not None else None
  return tuple(shape)


def _dtype_of(x) -> np.dtype:
  dt = x.dtype
  if hasattr(dt, "as_numpy_dtype"):
    dt = dt.as_numpy_dtype
  return np.dtype(jax.dtypes.canonicalize_dtype(np.dtype(dt)))
