"""Shrinking a failing program while it still fails.

`still_fails(program)` decides; the minimizer proposes smaller programs, in
this order, keeping each that still fails: one concrete size instead of a
polymorphic dimension, no gradient, a single output, an earlier value as the
output, an equation replaced by an input holding the value JAX computes for it (so that a long chain shrinks
to the one equation that goes wrong, on the operands it went wrong on), and
inputs cut down along an axis (and then equations again).
"""

import dataclasses
from collections.abc import Callable

import numpy as np

from tools.fuzz import generator, targets
from tools.fuzz import program as program_lib

Program = program_lib.Program


def minimize(
  program: Program, still_fails: Callable[[Program], bool], max_tries: int = 120
) -> Program:
  tries = [0]

  def accept(candidate: Program | None) -> bool:
    if candidate is None or tries[0] >= max_tries or not candidate.is_valid():
      return False
    tries[0] += 1
    return still_fails(candidate)

  best = program

  def shrink(candidates) -> bool:
    """Keeps the first of `candidates` that still fails."""
    nonlocal best
    for candidate in candidates:
      if accept(candidate):
        best = candidate
        return True
    return False

  shrink(_drop_polymorphism(best))
  if best.grad:
    shrink([dataclasses.replace(best, grad=False)])
  if len(best.outputs) > 1:
    shrink(program_lib.used(dataclasses.replace(best, outputs=(out,))) for out in best.outputs)
  # Equations first, then an input cut down, then equations again: a cut can
  # make an equation droppable that was not (the rows that hid the
  # difference are gone).
  while tries[0] < max_tries and (shrink(_fewer_equations(best)) or shrink(_cuts(best))):
    pass
  return best


def _drop_polymorphism(p: Program):
  if p.polymorphic_shapes is None:
    return
  for args in p.args:
    yield dataclasses.replace(p, args=(args,), polymorphic_shapes=None)


def _fewer_equations(p: Program):
  for eq in p.eqs:
    # An earlier value as the output (the rest went wrong already), or the
    # equation's value as an input (it went wrong later).
    yield _as_output(p, eq)
    yield _as_input(p, eq)


def _as_output(p: Program, eq: program_lib.Eq) -> Program | None:
  if eq.out in p.outputs:
    return None
  return program_lib.used(dataclasses.replace(p, outputs=(eq.out,)))


def _as_input(p: Program, eq: program_lib.Eq) -> Program | None:
  """`p` with `eq` replaced by an input holding the value JAX computes for it."""
  if eq.out in p.outputs:
    return None
  prefix = program_lib.used(dataclasses.replace(p, outputs=(eq.out,), grad=False))
  try:
    values = [r[0] for r in targets.expected(prefix)]
  except Exception:  # pylint: disable=broad-except
    return None
  spec = None
  if p.polymorphic_shapes is not None:
    # "b" on the axes whose size follows it; a size that changes otherwise
    # (2 * b, say) has no spec here.
    dims = []
    for sizes in zip(*(np.shape(v) for v in values)):
      if len(set(sizes)) == 1:
        dims.append(str(sizes[0]))
      elif sizes == tuple(generator.POLY_SIZES):
        dims.append("b")
      else:
        return None
    spec = ", ".join(dims) if "b" in dims else None
  eqs = tuple(e for e in p.eqs if e is not eq)
  return program_lib.used(
    dataclasses.replace(
      p,
      inputs=(*p.inputs, eq.out),
      args=tuple((*args, v) for args, v in zip(p.args, values)),
      eqs=eqs,
      polymorphic_shapes=None if p.polymorphic_shapes is None else (*p.polymorphic_shapes, spec),
    )
  )


def _cuts(p: Program):
  """`p` with the inputs that share an axis's size cut to part of it."""
  if p.polymorphic_shapes is not None:
    return
  args = p.args[0]
  for axis in range(max((a.ndim for a in args), default=0)):
    for n in sorted({a.shape[axis] for a in args if a.ndim > axis}, reverse=True):
      if n <= 1:
        continue
      for part in (slice(0, n // 2), slice(n // 2, n), slice(0, 1), slice(n - 1, n)):
        cut = []
        for a in args:
          if a.ndim > axis and a.shape[axis] == n:
            index = [slice(None)] * a.ndim
            index[axis] = part
            a = a[tuple(index)]
          cut.append(a)
        yield dataclasses.replace(p, args=(tuple(cut),))
