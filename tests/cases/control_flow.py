"""Cases of the control-flow family (control_flow.py): cond, while, scan, platform_index."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import checkify

from tests.support import recorded
from tests.support.case import I32, A, Cases, V, case, gaps, rand, refused

CASES = Cases()

f32, i32 = np.float32, np.int32

# ---------------------------------------------------------------------------
# Random operands.
CASES.add("cond", lambda p, x: lax.cond(p > 0, jnp.sin, jnp.cos, x), V(1, I32), A(3))
CASES.add("cond_false", lambda p, x: lax.cond(p > 0, jnp.sin, jnp.cos, x), V(-1, I32), A(3))
CASES.add("switch", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), V(2, I32),
          A(3))
CASES.add("while_loop", lambda x: lax.while_loop(lambda c: c[0] < 10,
                                                 lambda c: (c[0] + 1, c[1] * 1.1), (0, x)),
          A(3))
CASES.add("fori_loop", lambda x: lax.fori_loop(0, 5, lambda i, c: c + i * c, x), A(3),
          tol=(1e-5, 1e-5))
CASES.add("scan", lambda xs: lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(3), xs), A(5, 3),
          tol=(1e-5, 1e-5))
CASES.add("scan_reverse_unroll",
          lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, c), jnp.zeros(2), xs, reverse=True,
                              unroll=2), A(6, 2), slow=True)
CASES.add("map", lambda xs: lax.map(jnp.sum, xs), A(4, 3), tol=(1e-5, 1e-5), slow=True)
CASES.add("tokens", lambda x: (lax.after_all(lax.create_token(), lax.create_token()), x * 2)[1],
          A(3), exact=True)


def _debug_checked(x):
  # checkify.debug_check is a no-op outside checkify.checkify, even when it fails.
  checkify.debug_check(jnp.all(x > 10), "x is {x}", x=x)
  return jnp.sin(x)


CASES.add("debug_check", _debug_checked, A(3),
          gaps=gaps("jax.export keeps the debug_check's checkify error effect, and native "
                    "serialization refuses functions with effects", ["native", "tflite_native"],
                    error="has effects"))


# ---------------------------------------------------------------------------
# Fixed operands.

def _cond_multi(p, x, y):
  return lax.cond(p > 0, lambda a, b: (a + b, a * 2, b.astype(i32)),
                  lambda a, b: (a - b, b, (a * 3).astype(i32)), x, y)


def _while_count(x):
  return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))


def _while_consts(x, lim):
  # Both the condition and the body close over values: cond_nconsts/body_nconsts.
  return lax.while_loop(lambda c: jnp.sum(c) < lim, lambda c: c + x, x)


def _while_poly(x):
  # A (b,)-shaped carry whose length is only known at run time.
  def body(c):
    i, v = c
    return i + 1, jnp.cos(v) + v[::-1] * 0.5
  return lax.while_loop(lambda c: c[0] < 4, body, (0, x))


def _fori_dynamic(n, x):
  # A traced trip count makes fori_loop a while loop (a static one is a scan).
  return lax.fori_loop(0, n, lambda i, c: c * 1.1 + i.astype(f32), x)


def _scan_cumsum(x):
  return lax.scan(lambda c, a: (c + a, c * a), jnp.zeros(x.shape[1:], x.dtype), x)


def _scan_multi(x, y):
  def body(c, xs):
    a, b = xs
    c1, c2 = c
    return (c1 + a, c2 * 0.9 + jnp.sum(b)), (c1 * a, jnp.max(b).astype(i32))
  return lax.scan(body, (jnp.zeros((2,), f32), 1.0), (x, y))


def _scan_consts(x, w):
  return lax.scan(lambda c, a: (jnp.tanh(c * w + a), c.sum()), jnp.zeros_like(w), x,
                  unroll=2)


def _nested(x):
  def body(c, a):
    inner = lax.cond(a[0] > 0,
                     lambda v: lax.fori_loop(0, 3, lambda i, u: u * 0.5 + i, v),
                     lambda v: lax.while_loop(lambda w: jnp.sum(w) < 10.0,
                                              lambda w: w + 1.0, v),
                     c + a)
    return inner, jnp.sum(inner)
  return lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x)


def _grad_scan(x):
  return jnp.sum(lax.scan(lambda c, a: (jnp.sin(c) * a, c * a), 1.0, x)[1])


def _grad_cond(x):
  return jnp.sum(lax.cond(jnp.sum(x) > 0, lambda v: jnp.sin(v) * v, jnp.cos, x))


def _grad_fori(x):
  return jnp.sum(lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * x, x))


CASES += [
    # cond / switch
    case("cond_pos", lambda x: lax.cond(x[0] > 0, jnp.sin, jnp.cos, x),
         rand((3,), low=0.5, high=2.0), graph_ops=["StatelessIf"]),
    case("cond_neg", lambda x: lax.cond(x[0] > 0, jnp.sin, jnp.cos, x),
         rand((3,), low=-2.0, high=-0.5), graph_ops=["StatelessIf"]),
    case("cond_multi_operands_outputs", _cond_multi,
         np.float32(1.0), rand((2, 3)), rand((2, 3), seed=1)),
    case("cond_multi_operands_false", _cond_multi,
         np.float32(-1.0), rand((2, 3)), rand((2, 3), seed=1)),
    # Empty operands and results, in both branches (TF.js once could not run it).
    case("cond_empty_operand", lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x),
         np.bool_(False), np.zeros((0, 1, 1), f32), exact=True),
    case("cond_no_operands", lambda p: lax.cond(p, lambda: jnp.float32(1), lambda: jnp.float32(2)),
         np.bool_(False), exact=True),
    case("switch_3", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda v: v + 1], x),
         np.int32(1), rand((4,)), graph_ops=["StatelessCase"]),
    case("switch_clamped_high", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x),
         np.int32(7), rand((4,))),
    case("switch_clamped_low", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x),
         np.int32(-3), rand((4,))),
    case("cond_poly", lambda x: lax.cond(jnp.sum(x) > 0, lambda v: v * 2, lambda v: v[::-1], x),
         rand((5, 2)), polymorphic_shapes=["(b, _)"]),
    # while / fori
    case("while_count", _while_count, rand((3,)), graph_ops=["StatelessWhile"]),
    case("while_consts", _while_consts, rand((4,), low=0.5, high=1.0), np.float32(20.0)),
    case("while_poly_carry", _while_poly, rand((6,)), polymorphic_shapes=["(b,)"]),
    # vmapped while with per-element trip counts: the predicate is batched
    case("vmap_while",
         jax.vmap(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2, x)),
         rand((5,), low=0.5, high=3.0)),
    case("fori_static", lambda x: lax.fori_loop(0, 5, lambda i, c: c + i, x), rand((3,))),
    case("fori_dynamic", _fori_dynamic, np.int32(4), rand((3,))),
    case("fori_dynamic_zero_trips", _fori_dynamic, np.int32(0), rand((3,))),
    # scan
    case("scan_cumsum", _scan_cumsum, rand((5, 3)), graph_ops=["StatelessWhile"]),
    case("scan_reverse", lambda x: lax.scan(lambda c, a: (c + a, c), 0.0, x, reverse=True),
         rand((6,))),
    case("scan_multi", _scan_multi, rand((4, 2)), rand((4, 3, 2), seed=1)),
    case("scan_consts_unroll", _scan_consts, rand((5, 3)), rand((3,), seed=1)),
    case("scan_no_xs", lambda x: lax.scan(lambda c, _: (c * 2, c), x, None, length=4),
         rand((2,))),
    case("scan_int", lambda x: lax.scan(lambda c, a: (c + a, c ^ a), jnp.int32(0), x),
         rand((7,), i32, low=-50, high=50)),
    case("scan_bool_ys", lambda x: lax.scan(lambda c, a: (c + a, a > c), 0.0, x), rand((5,))),
    case("scan_zero_length", lambda x: lax.scan(lambda c, a: (c + a, a * 2), 0.0, x),
         rand((0,))),
    case("scan_poly_length", _scan_cumsum, rand((5, 3)), polymorphic_shapes=["(b, _)"]),
    case("scan_poly_length_reverse",
         lambda x: lax.scan(lambda c, a: (c * 0.5 + a, c), jnp.zeros((2,), f32), x,
                            reverse=True),
         rand((4, 2)), polymorphic_shapes=["(b, _)"]),
    case("map_sum_squares", lambda x: lax.map(lambda r: jnp.sum(r ** 2), x), rand((4, 3))),
    # nesting
    case("nested_scan_cond_loops", _nested, rand((4, 3)), tol=(1e-5, 1e-6)),
    # gradients (transposed scans and conds inside the VJP)
    case("grad_scan", jax.grad(_grad_scan), rand((5,)), tol=(1e-5, 1e-6)),
    case("grad_cond", jax.grad(_grad_cond), rand((4,), low=0.1, high=1.0), tol=(1e-5, 1e-6)),
    case("grad_fori", jax.grad(_grad_fori), rand((3,)), tol=(1e-5, 1e-6)),
    case("grad_scan_poly", jax.grad(_grad_scan), rand((5,)), tol=(1e-5, 1e-6),
         polymorphic_shapes=["(b,)"]),
]

# Unrolling, lengths, directions and branch counts, in the exhaustive tier.
# Branch 0 computes v * 0 + 0: XLA folds the "+ 0" away, keeping -0.0 for a
# negative v, where TF's eager kernels add and give +0.0.
_ZERO_BRANCH = gaps("JAX's XLA folds v * 0 + 0 to v * 0 (-0.0 for a negative v); TF eager "
                    "adds and gives +0.0 (tf.function and jit_compile fold like XLA)",
                    ["graph"], ["eager"], error="signs of zero differ")
CASES += [
    case(f"scan_unroll{u}_len{n}_rev{int(r)}",
         (lambda u, r: lambda x: lax.scan(lambda c, a: (c * 0.5 + a, c + a), 0.0, x,
                                          unroll=u, reverse=r))(u, r),
         rand((n,)), slow=True)
    for u in (1, 2, 3) for n in (1, 5, 6) for r in (False, True)
] + [
    case(f"switch_{k}_branches_idx{i}",
         (lambda k: lambda i, x: lax.switch(i, [(lambda j: lambda v: v * j + j)(j)
                                                for j in range(k)], x))(k),
         np.int32(i), rand((3,)), slow=True, gaps=_ZERO_BRANCH if i <= 0 else None)
    for k in (2, 4, 6) for i in (-1, 0, 1, 5)
] + [
    case("grad_grad_scan", jax.grad(lambda x: jnp.sum(jax.grad(_grad_scan)(x) ** 2)),
         rand((4,)), tol=(1e-4, 1e-5), slow=True),
    case("vmap_cond", jax.vmap(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)), rand((6,)),
         slow=True),
]

# platform_dependent: the CPU branch is taken; without one there is nothing to run.
CASES += [
    case("platform_dependent_cpu_branch", lambda x: lax.platform_dependent(
        x, cpu=lambda x: x * 3, default=lambda x: x + 2), rand((3,)), slow=True),
    case("platform_dependent_without_cpu", lambda x: lax.platform_dependent(
        x, tpu=lambda x: x + 1, cuda=lambda x: x + 2), rand((3,)),
         refuse=refused("platform_index", "no branch for the CPU platform", "graph"),
         gaps=gaps("JAX has no CPU lowering without a CPU branch (jax.jit fails too)",
                   ["native", "tflite_litert"], error="platform_index")),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/control_flow.json.
CASES[:] = recorded.apply(CASES, "tflite", "control_flow")
CASES[:] = recorded.apply(CASES, "tflite_native", "control_flow")
CASES[:] = recorded.apply(CASES, "tflite_litert", "control_flow")
CASES[:] = recorded.apply(CASES, "tfjs", "control_flow")
