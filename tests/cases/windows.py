"""Cases of the windows family (windows.py): pooling, select_and_*_add, cumulative ops.

Windowed maxima and minima, and the selections of their gradients, are exact;
sums and products get a tolerance.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import (
  BF16,
  BOOL,
  F16,
  F32,
  F64,
  I8,
  I16,
  I32,
  I64,
  U8,
  U32,
  U64,
  A,
  Cases,
  V,
  case,
  exact_case,
  rand,
  u32_order_rows,
)

CASES = Cases()

# ---------------------------------------------------------------------------
# Random operands.
CASES += [
    case("reduce_window_sum", lambda x: lax.reduce_window(
        x, np.float32(0), lax.add, (2, 3), (1, 2), "VALID"), A(6, 7), tol=(1e-5, 1e-5)),
    case("reduce_window_max_padded_dilated", lambda x: lax.reduce_window(
        x, -np.inf, lax.max, (2, 2), (1, 1), ((1, 0), (0, 2)), window_dilation=(1, 2)),
         A(5, 6), exact=True),
    case("reduce_window_min_int32", lambda x: lax.reduce_window(
        x, np.int32(2**31 - 1), lax.min, (3,), (2,), "SAME"), A(9, dtype=I32, lo=-50, hi=50)),
    case("reduce_window_generic", lambda x: lax.reduce_window(
        x, np.float32(1), lambda a, b: a * b + 0.5, (2,), (1,), "VALID"), A(6, lo=0.5, hi=1.5),
         tol=(1e-5, 1e-5)),
    case("max_pool", lambda x: lax.reduce_window(
        x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), A(2, 8, 8, 3), exact=True),
    case("avg_pool", lambda x: lax.reduce_window(
        x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0, A(2, 8, 8, 3),
         tol=(1e-5, 1e-6)),
    case("max_pool_nan", lambda x: lax.reduce_window(x, -np.inf, lax.max, (2,), (2,), "VALID"),
         A(8, specials=(1.0, np.nan, np.nan, 0.0)), exact=True),
    # The max-pool gradient is select_and_scatter_add.
    case("max_pool_grad", jax.grad(lambda x: jnp.sum(lax.reduce_window(
        x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") ** 2)), A(2, 6, 6, 3)),
]
for _n, _f in [("cumsum", lax.cumsum), ("cumprod", lax.cumprod), ("cummax", lax.cummax),
               ("cummin", lax.cummin), ("cumlogsumexp", lax.cumlogsumexp)]:
  _exact = _n in ("cummax", "cummin")
  _tol = None if _exact else (1e-5, 1e-5)
  CASES.add(_n, lambda x, _f=_f: _f(x, axis=1), A(3, 9, lo=-1.5, hi=1.5), tol=_tol,
            exact=_exact)
  CASES.add(f"{_n}_reverse", lambda x, _f=_f: _f(x, axis=0, reverse=True),
            A(9, 2, lo=-1.5, hi=1.5), tol=_tol, exact=_exact, slow=True)
  if _n != "cumlogsumexp":
    CASES.add(f"{_n}_int32", lambda x, _f=_f: _f(x, axis=0), A(10, dtype=I32, lo=-5, hi=5),
              slow=_n != "cumsum")
CASES.add("cumsum_long", lambda x: jnp.cumsum(x), A(300, lo=0, hi=1), tol=(1e-5, 1e-5),
          slow=True)
CASES.add("cumsum_float16", lambda x: jnp.cumsum(x), A(12, dtype=F16, lo=0, hi=1),
          tol=(1e-2, 1e-2), slow=True)


# ---------------------------------------------------------------------------
# Fixed operands: every window parameter, dtype and NaN placement.

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


def rw(init, op, window, strides=None, padding="VALID", base=None, wdil=None):
  strides = strides or (1,) * len(window)
  return lambda x: lax.reduce_window(x, init(x.dtype) if callable(init) else init, op, window,
                                     strides, padding, base, wdil)


_exact = exact_case


# NumPy inits (not jnp) let JAX recognise the monoid and emit reduce_window_{max,min,sum}.
def NEG_INF(dt):
  return np.array(-np.inf if jnp.issubdtype(dt, jnp.floating) else jnp.iinfo(dt).min, dt)


def POS_INF(dt):
  return np.array(np.inf if jnp.issubdtype(dt, jnp.floating) else jnp.iinfo(dt).max, dt)


def ZERO(dt):
  return np.array(0, dt)


def GENERIC_ZERO(dt):
  return jnp.array(0, dt)    # a traced init: the generic reduce_window


def GENERIC_NEG_INF(dt):
  return jnp.array(-jnp.inf, dt)


img = rand((2, 7, 8, 3))
CASES += [
    _exact("maxpool_valid", rw(NEG_INF, lax.max, (1, 2, 2, 1), (1, 2, 2, 1)), img,
           graph_ops=["MaxPool"]),
    _exact("maxpool_same", rw(NEG_INF, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), img,
           graph_ops=["MaxPool"]),
    _exact("maxpool_nan", rw(NEG_INF, lax.max, (1, 2, 2, 1), (1, 1, 1, 1), "SAME"),
           with_specials((2, 5, 5, 2)), slow=True),
    case("sumpool_same", rw(ZERO, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), img,
         tol=(1e-5, 1e-5), graph_ops=["AvgPool"]),
    _exact("minpool_nchw", rw(POS_INF, lax.min, (1, 1, 3, 2), (1, 1, 2, 1),
                              ((0, 0), (0, 0), (1, 1), (0, 1))),
           with_specials((2, 3, 6, 5)), slow=True),
    _exact("max_window_dilation", rw(NEG_INF, lax.max, (2, 2), (1, 2), "VALID", None, (2, 3)),
           rand((9, 10)), slow=True),
    _exact("max_base_dilation", rw(NEG_INF, lax.max, (2, 3), (1, 2), ((1, 0), (2, 1)), (2, 2)),
           rand((5, 6))),
    case("sum_base_window_dilation_i32",
         rw(ZERO, lax.add, (3, 2), (2, 1), ((1, 2), (0, 1)), (2, 1), (1, 2)),
         rand((5, 6), I32, -100, 100)),
    case("window_sum_i8_wraps", rw(ZERO, lax.add, (4,), (1,)), rand((20,), I8, -128, 127),
         slow=True),
    _exact("window_max_u8", rw(NEG_INF, lax.max, (3, 3), (2, 1), "SAME"),
           rand((6, 7), U8, 0, 255), slow=True),
    # Windows of padding only: the narrow type's lowest value.
    _exact("window_max_i8_padding_only", rw(NEG_INF, lax.max, (3,), (1,), ((3, 0),)),
           rand((5,), I8, -128, 127)),
    _exact("window_max_f16", rw(NEG_INF, lax.max, (2, 2), (1, 1), "SAME"),
           with_specials((4, 5), F16), slow=True),
    case("window_sum_bf16", in_bf16(rw(ZERO, lax.add, (2, 2), (1, 1))), rand((4, 5)),
         tol=(2e-2, 2e-2), slow=True),
    _exact("window_max_bool", rw(False, lax.max, (2,), (1,), "SAME"), rand((7,), BOOL),
           slow=True),
    _exact("generic_max_is_maxpool",
           rw(GENERIC_NEG_INF, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME"), img,
           graph_ops=["MaxPool"]),
    case("generic_sum_i32", rw(GENERIC_ZERO, lax.add, (2, 2), (1, 2), "SAME"),
         rand((4, 5), I32), slow=True),
    case("reduce_window_mul_init1",
         rw(lambda dt: jnp.array(1, dt), lax.mul, (2, 2), (1, 2), "SAME"), rand((4, 5)),
         tol=(1e-5, 1e-6), slow=True),
    case("reduce_window_add_init",
         rw(lambda dt: jnp.array(1.5, dt), lax.add, (2, 2), (1, 1), ((1, 0), (0, 1))),
         rand((4, 5)), tol=(1e-5, 1e-6), slow=True),
    case("reduce_window_custom_body", rw(ZERO, lambda a, b: a + 2 * b, (2,), (1,)), rand((6,)),
         tol=(1e-5, 1e-6)),
    _exact("poly_maxpool_batch", rw(NEG_INF, lax.max, (1, 2, 2, 1), (1, 2, 2, 1)), img,
           polymorphic_shapes=["(b, 7, 8, 3)"], graph_ops=["MaxPool"]),
    _exact("poly_pool_spatial_same", rw(NEG_INF, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
           rand((2, 7, 7, 3)), polymorphic_shapes=["(_, b, b, _)"]),
    case("poly_sum_window_spatial", rw(ZERO, lax.add, (1, 2, 2, 1), (1, 1, 2, 1), "SAME"),
         rand((2, 6, 6, 3)), polymorphic_shapes=["(_, b, b, _)"], tol=(1e-5, 1e-5), slow=True),
    _exact("maxpool_f64", rw(NEG_INF, lax.max, (2, 2), (1, 1), "SAME"),
           with_specials((4, 5), F64)),
]

# ---------------------------------------------------------------------------
# reduce_window with a body that is no monoid, or a monoid's init that is not
# its identity: XLA's CPU backend starts each window from the init and folds
# its elements in one at a time, skipping padding and base-dilation holes
# (measured against jax.jit), in row-major order of the window positions
# (a body that is neither associative nor commutative shows it) except in
# windows of several axes padded along a later one without base dilation,
# where its loop emitter picks another order: those cases count the elements
# folded in with a body that is associative and commutative but no monoid.
# Windows of more than 16 positions go through a loop.
def _ordered(a, b):
  return a * np.int32(3) + b


def _counted(a, b):
  return a + b + np.int32(1)


def _ordered_i8(a, b):
  return a * np.int8(3) + b


def _argmax_body(a, b):
  take = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
  return lax.select(take, b[0], a[0]), lax.select(take, b[1], a[1])


def INT7(dt):
  return jnp.array(7, dt)


def _ints(shape, seed=0, dtype=I32):
  return rand(shape, dtype, -9, 9, seed=seed)


def argmax_pool(window, strides, padding):
  return lambda x, i: lax.reduce_window(
    (x, i), (-jnp.inf, jnp.array(-1, np.int32)), _argmax_body, window, strides, padding)


CASES += [
    _exact("window_fold_ordered", rw(INT7, _ordered, (3,), (2,), ((2, 1),)), _ints((9,))),
    _exact("window_fold_dilations", rw(INT7, _ordered, (2, 3), (1, 2), ((1, 0), (2, 1)), (2, 2),
                                       (1, 2)), _ints((5, 6))),
    _exact("window_fold_cropped", rw(INT7, _ordered, (4,), (1,), ((-1, 2),)), _ints((7,)),
           slow=True),
    _exact("window_fold_nhwc", rw(INT7, _counted, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
           _ints((2, 7, 8, 3)), slow=True),
    # 20 and 25 positions: the loop, strided and padded.
    _exact("window_fold_loop", rw(INT7, _ordered, (20,), (3,), ((5, 5),)), _ints((60,))),
    _exact("window_fold_loop_padded_2d", rw(INT7, _ordered, (5, 5), (2, 1), ((2, 2), (0, 3)),
                                            (1, 2)), _ints((6, 7)), slow=True),
    _exact("window_fold_i8_wraps", rw(lambda dt: jnp.array(1, dt), _ordered_i8, (2, 2), (1, 1)),
           _ints((4, 5), dtype=I8)),
    _exact("window_fold_empty_windows", rw(INT7, _ordered, (2,), (1,), ((3, 0),)), _ints((2,)),
           slow=True),
    _exact("poly_window_fold", rw(INT7, _counted, (2, 2), (1, 1), "SAME"), _ints((6, 5)),
           polymorphic_shapes=["(b, 5)"]),
    # Several operands (no XlaReduceWindow takes them): argmax pooling.
    _exact("window_fold_argmax_pool", argmax_pool((2, 2), (2, 2), ((0, 1), (1, 0))),
           with_specials((5, 6)), _ints((5, 6), seed=1)),
    # A monoid's init that is not its identity enters each window once.
    _exact("reduce_window_max_init_zero", rw(lambda dt: jnp.array(0.0, dt), lax.max, (2, 2),
                                             (1, 1), "SAME"), with_specials((5, 6))),
    _exact("reduce_window_add_init_i32", rw(INT7, lax.add, (3,), (2,), ((2, 2),), (2,)),
           _ints((7,))),
    _exact("reduce_window_mul_init_i32", rw(lambda dt: jnp.array(-2, dt), lax.mul, (2, 2),
                                            (1, 2), ((1, 0), (0, 1))), _ints((4, 5)),
           slow=True),
    _exact("reduce_window_min_init_u8", rw(lambda dt: jnp.array(100, dt), lax.min, (3,), (1,)),
           rand((9,), U8, 0, 255), slow=True),
    _exact("reduce_window_or_init_bool", rw(lambda dt: jnp.array(True, dt), lax.bitwise_or,
                                            (2,), (1,), "SAME"), rand((7,), BOOL), slow=True),
]



def maxpool_grad(window, strides, padding):
  def f(x, ct):
    return jax.vjp(lambda y: lax.reduce_window(y, -jnp.inf, lax.max, window, strides, padding),
                   x)[1](ct)[0]
  return f


def minpool_grad(window, strides, padding):
  def f(x, ct):
    return jax.vjp(lambda y: lax.reduce_window(y, jnp.inf, lax.min, window, strides, padding),
                   x)[1](ct)[0]
  return f


def maxpool_jvp(window, strides, padding):
  def f(x, t):
    return jax.jvp(lambda y: lax.reduce_window(y, -jnp.inf, lax.max, window, strides, padding),
                   (x,), (t,))[1]
  return f


def ties(shape, seed=0):
  return rand(shape, np.float32, -2, 2, seed=seed).round()


CASES += [
    case("select_scatter_maxpool_grad", maxpool_grad((1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
         ties((2, 6, 6, 2)), rand((2, 3, 3, 2), seed=1), tol=(1e-5, 1e-6)),
    case("select_scatter_overlapping_same", maxpool_grad((1, 3, 3, 1), (1, 2, 1, 1), "SAME"),
         ties((2, 5, 6, 2)), rand((2, 3, 6, 2), seed=1), tol=(1e-5, 1e-5)),
    case("select_scatter_min_grad", minpool_grad((3, 2), (1, 2), ((1, 1), (0, 1))),
         ties((5, 6)), rand((5, 3), seed=1), tol=(1e-5, 1e-5), slow=True),
    # Among equal maxima XLA's choice of tangent depends on its evaluation
    # order (not always the first); the rule takes the first, so no ties here.
    _exact("select_gather_maxpool_jvp", maxpool_jvp((1, 2, 2, 1), (1, 1, 1, 1), "SAME"),
           rand((2, 5, 5, 2)), rand((2, 5, 5, 2), seed=1)),
    _exact("select_gather_strided_dilated", maxpool_jvp((2, 3), (2, 1), ((1, 0), (1, 1))),
           rand((7, 6)), rand((7, 6), seed=1), slow=True),
    _exact("select_scatter_bool", lambda s, o: lax.select_and_scatter_add_p.bind(
        s, o, select_prim=lax.ge_p, window_dimensions=(1, 2), window_strides=(1, 2),
        padding=((0, 0), (1, 1))), rand((2, 3), BOOL, seed=1), rand((2, 4), BOOL)),
    case("poly_select_scatter", maxpool_grad((1, 2, 2, 1), (1, 2, 2, 1), "SAME"),
         ties((2, 8, 8, 2)), rand((2, 4, 4, 2), seed=1),
         polymorphic_shapes=["(b, 2*h, 2*h, 2)", "(b, h, h, 2)"], tol=(1e-5, 1e-6)),
]


def _scalar_jaxpr(fn, dtype):
  scalar = jax.ShapeDtypeStruct((), dtype)
  return jax.make_jaxpr(fn)(scalar, scalar).jaxpr


def select_and_scatter(select, scatter, window, strides, dtype=np.float32):
  """lax.select_and_scatter_p with select and scatter computations, as XLA's
  SelectAndScatter: the result starts at `init`, each window's source value is
  scattered at the position the select picks."""
  def f(operand, source, init):
    return lax.select_and_scatter_p.bind(
        operand, source, init, select_jaxpr=_scalar_jaxpr(select, dtype), select_consts=(),
        scatter_jaxpr=_scalar_jaxpr(scatter, dtype), scatter_consts=(),
        window_dimensions=window, window_strides=strides, padding=((0, 0),) * len(window))
  return f


CASES += [
    case("select_and_scatter_ge_add", select_and_scatter(lax.ge, lax.add, (2, 2), (2, 2)),
         ties((4, 6)), rand((2, 3), seed=1), V(0.5, F32), tol=(1e-5, 1e-6)),
    case("select_and_scatter_le_overlapping",
         select_and_scatter(lax.le, lax.add, (3, 2), (1, 1)),
         ties((5, 4), seed=2), rand((3, 3), seed=1), V(-1.0, F32), tol=(1e-5, 1e-5)),
    _exact("select_and_scatter_bool_or",
           select_and_scatter(lax.ge, lax.bitwise_or, (1, 2), (1, 2), np.bool_),
           rand((2, 4), BOOL), rand((2, 2), BOOL, seed=1), V(False, BOOL)),
]


def cum(prim, axis=0, reverse=False):
  return lambda x: prim.bind(x, axis=axis, reverse=reverse)


# Without NaN: which operand a complex max keeps beside a NaN depends on the
# order XLA combines a window in.
_COMPLEX_TIES = np.array([1 + 2j, 1 + 3j, 0 + 9j, 1 + 1j, -2 - 1j, 2 - 1j, 2 - 2j, -0.0 + 0j],
                         np.complex64)


CASES += [
    case("cumsum_f32", cum(lax.cumsum_p, 1), rand((3, 9)), tol=(1e-5, 1e-5),
         graph_ops=["Cumsum"]),
    case("cumsum_reverse_5x3", cum(lax.cumsum_p, 0, True), rand((5, 3)), tol=(1e-5, 1e-5),
         slow=True),
    _exact("cumsum_f16_wide", cum(lax.cumsum_p), np.ones((4096,), F16)),
    # Along an axis of one element the sum is the element, -0.0 included.
    _exact("cumsum_negative_zero_alone", lambda x: (lax.cumsum(x, 1), lax.cumsum(x, 0, True)),
           V(np.array([[-0.0], [-0.0], [1.0]], np.float32), F32)),
    # From two elements on, a sum of -0.0s is +0.0 (TF.js's kept -0.0).
    _exact("cumsum_negative_zeros", lambda x: (lax.cumsum(x, 1), lax.cumsum(x, 1, True)),
           V(np.array([[-0.0, -0.0, 1.0], [2.0, -0.0, -0.0]], np.float32), F32)),
    case("cumsum_i8_wraps", cum(lax.cumsum_p), rand((40,), I8, -128, 127), slow=True),
    case("cumsum_u32", cum(lax.cumsum_p), rand((40,), U32, 0, 2**32 - 1)),
    case("cumprod_f32", cum(lax.cumprod_p, 1, True), rand((3, 6), low=0.5, high=1.5),
         tol=(1e-5, 1e-6), slow=True),
    case("cumprod_i16_wraps", cum(lax.cumprod_p), rand((12,), I16, -99, 99), slow=True),
    # XLA (jit_compile) has no complex Cumprod kernel: a scan of products.
    case("cumprod_c64", cum(lax.cumprod_p, 0), rand((9, 2), np.complex64, -1.2, 1.2),
         tol=(1e-5, 1e-5)),
    _exact("cumprod_i32_wraps", cum(lax.cumprod_p, 1, True),
           rand((2, 9), I32, -2**31, 2**31 - 1)),
    _exact("cummax_nan", cum(lax.cummax_p, 1), with_specials((3, 9))),
    _exact("cummin_reverse_nan", cum(lax.cummin_p, 0, True), with_specials((9, 3), seed=1)),
    _exact("cummax_i32", cum(lax.cummax_p, 0), rand((17,), I32, -2**31, 2**31 - 1), slow=True),
    _exact("cummin_u8", cum(lax.cummin_p, 0, True), rand((17,), U8, 0, 255), slow=True),
    _exact("cummax_f16", cum(lax.cummax_p, 0), with_specials((9,), F16), slow=True),
    case("cumlogsumexp_3x7", cum(lax.cumlogsumexp_p, 1), rand((3, 7)), tol=(1e-5, 1e-6)),
    # A NaN makes the rest of the running sum NaN (TF's XLA dropped it).
    case("cumlogsumexp_nan", cum(lax.cumlogsumexp_p, 1),
         V(np.array([[1.0, np.nan, 2.0], [np.nan, -np.inf, np.inf], [-np.inf, np.inf, 0.5]],
                    np.float32), F32), tol=(1e-5, 1e-6)),
    # Two +inf: TF's kernel computed the second sum as inf - inf.
    case("cumlogsumexp_infinities", lambda x: (lax.cumlogsumexp(x, 1),
                                               lax.cumlogsumexp(x, 1, reverse=True)),
         V(np.array([[np.inf, np.inf, 1.0], [1.0, np.inf, np.inf], [-np.inf, np.inf, -np.inf]],
                    np.float32), F32), tol=(1e-5, 1e-6)),
    case("cumlogsumexp_reverse_f16", cum(lax.cumlogsumexp_p, 0, True), rand((7,), F16),
         tol=(1e-2, 1e-2), slow=True),
    case("cumsum_c64", cum(lax.cumsum_p), rand((6,), np.complex64), tol=(1e-5, 1e-5),
         slow=True),
    case("poly_cumsum", cum(lax.cumsum_p, 1), rand((3, 9)), polymorphic_shapes=["(a, b)"],
         tol=(1e-5, 1e-5)),
    _exact("poly_cummax", cum(lax.cummax_p, 0, True), with_specials((11, 2)),
           polymorphic_shapes=["(b, _)"]),
    # A running sum over a polymorphic axis that is 1 at run time keeps -0.0,
    # as over a static one.
    _exact("poly_cumsum_of_one_row", cum(lax.cumsum_p, 0, True),
           np.array([[-0.0, 0.0, -1.5]], F32), polymorphic_shapes=["(b, _)"]),
    # A running max over a polymorphic axis of an array with no elements
    # (LiteRT ended the process in the doubling loop's gather).
    _exact("poly_cummax_of_empty",
           lambda x: jnp.sum(lax.cummax(x[:, :0], 0, reverse=True), axis=1),
           rand((3, 2, 3), I32), polymorphic_shapes=["(b, 2, 3)"]),
    case("associative_cumsum_axis0", lambda x: jnp.cumsum(x, axis=0), rand((4, 3))),
    # Complex max/min compare (real, imag) lexicographically; ties in the real part.
    _exact("cummax_c64", cum(lax.cummax_p, 0), _COMPLEX_TIES),
    _exact("cummin_c64_reverse", cum(lax.cummin_p, 0, True), _COMPLEX_TIES, slow=True),
    _exact("window_max_c64", rw(lambda dt: np.array(-np.inf, dt), lax.max, (3,), (1,), "SAME"),
           _COMPLEX_TIES),
    _exact("window_min_c128", rw(lambda dt: np.array(np.inf, dt), lax.min, (2,), (2,)),
           _COMPLEX_TIES.astype(np.complex128), slow=True),
    # 64-bit dtypes
    _exact("cummax_i64", cum(lax.cummax_p, 0), rand((17,), I64, -2**62, 2**62)),
    case("cumsum_u64", cum(lax.cumsum_p, 0), rand((17,), U64, 0, 2**63), slow=True),
]

# ---------------------------------------------------------------------------
# Signed zeros: XLA orders -0.0 < +0.0 (max of the two is +0.0, min -0.0) and
# propagates NaN, where TF's Maximum/Minimum/MaxPool return whichever zero they
# meet and MaxPool skips NaN. Each input puts both orders of the two zeros,
# zeros beside NaN and zeros beside nonzero numbers in some window.
_ZEROS_1D = np.array([-0.0, 0.0, -0.0, -0.0, 0.0, 0.0, np.nan, -0.0, 0.0, -1.0, -0.0, 1.0, 0.0,
                      -0.0], np.float32)
_ZEROS_NHWC = np.array([[-0.0, -0.0, -0.0, 0.0, 0.0, -0.0],
                        [-0.0, -0.0, 0.0, -0.0, -0.0, -0.0],
                        [np.nan, -0.0, -1.0, -0.0, -2.0, -3.0],
                        [0.0, -0.0, -0.0, -1.0, -4.0, 0.0]], np.float32).reshape(1, 4, 6, 1)


def GENERIC_POS_INF(dt):
  return jnp.array(jnp.inf, dt)


_Z16, _Z64 = _ZEROS_1D.astype(F16), _ZEROS_1D.astype(F64)
CASES += [
    _exact("zeros_window_max", rw(NEG_INF, lax.max, (2,), (1,)), _ZEROS_1D),
    _exact("zeros_window_min", rw(POS_INF, lax.min, (3,), (1,)), _ZEROS_1D),
    _exact("zeros_window_max_f16", rw(NEG_INF, lax.max, (2,), (1,)), _Z16),
    _exact("zeros_window_min_f64", rw(POS_INF, lax.min, (2,), (1,)), _Z64),
    _exact("zeros_generic_window_max", rw(GENERIC_NEG_INF, lax.max, (2,), (1,)), _ZEROS_1D),
    _exact("zeros_generic_window_min", rw(GENERIC_POS_INF, lax.min, (3,), (1,)), _ZEROS_1D),
    _exact("zeros_maxpool_valid", rw(NEG_INF, lax.max, (1, 2, 2, 1), (1, 2, 2, 1)),
           _ZEROS_NHWC, graph_ops=["MaxPool"]),
    _exact("zeros_maxpool_overlapping", rw(NEG_INF, lax.max, (1, 2, 2, 1), (1, 1, 1, 1)),
           _ZEROS_NHWC),
    _exact("zeros_maxpool_same", rw(NEG_INF, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
           _ZEROS_NHWC),
    _exact("zeros_cummax", cum(lax.cummax_p, 0), _ZEROS_1D),
    _exact("zeros_cummin", cum(lax.cummin_p, 0), _ZEROS_1D),
    _exact("zeros_cummax_reverse", cum(lax.cummax_p, 0, True), _ZEROS_1D),
    _exact("zeros_cummin_reverse_f16", cum(lax.cummin_p, 0, True), _Z16),
]

# uint32 in running and windowed max and min, with padding.
CASES += [
    _exact("u32_order_windows", lambda x: (
        lax.cummax(x, axis=1), lax.cummin(x, axis=1, reverse=True),
        lax.reduce_window(x, np.uint32(0), lax.max, (1, 3), (1, 2), "SAME"),
        lax.reduce_window(x, np.uint32(0xFFFFFFFF), lax.min, (2, 2), (1, 1),
                          [(1, 1), (0, 1)])), u32_order_rows()),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/windows.json.
CASES[:] = recorded.apply(CASES, "tflite", "windows")
CASES[:] = recorded.apply(CASES, "tflite_native", "windows")
CASES[:] = recorded.apply(CASES, "tflite_litert", "windows")
CASES[:] = recorded.apply(CASES, "tfjs", "windows")
