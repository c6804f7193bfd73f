"""Random input arrays, with the values where implementations disagree mixed in."""

import jax.numpy as jnp
import ml_dtypes
import numpy as np

# The dtypes a program computes in (x64 stays off: no 64-bit types).
FLOATS = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
SIGNED = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32))
UNSIGNED = (np.dtype(np.uint8), np.dtype(np.uint32))
INTS = SIGNED + UNSIGNED
BOOL = np.dtype(np.bool_)
COMPLEX = (np.dtype(np.complex64),)
DTYPES = FLOATS + INTS + (BOOL,) + COMPLEX


def is_float(dtype) -> bool:
  return jnp.issubdtype(np.dtype(dtype), jnp.floating)


def is_int(dtype) -> bool:
  return jnp.issubdtype(np.dtype(dtype), jnp.integer)


def is_complex(dtype) -> bool:
  return np.dtype(dtype).kind == "c"


def edge_values(dtype) -> list:
  """NaN, infinities, both zeros, denormals and extremes of `dtype`."""
  dtype = np.dtype(dtype)
  if dtype == BOOL:
    return [True, False]
  if is_int(dtype):
    info = np.iinfo(dtype)
    return [info.min, info.max, 0, 1, info.max - 1] + ([-1, info.min + 1] if info.min else [])
  finfo = ml_dtypes.finfo(dtype) if dtype in FLOATS else np.finfo(np.float32)
  tiny = float(finfo.smallest_subnormal)
  reals = [np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, float(finfo.max), -float(finfo.max)]
  reals += [1.0, -1.0, 0.5]
  if is_complex(dtype):
    return [complex(a, b) for a, b in zip(reals, reals[3:] + reals[:3])]
  return reals


def random_array(rng: np.random.Generator, shape, dtype, edges: float) -> np.ndarray:
  """Values of `dtype` (mostly in a small range), a fraction `edges` of them edge values."""
  dtype = np.dtype(dtype)
  if dtype == BOOL:
    x = rng.random(shape) < 0.5
  elif is_int(dtype):
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -8), min(info.max, 8), size=shape, endpoint=True).astype(dtype)
  elif is_complex(dtype):
    x = (rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)).astype(dtype)
  else:
    x = rng.uniform(-3, 3, shape).astype(dtype)
  x = np.array(x)
  if edges and x.size:
    values = edge_values(dtype)
    mask = rng.random(x.shape) < edges
    picks = rng.integers(0, len(values), size=x.shape)
    with np.errstate(over="ignore", invalid="ignore"):
      table = np.array(values, dtype=np.complex128 if is_complex(dtype) else None).astype(dtype)
    x = np.where(mask, table[picks], x)
  return np.asarray(x, dtype)
