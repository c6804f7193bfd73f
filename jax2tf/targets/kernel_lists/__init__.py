"""What LiteRT's converters refuse for want of a kernel, as data.

TF's TFLite converter (routes "graph" and "native") and litert-converter
(route "litert") refuse an op that LiteRT has no builtin operator for on its
operands' dtypes, and `to_tflite` says so in JAX's terms, one line per op:

    TF op Abs on int64, emitted for the JAX primitive abs (at f.py:3)
    tfl.mul on uint8, emitted for the JAX primitive mul (at f.py:3): ...

A list holds, for each op refused so, the sets of operand dtypes it was
refused on: `<name>.json` is {op: [[dtype, ...], ...]}, an empty set where
the refusal named none (the op is refused on any dtype). Tests derive each
case's refusal from it: a refusal must name only what the list holds. It is
written whole by `tools/record_column.py` from the converters' refusals, and
read here. No TensorFlow or JAX here.
"""

import functools
import json
import pathlib
from collections.abc import Iterable, Mapping

_DIR = pathlib.Path(__file__).parent


def path(name: str) -> pathlib.Path:
  return _DIR / f"{name}.json"


@functools.cache
def read(name: str) -> Mapping[str, frozenset[frozenset[str]]]:
  """{op: the sets of operand dtypes it is refused on} of the list `name`."""
  data = json.loads(path(name).read_text())
  return {op: frozenset(frozenset(on) for on in sets) for op, sets in data.items()}


def to_json(refused: Mapping[str, Iterable[Iterable[str]]]) -> str:
  """The list's file: ops sorted, each dtype set sorted, one set a line."""
  lines = []
  for op in sorted(refused):
    sets = sorted({tuple(sorted(on)) for on in refused[op]})
    inner = ",\n".join(f"    {json.dumps(list(on))}" for on in sets)
    lines.append(f"  {json.dumps(op)}: [\n{inner}\n  ]")
  return "{\n" + ",\n".join(lines) + "\n}\n"


def write(name: str, refused: Mapping[str, Iterable[Iterable[str]]]) -> pathlib.Path:
  p = path(name)
  p.write_text(to_json(refused))
  read.cache_clear()
  return p


def lists(name: str, op: str, on: Iterable[str]) -> bool:
  """Whether the list `name` says the converter refuses `op` on operands
  of the dtypes `on` (any dtypes, where the list holds the op with none)."""
  sets = read(name).get(op)
  if sets is None:
    return False
  return frozenset(on) in sets or frozenset() in sets
