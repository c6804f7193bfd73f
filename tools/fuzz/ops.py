"""The operations a fuzz program is built of.

Each operation is a function `op(g, x)` of the program builder `g` (see
generator.py) and the name `x` of an operand it was offered; it returns an
`Op` (the source of one expression over existing names) or None where `x`
does not suit it. Operands other than `x` come from `g.operand(shape, dtype)`,
which reuses an existing value of that type or adds an input. `exact` says
whether JAX's result is exact given exact operands, so that it is compared bit
for bit.
"""

import dataclasses

import numpy as np

from tools.fuzz import values as V


@dataclasses.dataclass(frozen=True)
class Op:
  expr: str
  uses: tuple[str, ...]
  name: str
  exact: bool


def _static(shape) -> bool:
  return all(isinstance(d, int) for d in shape)


def _shape_src(x: str, shape, dims_from=None) -> str:
  """A shape tuple in source; symbolic dimensions read from `x.shape`."""
  dims_from = dims_from or {}
  parts = []
  for i, d in enumerate(shape):
    parts.append(str(d) if isinstance(d, int) else f"{x}.shape[{dims_from.get(i, i)}]")
  return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _dt(dtype) -> str:
  name = np.dtype(dtype).name
  return f"ml_dtypes.{name}" if name == "bfloat16" else f"np.{name}"


def _const(value, dtype) -> str:
  return f"np.array({value!r}, {_dt(dtype)})"


def _static_axes(shape) -> list[int]:
  return [i for i, d in enumerate(shape) if isinstance(d, int)]


def _static_axis(g, shape) -> int | None:
  """One of the axes whose size is known, or None."""
  axes = _static_axes(shape)
  return g.choice(axes) if axes else None


# --------------------------------------------------------------------------
# Elementwise

_FLOAT_UNARY = {
  "neg": True, "abs": True, "sign": True, "floor": True, "ceil": True, "round": True,
  "is_finite": True, "exp": False, "log": False, "log1p": False, "expm1": False, "tanh": False,
  "logistic": False, "sin": False, "cos": False, "sqrt": False, "rsqrt": False, "cbrt": False,
  "atan": False, "erf": False, "square": True, "exp2": False, "tan": False,
}  # fmt: skip
_COMPLEX_UNARY = {"neg": True, "exp": False, "real": True, "imag": True, "conj": True, "abs": False}
_INT_UNARY = {"neg": True, "abs": True, "sign": True, "bitwise_not": True, "population_count": True,
              "clz": True}  # fmt: skip


def unary(g, x):
  _, dtype = g.aval(x)
  if V.is_float(dtype):
    table = _FLOAT_UNARY
  elif V.is_complex(dtype):
    table = _COMPLEX_UNARY
  elif V.is_int(dtype):
    table = _INT_UNARY
  else:
    return Op(f"lax.bitwise_not({x})", (x,), "bitwise_not", True)
  name = g.choice(sorted(table))
  fn = "lax.bitwise_not" if name == "bitwise_not" else f"lax.{name}"
  if name == "round":
    return Op(f"lax.round({x}, {g.choice([0, 1])})", (x,), "round", True)
  return Op(f"{fn}({x})", (x,), name, table[name])


_ARITH = {"add": True, "sub": True, "mul": True, "div": True, "rem": True, "max": True,
          "min": True}  # fmt: skip
_FLOAT_BINARY = {"pow": False, "atan2": False, "nextafter": True}
_BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")
_SHIFTS = ("shift_left", "shift_right_logical", "shift_right_arithmetic")
_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")


def binary(g, x):
  shape, dtype = g.aval(x)
  names = []
  if dtype != V.BOOL:
    names += list(_ARITH)
  if V.is_float(dtype):
    names += list(_FLOAT_BINARY)
  if V.is_complex(dtype):
    names = ["add", "sub", "mul", "div", "pow"]
  if V.is_int(dtype) or dtype == V.BOOL:
    names += list(_BITWISE)
  if V.is_int(dtype):
    names += list(_SHIFTS)
  if not V.is_complex(dtype):
    names += list(_COMPARE)
  name = g.choice(names)
  y = g.operand(shape, dtype)
  a, b = (x, y) if g.coin() else (y, x)
  exact = _ARITH.get(name, _FLOAT_BINARY.get(name, True))
  if V.is_complex(dtype) and name in ("mul", "div"):
    exact = False
  if name in ("max", "min") and V.is_complex(dtype):
    exact = True
  return Op(f"lax.{name}({a}, {b})", (a, b), name, exact)


