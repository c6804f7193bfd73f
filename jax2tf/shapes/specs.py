"""From `polymorphic_shapes` (a pytree of specs) to one symbolic aval per argument leaf.

Specs follow JAX's grammar (`jax.export.symbolic_shape`): dimension variables,
integers, `_` (take the size from the actual argument) and a trailing `...`.
Every error names the argument leaf it is about.
"""

import dataclasses
import re
import tokenize
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax import export


class PolyShape(tuple):
  """A shape spec given as a tuple of dimension specs, e.g. `PolyShape("b", 28, ...)`.

  Equivalent to the string `"(b, 28, ...)"`; each element is a dimension
  expression string, an int, `"_"` or `...` (only last).
  """

  def __new__(cls, *dim_specs):
    for i, d in enumerate(dim_specs):
      if d is ... and i != len(dim_specs) - 1:
        raise ValueError(
          f"PolyShape: '...' may only appear last, found at position {i} in {dim_specs}"
        )
      if not (d is ... or isinstance(d, (str, int, np.integer))):
        raise TypeError(f"PolyShape: dimension {i} must be a str, an int or ..., got {d!r}")
    return super().__new__(cls, dim_specs)

  def __str__(self):
    return "(" + ", ".join("..." if d is ... else str(d) for d in self) + ")"


@dataclasses.dataclass(frozen=True)
class ArgLeaf:
  """What the shape machinery needs to know about one flattened argument."""

  name: str  # e.g. "x" or "params['w']"
  shape: tuple[int | None, ...]  # None for unknown dims (TensorSpec under tf.function)
  dtype: np.dtype


class _NoSpec:
  def __repr__(self):
    return "None"


_NO_SPEC = _NoSpec()


# How the messages of a polymorphic_shapes that does not fit the arguments'
# pytree begin: JAX's words for a pytree prefix that does not fit
# (jax.tree_util), which JAX's jax2tf raises in these cases and its users match.
STRUCTURE_ERROR = "pytree structure error: "


def _is_spec_leaf(x) -> bool:
  return x is None or isinstance(x, (str, PolyShape, _NoSpec))


def spec_for_each_leaf(
  polymorphic_shapes: Any, args_tree: Any, describe: str = "the positional arguments"
) -> list[str | None]:
  """Broadcasts a prefix pytree of specs to one spec (or None) per leaf of `args_tree`.

  Raises ValueError naming the mismatching part when the trees do not fit.
  """
  specs = jax.tree_util.tree_map(
    lambda s: _NO_SPEC if s is None else s, polymorphic_shapes, is_leaf=_is_spec_leaf
  )
  spec_leaves, spec_def = jax.tree_util.tree_flatten(specs, is_leaf=_is_spec_leaf)
  for s in spec_leaves:
    if not isinstance(s, (str, PolyShape, _NoSpec)):
      raise TypeError(
        "polymorphic_shapes: each shape spec must be a str, a PolyShape or None, "
        f"got {s!r} of type {type(s).__name__}"
      )
  try:
    subtrees = spec_def.flatten_up_to(args_tree)  # type: ignore[attr-defined]  # not in jax's stubs
  except (ValueError, TypeError) as e:
    raise ValueError(
      f"{STRUCTURE_ERROR}polymorphic_shapes must be a pytree prefix of {describe}: got "
      f"polymorphic_shapes structure {spec_def} for arguments structure "
      f"{jax.tree_util.tree_structure(args_tree)}. Details: {e}"
    ) from None
  result: list[str | None] = []
  for spec, subtree in zip(spec_leaves, subtrees):
    n = len(jax.tree_util.tree_leaves(subtree))
    text = None if isinstance(spec, _NoSpec) else str(spec)
    result.extend([text] * n)
  return result


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = {"floordiv", "mod", "max", "min", "non_negative"}


def _dimension_variables(spec: str) -> set[str]:
  return {n for n in _IDENT.findall(spec) if n not in _OPERATORS and n != "_"}


def _check_constraints(constraints: Sequence[str], known_vars: set[str]):
  if isinstance(constraints, str):
    raise TypeError(
      "polymorphic_constraints must be a sequence of strings, got the string "
      f"{constraints!r}; write ({constraints!r},)"
    )
  for c in constraints:
    if not isinstance(c, str):
      raise TypeError(f"polymorphic_constraints: each constraint must be a str, got {c!r}")
    unknown = sorted(_dimension_variables(c) - known_vars)
    if unknown:
      raise ValueError(
        f"polymorphic_constraints: constraint {c!r} uses unknown dimension "
        f"variable(s) {unknown}; the variables of polymorphic_shapes are "
        f"{sorted(known_vars) or 'none'}"
      )


def symbolic_avals(
  leaves: Sequence[ArgLeaf], specs: Sequence[str | None], constraints: Sequence[str] = ()
) -> list[jax.ShapeDtypeStruct]:
  """One `jax.ShapeDtypeStruct` per leaf; symbolic dims share one scope."""
  known_vars = set()
  for s in specs:
    if s is not None:
      known_vars |= _dimension_variables(s)
  _check_constraints(constraints, known_vars)
  try:
    scope = export.SymbolicScope(tuple(constraints))
  except ValueError as e:
    raise ValueError(f"polymorphic_constraints: {e}") from None
  avals = []
  for leaf, spec in zip(leaves, specs):
    if spec is None:
      if any(d is None for d in leaf.shape):
        raise ValueError(
          f"argument {leaf.name} has shape {_fmt_shape(leaf.shape)} with unknown "
          "dimensions, but no polymorphic_shapes spec for it; give one, e.g. "
          f'polymorphic_shapes=... "({", ".join("b" if d is None else "_" for d in leaf.shape)})"'
        )
      shape = tuple(leaf.shape)
    else:
      shape = _parse(spec, leaf, scope)
    avals.append(jax.ShapeDtypeStruct(shape, leaf.dtype))
  return avals


def _parse(spec: str, leaf: ArgLeaf, scope) -> tuple:
  try:
    shape = export.symbolic_shape(spec, like=leaf.shape, scope=scope)
  except (ValueError, SyntaxError, tokenize.TokenError) as e:
    # JAX's parser tokenizes with Python's tokenizer, whose errors (e.g. an
    # unclosed parenthesis) would otherwise escape without the argument name,
    # saying only "EOF in multi-line statement".
    detail = "its parentheses do not balance" if isinstance(e, tokenize.TokenError) else str(e)
    raise ValueError(
      f"polymorphic_shapes spec {spec!r} for argument {leaf.name} with shape "
      f"{_fmt_shape(leaf.shape)}: {detail}"
    ) from None
  if len(shape) != len(leaf.shape):
    raise ValueError(
      f"polymorphic_shapes spec {spec!r} for argument {leaf.name} has rank "
      f"{len(shape)}, but the argument has rank {len(leaf.shape)} "
      f"(shape {_fmt_shape(leaf.shape)})"
    )
  return tuple(shape)


def _fmt_shape(shape) -> str:
  return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ")"
