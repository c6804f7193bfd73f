"""Special functions: error function, gamma family, Bessel, zeta, incomplete beta.

TF's CPU kernels for several of these lack float16 and/or bfloat16 (Erfinv,
Lgamma, Digamma, BesselI0e/I1e, Igamma, Igammac, IgammaGradA, Polygamma, Zeta,
Betainc). XLA evaluates them in float32 for those types and rounds once, so the
rules do the same everywhere, which keeps eager, graph and compiled TF alike.
All rules are ordinary TF ops and work with enable_xla=False.

Cases: tests/cases/special.py
"""

import math

import jax
import numpy as np
import tensorflow as tf
from jax import lax

from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register
from jax2tf.internals import tf_private


def _via_f32(tf_fn):
  def rule(ctx, *xs, accuracy=None):
    # Newer JAX gives some of these an `accuracy` hint; TF's kernels have one
    # implementation each.
    del accuracy
    return sem.in_f32(tf_fn, *xs)

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
  elif tf_private.tracing_for_xla():
    # TF's XLA computes the erf of a one-element array by another formula,
    # which stops at 0.9999998 (for |x| up to inf); in float32 erf(x)
    # rounds to +-1 from |x| = 4 on.
    res = tf.where(tf.abs(x) >= 4, tf.math.sign(x), res)
  return res


def _odd_through_zero(tf_fn):
  """`tf_fn` for an odd function that is 0 at 0, keeping the sign of a zero
  argument: TF's Erfinv and BesselI1e kernels give +0.0 for -0.0 outside XLA."""

  def fn(x):
    return tf.where(tf.equal(x, 0), x, tf_fn(x))

  return fn


# erf_inv without the Erfinv op, which TFLite and TF.js lack: the same
# single-precision rational approximation XLA uses for float32 (M. Giles,
# "Approximating the erfinv function", GPU Computing Gems, 2011), in
# ops every runtime has. w = -log(1 - x^2); one polynomial in w - 2.5 for
# w < 5 and one in sqrt(w) - 3 beyond; erf_inv(+-1) = +-inf.
_ERF_INV_CENTRAL = (
  2.81022636e-08,
  3.43273939e-07,
  -3.5233877e-06,
  -4.39150654e-06,
  0.00021858087,
  -0.00125372503,
  -0.00417768164,
  0.246640727,
  1.50140941,
)
_ERF_INV_TAIL = (
  -0.000200214257,
  0.000100950558,
  0.00134934322,
  -0.00367342844,
  0.00573950773,
  -0.0076224613,
  0.00943887047,
  1.00167406,
  2.83297682,
)


def _erf_inv_portable(x):
  one = tf.ones_like(x)
  w = -tf.math.log((one - x) * (one + x))
  central = sem.polynomial(_ERF_INV_CENTRAL, w - 2.5)
  # The tail's sqrt must not see w < 0 (|x| > 1 gives NaN through the log).
  tail = sem.polynomial(_ERF_INV_TAIL, tf.sqrt(tf.maximum(w, 5.0)) - 3.0)
  res = tf.where(w < 5.0, central, tail) * x
  return tf.where(tf.equal(tf.abs(x), one), x * np.float32(np.inf), res)


@register(lax.erf_inv_p)
def _erf_inv(ctx, x, accuracy=None):
  del accuracy
  kernel = _odd_through_zero(tf.math.erfinv)
  return sem.in_f32(ctx.kernel_or("Erfinv", kernel, _erf_inv_portable, x.dtype), x)


# erf and erfc without the Erf/Erfc ops, which TFLite and TF.js lack. erfc
# for |x| >= 0.5 by the Chebyshev fit of Press et al., Numerical Recipes
# (2nd ed., section 6.2; fractional error below 1.2e-7 everywhere), which
# keeps erfc's relative precision in the tail; erf near 0 by its Taylor
# series, which keeps erf's (and the sign of zero).
_ERFC_FIT = (
  -1.26551223,
  1.00002368,
  0.37409196,
  0.09678418,
  -0.18628806,
  0.27886807,
  -1.13520398,
  1.48851587,
  -0.82215223,
  0.17087277,
)
# 2/sqrt(pi) * (-1)^n / (n! (2n+1)), n = 0..8: the series' error below 1e-9 at |x| = 0.5.
_ERF_TAYLOR = tuple(
  2 / np.sqrt(np.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(9)
)


def _erfc_tail(a):
  """erfc(a) for a >= 0."""
  t = 1.0 / (1.0 + 0.5 * a)
  poly = sem.polynomial(_ERFC_FIT[::-1], t)
  return t * tf.exp(-a * a + poly)


def _erf_near_zero(x):
  return x * sem.polynomial(_ERF_TAYLOR[::-1], x * x)


def _erf_portable(x):
  a = tf.abs(x)
  far = 1.0 - _erfc_tail(a)
  return tf.where(a < 0.5, _erf_near_zero(x), tf.where(x < 0, -far, far))


def _erfc_portable(x):
  a = tf.abs(x)
  tail = _erfc_tail(a)
  return tf.where(a < 0.5, 1.0 - _erf_near_zero(x), tf.where(x < 0, 2.0 - tail, tail))


@register(lax.erf_p)
def _erf_rule(ctx, x, accuracy=None):
  del accuracy
  return sem.in_f32(ctx.kernel_or("Erf", _erf, _erf_portable, x.dtype), x)


@register(lax.erfc_p)
def _erfc_rule(ctx, x, accuracy=None):
  del accuracy
  return sem.in_f32(ctx.kernel_or("Erfc", tf.math.erfc, _erfc_portable, x.dtype), x)


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