def select(g, x):
  shape, dtype = g.aval(x)
  pred = g.operand(shape, V.BOOL)
  y = g.operand(shape, dtype)
  return Op(f"lax.select({pred}, {x}, {y})", (pred, x, y), "select_n", True)


def clamp(g, x):
  shape, dtype = g.aval(x)
  if V.is_complex(dtype) or dtype == V.BOOL:
    return None
  lo = g.operand((), dtype)
  hi = g.operand(() if g.coin() else shape, dtype)
  return Op(f"lax.clamp({lo}, {x}, {hi})", (lo, x, hi), "clamp", True)


def convert(g, x):
  _, dtype = g.aval(x)
  to = g.choice(V.DTYPES)
  if V.is_complex(dtype) and not V.is_complex(to):
    return None
  return Op(f"lax.convert_element_type({x}, {_dt(to)})", (x,), "convert_element_type", True)


def integer_pow(g, x):
  _, dtype = g.aval(x)
  if dtype == V.BOOL:
    return None
  y = g.choice([-3, -2, -1, 0, 1, 2, 3, 5] if not V.is_int(dtype) else [0, 1, 2, 3, 5])
  return Op(f"lax.integer_pow({x}, {y})", (x,), "integer_pow", V.is_int(dtype) or y in (0, 1))


# --------------------------------------------------------------------------
# Structural


def broadcast_in_dim(g, x):
  shape, _ = g.aval(x)
  if len(shape) >= 4:
    return None
  at = g.integers(0, len(shape) + 1)
  size = g.choice([1, 2, 3])
  out = list(range(len(shape)))
  new_shape = [*shape[:at], size, *shape[at:]]
  dims = tuple(i if i < at else i + 1 for i in out)
  from_x = {i if i < at else i + 1: i for i in out}
  shape_src = _shape_src(x, new_shape, {k: v for k, v in from_x.items()})
  return Op(f"lax.broadcast_in_dim({x}, {shape_src}, {dims!r})", (x,), "broadcast_in_dim", True)


