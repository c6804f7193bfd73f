"""Cases of the special-function family (special.py): erf, gamma family, Bessel, zeta, betainc.

TF's kernels (Eigen) and XLA's (CHLO decompositions) use different series and
approximations for these functions, so results agree to a tolerance, not bit
for bit; the tolerances are per dtype and per function where the two
implementations drift further apart (incomplete gamma/beta, polygamma).
"""

import dataclasses

import jax
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import (
  BF16,
  F16,
  F32,
  F64,
  SPECIALS,
  A,
  Cases,
  V,
  case,
  dtype_name,
  rand,
)

CASES = Cases()

# ---------------------------------------------------------------------------
# Random operands in each function's domain, with specials, per dtype.
UNARY = [
    ("erf", lax.erf, -3, 3, None), ("erfc", lax.erfc, -3, 3, None),
    ("erf_inv", lax.erf_inv, -0.99, 0.99, (1e-4, 1e-5)),
    ("lgamma", lax.lgamma, 0.1, 8, (1e-4, 1e-5)),
    ("digamma", lax.digamma, 0.1, 8, (1e-4, 1e-5)),
    ("bessel_i0e", lax.bessel_i0e, -5, 5, None),
    ("bessel_i1e", lax.bessel_i1e, -5, 5, None),
]
for _n, _f, _lo, _hi, _tol in UNARY:
  CASES.add(f"{_n}_float32", _f, A(4, 6, lo=_lo, hi=_hi), tol=_tol, slow=True)
  CASES.add(f"{_n}_float32_specials", _f, A(16, lo=_lo, hi=_hi, specials=SPECIALS), tol=_tol)
  for _dt in (F16, BF16):
    CASES.add(f"{_n}_{dtype_name(_dt)}", _f, A(4, 6, dtype=_dt, lo=_lo, hi=_hi), slow=True)
  CASES.add(f"{_n}_float64", _f, A(4, 6, dtype=F64, lo=_lo, hi=_hi, specials=SPECIALS),
            tol=(1e-10, 1e-12), slow=True)

BINARY = [
    ("igamma", lax.igamma, A(4, 5, lo=0.5, hi=5), A(4, 5, lo=0.1, hi=6), (1e-4, 1e-5)),
    ("igammac", lax.igammac, A(4, 5, lo=0.5, hi=5), A(4, 5, lo=0.1, hi=6), (1e-4, 1e-5)),
    ("random_gamma_grad", lax.random_gamma_grad, A(4, 5, lo=0.5, hi=5), A(4, 5, lo=0.1, hi=6),
     (1e-3, 1e-5)),
]
for _n, _f, _a, _b, _tol in BINARY:
  CASES.add(f"{_n}_float32", _f, _a, _b, tol=_tol)
  for _dt in (F16, BF16, F64):
    CASES.add(f"{_n}_{dtype_name(_dt)}", _f, dataclasses.replace(_a, dtype=_dt),
              dataclasses.replace(_b, dtype=_dt), slow=True,
              tol=(1e-10, 1e-12) if _dt == F64 else None)

_ORDERS = np.array([[0., 1., 2.], [1., 3., 2.]])
CASES.add("polygamma_float32", lax.polygamma, V(_ORDERS, F32), A(2, 3, lo=0.5, hi=4),
          tol=(1e-4, 1e-5))
CASES.add("zeta_float32", lax.zeta, A(2, 3, lo=1.5, hi=5), A(2, 3, lo=0.5, hi=4),
          tol=(1e-4, 1e-5))
CASES.add("regularized_incomplete_beta_float32", lax.betainc, A(2, 3, lo=0.5, hi=4),
          A(2, 3, lo=0.5, hi=4), A(2, 3, lo=0.01, hi=0.99), tol=(1e-4, 1e-5))
CASES.add("regularized_incomplete_beta_float64", lax.betainc, A(2, 3, dtype=F64, lo=0.5, hi=4),
          A(2, 3, dtype=F64, lo=0.5, hi=4), A(2, 3, dtype=F64, lo=0.01, hi=0.99),
          tol=(1e-9, 1e-11), slow=True)
CASES.add("polygamma_float64", lax.polygamma, V(_ORDERS, F64), A(2, 3, dtype=F64, lo=0.5, hi=4),
          tol=(1e-9, 1e-11), slow=True)
CASES.add("zeta_float64", lax.zeta, A(2, 3, dtype=F64, lo=1.5, hi=5),
          A(2, 3, dtype=F64, lo=0.5, hi=4), tol=(1e-9, 1e-11), slow=True)
CASES.add("igamma_grad_a", lax.igamma_grad_a, A(4, 5, lo=0.5, hi=5), A(4, 5, lo=0.1, hi=6),
          tol=(1e-4, 1e-5))
