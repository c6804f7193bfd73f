"""Arrays a converted function closes over, or is given in a TF graph.

Both serializations embed them in the TF graph as constants, and a GraphDef (so
a tf.function's graph and a SavedModel) holds at most 2 GiB. Past that, native
serialization would first print the constants into the module's text (several
copies of them in memory: a 2.25 GiB closure exhausted 24 GiB) and graph
serialization would fail inside TF with a message naming no array. The size is
checked on the traced jaxpr instead, before any lowering.

Arrays (not tf.Tensors or tf.Variables) passed as arguments while a tf.function
traces become constants of its graph as well: two 1.1 GiB numpy arrays took 20 s
and 7 GB of memory to trace, and tf.saved_model.save then failed with a message
about signatures. Their bytes are checked before any constant is made.
"""

from typing import Any

import jax
import numpy as np
from jax.extend import core as jex_core

# The largest serialized protocol buffer (GraphDef, TensorProto).
GRAPH_BYTES_LIMIT = 2**31


def _constants(closed_jaxpr) -> list:
  found = list(closed_jaxpr.consts)
  for eqn in closed_jaxpr.jaxpr.eqns:
    for param in eqn.params.values():
      for sub in param if isinstance(param, (tuple, list)) else (param,):
        if isinstance(sub, jex_core.ClosedJaxpr):
          found.extend(_constants(sub))
  return found


def _nbytes(array) -> int:
  # Not size * np.dtype(dtype).itemsize: numpy cannot interpret JAX's
  # extended dtypes (typed PRNG keys, key<fry>); their arrays know their bytes.
  nbytes = getattr(array, "nbytes", None)
  if nbytes is not None:
    return int(nbytes)
  return int(np.prod(np.shape(array), dtype=np.int64)) * np.dtype(array.dtype).itemsize


def _describe(array) -> str:
  return f"{array.dtype}{list(np.shape(array))}"


def _amount(nbytes: int) -> str:
  return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.1f} MiB"


def check_constant_bytes(fun_jit: Any, args_avals, kwargs_avals, fun_name: str):
  """Raises ValueError when `fun_jit` closes over more array bytes than a TF
  graph holds, naming the largest arrays and the remedy."""
  traced = fun_jit.trace(*args_avals, **kwargs_avals)  # cached: lowering traces again
  constants = [c for c in _constants(traced.jaxpr) if hasattr(c, "dtype")]
  sizes = [_nbytes(c) for c in constants]
  total = sum(sizes)
  if total < GRAPH_BYTES_LIMIT:
    return
  largest = sorted(zip(sizes, constants), key=lambda p: -p[0])[:3]
  listed = ", ".join(f"{_describe(c)} ({_amount(n)})" for n, c in largest)
  raise ValueError(
    f"{fun_name} closes over {_amount(total)} of arrays (largest: {listed}), "
    f"more than the {_amount(GRAPH_BYTES_LIMIT)} a TensorFlow graph or SavedModel "
    "can hold as constants. Pass large arrays (model parameters) as arguments instead, "
    "and give tf.Variables for them, which are saved as variables."
  )


def check_argument_bytes(named_leaves, fun_name: str):
  """Raises ValueError when the array arguments (name, leaf) that a call in a
  TF graph would embed as constants exceed what the graph holds, naming the
  largest and the remedy. tf.Tensors and tf.Variables are not constants."""
  sized = [
    (_nbytes(leaf), name, leaf)
    for name, leaf in named_leaves
    if isinstance(leaf, (np.ndarray, np.generic, jax.Array))
  ]
  total = sum(n for n, _, _ in sized)
  if total < GRAPH_BYTES_LIMIT:
    return
  largest = sorted(sized, key=lambda p: -p[0])[:3]
  listed = ", ".join(f"{name} {_describe(leaf)} ({_amount(n)})" for n, name, leaf in largest)
  raise ValueError(
    f"{fun_name} is called in a TensorFlow graph with {_amount(total)} of arrays as "
    f"arguments (largest: {listed}), which would become constants of the graph: more than "
    f"the {_amount(GRAPH_BYTES_LIMIT)} a TensorFlow graph or SavedModel can hold. Give "
    "tf.Variables (model parameters, saved as variables) or tf.Tensors (inputs of the "
    "tf.function) for them instead."
  )