def reshape(g, x):
  shape, _ = g.aval(x)
  if _static(shape):
    size = int(np.prod(shape))
    cands = [(size,), (1, size)] + [(d, size // d) for d in (2, 3, 4) if size and size % d == 0]
    new = g.choice(cands)
    return Op(f"lax.reshape({x}, {new!r})", (x,), "reshape", True)
  if len(shape) < 2 or not _static(shape[1:]):
    return None
  # Keep the symbolic leading dimension, flatten the rest.
  rest = int(np.prod(shape[1:]))
  return Op(f"lax.reshape({x}, ({x}.shape[0], {rest}))", (x,), "reshape", True)


def transpose(g, x):
  shape, _ = g.aval(x)
  if len(shape) < 2:
    return None
  perm = tuple(int(i) for i in g.rng.permutation(len(shape)))
  return Op(f"lax.transpose({x}, {perm!r})", (x,), "transpose", True)


def slice_(g, x):
  shape, _ = g.aval(x)
  axis = _static_axis(g, shape)
  if axis is None:
    return None
  n = shape[axis]
  start = g.integers(0, n + 1)
  limit = g.integers(start, n + 1)
  stride = g.choice([1, 1, 2, 3])
  return Op(f"lax.slice_in_dim({x}, {start}, {limit}, {stride}, {axis})", (x,), "slice", True)


def concatenate(g, x):
  shape, dtype = g.aval(x)
  axis = _static_axis(g, shape)
  if axis is None:
    return None
  other = list(shape)
  other[axis] = g.choice([0, 1, 2])
  y = g.operand(tuple(other), dtype)
  return Op(f"lax.concatenate([{x}, {y}], {axis})", (x, y), "concatenate", True)


def pad(g, x):
  shape, dtype = g.aval(x)
  if V.is_complex(dtype):
    return None
  config = []
  for d in shape:
    if isinstance(d, int) and d:
      lo, hi = g.integers(-1, 3), g.integers(-1, 3)
      config.append((lo, hi, g.choice([0, 0, 1])))
    else:
      config.append((g.integers(0, 2), g.integers(0, 2), 0))
  value = True if dtype == V.BOOL else 7 if V.is_int(dtype) else g.choice([-0.0, 2.5, np.inf])
  return Op(f"lax.pad({x}, {_const(value, dtype)}, {config!r})", (x,), "pad", True)


def rev(g, x):
  shape, _ = g.aval(x)
  if not shape:
    return None
  dims = tuple(sorted({g.integers(0, len(shape)) for _ in range(2)}))
  return Op(f"lax.rev({x}, {dims!r})", (x,), "rev", True)


def dynamic_slice(g, x):
  shape, _ = g.aval(x)
  axes = _static_axes(shape)
  if not axes:
    return None
  starts, sizes = [], []
  uses = [x]
  for i, d in enumerate(shape):
    if i in axes:
      sizes.append(g.integers(0, d + 1))
      s = g.operand((), np.dtype(np.int32))
      uses.append(s)
      starts.append(s)
    else:
      sizes.append(f"{x}.shape[{i}]")
      starts.append("0")
  sizes_src = "(" + ", ".join(map(str, sizes)) + ",)"
  return Op(
    f"lax.dynamic_slice({x}, ({', '.join(starts)},), {sizes_src})",
    tuple(uses),
    "dynamic_slice",
    True,
  )


def dynamic_update_slice(g, x):
  shape, dtype = g.aval(x)
  if not _static(shape) or not shape:
    return None
  upd_shape = tuple(g.integers(0, d + 1) for d in shape)
  u = g.operand(upd_shape, dtype)
  starts = [g.operand((), np.dtype(np.int32)) for _ in shape]
  return Op(
    f"lax.dynamic_update_slice({x}, {u}, ({', '.join(starts)},))",
    (x, u, *starts),
    "dynamic_update_slice",
    True,
  )


def gather(g, x):
  """NumPy-style indexing by an integer array: a gather."""
  shape, _ = g.aval(x)
  if not shape or not isinstance(shape[0], int) or shape[0] == 0:
    return None
  idx = g.operand((g.integers(1, 4),), np.dtype(np.int32))
  return Op(f"{x}[{idx}]", (x, idx), "gather", True)


def scatter_add(g, x):
  shape, dtype = g.aval(x)
  if not shape or not isinstance(shape[0], int) or dtype == V.BOOL:
    return None
  n = g.integers(1, 4)
  idx = g.operand((n,), np.dtype(np.int32))
  upd = g.operand((n, *shape[1:]), dtype)
  exact = not (V.is_float(dtype) or V.is_complex(dtype))
  return Op(f"{x}.at[{idx}].add({upd})", (x, idx, upd), "scatter-add", exact)


def sort(g, x):
  shape, dtype = g.aval(x)
  if not shape or V.is_complex(dtype):
    return None
  dim = g.integers(0, len(shape))
  if g.coin():
    return Op(f"lax.sort({x}, dimension={dim})", (x,), "sort", True)
  y = g.operand(shape, g.choice(V.DTYPES[:-1]))
  return Op(f"lax.sort(({x}, {y}), dimension={dim}, num_keys=1)[1]", (x, y), "sort", True)


# --------------------------------------------------------------------------
# Reductions, cumulative, dots


def reduce(g, x):
  shape, dtype = g.aval(x)
  if not shape:
    return None
  axes = tuple(sorted({g.integers(0, len(shape)) for _ in range(2)}))
  if dtype == V.BOOL:
    name = g.choice(["reduce_and", "reduce_or"])
    return Op(f"lax.{name}({x}, {axes!r})", (x,), name, True)
  names = ["reduce_sum", "reduce_prod"] + ([] if V.is_complex(dtype) else ["reduce_max", "argmax"])
  name = g.choice(names + ([] if V.is_complex(dtype) else ["reduce_min", "argmin"]))
  inexact = V.is_float(dtype) or V.is_complex(dtype)
  if name in ("argmax", "argmin"):
    return Op(f"lax.{name}({x}, {axes[0]}, np.int32)", (x,), name, True)
  return Op(f"lax.{name}({x}, {axes!r})", (x,), name, not (inexact and name in names[:2]))


def cumulative(g, x):
  shape, dtype = g.aval(x)
  if not shape or dtype == V.BOOL or V.is_complex(dtype):
    return None
  names = ["cumsum", "cumprod", "cummax", "cummin"] + (
    ["cumlogsumexp"] if V.is_float(dtype) else []
  )
  name = g.choice(names)
  axis = g.integers(0, len(shape))
  exact = name in ("cummax", "cummin") or V.is_int(dtype)
  return Op(f"lax.{name}({x}, {axis}, reverse={g.coin()})", (x,), name, exact)


def dot_general(g, x):
  shape, dtype = g.aval(x)
  if not shape or len(shape) > 3 or dtype == V.BOOL:
    return None
  c = g.integers(0, len(shape))
  k = shape[c]
  other = (k, g.choice([1, 2, 3])) if g.coin() else (k,)
  y = g.operand(other, dtype)
  exact = not (V.is_float(dtype) or V.is_complex(dtype))
  dims = f"((({c},), (0,)), ((), ()))"
  return Op(f"lax.dot_general({x}, {y}, {dims})", (x, y), "dot_general", exact)


# --------------------------------------------------------------------------
# Control flow: small bodies of elementwise operations


def _body_op(g, dtype, var):
  if V.is_float(dtype):
    return g.choice([f"lax.sin({var})", f"lax.mul({var}, {var})", f"lax.neg({var})"])
  if V.is_complex(dtype):
    return f"lax.neg({var})"
  if dtype == V.BOOL:
    return f"lax.bitwise_not({var})"
  return g.choice([f"lax.add({var}, {var})", f"lax.neg({var})", f"lax.shift_left({var}, {var})"])


def cond(g, x):
  shape, dtype = g.aval(x)
  p = g.operand((), V.BOOL)
  t, f = _body_op(g, dtype, "a"), _body_op(g, dtype, "a")
  exact = "sin" not in t + f
  return Op(f"lax.cond({p}, lambda a: {t}, lambda a: {f}, {x})", (p, x), "cond", exact)


def while_loop(g, x):
  _, dtype = g.aval(x)
  n = g.integers(0, 4)
  body = _body_op(g, dtype, "s[1]")
  expr = f"lax.while_loop(lambda s: s[0] < {n}, lambda s: (s[0] + 1, {body}), (0, {x}))[1]"
  return Op(expr, (x,), "while", "sin" not in body)


def scan(g, x):
  shape, dtype = g.aval(x)
  if not shape or dtype == V.BOOL or V.is_complex(dtype):
    return None
  init = g.operand(tuple(shape[1:]), dtype)
  step = "lax.max(c, r)" if g.coin() else "lax.add(c, r)"
  exact = "max" in step or not V.is_float(dtype)
  expr = f"lax.scan(lambda c, r: ({step}, lax.sub(c, r)), {init}, {x}, reverse={g.coin()})[1]"
  return Op(expr, (init, x), "scan", exact)


# Each operation with its weight in the draw.
OPS = (
  (unary, 6),
  (binary, 8),
  (select, 2),
  (clamp, 1),
  (convert, 3),
  (integer_pow, 1),
  (broadcast_in_dim, 2),
  (reshape, 2),
  (transpose, 2),
  (slice_, 2),
  (concatenate, 1),
  (pad, 1),
  (rev, 1),
  (dynamic_slice, 1),
  (dynamic_update_slice, 1),
  (gather, 1),
  (scatter_add, 1),
  (sort, 1),
  (reduce, 3),
  (cumulative, 2),
  (dot_general, 2),
  (cond, 1),
  (while_loop, 1),
  (scan, 1),
)

# The operations that keep a symbolic leading dimension well defined.
POLY_SAFE = {
  unary, binary, select, clamp, convert, integer_pow, broadcast_in_dim, reshape, transpose,
  slice_, concatenate, pad, rev, dynamic_slice, reduce, cumulative, sort, cond, while_loop,
}  # fmt: skip