CASES.add("igamma_grad_a_float64", lax.igamma_grad_a, A(4, 5, dtype=F64, lo=0.5, hi=5),
          A(4, 5, dtype=F64, lo=0.1, hi=6), tol=(1e-9, 1e-11), slow=True)
# scipy.special functions built on the primitives above.
CASES.add("special_i0", jax.scipy.special.i0, A(6), tol=(1e-5, 1e-6), slow=True)
CASES.add("special_bessel_jn", lambda x: jax.scipy.special.bessel_jn(x, v=2), A(6, lo=0.1, hi=5),
          tol=(1e-4, 1e-5), slow=True)
CASES.add("special_expi", jax.scipy.special.expi, A(6, lo=0.1, hi=5), tol=(1e-4, 1e-5),
          slow=True)
CASES.add("special_gammainc_float64", jax.scipy.special.gammainc, A(5, dtype=F64, lo=0.5, hi=4),
          A(5, dtype=F64, lo=0.1, hi=5), tol=(1e-9, 1e-11), slow=True)
# jax.nn.softmax over the last axis is lowered as TF's Softmax (graph/fusions.py),
# with JAX's answer for rows holding NaN or +inf (all NaN) and -inf.
_SOFTMAX_EDGES = np.array(
    [[np.nan, 1, 2], [np.inf, 1, 2], [-np.inf, -np.inf, -np.inf], [np.inf, np.inf, 1],
     [-0., 0., -0.], [1e38, -1e38, 3e38], [-np.inf, 1, 2], [88, 89, 90], [-3e38, -3e38, 0]])
CASES.add("softmax_float32", jax.nn.softmax, A(3, 4, 7), graph_ops=["Softmax"])
CASES.add("softmax_edges", jax.nn.softmax, V(_SOFTMAX_EDGES, F32), graph_ops=["Softmax"])
CASES.add("softmax_axis0", lambda x: jax.nn.softmax(x, axis=0), A(5, 3))
CASES.add("softmax_float16", jax.nn.softmax, A(3, 7, dtype=F16), slow=True)
# jax.nn.log_softmax likewise, as TF's LogSoftmax.
CASES.add("log_softmax_float32", jax.nn.log_softmax, A(3, 4, 7), graph_ops=["LogSoftmax"])
CASES.add("log_softmax_edges", jax.nn.log_softmax, V(_SOFTMAX_EDGES, F32),
          graph_ops=["LogSoftmax"])
CASES.add("log_softmax_axis0", lambda x: jax.nn.log_softmax(x, axis=0), A(5, 3))


# ---------------------------------------------------------------------------
# A dtype table: (name, function, operand domains, rtol factor over RTOL[dtype]).
RTOL = {"float32": 2e-5, "float16": 2e-3, "bfloat16": 2e-2, "float64": 1e-12}


def _polygamma_order(rng):
  return rng.integers(0, 4, size=(3, 4)).astype(np.float32)


TABLE = [
    ("erf", lax.erf, [(-3, 3)], 1),
    ("erfc", lax.erfc, [(-3, 3)], 1),
    ("erf_inv", lax.erf_inv, [(-0.99, 0.99)], 1),
    ("lgamma", lax.lgamma, [(0.1, 6)], 1),
    ("lgamma_negative", lax.lgamma, [(-4.9, -0.1)], 5),
    ("digamma", lax.digamma, [(0.1, 6)], 1),
    ("bessel_i0e", lax.bessel_i0e, [(-6, 6)], 1),
    ("bessel_i1e", lax.bessel_i1e, [(-6, 6)], 1),
    ("igamma", lax.igamma, [(0.5, 5), (0.1, 6)], 10),
    ("igammac", lax.igammac, [(0.5, 5), (0.1, 6)], 10),
    ("igamma_grad_a", lax.igamma_grad_a, [(0.5, 5), (0.1, 6)], 50),
    ("random_gamma_grad", lax.random_gamma_grad, [(0.5, 5), (0.1, 6)], 50),
    ("polygamma", lax.polygamma, [_polygamma_order, (0.5, 5)], 50),
    ("zeta", lax.zeta, [(1.5, 5), (0.5, 3)], 10),
    ("betainc", lax.betainc, [(0.5, 5), (0.5, 5), (0.05, 0.95)], 50),
]


def _args(domains, dtype, seed=0):
  out = []
  for i, d in enumerate(domains):
    if callable(d):
      v = d(np.random.default_rng(seed + i))
    else:
      v = rand((3, 4), np.float32, low=d[0], high=d[1], seed=seed + i)
    out.append(v.astype(dtype) if dtype != BF16 else v)
  return out


