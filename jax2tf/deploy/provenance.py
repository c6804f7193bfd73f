"""Where a TF op of a converted graph comes from: the JAX primitive, and the
line of user code that applied it.

Graph serialization puts every TF op under a name scope named after the JAX
primitive it lowers; the jaxpr keeps the user's source lines. Deployment
converters (TFLite, TF.js) use both to word their refusals in JAX's terms.
The jaxpr's half needs no TensorFlow (the litert route reads it too).
"""

import collections
import importlib.util
import os
import re
from collections.abc import Iterable, Iterator

import jax


def node_defs(graph_def) -> Iterator:
  """The nodes of a GraphDef, those of its function library included."""
  yield from graph_def.node
  for fn in graph_def.library.function:
    yield from fn.node_def


def node_dtypes(node) -> set[str]:
  """The names of the dtypes a node's attributes mention (T, SrcT, dtype, ...)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  found: set[str] = set()
  for value in node.attr.values():
    enums = list(value.list.type) + ([value.type] if value.HasField("type") else [])
    found.update(tf.as_dtype(e).name for e in enums)
  return found


def primitive_of_node(node, primitive_names) -> str | None:
  """The innermost name scope of `node` that is one of `primitive_names`; else
  (ops that an inner jaxpr of a rule emits, such as the PRNG's) the innermost
  scope that names something, or None for an op outside any scope."""
  return primitive_of_name(node.name, primitive_names)


def primitives_of_op_names(names: Iterable[str], primitive_names) -> list[str]:
  """The JAX primitives (among `primitive_names`) whose TF ops have these
  full names, in order of first appearance."""
  found: list[str] = []
  for name in names:
    primitive = primitive_of_name(name, primitive_names)
    if primitive is not None and primitive in primitive_names and primitive not in found:
      found.append(primitive)
  return found


def primitive_of_name(name: str, primitive_names) -> str | None:
  """`primitive_of_node` for a TF op's full name."""
  scopes = [re.sub(r"_\d+$", "", scope) for scope in name.split("/")[:-1]]
  named = [s for s in scopes if s in primitive_names] or [
    s for s in scopes if s and not s.startswith(("jax2tf", "while", "cond", "PartitionedCall"))
  ]
  return named[-1] if named else None


def primitives_of_ops(nodes: Iterable, op_types, primitive_names) -> dict[str, list[str]]:
  """{TF op type: [JAX primitive names]} over `nodes` of the given types."""
  found: dict[str, list[str]] = collections.defaultdict(list)
  for node in nodes:
    if node.op not in op_types:
      continue
    primitive = primitive_of_node(node, primitive_names)
    if primitive is not None and primitive not in found[node.op]:
      found[node.op].append(primitive)
  return dict(found)


# JAX's, jaxlib's and this package's own folders (this package's wrappers
# of the user's function make frames of their own); found, not imported.
_LIBRARY_DIRS = tuple(
  os.path.abspath(folder) + os.sep
  for name in ("jax", "jaxlib")
  for folder in (getattr(importlib.util.find_spec(name), "submodule_search_locations", None) or ())
) + (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,)


def is_user_file(path: str) -> bool:
  """Whether a frame in `path` is the user's: not in JAX, jaxlib or this
  package, nor generated ("<string>")."""
  return not (path.startswith("<") or os.path.abspath(path).startswith(_LIBRARY_DIRS))


def user_line(eqn) -> str | None:
  """file:line of the innermost frame outside JAX and jax2tf, if JAX kept one."""
  traceback = getattr(eqn.source_info, "traceback", None)
  for frame in getattr(traceback, "frames", ()) or ():
    if is_user_file(frame.file_name):
      return f"{os.path.basename(frame.file_name)}:{frame.line_num}"
  return None


def equations(jaxpr) -> Iterator:
  """Every equation of `jaxpr` and of the jaxprs nested in its parameters."""
  for eqn in jaxpr.eqns:
    yield eqn
    for inner in inner_jaxprs(eqn):
      yield from equations(inner)


def inner_jaxprs(eqn) -> Iterator:
  """The jaxprs in `eqn`'s parameters (a cond's branches, a scan's body, ...),
  open: a closed jaxpr gives its `jaxpr`."""

  def found_in(value):
    if hasattr(value, "eqns"):
      yield value
    elif hasattr(getattr(value, "jaxpr", None), "eqns"):
      yield value.jaxpr
    elif isinstance(value, (tuple, list)):
      for v in value:
        yield from found_in(v)

  for value in eqn.params.values():
    yield from found_in(value)


def closed_jaxpr(jax_fun, specs):
  """`jax_fun`'s closed jaxpr over `specs`, or None where JAX cannot trace it
  (the callers then know less, and say less, rather than fail)."""
  try:
    return jax.make_jaxpr(jax_fun)(*specs)
  except Exception:  # pylint: disable=broad-except
    return None


def primitive_lines(closed, keep=None) -> dict[str, list[str]]:
  """{primitive name: lines of user code applying it} over the closed jaxpr
  `closed` (from `closed_jaxpr`), nested jaxprs included (an empty list where
  JAX kept no user frame); {} for None. `keep(eqn)`: only such equations."""
  if closed is None:
    return {}
  found: dict[str, list[str]] = {}
  for eqn in equations(closed.jaxpr):
    if keep is not None and not keep(eqn):
      continue
    lines = found.setdefault(str(eqn.primitive), [])
    line = user_line(eqn)
    if line and line not in lines:
      lines.append(line)
  return found


def describe(primitives: Iterable[str], applied: dict[str, list[str]]) -> str:
  """The primitives with their user lines: "p (at f.py:12, f.py:30) / q"."""
  where = []
  for p in primitives:
    at = applied.get(p, [])
    where.append(p + (f" (at {', '.join(at[:3])})" if at else ""))
  return " / ".join(where)
