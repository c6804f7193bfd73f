"""The TensorFlow -> JAX direction (``call_tf``).

Modules: functions (flat TF functions, tracing/compilation caches, derived
functions), primitive (the JAX primitive, eager execution), eager (DLPack),
lowering (jit: inline TF's XLA code; convert: tf.call_tf_function),
autodiff (jvp/transpose), batching (vmap), function_list (what XlaCallModule
calls by index). The graph-serialization rule is in
jax2tf/graph/rules/call_tf.py. User guide: docs/call_tf.md.
"""

import threading

import jax
import numpy as np
import tensorflow as tf

from jax2tf.call_tf import (
  autodiff,  # noqa: F401  (registers jvp and transpose)
  batching,  # noqa: F401  (registers vmap)
  eager,
  functions,
  lowering,  # noqa: F401  (registers the jit lowering)
  primitive,
)
from jax2tf.call_tf.primitive import call_tf_p
from jax2tf.dtypes import jax_dtype
from jax2tf.options import require_bool

__all__ = ["call_tf", "call_tf_p"]


def _name_of(callable_tf) -> str:
  name = getattr(callable_tf, "__name__", None) or getattr(callable_tf, "name", None)
  return str(name) if name else type(callable_tf).__name__


def _jax_arg(x, name: str, i: int):
  if isinstance(x, jax.core.Tracer) or isinstance(x, jax.Array):
    return x
  if isinstance(x, (tf.Tensor, tf.Variable)):
    t = tf.convert_to_tensor(x)
    if t.dtype in (tf.string, tf.resource, tf.variant):
      raise TypeError(
        f"call_tf({name}): argument {i} has TF dtype {t.dtype.name}, "
        "which JAX cannot represent; pass numeric or boolean values"
      )
    want = jax_dtype(t.dtype)
    return eager.to_jax(t if t.dtype == want else tf.cast(t, want))
  try:
    arr = np.asarray(x)
  except Exception as e:
    raise TypeError(
      f"call_tf({name}): argument {i} ({type(x).__name__}) is not an array: {e}"
    ) from None
  if arr.dtype.kind not in "biufc" and not jax.dtypes.issubdtype(arr.dtype, np.inexact):
    raise TypeError(
      f"call_tf({name}): argument {i} has dtype {arr.dtype}; pass numeric or boolean arrays"
    )
  want = jax_dtype(arr.dtype)
  return arr if arr.dtype == want else arr.astype(want)


def call_tf(
  callable_tf,
  has_side_effects=True,
  ordered=False,
  output_shape_dtype=functions.INFER,
  call_tf_graph=False,
):
  """Makes a TensorFlow callable callable from JAX.

  Args:
    callable_tf: a TF callable (a Python function of TF ops, a `tf.function`,
      a restored SavedModel function, a Keras model...) taking and returning
      pytrees of tensors.
    has_side_effects: keep the call even if its results are unused (it
      carries a JAX effect, so JAX does not drop it before lowering).
    ordered: sequence the call with JAX's ordered effects (implies
      has_side_effects): eagerly it first waits for the effects JAX has
      dispatched; in a lowered module it threads the ordered-effect tokens.
    output_shape_dtype: a pytree of `jax.ShapeDtypeStruct` for the results,
      needed when TF cannot infer static result shapes (e.g. under
      jax2tf.convert with polymorphic shapes); its shapes may use the
      arguments' symbolic dimensions. Each dtype is the one TF returns (or,
      with jax_enable_x64 off, its 32-bit form). `None` declares that the
      function returns nothing; leave the argument out to have the results
      inferred from TF.
    call_tf_graph: when the calling JAX function is converted back to TF with
      jax2tf.convert, call `callable_tf` as a TF graph function from the
      converted function: in native serialization instead of embedding its
      XLA code, in graph serialization instead of tracing its ops in place.

  Returns:
    A JAX-callable taking the same pytrees (JAX or NumPy arrays, tf.Tensors,
    tf.Variables) and returning pytrees of JAX arrays. Outside JAX staging it
    runs `callable_tf` in TF eager mode; under jax.jit (and lax control flow)
    TensorFlow compiles it with XLA and JAX inlines the result.
  """
  if not callable(callable_tf):
    raise TypeError(f"call_tf: callable_tf must be callable, got {callable_tf!r:.80}")
  require_bool("has_side_effects", has_side_effects)
  require_bool("ordered", ordered)
  require_bool("call_tf_graph", call_tf_graph)
  if ordered and not has_side_effects:
    has_side_effects = True
  name = _name_of(callable_tf)
  declared = functions.declared_outputs(output_shape_dtype, name)
  by_tree: dict = {}
  lock = threading.Lock()

  def make_call(*args, **kwargs):
    leaves, in_tree = jax.tree_util.tree_flatten((args, kwargs))
    leaves = [_jax_arg(x, name, i) for i, x in enumerate(leaves)]
    with lock:
      fn = by_tree.get(in_tree)
      if fn is None:
        fn = functions.PrimalFunction(callable_tf, name, in_tree, declared)
        by_tree[in_tree] = fn
      outs = primitive.bind(
        leaves, fn, has_side_effects=has_side_effects, ordered=ordered, call_tf_graph=call_tf_graph
      )
      out_tree = fn.out_tree
    if out_tree is None:
      raise ValueError(f"call_tf({name}): could not determine the result structure")
    if out_tree.num_leaves != len(outs):
      raise ValueError(
        f"call_tf({name}): output_shape_dtype has {out_tree.num_leaves} leaves but "
        f"the TF function returned {len(outs)} results"
      )
    return jax.tree_util.tree_unflatten(out_tree, outs)

  make_call.__name__ = f"call_tf({name})"
  make_call.__qualname__ = make_call.__name__
  make_call.__wrapped_tf__ = callable_tf
  return make_call