def _table_case(name, fun, domains, factor, dtype, **kw):
  args = _args(domains, dtype)
  # bfloat16 values are made inside the function, as the table always did.
  f = (lambda *xs: fun(*[x.astype(BF16) for x in xs])) if dtype == BF16 else fun
  try:
    jax.eval_shape(f, *args)
  except (TypeError, ValueError):
    return None   # JAX itself rejects the dtype
  rtol = RTOL[dtype_name(dtype)] * (factor if dtype in (F32, F64) else 1)
  return case(f"table_{name}_{dtype_name(dtype)}", f, *args, tol=(rtol, rtol), **kw)


def _table(dtypes, **kw):
  return [c for name, fun, domains, factor in TABLE for dt in dtypes
          if (c := _table_case(name, fun, domains, factor, dt, **kw)) is not None]


_GRID = np.array([0.0, -0.0, -1.0, 1.0, np.inf, np.nan, 2.5, 0.5], F32)
_GRID_A, _GRID_X = [g.ravel() for g in np.meshgrid(_GRID, _GRID, indexing="ij")]
EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 30.0, -30.0], F32)

CASES += [
    case("erf_edges", lambda x: (lax.erf(x), lax.erfc(x)), EDGE, tol=(1e-6, 1e-6)),
    # One element at a time: TF's XLA takes another formula for a one-element
    # erf; converted to an integer, 0.9999998 truncates to 0 where JAX's 1.0 is 1.
    *[case(f"erf_one_element_{i}", lambda x: lax.convert_element_type(lax.erf(x), np.int8),
           np.array([v], F32), exact=True)
      for i, v in enumerate([np.inf, -np.inf, 4.0, 1e30])],
    case("erf_inv_edges", lax.erf_inv, np.array([-1, 1, 0, -0.0, 1.5, np.nan, 0.999], F32),
         tol=(1e-5, 1e-5)),
    case("lgamma_digamma_poles", lambda x: (lax.lgamma(x), lax.digamma(x)),
         np.array([0.0, -1.0, -2.0, 1.0, 2.0, np.inf, 1e-20], F32), tol=(1e-5, 1e-5)),
    case("bessel_edges", lambda x: (lax.bessel_i0e(x), lax.bessel_i1e(x)), EDGE,
         tol=(1e-6, 1e-6)),
    # JAX's values where a or x is 0, negative, infinite or NaN.
    case("igamma_family_edges",
         lambda a, x: (lax.igamma(a, x), lax.igammac(a, x), lax.igamma_grad_a(a, x)),
         _GRID_A, _GRID_X, tol=(1e-5, 1e-5)),
    case("erf_poly", lax.erf, rand((3, 4)), polymorphic_shapes=["(b, _)"], tol=(1e-6, 1e-6)),
    case("igamma_poly", lax.igamma, rand((3, 4), low=0.5, high=3), rand((3, 4), low=0.1, high=4),
         polymorphic_shapes=["(b, _)", "(b, _)"], tol=(1e-4, 1e-4)),
    case("lgamma_bf16_poly", lambda x: lax.lgamma(x.astype(BF16)), rand((5,), low=0.1, high=4),
         polymorphic_shapes=["(b,)"], tol=(2e-2, 2e-2)),
    # Without XLA, a polynomial: TFLite and TF.js have no Erfinv.
    case("graph_erf_inv", lax.erf_inv, rand((3,), low=-0.9, high=0.9),
         graph_ops={"graph": ["Erfinv"], "graph_no_xla": ["Sqrt", "Log"]},
         tol=(1e-5, 1e-5)),
    case("graph_lgamma", lax.lgamma, rand((3,), low=0.5, high=3), graph_ops=["Lgamma"],
         tol=(1e-5, 1e-5)),
    case("graph_igamma", lax.igamma, rand((3,), low=0.5, high=3), rand((3,), low=0.5, high=3),
         graph_ops=["Igamma"], tol=(1e-4, 1e-4)),
    case("graph_betainc", lax.betainc, rand((3,), low=0.5, high=3), rand((3,), low=0.5, high=3),
         rand((3,), low=0.1, high=0.9), graph_ops=["Betainc"], tol=(1e-3, 1e-3)),
]

CASES += _table([F32, BF16])
CASES += _table([F16], slow=True)
with jax.enable_x64(True):
  CASES += _table([F64], x64=True)

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/special.json.
CASES[:] = recorded.apply(CASES, "tflite", "special")
CASES[:] = recorded.apply(CASES, "tflite_native", "special")
CASES[:] = recorded.apply(CASES, "tflite_litert", "special")
CASES[:] = recorded.apply(CASES, "tfjs", "special")
