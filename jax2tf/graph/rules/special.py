"""Special functions: error function, gamma family, Bessel, zeta, incomplete beta.

TF's CPU kernels for several of these lack float16 and/or bfloat16 (Erfinv,
Lgamma, Digamma, BesselI0e/I1e, Igamma, Igammac, IgammaGradA, Polygamma, Zeta,
Betainc). XLA evaluates them in float32 for those types and rounds once, so the
rules do the same everywhere, which keeps eager, graph and compiled TF alike.
All rules are ordinary TF ops and work with enable_xla=False.

Cases: special_cases.py
"""

import jax
import numpy as np
import tensorflow as tf
from jax import lax

from jax2tf.graph.registry import register

_NARROW = (tf.float16, tf.bfloat16)


def _via_f32(tf_fn):
  def rule(ctx, *xs, accuracy=None):
    # Newer JAX gives some of these an `accuracy` hint; TF's kernels have one
    # implementation each.
    del accuracy
    dtype = xs[0].dtype
    if dtype not in _NARROW:
      return tf_fn(*xs)
    return tf.cast(tf_fn(*[tf.cast(x, tf.float32) for x in xs]), dtype)

  return rule


# TF's incomplete-gamma kernels differ from JAX's at the edges of the domain
# (a or x zero or infinite); the selects below give JAX's values there. The
# interior is TF's kernel. tf.where broadcasts, so scalar operands need no care.

# The edge values of igamma/igammac (a infinite) and digamma (at 0) changed
# between the two supported JAX releases, 0.10 and 0.12.
_JAX_012_EDGES = jax.__version_info__ >= (0, 12)


def _erf(x):
  res = tf.math.erf(x)
  if x.dtype == tf.float64:  # TF's float64 CPU kernel gives NaN at +-inf
    res = tf.where(tf.math.is_inf(x), tf.math.sign(x), res)
  return res


def _odd_through_zero(tf_fn):
  """`tf_fn` for an odd function that is 0 at 0, keeping the sign of a zero
  argument: TF's Erfinv and BesselI1e kernels give +0.0 for -0.0 outside XLA."""

  def fn(x):
    return tf.where(tf.equal(x, 0), x, tf_fn(x))

  return fn


def _digamma(x):
  res = tf.math.digamma(x)
  if _JAX_012_EDGES:  # XLA's digamma gives -inf at 0 (TF: NaN)
    res = tf.where(tf.equal(x, 0), tf.constant(-np.inf, x.dtype), res)
  return res


def _any(*conds):
  res = conds[0]
  for c in conds[1:]:
    res = tf.logical_or(res, c)
  return res


def _consts(a):
  return (tf.constant(float("nan"), a.dtype), tf.constant(1, a.dtype), tf.constant(0, a.dtype))


def _igamma_domain_error(a, x):
  errors = [
    x < 0,
    a < 0,
    tf.logical_and(tf.equal(a, 0), tf.equal(x, 0)),
    tf.math.is_nan(a),
    tf.math.is_nan(x),
  ]
  if _JAX_012_EDGES:
    errors.append(tf.logical_and(tf.math.is_inf(a), tf.math.is_inf(x)))
  return _any(*errors)


def _igamma(a, x):
  nan, one, zero = _consts(a)
  res = tf.math.igamma(a, x)
  # JAX: P(0, x) is 1 for x >= 1 and NaN below.
  res = tf.where(tf.equal(a, 0), tf.where(x >= 1, one, nan), res)
  # P(inf, x) for finite x: NaN for x >= 1 before JAX 0.12, 0 since (TF's
  # XLA kernel gives NaN, its CPU kernel 0).
  if _JAX_012_EDGES:
    res = tf.where(tf.math.is_inf(a), zero, res)
  else:
    res = tf.where(tf.logical_and(tf.math.is_inf(a), x >= 1), nan, res)
  res = tf.where(tf.equal(x, 0), zero, res)
  res = tf.where(tf.math.is_inf(x), one, res)
  return tf.where(_igamma_domain_error(a, x), nan, res)


def _igammac(a, x):
  nan, one, zero = _consts(a)
  res = tf.math.igammac(a, x)
  if _JAX_012_EDGES:
    res = tf.where(tf.math.is_inf(a), one, res)
  else:
    res = tf.where(tf.logical_and(tf.math.is_inf(a), x >= 1), nan, res)
  res = tf.where(tf.logical_or(tf.math.is_inf(x), tf.equal(a, 0)), zero, res)
  return tf.where(_igamma_domain_error(a, x), nan, res)


def _igamma_grad_a(a, x):
  nan, _, zero = _consts(a)
  res = tf.raw_ops.IgammaGradA(a=a, x=x)
  res = tf.where(tf.logical_or(tf.math.is_inf(a), tf.math.is_inf(x)), nan, res)
  res = tf.where(tf.equal(x, 0), zero, res)
  return tf.where(_any(x < 0, a <= 0, tf.math.is_nan(a), tf.math.is_nan(x)), nan, res)


for _p, _fn in [
  (lax.erf_p, _erf),
  (lax.erfc_p, tf.math.erfc),
  (lax.erf_inv_p, _odd_through_zero(tf.math.erfinv)),
  (lax.lgamma_p, tf.math.lgamma),
  (lax.digamma_p, _digamma),
  (lax.bessel_i0e_p, tf.math.special.bessel_i0e),
  (lax.bessel_i1e_p, _odd_through_zero(tf.math.special.bessel_i1e)),
  # lax.igamma(a, x) is P(a, x), TF's Igamma(a, x); likewise Q.
  (lax.igamma_p, _igamma),
  (lax.igammac_p, _igammac),
  (lax.igamma_grad_a_p, _igamma_grad_a),
  # lax.polygamma(m, x) and lax.zeta(x, q) take their operands in TF's order.
  # Outside the usual domain (infinite or zero operands) TF's Eigen kernels
  # and JAX's expansions disagree on inf versus NaN; those points are not
  # corrected.
  (lax.polygamma_p, tf.math.polygamma),
  (lax.zeta_p, tf.math.zeta),
  # lax.betainc(a, b, x), TF's Betainc(a, b, x). For a == 0 or b == 0 TF
  # gives NaN where JAX's continued fraction gives 0 or 1 (not corrected).
  (lax.regularized_incomplete_beta_p, tf.math.betainc),
]:
  register(_p)(_via_f32(_fn))
