"""How big a conversion is: SavedModel bytes and TF graph op counts."""

import collections
import os


def dir_bytes(path: str) -> int:
  return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def saved_model_bytes(path: str) -> dict:
  return {"saved_model.pb": os.path.getsize(os.path.join(path, "saved_model.pb")),
          "variables": dir_bytes(os.path.join(path, "variables"))}


def op_counts(concrete_fn, top: int = 6) -> dict:
  """Nodes of the function's graph, nested function bodies included.

  Graph serialization puts control flow and gradients in library functions,
  so the top-level graph alone would undercount it.
  """
  return graph_def_op_counts(concrete_fn.graph.as_graph_def(), top)


def graph_def_op_counts(gdef, top: int = 6) -> dict:
  """As `op_counts`, for a GraphDef (a SavedModel's, say)."""
  by_type = collections.Counter(n.op for n in gdef.node)
  for f in gdef.library.function:
    by_type.update(n.op for n in f.node_def)
  return {"total": sum(by_type.values()), "functions": len(gdef.library.function),
          "top": by_type.most_common(top)}
