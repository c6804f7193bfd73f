"""Programs changed where a known gap says the difference comes from.

A gap about subnormal or huge inputs, or about a runtime's own answer to one
primitive, holds where the program changed that way (its subnormals flushed,
its rsqrt computed as LiteRT does) no longer mismatches: each
function here gives that program, or None where the change changes nothing.
"""

import dataclasses
import functools

import ml_dtypes
import numpy as np

from tools.fuzz import program as program_lib


def flushed(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its subnormal inputs flushed to zeros of their sign, or
  None where it has none."""
  return _with_floats(program, _flush)


def tamed(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its huge finite float inputs brought down to a magnitude
  whose sums and products of a few terms stay finite, or None where it has none."""
  return _with_floats(program, _tame)


def without_infinities(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its infinite float inputs brought down to a finite
  magnitude (as `tamed`'s), or None where it has none."""
  return _with_floats(program, _finite)


def within_sin_range(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its finite float inputs beyond 2**26 brought down to it
  (where LiteRT's SIN and COS still reduce their argument), or None."""
  return _with_floats(program, functools.partial(_clamp_finite, limit=2.0**26))


def within_tan_range(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its finite float inputs beyond 2**13 brought down to it
  (where the TFLite formulation of tan still reduces its argument exactly),
  or None."""
  return _with_floats(program, functools.partial(_clamp_finite, limit=2.0**13))


def with_litert_rsqrt(program: program_lib.Program) -> program_lib.Program | None:
  """`program` with its rsqrt NaN at zeros, as LiteRT's RSQRT gives (JAX
  gives +-inf), or None where it has no rsqrt."""
  eqs = tuple(
    # Renamed: a program changed once is not changed again.
    dataclasses.replace(
      e, expr=f"jnp.where({e.uses[0]} == 0, jnp.nan, {e.expr})", op="litert_rsqrt"
    )
    if e.op == "rsqrt"
    else e
    for e in program.eqs
  )
  return dataclasses.replace(program, eqs=eqs) if eqs != program.eqs else None


def _with_floats(program, change) -> program_lib.Program | None:
  changed = False
  args = []
  for arg_set in program.args:
    out = []
    for a in arg_set:
      if a.dtype.kind == "c":
        f = np.empty_like(a)  # parts set one by one: 1j * inf would put a NaN in the real part
        f.real, f.imag = change(a.real), change(a.imag)
      elif a.dtype.kind in "fV" and a.dtype != np.bool_:
        f = change(a)
      else:
        f = a
      changed |= _bits(f) != _bits(a)
      out.append(f)
    args.append(tuple(out))
  return dataclasses.replace(program, args=tuple(args)) if changed else None


def _tame(x):
  return _clamp_finite(x, float(ml_dtypes.finfo(x.dtype).max) ** 0.5 / 16)


def _finite(x):
  wide = np.asarray(x).astype(np.float32)
  limit = float(ml_dtypes.finfo(x.dtype).max) ** 0.5 / 16
  return np.where(np.isinf(wide), np.copysign(limit, wide), wide).astype(x.dtype)


def _clamp_finite(x, limit: float):
  wide = np.asarray(x).astype(np.float32)
  huge = np.isfinite(wide) & (np.abs(wide) > limit)
  return np.where(huge, np.copysign(limit, wide), wide).astype(x.dtype)


def _flush(x):
  wide = np.asarray(x).astype(np.float32)
  tiny = float(ml_dtypes.finfo(x.dtype).smallest_normal)
  sub = (wide != 0) & (np.abs(wide) < tiny)
  return np.where(sub, np.copysign(0.0, wide), wide).astype(x.dtype)


def _bits(x) -> bytes:
  return np.ascontiguousarray(x).tobytes()
