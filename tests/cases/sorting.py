"""Cases of the sorting family (sorting.py): sort, top_k and approx_top_k, with JAX's orders.

Sorting moves values, so every case is exact: NaN after +inf, -0.0 == +0.0
(stable among equal keys) for sort; IEEE total order for top_k.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.support import compare, recorded
from tests.support.case import (
  BF16,
  BOOL,
  C64,
  F16,
  F32,
  F64,
  I8,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  A,
  Cases,
  V,
  exact_case,
  rand,
  u32_order_rows,
)

CASES = Cases()


_exact = exact_case


# ---------------------------------------------------------------------------
# Random operands.
CASES += [
    _exact("sort", lambda x: lax.sort(x, dimension=1),
           A(3, 8, specials=(np.nan, -0.0, 0.0, np.inf))),
    _exact("sort_int8", lambda x: jnp.sort(x), A(20, dtype=I8, lo=-128, hi=127)),
    _exact("sort_multi_operand_stable", lambda k, v: lax.sort((k, v), num_keys=1, is_stable=True),
           A(12, dtype=I32, lo=0, hi=3), A(12)),
    _exact("sort_two_keys", lambda k1, k2, v: lax.sort((k1, k2, v), num_keys=2, is_stable=True),
           A(12, dtype=I32, lo=0, hi=2), A(12, lo=0, hi=2), A(12, dtype=U8), slow=True),
    _exact("argsort", lambda x: jnp.argsort(x, stable=True), A(10, dtype=I32, lo=0, hi=3)),
    _exact("top_k", lambda x: lax.top_k(x, 3), A(4, 10)),
    _exact("top_k_int32", lambda x: lax.top_k(x, 2), A(10, dtype=I32, lo=-5, hi=5), slow=True),
    _exact("approx_max_k", lambda x: lax.approx_max_k(x, 3), A(2, 20)),
    _exact("searchsorted", lambda a, v: jnp.searchsorted(a, v), V(np.arange(10.0), F32),
           A(5, lo=-1, hi=11), slow=True),
    _exact("unique_size", lambda x: jnp.unique(x, size=6, fill_value=-1),
           A(10, dtype=I32, lo=0, hi=4), slow=True),
    _exact("sort_complex64", jnp.sort, A(6, dtype=C64), slow=True),
    _exact("top_k_bfloat16", lambda x: lax.top_k(x, 3), A(10, dtype=BF16), slow=True),
]


# ---------------------------------------------------------------------------
# Fixed operands: every dtype, NaN, signed zeros and ties.

def in_bf16(f):
  """`f` on bfloat16 copies of its float32 arguments (cast inside the function)."""
  return lambda *xs: f(*[x.astype(BF16) for x in xs])


def with_specials(shape, dtype=np.float32, seed=0):
  x = rand(shape, dtype, seed=seed).round().astype(dtype)
  flat = x.reshape(-1)
  rng = np.random.default_rng(seed + 7)
  for v in (np.nan, np.inf, -np.inf, 0.0, -0.0, -0.0, -np.nan):
    flat[rng.integers(0, flat.size)] = v
  return x


def ties(shape, seed=0):
  return rand(shape, np.float32, -2, 2, seed=seed).round()


def sort(dimension=-1, num_keys=1, stable=True):
  return lambda *xs: lax.sort(xs if len(xs) > 1 else xs[0], dimension=dimension,
                              is_stable=stable, num_keys=num_keys)


def top_k(k):
  return lambda x: lax.top_k(x, k)


def _zeros_tie(args, expected, actual, tol):
  """Bit for bit, except that -0.0 and +0.0 are ties: sorts order them as they please.

  (JAX's own order of such ties changed between versions.)
  """
  def unsigned(tree):
    return [np.asarray(a) + np.asarray(0, a.dtype) for a in jax.tree_util.tree_leaves(tree)]
  compare.assert_same(unsigned(expected), unsigned(actual), exact=True)


def approx_top_ks(x):
  return (lax.approx_max_k(x, 3), lax.approx_min_k(x, 2, reduction_dimension=0),
          lax.approx_max_k(x, 2, aggregate_to_topk=False))


CASES += [
    _exact("sort_f32", sort(), rand((3, 7)), graph_ops=["TopKV2"]),
    _exact("sort_nan_zeros_axis0", sort(0), with_specials((9, 3))),
    _exact("sort_i32_extremes", sort(), np.array([3, -2**31, 2**31 - 1, 0, -1, 5], I32),
           slow=True),
    _exact("sort_u32", sort(), rand((2, 9), U32, 0, 2**32 - 1), slow=True),
    _exact("sort_i8", sort(), rand((9,), I8, -128, 127), slow=True),
    _exact("sort_u16", sort(0), rand((9, 2), U16, 0, 65535), slow=True),
    _exact("sort_bool", sort(), rand((9,), BOOL), slow=True),
    _exact("sort_f16", sort(), with_specials((9,), F16), slow=True),
    _exact("sort_bf16", in_bf16(sort()), with_specials((9,)), slow=True),
    _exact("sort_c64", sort(), np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 0j, -3 - 5j], C64),
           slow=True),
    _exact("sort_two_operands", sort(0), ties((8, 3)), rand((8, 3), I32, 0, 99, seed=1)),
    _exact("sort_two_keys_three_operands", sort(1, num_keys=2),
           ties((3, 10)), ties((3, 10), seed=1), rand((3, 10), seed=2)),
    _exact("sort_unstable_flag", sort(0, stable=False), rand((9, 2)), slow=True),
    _exact("top_k_4x9", top_k(3), rand((4, 9)), graph_ops=["TopKV2"]),
    _exact("top_k_nan_ties_zeros", top_k(9), with_specials((2, 9))),
    _exact("top_k_i32", top_k(4), rand((3, 7), I32, -3, 3), slow=True),
    _exact("top_k_u8", top_k(4), rand((7,), U8, 0, 255), slow=True),
    _exact("top_k_f16", top_k(2), with_specials((2, 5), F16), slow=True),
    _exact("jnp_argsort", lambda x: jnp.argsort(x, axis=0), with_specials((7, 3))),
    _exact("poly_sort", sort(), rand((9,)), polymorphic_shapes=["(b,)"]),
    _exact("poly_jnp_argsort", lambda x: jnp.argsort(x), with_specials((9,)),
           polymorphic_shapes=["(b,)"]),
    _exact("poly_sort_two_operands", sort(0), ties((8,)), rand((8,), I32, 0, 99, seed=1),
           polymorphic_shapes=["(b,)", "(b,)"]),
    _exact("poly_top_k", top_k(2), rand((3, 7)), polymorphic_shapes=["(a, 7)"]),
    # Distinct values: XLA's CPU fallback sorts unstably, so ties have no
    # specified order.
    _exact("approx_top_k", approx_top_ks, rand((6, 40)), graph_ops=["TopKV2"]),
    _exact("approx_top_k_ties_values",
           lambda x: (lax.approx_max_k(x, 5)[0],
                      lax.approx_min_k(x, 50, aggregate_to_topk=False)[0]),
           rand((3, 300)).round(1), slow=True, compare=_zeros_tie),
    _exact("approx_top_k_bf16", lambda x: lax.approx_max_k(x.astype(jnp.bfloat16), 3)[0],
           rand((2, 10)), slow=True),
    _exact("searchsorted_sides",
           lambda a, v: (jnp.searchsorted(a, v), jnp.searchsorted(a, v, side="right")),
           np.array([-np.inf, -1., -0., 0., 0., 2., np.inf, np.nan], F32),
           np.array([-0., 0., np.nan, 2., -5., np.inf, 1.], F32), slow=True),
    # 64-bit dtypes
    _exact("sort_f64_nan", sort(), with_specials((11,), F64)),
    _exact("sort_i64", sort(), np.array([3, -2**63, 2**63 - 1, 0, -1], I64), slow=True),
    _exact("sort_u64", sort(), np.array([3, 2**64 - 1, 2**63, 0, 1], U64)),
    _exact("top_k_f64", top_k(3), with_specials((9,), F64), slow=True),
]

# uint32 sorted (TFLite sorts int32 keys of the same order).
CASES += [
    _exact("u32_order_sort", lambda x: (
        jnp.sort(x, axis=1), lax.sort((x[0], x[1]), num_keys=1), lax.top_k(x, 3)),
        u32_order_rows()),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/sorting.json.
CASES[:] = recorded.apply(CASES, "tflite", "sorting")
CASES[:] = recorded.apply(CASES, "tflite_native", "sorting")
CASES[:] = recorded.apply(CASES, "tflite_litert", "sorting")
CASES[:] = recorded.apply(CASES, "tfjs", "sorting")
