"""Cases of the reductions family (reductions.py): sums, products, extrema, folds, argmax/argmin.

Extrema and arg-extrema are exact; NaN, infinities, ties and signed zeros are
sprinkled in where they decide the result.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import (
  BF16,
  BOOL,
  C64,
  C128,
  F16,
  F64,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  A,
  Cases,
  V,
  case,
  dtype_name,
  exact_case,
  fast_representatives,
  rand,
  refused,
  u32_order_rows,
)

CASES = Cases()

# ---------------------------------------------------------------------------
# Random operands.
for _n, _f in [("sum", jnp.sum), ("max", jnp.max), ("min", jnp.min), ("prod", jnp.prod),
               ("argmax", jnp.argmax), ("argmin", jnp.argmin)]:
  _exact = _n not in ("sum", "prod")
  CASES.add(f"reduce_{_n}", lambda x, _f=_f: _f(x, axis=1), A(4, 7, lo=-2, hi=2),
            tol=None if _exact else (1e-5, 1e-5), exact=_exact)
  CASES.add(f"reduce_{_n}_nan", lambda x, _f=_f: _f(x, axis=0),
            A(7, 3, specials=(1.0, np.nan, 2.0)), exact=_exact)
  CASES.add(f"reduce_{_n}_int8", lambda x, _f=_f: _f(x, axis=0), A(4, 5, dtype=I8, lo=-5, hi=5),
            slow=True)
  CASES.add(f"reduce_{_n}_bfloat16", lambda x, _f=_f: _f(x, axis=0), A(4, 5, dtype=BF16),
            exact=_exact, slow=True)
# A sum over axes of one element is that element, -0.0 included (XLA drops
# the reduction; adding -0.0 to an initial +0.0 would give +0.0).
CASES.add("reduce_sum_one_element_signed_zeros",
          lambda x: (jnp.sum(x, axis=(0, 2)), jnp.sum(x[:, :2])),
          V(np.array([-0.0, -0.0, 0.0, 1.0], np.float32).reshape((1, 4, 1)), np.float32),
          exact=True)
CASES.add("reduce_and", lambda x: jnp.all(x, axis=1), A(3, 4, dtype=BOOL))
CASES.add("reduce_or", lambda x: jnp.any(x, axis=1), A(3, 4, dtype=BOOL))
CASES.add("reduce_xor", lambda x: lax.reduce_xor(x, (1,)), A(3, 4, dtype=U8, lo=0, hi=255))
CASES.add("reduce_max_uint32", lambda x: jnp.max(x), A(3, 4, dtype=U32, lo=0, hi=10**9),
          slow=True)
CASES.add("reduce_sum_all_float64", jnp.sum, A(10, 10, dtype=F64), tol=(1e-12, 1e-12),
          slow=True)
CASES.add("argmax_ties_int32", lambda x: jnp.argmax(x, axis=1),
          V(np.array([[1, 3, 3], [2, 2, 2]]), I32))
CASES.add("reduce_multi_operand", lambda x, y: lax.reduce(
    (x, y), (np.float32(-np.inf), np.int32(0)),
    lambda a, b: (lax.max(a[0], b[0]), lax.add(a[1], b[1])), (1,)),
          A(3, 5), A(3, 5, dtype=I32))
for _dt in (I8, I16, I32, U8, U16, U32, I64, U64):
  CASES.add(f"sum_{dtype_name(_dt)}", lambda x: jnp.sum(x, axis=1, dtype=x.dtype),
            A(3, 40, dtype=_dt, lo=-100 if np.dtype(_dt).kind == "i" else 0, hi=100),
            slow=True)
CASES.add("logsumexp_nan", jax.nn.logsumexp, A(5, specials=(np.nan,)))
CASES[:] = fast_representatives(CASES, ["reduce_max_bfloat16"])


# ---------------------------------------------------------------------------
# Fixed operands: every reduction on every dtype, at its corners.

def red(prim, axes, **params):
  return lambda x: prim.bind(x, axes=tuple(axes), **params)


def rsum(axes):
  return lambda x: lax.reduce_sum(x, axes)


def rmax(axes):
  return lambda x: lax.reduce_max(x, axes)


def rmin(axes):
  return lambda x: lax.reduce_min(x, axes)


def rprod(axes):
  return lambda x: lax.reduce_prod(x, axes)


def argmax(axis, index_dtype=np.int32):
  return lambda x: lax.argmax(x, axis, index_dtype)


def argmin(axis, index_dtype=np.int32):
  return lambda x: lax.argmin(x, axis, index_dtype)


def in_bf16(f):
  """`f` on a bfloat16 copy of its float32 argument (cast inside the function)."""
  return lambda x: f(x.astype(BF16))


def with_specials(shape, dtype=np.float32, seed=0):
  """Random values with NaNs, infinities, ties and signed zeros sprinkled in."""
  x = rand(shape, dtype, seed=seed).round().astype(dtype)
  flat = x.reshape(-1)
  rng = np.random.default_rng(seed + 7)
  for v in (np.nan, np.inf, -np.inf, 0.0, -0.0, -0.0):
    flat[rng.integers(0, flat.size)] = v
  return x


def signed_zeros(shape, seed=0, dtype=np.float32):
  rng = np.random.default_rng(seed)
  return np.where(rng.random(shape) < 0.5, -0.0, 0.0).astype(dtype)


_exact = exact_case


x34 = rand((3, 4, 5))
CASES += [
    case("sum_f32", rsum((0, 2)), x34, tol=(1e-5, 1e-6), graph_ops=["Sum"]),
    case("sum_all_f32", rsum((0, 1, 2)), x34, tol=(1e-5, 1e-6), slow=True),
    _exact("sum_f16_accumulates_wide", rsum((0,)), np.ones((4096,), F16)),
    # JAX's bfloat16 sums round after every step while the rule rounds once.
    case("sum_bf16", in_bf16(rsum((1,))), x34, tol=(2e-2, 2e-2)),
    case("sum_i8_wraps", rsum((1,)), rand((3, 40), I8, -128, 127)),
    case("sum_u8_wraps", rsum((1,)), rand((3, 40), U8, 0, 255), slow=True),
    case("sum_i16", rsum((0,)), rand((30, 4), I16, -30000, 30000), slow=True),
    case("sum_u16", rsum((0,)), rand((30, 4), U16, 0, 65535), slow=True),
    case("sum_i32_wraps", rsum((0,)), rand((30, 4), I32, -2**31, 2**31 - 1), slow=True),
    case("sum_u32_wraps", rsum((0,)), rand((30, 4), U32, 0, 2**32 - 1), slow=True),
    case("sum_c64", rsum((1,)), rand((3, 4), C64), tol=(1e-5, 1e-6), slow=True),
    case("prod_f32", rprod((1,)), x34, tol=(1e-5, 1e-6)),
    case("prod_i32_wraps", rprod((0,)), rand((12, 3), I32, -1000, 1000), slow=True),
    case("prod_u8", rprod((0,)), rand((5, 3), U8, 0, 255), slow=True),
    case("prod_c64", rprod((0,)), rand((3, 4), C64), tol=(1e-5, 1e-6), slow=True),
    _exact("max_f32", rmax((1,)), x34, graph_ops=["Max"]),
    _exact("max_nan_inf_f32", rmax((1,)), with_specials((4, 6))),
    _exact("min_nan_inf_f32", rmin((0,)), with_specials((4, 6), seed=1), slow=True),
    _exact("max_signed_zeros", rmax((1,)), signed_zeros((6, 5))),
    _exact("min_signed_zeros", rmin((1,)), signed_zeros((6, 5), seed=1)),
    _exact("max_f16", rmax((0,)), with_specials((5, 4), F16), slow=True),
    _exact("max_f16_signed_zeros", rmax((0,)), signed_zeros((5, 4), 3, F16)),
    _exact("min_bf16", in_bf16(rmin((0,))), with_specials((5, 4))),
    _exact("max_i8", rmax((0,)), rand((5, 4), I8, -128, 127), slow=True),
    _exact("min_u8", rmin((0,)), rand((5, 4), U8, 0, 255), slow=True),
    _exact("max_u32", rmax((0,)), rand((5, 4), U32, 0, 2**32 - 1), slow=True),
    _exact("min_i16", rmin((1,)), rand((5, 4), I16, -999, 999), slow=True),
    _exact("reduce_max_bool", rmax((1,)), rand((5, 4), BOOL)),
    _exact("reduce_min_bool", rmin((1,)), rand((5, 4), BOOL), slow=True),
    _exact("reduce_and_bool", red(lax.reduce_and_p, (1,)), rand((5, 4), BOOL)),
    # Folds of nothing are the identity: True, False, all bits set, 0.
    _exact("reduce_and_bool_empty", red(lax.reduce_and_p, (0,)), rand((0, 2), BOOL)),
    _exact("reduce_or_bool_empty", red(lax.reduce_or_p, (1,)), rand((2, 0), BOOL)),
    _exact("and_i32_empty", red(lax.reduce_and_p, (0,)), rand((0, 3), I32)),

    _exact("reduce_or_bool_axis0", red(lax.reduce_or_p, (0,)), rand((5, 4), BOOL), slow=True),
    _exact("reduce_xor_bool", red(lax.reduce_xor_p, (0, 1)), rand((5, 4), BOOL)),
    _exact("and_i32", red(lax.reduce_and_p, (1,)), rand((5, 4), I32, -2**31, 2**31 - 1),
           slow=True),
    _exact("or_u8", red(lax.reduce_or_p, (0,)), rand((5, 4), U8, 0, 255), slow=True),
    _exact("xor_i16", red(lax.reduce_xor_p, (0,)), rand((5, 4), I16, -2**15, 2**15 - 1),
           slow=True),
    _exact("argmax_f32", argmax(1), x34, graph_ops=["ArgMax"]),
    _exact("argmin_f32_i64_index", argmin(0, np.int32), x34, slow=True),
    _exact("argmax_ties_nan", argmax(1), with_specials((4, 8))),
    _exact("argmin_ties_nan", argmin(1), with_specials((4, 8), seed=2)),
    _exact("argmax_signed_zeros", argmax(1), signed_zeros((4, 8))),
    _exact("argmax_int_ties", argmax(0), rand((9, 5), I32, 0, 2)),
    # -x wraps at the integer's minimum, which TF's graph optimizer forgets
    # when it rewrites min(-x) as -max(x) and argmax(-x) as argmin(x).
    _exact("min_of_neg_i16_wraps", lambda x: lax.reduce_min(lax.neg(x), (0,)),
           np.array([[-2, 5], [-32768, 7]], I16)),
    _exact("argmax_of_neg_i32_wraps", lambda x: lax.argmax(lax.neg(x), 0, np.int32),
           np.array([[-2, 5], [-2**31, 7]], I32)),
    _exact("argmin_u8_ties", argmin(1), rand((5, 9), U8, 0, 2), slow=True),
    _exact("argmax_bool", argmax(1), rand((5, 9), BOOL), slow=True),
    _exact("argmax_f16", argmax(0), with_specials((6, 4), F16), slow=True),
    _exact("argmin_bf16", in_bf16(argmin(1)), with_specials((4, 6)), slow=True),
    _exact("argmax_i8_index_i16", argmax(1, np.int16), rand((4, 6), I8), slow=True),
    case("reduce_add_init", lambda x: lax.reduce(x, np.float32(2.5), lax.add, (1,)), x34,
         tol=(1e-5, 1e-6)),
    _exact("reduce_max_init", lambda x: lax.reduce(x, np.float32(0.5), lax.max, (0, 2)),
           with_specials((3, 4, 5))),
    case("reduce_mul_i32", lambda x: lax.reduce(x, np.int32(3), lax.mul, (0,)),
         rand((4, 3), I32), slow=True),
    case("reduce_or_bool", lambda x: lax.reduce(x, True, lax.bitwise_or, (0,)),
         rand((4, 3), BOOL), slow=True),
    _exact("reduce_variadic_argmax",
           lambda x, i: lax.reduce((x, i), (np.float32(-np.inf), np.int32(0)),
                                   lambda a, b: (lax.max(a[0], b[0]),
                                                 lax.max(a[1], b[1])), (1,)),
           x34, rand((3, 4, 5), I32, 0, 9, seed=1)),
    case("poly_sum_symbolic_axis", rsum((1,)), x34, polymorphic_shapes=["(3, b, 5)"],
         tol=(1e-5, 1e-6)),
    _exact("poly_max_symbolic_axis", rmax((0, 1)), with_specials((3, 4, 5)),
           polymorphic_shapes=["(a, b, 5)"]),
    _exact("poly_argmax_symbolic_axis", argmax(1), with_specials((3, 8)),
           polymorphic_shapes=["(a, b)"]),
    _exact("poly_xor_int", red(lax.reduce_xor_p, (1,)), rand((3, 7), I8, -128, 127),
           polymorphic_shapes=["(a, b)"], slow=True),
    # 64-bit dtypes
    case("sum_f64", rsum((0,)), rand((5, 4), F64), tol=(1e-12, 1e-6)),
    case("sum_i64_wraps", rsum((0,)), rand((5, 4), I64, -2**62, 2**62)),
    case("sum_u64", rsum((0,)), rand((5, 4), U64, 0, 2**63), slow=True),
    _exact("max_f64_nan", rmax((1,)), with_specials((4, 6), F64), slow=True),
    _exact("min_f64_signed_zeros", rmin((1,)), signed_zeros((6, 5), 2, F64)),
    _exact("argmax_i64_index", argmax(1, np.int64), with_specials((4, 6), F64)),
    _exact("xor_u64", red(lax.reduce_xor_p, (0,)), rand((5, 4), U64, 0, 2**63), slow=True),
    case("prod_c128", rprod((0,)), rand((3, 4), C128), tol=(1e-12, 1e-6), slow=True),
]

# ---------------------------------------------------------------------------
# lax.reduce with a body that is no monoid: without XLA a fold over the
# reduced elements, in the order XLA's CPU backend takes them. Bodies that
# are neither associative nor commutative show the order: from the init, one
# element at a time, row-major over the reduced axes; a single operand along
# an axis of over 32 elements as a tree of SAME-padded windows of 32, each
# folded from the init (XLA's tree-reduction rewriter), variadic ones straight.
def _ordered(a, b):
  return a * np.int32(3) + b


def _ordered_f32(a, b):
  return a * np.float32(0.5) + b


def _ordered_i8(a, b):
  return a * np.int8(3) + b


def _ordered_pair(a, b):
  return a[0] * np.int32(3) + b[0], a[1] * np.int32(5) - b[1] + a[0]


def _argmax_body(a, b):
  # The larger value, the smaller index among ties: associative and commutative.
  take = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
  return lax.select(take, b[0], a[0]), lax.select(take, b[1], a[1])


_SEVEN = np.int32(7)
_ONE_TWO = (np.int32(1), np.int32(2))


def rgeneric(axes, body=_ordered, init=_SEVEN):
  return lambda x: lax.reduce(x, init, body, axes)


def rpair(axes, body=_ordered_pair, inits=_ONE_TWO):
  return lambda x, y: lax.reduce((x, y), inits, body, axes)


def _ints(shape, seed=0, dtype=I32):
  return rand(shape, dtype, -9, 9, seed=seed)


CASES += [
    _exact("reduce_generic_ordered", rgeneric((1,)), _ints((4, 7))),
    _exact("reduce_generic_two_axes", rgeneric((0, 2)), _ints((3, 4, 5))),
    _exact("reduce_generic_all_axes", rgeneric((0, 1)), _ints((5, 6)), slow=True),
    _exact("reduce_generic_tree", rgeneric((1,)), _ints((3, 100))),
    _exact("reduce_generic_tree_two_axes", rgeneric((0, 2)), _ints((40, 3, 50)), slow=True),
    # Two levels of windows: 1100 -> 35 -> 2 (a window of 32 and one of 3).
    _exact("reduce_generic_tree_deep", rgeneric((0,)), _ints((1100, 2)), slow=True),
    case("reduce_generic_f32", rgeneric((1,), _ordered_f32, np.float32(7)),
         rand((3, 70), np.float32, -9, 9), tol=(1e-5, 1e-5)),
    _exact("reduce_generic_i8_wraps", rgeneric((1,), _ordered_i8, np.int8(1)),
           _ints((3, 6), dtype=I8)),
    _exact("reduce_generic_empty", rgeneric((0,)), _ints((0, 3))),
    # Along axes of length 1 XLA applies neither the init nor the body.
    _exact("reduce_generic_of_one_element", rgeneric((1, 2)), _ints((3, 1, 1))),
    _exact("reduce_pair_of_one_element", rpair((0,)), _ints((1, 4)), _ints((1, 4), seed=1)),
    _exact("reduce_add_other_init_of_one_element",
           lambda x: lax.reduce(x, np.float32(2.5), lax.add, (0, 2)),
           np.array([-0.0, 0.0, -1.5, 2.0], np.float32).reshape((1, 4, 1))),
    _exact("reduce_pair_ordered", rpair((0, 2)), _ints((3, 4, 5)), _ints((3, 4, 5), seed=1)),
    _exact("reduce_pair_long", rpair((1,)), _ints((2, 100)), _ints((2, 100), seed=1),
           slow=True),
    _exact("reduce_argmax_body", rpair((1,), _argmax_body, (np.float32(-np.inf), np.int32(0))),
           with_specials((4, 9)), _ints((4, 9), seed=2)),
    _exact("poly_reduce_pair", rpair((0,)), _ints((6, 5)), _ints((6, 5), seed=1),
           polymorphic_shapes=["(b, 5)", "(b, 5)"]),
    _exact("poly_reduce_generic_kept_axis", rgeneric((1,)), _ints((6, 5)),
           polymorphic_shapes=["(b, 5)"]),
    # One operand along a symbolic axis: whether XLA folds it as a tree is
    # only known at run time.
    _exact("poly_reduce_generic_reduced_axis", rgeneric((0,)), _ints((6, 5)),
           polymorphic_shapes=["(b, 5)"],
           refuse=refused("reduce", "XLA folds one operand along an axis of over 32 elements "
                          "as a tree of windows whose depth and padding follow the axis's "
                          "run-time length: ordinary TF ops would need a loop whose tensors "
                          "change shape at every level, which jit_compile cannot compile",
                          "graph_no_xla")),
]

# ---------------------------------------------------------------------------
# Signed zeros in lax.reduce with a max/min body and an init that is not the
# identity: the init is combined with the reduced value once, in XLA's order
# of zeros (-0.0 < +0.0) and with NaN propagating.
_ZEROS_6x2 = np.array([[-0.0, 0.0], [-0.0, -0.0], [0.0, 0.0], [np.nan, -0.0], [0.0, -1.0],
                       [-0.0, 1.0]], np.float32)
CASES += [
    _exact("zeros_reduce_max_init_pos_zero",
           lambda x: lax.reduce(x, np.float32(0.0), lax.max, (1,)), _ZEROS_6x2),
    _exact("zeros_reduce_min_init_neg_zero",
           lambda x: lax.reduce(x, np.float32(-0.0), lax.min, (1,)), _ZEROS_6x2),
    _exact("zeros_reduce_max_init_nan",
           lambda x: lax.reduce(x, np.float32(np.nan), lax.max, (0,)), _ZEROS_6x2),
    _exact("zeros_reduce_min_init_neg_zero_axis0",
           lambda x: lax.reduce(x, np.float32(-0.0), lax.min, (0,)), _ZEROS_6x2),
]

# ---------------------------------------------------------------------------
# Complex max/min: XLA compares (real, imag) lexicographically and selects,
# so NaN does not propagate and the fold's order decides (see
# semantics.reduce_complex_extremum). Rows of up to 32 elements, folded in
# order by XLA on CPU.
def complex_specials(shape, dtype=C64, seed=0):
  """Complex values with NaN in either part, ties on the real part, signed
  zeros and infinities."""
  rng = np.random.default_rng(seed)
  parts = np.array([np.nan, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf])
  weights = [0.08, 0.2, 0.2, 0.2, 0.2, 0.06, 0.06]
  re, im = (rng.choice(parts, size=shape, p=weights) for _ in range(2))
  return _complex_of(re, im, dtype)


def _complex_of(re, im, dtype):
  # re + 1j * im would turn inf * 1j into nan + inf j.
  x = np.zeros(re.shape, dtype)
  x.real, x.imag = re, im
  return x


# Each row of _CX_ROWS picks out one rule of the fold (max over axis 1).
_CX_ROWS = _complex_of(
    np.array([[1, np.nan, 2], [1, 2, np.nan], [2, 2, 2], [1, 1, 1], [-0.0, 0.0, -0.0],
              [-np.inf, -np.inf, -np.inf], [np.inf, np.inf, np.inf]]),
    np.array([[5, 0, 0], [0, 0, 7], [1, np.nan, 0], [3, 3, np.nan], [1, 1, 1],
              [-1, -2, -1], [1, 2, 1]]), C64)
CASES += [
    _exact("max_c64_rows", rmax((1,)), _CX_ROWS),
    _exact("min_c64_rows", rmin((1,)), _CX_ROWS),
    _exact("max_c64_specials", rmax((0,)), complex_specials((20, 6))),
    _exact("min_c64_specials_axes", rmin((0, 2)), complex_specials((4, 3, 5), seed=1)),
    _exact("max_c128_specials_all", rmax((0, 1)), complex_specials((4, 8), C128, seed=2),
           slow=True),
    _exact("min_c128_specials", rmin((1,)), complex_specials((6, 5), C128, seed=3), slow=True),
    _exact("max_c64_one_element", rmax((1,)), _complex_of(
        np.array([[-np.inf], [np.nan], [2.0]]), np.array([[-1.0], [1.0], [np.nan]]), C64)),
    _exact("max_c64_empty", rmax((1,)), np.zeros((3, 0), C64)),
    _exact("max_f32_empty", rmax((0, 1)), np.zeros((0, 1, 2), np.float32)),
    _exact("min_i32_empty", rmin((1,)), np.zeros((3, 0), I32)),
    # The narrow type's extreme as the identity (TFLite computes 8- and
    # 16-bit integers in int32, where -128 would be INT32_MIN).
    _exact("max_i8_empty", rmax((1,)), np.zeros((3, 0), I8)),
    _exact("min_i16_empty", rmin((0,)), np.zeros((0, 2), I16)),
    # The 16-bit float identities, +-inf, which TF's TFLite converter folds
    # into constants of the narrow type's largest finite value.
    _exact("max_bf16_of_empty_slice", lambda x: lax.reduce_max(x[:, :0], (1,)),
           rand((3, 2), BF16)),
    _exact("min_f16_of_empty_slice", lambda x: lax.reduce_min(x[:0], (0,)),
           rand((2, 3), F16)),
    _exact("reduce_min_c64_init",
           lambda x: lax.reduce(x, np.complex64(1 - 1j), lax.min, (1,)),
           complex_specials((5, 4), seed=4)),
    _exact("poly_max_c64", rmax((1,)), complex_specials((3, 7), seed=5),
           polymorphic_shapes=["(a, b)"]),
]

# uint32 reduced by order, over axes empty or not (the identities 0 and
# 2**32 - 1 are the keys' INT32_MIN and INT32_MAX).
CASES += [
    _exact("u32_order_reductions", lambda x: (
        lax.reduce_max(x, (1,)), lax.reduce_min(x, (0,)), lax.reduce_max(x[:, :0], (1,)),
        lax.reduce_min(x[:0], (0,)), jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)),
        u32_order_rows()),
    # A uint32 index is no key (argmax stays off the keys).
    _exact("argmax_u32_index", lambda x: lax.argmax(x, 1, np.uint32), rand((3, 4))),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/reductions.json.
CASES[:] = recorded.apply(CASES, "tflite", "reductions")
CASES[:] = recorded.apply(CASES, "tflite_native", "reductions")
CASES[:] = recorded.apply(CASES, "tflite_litert", "reductions")
CASES[:] = recorded.apply(CASES, "tfjs", "reductions")
