"""Writing a (minimized) program as a case of the case table's vocabulary.

The file defines the program's function and `CASES`, a `Cases` table with one
case whose arguments are the program's concrete inputs (`V(values, dtype)`),
so that it loads like a case table of tests/cases/ and its lines can be
pasted into one. The header says which seed, program and column produced it.
"""

import pathlib

import numpy as np

from tools.fuzz import program as program_lib

_HEADER = '''"""Found by the jax2tf differential fuzzer: {what}.

Reproduce: python -m tools.fuzz --seed {seed} --start {index} --programs 1
Column: {column}
{detail}
"""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from tests.support.case import Cases, V

'''


def _scalar(x) -> str:
  if isinstance(x, complex):
    return f"complex({_scalar(x.real)}, {_scalar(x.imag)})"
  if isinstance(x, float):
    if np.isnan(x):
      return "float('nan')"
    if np.isinf(x):
      return "float('inf')" if x > 0 else "-float('inf')"
  return repr(x)


def _literal(x) -> str:
  """A Python literal of an array's values (every value of NumPy's and ml_dtypes'
  floating types is a float exactly, so bfloat16 and float16 travel as floats)."""
  x = np.asarray(x)
  if x.dtype.kind not in "biuc" and x.dtype.kind != "f":
    x = x.astype(np.float32)  # ml_dtypes types: kind 'V'
  values = x.tolist()

  def render(v):
    return "[" + ", ".join(render(e) for e in v) + "]" if isinstance(v, list) else _scalar(v)

  return render(values)


def _dtype(x) -> str:
  name = np.asarray(x).dtype.name
  return f"ml_dtypes.{name}" if name == "bfloat16" else f"np.{name}"


def _arg(x) -> str:
  return f"V(np.array({_literal(x)}, {_dtype(x)}).reshape({np.shape(x)!r}), {_dtype(x)})"


def case_source(program: program_lib.Program, tol) -> str:
  """The function and one `CASES.add(...)` line for `program`."""
  args = program.args[0]
  options = ["exact=True"] if tol is None else [f"tol={tuple(float(t) for t in tol)!r}"]
  if program.polymorphic_shapes is not None:
    options.append(f"polymorphic_shapes={program.polymorphic_shapes!r}")
  lines = ",\n    ".join([f'"{program.name}"', program.name, *map(_arg, args), *options])
  return f"{program.source()}\n\n\nCASES = Cases()\nCASES.add(\n    {lines},\n)\n"


def write_case(
  directory,
  program: program_lib.Program,
  *,
  tol,
  seed: int,
  index: int,
  column: str,
  detail: str,
) -> pathlib.Path:
  directory = pathlib.Path(directory)
  directory.mkdir(parents=True, exist_ok=True)
  path = directory / f"{program.name}_{column.replace('-', '_')}.py"
  header = _HEADER.format(
    what=f"program {program.name}",
    seed=seed,
    index=index,
    column=column,
    detail=detail.replace('"""', "'''").replace("\\", "\\\\"),
  )
  path.write_text(header + case_source(program, tol))
  return path
