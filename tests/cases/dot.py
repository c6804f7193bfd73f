"""Cases of the dot family (dot.py): dot_general and ragged_dot, on every dtype."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import (
  BF16,
  BOOL,
  C64,
  F16,
  F64,
  I8,
  I32,
  A,
  Cases,
  V,
  case,
  fast_representatives,
  gaps,
  rand,
)

CASES = Cases()

# ---------------------------------------------------------------------------
# Random operands.
CASES.add("dot_matmul", lambda a, b: a @ b, A(3, 4), A(4, 5))
CASES.add("dot_general_batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
          A(2, 3, 4), A(2, 4, 5))
CASES.add("dot_general_batch_contract_multi",
          lambda a, b: lax.dot_general(a, b, (((1, 3), (3, 2)), ((0,), (1,)))),
          A(2, 3, 4, 5), A(6, 2, 5, 3), tol=(1e-5, 1e-5))
CASES.add("dot_general_preferred_f32", lambda a, b: lax.dot_general(
    a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.float32),
          A(3, 4, dtype=BF16), A(4, 5, dtype=BF16), tol=(1e-2, 1e-2))
CASES.add("dot_general_int8_preferred_int32", lambda a, b: lax.dot_general(
    a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.int32),
          A(3, 4, dtype=I8, lo=-100, hi=100), A(4, 5, dtype=I8, lo=-100, hi=100))
CASES.add("dot_int32", lambda a, b: a @ b, A(3, 4, dtype=I32, lo=-50, hi=50),
          A(4, 5, dtype=I32, lo=-50, hi=50))
# Products and sums past 2**53 wrap modulo 2**32 in JAX: lost low bits would show.
_BIG = [-2**31, -2**31 + 1, 2**31 - 1, 46341, -65537, 3]
CASES.add("dot_int32_wrapping", lambda a, b: a @ b, V(np.array([_BIG, _BIG[::-1]]), I32),
          V(np.array([_BIG, _BIG[1:] + _BIG[:1]]).T, I32), exact=True)
CASES.add("dot_int32_outer_wrapping", lambda a, b: lax.dot_general(a, b, (((), ()), ((), ()))),
          V(np.array(_BIG), I32), V(np.array(_BIG[:3]), I32), exact=True)
CASES.add("dot_float16", lambda a, b: a @ b, A(3, 4, dtype=F16), A(4, 5, dtype=F16), slow=True)
CASES.add("dot_float64", lambda a, b: a @ b, A(3, 4, dtype=F64), A(4, 5, dtype=F64), slow=True)
CASES.add("dot_complex64", lambda a, b: a @ b, A(3, 4, dtype=C64), A(4, 5, dtype=C64),
          slow=True)
CASES.add("einsum", lambda a, b: jnp.einsum("bij,jk->bki", a, b), A(2, 3, 4), A(4, 5))
# Rows 0-1 use rhs[0], rows 2-5 rhs[1].
CASES.add("ragged_dot", lax.ragged_dot, A(6, 3), A(2, 3, 4), V(np.array([2, 4]), I32))
# Group sizes summing to fewer than the rows (an empty group too) leave the
# remaining rows zero.
CASES.add("ragged_dot_short_groups", lax.ragged_dot, A(6, 3), A(3, 3, 4),
          V(np.array([1, 0, 3]), I32), slow=True)
CASES.add("dot_product_attention", lambda q, k, v: jax.nn.dot_product_attention(q, k, v),
          A(1, 5, 2, 8), A(1, 5, 2, 8), A(1, 5, 2, 8), tol=(1e-5, 1e-5), slow=True)
# Block scales: each scale element multiplies a block of 4 (lhs) or 2 (rhs)
# contracting elements, products in bfloat16.
_EXCESS_PRECISION = gaps(
    "TF's XLA compilation (jit_compile) may skip the rounding of float32 operands to "
    "bfloat16 (XLA's xla_allow_excess_precision, on by default); with the flag off it "
    "matches", ["graph", "graph_no_xla"], ["compiled"], tol=(5e-2, 1e-1))
CASES.add("scaled_dot", lambda a, b, sa, sb: lax.scaled_dot(
    a, b, lhs_scale=sa, rhs_scale=sb, preferred_element_type=np.float32),
          A(3, 8), A(8, 5), A(3, 2), A(4, 5), tol=(1e-2, 1e-2), gaps=_EXCESS_PRECISION)
CASES.add("scaled_dot_batch_bf16", lambda a, b, sa, sb: lax.scaled_dot(
    a, b, lhs_scale=sa, rhs_scale=sb),
          A(2, 3, 8, dtype=BF16), A(2, 8, 4, dtype=BF16), A(2, 3, 4, dtype=BF16),
          A(2, 4, 4, dtype=BF16), tol=(2e-2, 2e-2))
# Empty operands: sums of no products are 0. TF's graph optimizer divided by
# zero (and the process died) on the matmuls of this gradient.
CASES.add("dot_empty_contraction_grad", jax.grad(
    lambda a, b: jnp.sum(lax.dot_general(a, b, (((0,), (0,)), ((), ())))), argnums=(0, 1)),
          A(0), A(0, 3))
CASES.add("dot_empty_contraction", lambda a, b: a @ b, A(2, 0), A(0, 3))
CASES[:] = fast_representatives(CASES, ["dot_float16"])


# ---------------------------------------------------------------------------
# Fixed operands: every layout dot_general takes, and every dtype.

def in_bf16(f):
  """`f` on bfloat16 copies of its float32 arguments (cast inside the function)."""
  return lambda *args: f(*[a.astype(BF16) for a in args])


def dot(dims, preferred=None):
  return lambda a, b: lax.dot_general(a, b, dims, preferred_element_type=preferred)


MATMUL = (((1,), (0,)), ((), ()))
BMM = (((2,), (1,)), ((0,), (0,)))
F16_TOL = (1e-2, 1e-2)

CASES += [
    case("matmul_f32", dot(MATMUL), rand((3, 4)), rand((4, 5), seed=1), tol=(1e-5, 1e-6),
         graph_ops=["MatMul"]),
    case("matmul_transposed_f32", dot((((0,), (1,)), ((), ()))), rand((4, 3)),
         rand((5, 4), seed=1), tol=(1e-5, 1e-6), graph_ops=["MatMul"], slow=True),
    case("batch_matmul_f32", dot(BMM), rand((2, 3, 4)), rand((2, 4, 5), seed=1),
         tol=(1e-5, 1e-6), graph_ops=["BatchMatMulV2"]),
    case("matvec_f32", dot(MATMUL), rand((3, 4)), rand((4,), seed=1), tol=(1e-5, 1e-6)),
    case("vecvec_f32", dot((((0,), (0,)), ((), ()))), rand((4,)), rand((4,), seed=1),
         tol=(1e-5, 1e-6)),
    case("outer_f32", dot((((), ()), ((), ()))), rand((3,)), rand((4,), seed=1), slow=True),
    # Two free dimensions on one side and none on the other: the result has
    # the rank of a matrix product, not its shape.
    case("vec_contract_3d_f32", dot((((0,), (0,)), ((), ()))), rand((2, 3, 4)),
         rand((2,), seed=1), tol=(1e-5, 1e-6)),
    case("contract_3d_vec_f32", dot((((0,), (0,)), ((), ()))), rand((2,)),
         rand((2, 3, 4), seed=1), tol=(1e-5, 1e-6)),
    # No contraction, two free dimensions on one side: a matrix read as
    # [nothing, both merged] keeps its rank but not its shape (the
    # gradient of a dot contracting a vector with a 3-D operand).
    case("outer_matrix_vec_f32", dot((((), ()), ((), ()))), rand((2, 1)), rand((1,), seed=1)),
    case("multi_contract_f32", dot((((1, 3), (2, 0)), ((2,), (1,)))),
         rand((2, 3, 4, 5)), rand((5, 4, 3, 6), seed=1), tol=(1e-5, 1e-6),
         graph_ops=["Transpose", "BatchMatMulV2"]),
    case("batch_middle_f32", dot((((0,), (2,)), ((1,), (0,)))),
         rand((3, 2, 4)), rand((2, 5, 3), seed=1), tol=(1e-5, 1e-6), slow=True),
    case("matmul_f16", dot(MATMUL), rand((3, 4), F16), rand((4, 5), F16, seed=1), tol=F16_TOL),
    case("matmul_bf16", in_bf16(dot(MATMUL)), rand((3, 4)), rand((4, 5), seed=1),
         tol=(2e-2, 5e-2)),
    case("matmul_bf16_pref_f32", in_bf16(dot(MATMUL, np.float32)),
         rand((3, 4)), rand((4, 5), seed=1), tol=(1e-5, 1e-6), slow=True),
    case("matmul_i8_pref_i32", dot(MATMUL, np.int32),
         rand((3, 4), I8, -100, 100), rand((4, 5), I8, -100, 100, seed=1)),
    case("matmul_i8_wraps", dot(MATMUL),
         rand((3, 4), I8, -100, 100), rand((4, 5), I8, -100, 100, seed=1)),
    case("matmul_u8", dot(MATMUL), rand((3, 4), np.uint8, 0, 255),
         rand((4, 5), np.uint8, 0, 255, 1), slow=True),
    case("matmul_i16", dot(MATMUL), rand((3, 4), np.int16, -999, 999),
         rand((4, 5), np.int16, -999, 999, 1), slow=True),
    case("matmul_u16", dot(MATMUL), rand((3, 4), np.uint16, 0, 9999),
         rand((4, 5), np.uint16, 0, 9999, 1), slow=True),
    case("matmul_i32", dot(MATMUL), rand((3, 4), I32, -10**6, 10**6),
         rand((4, 5), I32, -10**6, 10**6, 1), slow=True),
    case("matmul_u32", dot(BMM), rand((2, 3, 4), np.uint32, 0, 2**31),
         rand((2, 4, 5), np.uint32, 0, 2**31, 1)),
    case("matmul_bool", dot(MATMUL), rand((3, 4), BOOL), rand((4, 5), BOOL, seed=1)),
    case("matmul_c64", dot(MATMUL), rand((3, 4), C64), rand((4, 5), C64, seed=1),
         tol=(1e-5, 1e-5)),
    case("poly_matmul_bk", dot(MATMUL), rand((3, 4)), rand((4, 5), seed=1), tol=(1e-5, 1e-6),
         polymorphic_shapes=["(b, k)", "(k, 5)"], graph_ops=["MatMul"]),
    case("poly_batch_matmul", dot(BMM), rand((2, 3, 4)), rand((2, 4, 5), seed=1),
         tol=(1e-5, 1e-6), polymorphic_shapes=["(b, n, k)", "(b, k, m)"]),
    case("poly_einsum", dot((((1, 3), (2, 0)), ((2,), (1,)))),
         rand((2, 3, 4, 5)), rand((5, 4, 3, 6), seed=1), tol=(1e-5, 1e-6),
         polymorphic_shapes=["(a, b, 4, 5)", "(5, 4, b, 6)"]),
    # 64-bit dtypes
    case("matmul_f64", dot(MATMUL), rand((3, 4), F64), rand((4, 5), F64, seed=1),
         tol=(1e-12, 1e-6)),
    case("matmul_i64", dot(MATMUL), rand((3, 4), np.int64, -10**9, 10**9),
         rand((4, 5), np.int64, -10**9, 10**9, seed=1)),
    case("matmul_u64", dot(MATMUL), rand((3, 4), np.uint64, 0, 2**40),
         rand((4, 5), np.uint64, 0, 2**40, seed=1), slow=True),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/dot.json.
CASES[:] = recorded.apply(CASES, "tflite", "dot")
CASES[:] = recorded.apply(CASES, "tflite_native", "dot")
CASES[:] = recorded.apply(CASES, "tflite_litert", "dot")
CASES[:] = recorded.apply(CASES, "tfjs", "dot")
