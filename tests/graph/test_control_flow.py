"""Graph-serialization cases for control flow (rules/control_flow.py, rules/calls.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.ad_checkpoint import checkpoint_name

from tests.graph.harness import Case, FLAVOURS, TF_MODES, arg, case_id, run_case

f32, i32 = np.float32, np.int32


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


def _remat_saving_names(x):
  # checkpoint_name labels what a remat policy may keep for the backward pass.
  def body(v):
    h = checkpoint_name(jnp.sin(v) * 2.0, "h")
    return jnp.sum(jnp.cos(h) * v)
  policy = jax.checkpoint_policies.save_only_these_names("h")
  return jax.checkpoint(body, policy=policy)(x)


def _grad_scan(x):
  return jnp.sum(lax.scan(lambda c, a: (jnp.sin(c) * a, c * a), 1.0, x)[1])


def _grad_cond(x):
  return jnp.sum(lax.cond(jnp.sum(x) > 0, lambda v: jnp.sin(v) * v, jnp.cos, x))


def _grad_fori(x):
  return jnp.sum(lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * x, x))


CASES = [
    # cond / switch
    Case("cond_pos", lambda x: lax.cond(x[0] > 0, jnp.sin, jnp.cos, x),
         [arg((3,), low=0.5, high=2.0)], graph_ops=["StatelessIf"]),
    Case("cond_neg", lambda x: lax.cond(x[0] > 0, jnp.sin, jnp.cos, x),
         [arg((3,), low=-2.0, high=-0.5)], graph_ops=["StatelessIf"]),
    Case("cond_multi_operands_outputs", _cond_multi,
         [np.float32(1.0), arg((2, 3)), arg((2, 3), seed=1)]),
    Case("cond_multi_operands_false", _cond_multi,
         [np.float32(-1.0), arg((2, 3)), arg((2, 3), seed=1)]),
    Case("cond_no_operands", lambda p: lax.cond(p, lambda: jnp.float32(1), lambda: jnp.float32(2)),
         [np.bool_(False)]),
    Case("switch_3", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda v: v + 1], x),
         [np.int32(1), arg((4,))], graph_ops=["StatelessCase"]),
    Case("switch_clamped_high", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x),
         [np.int32(7), arg((4,))]),
    Case("switch_clamped_low", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x),
         [np.int32(-3), arg((4,))]),
    Case("cond_poly", lambda x: lax.cond(jnp.sum(x) > 0, lambda v: v * 2, lambda v: v[::-1], x),
         [arg((5, 2))], polymorphic_shapes=["(b, _)"]),
    # while / fori
    Case("while_count", _while_count, [arg((3,))], graph_ops=["StatelessWhile"]),
    Case("while_consts", _while_consts, [arg((4,), low=0.5, high=1.0), np.float32(20.0)]),
    Case("while_poly_carry", _while_poly, [arg((6,))], polymorphic_shapes=["(b,)"]),
    # vmapped while with per-element trip counts: the predicate is batched
    Case("vmap_while", jax.vmap(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2, x)),
         [arg((5,), low=0.5, high=3.0)]),
    Case("fori_static", lambda x: lax.fori_loop(0, 5, lambda i, c: c + i, x), [arg((3,))]),
    Case("fori_dynamic", _fori_dynamic, [np.int32(4), arg((3,))]),
    Case("fori_dynamic_zero_trips", _fori_dynamic, [np.int32(0), arg((3,))]),
    # scan
    Case("scan_cumsum", _scan_cumsum, [arg((5, 3))], graph_ops=["StatelessWhile"]),
    Case("scan_reverse", lambda x: lax.scan(lambda c, a: (c + a, c), 0.0, x, reverse=True),
         [arg((6,))]),
    Case("scan_multi", _scan_multi, [arg((4, 2)), arg((4, 3, 2), seed=1)]),
    Case("scan_consts_unroll", _scan_consts, [arg((5, 3)), arg((3,), seed=1)]),
    Case("scan_no_xs", lambda x: lax.scan(lambda c, _: (c * 2, c), x, None, length=4),
         [arg((2,))]),
    Case("scan_int", lambda x: lax.scan(lambda c, a: (c + a, c ^ a), jnp.int32(0), x),
         [arg((7,), i32, low=-50, high=50)]),
    Case("scan_bool_ys", lambda x: lax.scan(lambda c, a: (c + a, a > c), 0.0, x), [arg((5,))]),
    Case("scan_zero_length", lambda x: lax.scan(lambda c, a: (c + a, a * 2), 0.0, x),
         [arg((0,))]),
    Case("scan_poly_length", _scan_cumsum, [arg((5, 3))], polymorphic_shapes=["(b, _)"]),
    Case("scan_poly_length_reverse",
         lambda x: lax.scan(lambda c, a: (c * 0.5 + a, c), jnp.zeros((2,), f32), x,
                            reverse=True),
         [arg((4, 2))], polymorphic_shapes=["(b, _)"]),
    Case("map", lambda x: lax.map(lambda r: jnp.sum(r ** 2), x), [arg((4, 3))]),
    Case("associative_cumsum_axis0", lambda x: jnp.cumsum(x, axis=0), [arg((4, 3))]),
    # nesting
    Case("nested_scan_cond_loops", _nested, [arg((4, 3))], rtol=1e-5),
    # gradients (transposed scans and conds inside the VJP)
    Case("grad_scan", jax.grad(_grad_scan), [arg((5,))], rtol=1e-5),
    Case("grad_cond", jax.grad(_grad_cond), [arg((4,), low=0.1, high=1.0)], rtol=1e-5),
    Case("grad_fori", jax.grad(_grad_fori), [arg((3,))], rtol=1e-5),
    Case("grad_scan_poly", jax.grad(_grad_scan), [arg((5,))], rtol=1e-5,
         polymorphic_shapes=["(b,)"]),
    # calls
    Case("jit_inner", lambda x: jax.jit(lambda v: v * 2 + 1)(x), [arg((3,))]),
    Case("remat", lambda x: jax.checkpoint(lambda v: jnp.sin(v) * v)(x), [arg((3,))]),
    Case("remat_named_policy", jax.grad(_remat_saving_names), [arg((4,))], rtol=1e-5),
    Case("custom_jvp", jax.nn.relu, [arg((5,))]),
    Case("custom_vjp", lambda x: _clip_gradient(x) * 2, [arg((5,))]),
]


@jax.custom_vjp
def _clip_gradient(x):
  return x


_clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))


SLOW_CASES = [
    Case(f"scan_unroll{u}_len{n}_rev{int(r)}",
         (lambda u, r: lambda x: lax.scan(lambda c, a: (c * 0.5 + a, c + a), 0.0, x,
                                          unroll=u, reverse=r))(u, r),
         [arg((n,))])
    for u in (1, 2, 3) for n in (1, 5, 6) for r in (False, True)
] + [
    Case(f"switch_{k}_branches_idx{i}",
         (lambda k: lambda i, x: lax.switch(i, [(lambda j: lambda v: v * j + j)(j)
                                                for j in range(k)], x))(k),
         [np.int32(i), arg((3,))])
    for k in (2, 4, 6) for i in (-1, 0, 1, 5)
] + [
    Case("grad_grad_scan", jax.grad(lambda x: jnp.sum(jax.grad(_grad_scan)(x) ** 2)),
         [arg((4,))], rtol=1e-4, atol=1e-5),
    Case("vmap_cond", jax.vmap(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)), [arg((6,))]),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_control_flow(case, mode, flavour):
  run_case(case, mode, flavour)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_CASES, ids=case_id)
@pytest.mark.parametrize("mode", TF_MODES)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_control_flow_slow(case, mode, flavour):
  run_case(case, mode, flavour)
