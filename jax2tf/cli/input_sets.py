"""The inputs a check runs on: the model's examples, and for a polymorphic
model random inputs at two other sizes of its dimension variables.

Random values stay in the range of the example's values (so token ids stay
valid indices), drawn from a fixed seed: a check is reproducible.
"""

import re

import jax.numpy as jnp
import numpy as np
from jax import export

EXAMPLE = "example"
_SYMBOL = re.compile(r"[A-Za-z_]\w*")
# Operators that JAX writes in dimension expressions (str of a symbolic dim).
_OPERATORS = {
  "floordiv": lambda a, b: a // b,
  "mod": lambda a, b: a % b,
  "max": max,
  "min": min,
  "non_negative": lambda a: max(a, 0),
}
# Two sizes for each dimension variable, from its size in the example.
SIZES = (("e+1", lambda e: e + 1), ("2e+1", lambda e: 2 * e + 1))


def _evaluate(expression: str, values: dict[str, int]) -> int:
  return int(eval(expression, {"__builtins__": {}}, {**_OPERATORS, **values}))  # noqa: S307


def _random_like(example: np.ndarray, shape: tuple, rng: np.random.Generator) -> np.ndarray:
  if example.dtype == np.bool_:
    return rng.random(shape) < 0.5
  inexact = jnp.issubdtype(example.dtype, jnp.inexact)  # bfloat16 too
  finite = example[np.isfinite(example)] if inexact else example
  lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
  if lo == hi:
    lo, hi = lo - 1, hi + 1
  if example.dtype.kind in "iu":
    return rng.integers(int(lo), int(hi), size=shape, endpoint=True).astype(example.dtype)
  return rng.uniform(lo, hi, size=shape).astype(example.dtype)


def input_sets(inputs: tuple, polymorphic_shapes) -> tuple[dict[str, tuple], list[str]]:
  """({set name: input arrays}, notes on sets that could not be made)."""
  sets = {EXAMPLE: tuple(inputs)}
  if not polymorphic_shapes or all(p is None for p in polymorphic_shapes):
    return sets, []
  symbolic = export.symbolic_args_specs(list(inputs), list(polymorphic_shapes))
  example_values: dict[str, int] = {}
  for x, spec in zip(inputs, symbolic):
    for size, d in zip(x.shape, spec.shape):
      if not isinstance(d, int) and _SYMBOL.fullmatch(str(d)):
        example_values[str(d)] = size
  notes = []
  rng = np.random.default_rng(0)
  for _, grow in SIZES:
    values = {s: grow(e) for s, e in example_values.items()}
    name = ", ".join(f"{s}={v}" for s, v in sorted(values.items()))
    try:
      shapes = [
        tuple(d if isinstance(d, int) else _evaluate(str(d), values) for d in spec.shape)
        for spec in symbolic
      ]
    except Exception as e:  # pylint: disable=broad-except
      notes.append(f"no random inputs at {name}: cannot size the dimensions ({e})")
      continue
    sets[name] = tuple(_random_like(x, shape, rng) for x, shape in zip(inputs, shapes))
  return sets, notes
