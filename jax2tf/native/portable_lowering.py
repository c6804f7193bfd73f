"""Lowering rules that keep native modules executable by TensorFlow's XLA.

On CPU and GPU, JAX lowers linear algebra (and GPU PRNG) to custom calls whose
handlers live in jaxlib, not in TensorFlow: a module using them serializes but
fails inside TF ("No FFI handler registered"). For those primitives we use the
platform-independent rules JAX already has: StableHLO ops (cholesky,
triangular_solve), pure-JAX algorithms (lu, svd, eigh) or the XLA-expanded
custom calls `Qr`, `ProductOfElementaryHouseholderReflectors` and `Eigh`,
which every XLA backend rewrites itself. The Hessenberg and tridiagonal
reductions and column-pivoted QR (hessenberg, tridiagonal, geqp3), for which
JAX has only LAPACK's and GPU solvers' rules, lower to LAPACK's steps as JAX
forms (jax2tf/jax_forms/householder.py, which the graph route lowers too)
where the matrix dimensions are static, as the forms' loops need.
"""

import functools

import numpy as np
from jax import export as jax_export
from jax.core import ShapedArray
from jax.extend import core as jax_core
from jax.extend import random as jex_random
from jax.interpreters import mlir
from jax.lax import linalg as lax_linalg

from jax2tf.internals import jax_private
from jax2tf.jax_forms import householder


def jax_rule(primitive, platform: str | None = None):
  """JAX's lowering of `primitive` for `platform` where it has one of its
  own, else its default lowering (None where JAX has neither)."""
  if platform is not None:
    entry = jax_private.platform_lowerings[platform].get(primitive)
    if entry is not None:
      return entry.rule
  entry = jax_private.default_lowerings.get(primitive)
  return None if entry is None else entry.rule


def jax_lowering(primitive):
  """JAX's own lowering of `primitive`: its rule for each platform the module
  is exported for, or its default one."""
  platform_rules = {
    platform: rules[primitive].rule
    for platform, rules in jax_private.platform_lowerings.items()
    if primitive in rules
  }
  default = jax_private.default_lowerings.get(primitive)

  def rule(ctx, *operands, **params):
    return jax_private.lower_per_platform(
      ctx,
      str(primitive),
      platform_rules,
      None if default is None else default.rule,
      set(),  # the linear algebra and the primitives of the forms have no effects
      *operands,
      **params,
    )

  return rule


def form_rule(primitive, form_of, fallback=None):
  """A lowering of `primitive` as the JAX function `form_of(ctx, **params)`
  returns (a function of the operands returning a list of results), or by
  the rule `fallback` where that returns None (JAX's own lowering, if no
  `fallback` is given)."""
  fallback = fallback or jax_lowering(primitive)

  def rule(ctx, *operands, **params):
    form = form_of(ctx, **params)
    if form is None:
      return fallback(ctx, *operands, **params)
    return mlir.lower_fun(form, multiple_results=True)(ctx, *operands)

  return primitive, rule


def householder_form(form, *param_names, real_only=False):
  """For `form_rule`: `form` (a function of the operands, and of the
  parameters named, returning a list) where the matrix dimensions (the last
  two of the first operand) are static, as its loop over the columns needs,
  and, if `real_only`, the matrix is real. Batch dimensions may be symbolic."""

  def form_of(ctx, **params):
    (m, n), dtype = ctx.avals_in[0].shape[-2:], ctx.avals_in[0].dtype
    if not _is_static((m, n)) or (real_only and np.issubdtype(dtype, np.complexfloating)):
      return None
    kwargs = {name: params[name] for name in param_names}
    return lambda *operands: form(*operands, **kwargs)

  return form_of


# The TPU eigh rule uses XLA's `Eigh` custom call (Jacobi sweeps, expanded by
# every XLA backend) up to 256x256. Its sweeps stop at about float32
# accuracy whatever tolerance they are given, so float64 eigenvectors come out
# ~1e-8 off LAPACK's. For float64 we refine the Jacobi result: B = V^H A V is
# then diagonal up to ~1e-8, and first-order perturbation theory gives its
# eigenvectors as I + E, E_ij = B_ij / (B_jj - B_ii); one Newton-Schulz step
# restores orthonormality. Pairs whose eigenvalues are too close for the
# first-order formula are left as Jacobi gave them.
_JACOBI_MAX_SIZE = 256
_PERTURBATION_LIMIT = 1e-3  # largest |E_ij| used

_raw_jacobi_eigh_p = jax_core.Primitive("jax2tf_raw_jacobi_eigh")
_raw_jacobi_eigh_p.multiple_results = True


@_raw_jacobi_eigh_p.def_abstract_eval
def _raw_jacobi_eigh_abstract_eval(a, *, lower):
  return (ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-1], np.finfo(a.dtype).dtype))


def _refined_eigh(a, *, lower, sort_eigenvalues):
  import jax.numpy as jnp
  from jax import lax

  hp = lax.Precision.HIGHEST
  mm = functools.partial(jnp.matmul, precision=hp)
  adj = lambda x: jnp.conj(jnp.swapaxes(x, -1, -2))
  n = a.shape[-1]
  eye = jnp.eye(n, dtype=a.dtype)
  # Jacobi reads one triangle only; the products below need the whole matrix.
  if lower:
    full = jnp.tril(a, -1) + adj(jnp.tril(a, -1)) + eye * jnp.real(a)
  else:
    full = jnp.triu(a, 1) + adj(jnp.triu(a, 1)) + eye * jnp.real(a)
  v, _ = _raw_jacobi_eigh_p.bind(a, lower=lower)
  b = mm(adj(v), mm(full, v))
  d = jnp.real(jnp.diagonal(b, axis1=-2, axis2=-1))
  gap = d[..., None, :] - d[..., :, None]
  off = b * (1 - eye)
  usable = jnp.abs(off) < _PERTURBATION_LIMIT * jnp.abs(gap)  # false on the diagonal
  e = jnp.where(usable, off / jnp.where(usable, gap, 1).astype(a.dtype), 0)
  v = v + mm(v, e)
  v = mm(v, 1.5 * eye - 0.5 * mm(adj(v), v))
  w = jnp.real(jnp.sum(jnp.conj(v) * mm(full, v), axis=-2))
  if sort_eigenvalues:
    order = jnp.argsort(w, axis=-1)
    w = jnp.take_along_axis(w, order, axis=-1)
    v = jnp.take_along_axis(v, order[..., None, :], axis=-1)
  return v, w


def _eigh_rule(tpu_rule):
  def raw_jacobi_lowering(ctx, a, *, lower):
    return tpu_rule(
      ctx,
      a,
      lower=lower,
      sort_eigenvalues=False,
      subset_by_index=None,
      algorithm=lax_linalg.EighImplementation.JACOBI,
    )

  mlir.register_lowering(_raw_jacobi_eigh_p, raw_jacobi_lowering)

  def rule(ctx, operand, *, lower, sort_eigenvalues, subset_by_index, algorithm, **params):
    (aval,) = ctx.avals_in
    n = aval.shape[-1] if aval.shape else 0
    whole = subset_by_index is None or tuple(subset_by_index) == (0, n)
    # Batch dimensions may be symbolic: the refinement only broadcasts over them.
    if (
      np.finfo(aval.dtype).bits == 64
      and whole
      and _is_static(aval.shape[-2:])
      and 0 < n <= _JACOBI_MAX_SIZE
    ):
      return mlir.lower_fun(
        functools.partial(_refined_eigh, lower=lower, sort_eigenvalues=sort_eigenvalues),
        multiple_results=True,
      )(ctx, operand)
    return tpu_rule(
      ctx,
      operand,
      lower=lower,
      sort_eigenvalues=sort_eigenvalues,
      subset_by_index=subset_by_index,
      algorithm=algorithm,
      **params,
    )

  return rule


@functools.cache
def portable_lowering_rules() -> tuple:
  """(primitive, rule) pairs for `jax.export.export(_override_lowering_rules=...)`."""
  # Importing these modules registers the TPU (pure JAX) eigh and svd lowerings.
  _ = (jax_private.tpu_eigh_lowerings, jax_private.tpu_svd_lowerings)
  rules = []
  # threefry2x32: GPUs would otherwise call jaxlib's cu_threefry kernel.
  for p in (
    lax_linalg.cholesky_p,
    lax_linalg.triangular_solve_p,
    lax_linalg.lu_p,
    lax_linalg.lu_pivots_to_permutation_p,
    jax_private.geqrf_p,
    lax_linalg.householder_product_p,
    lax_linalg.svd_p,
    lax_linalg.ormqr_p,
    lax_linalg.tridiagonal_solve_p,
    jex_random.threefry2x32_p,
  ):
    rule = jax_rule(p)
    if rule is not None:
      rules.append((p, rule))
  # The TPU rule only: the default one is LAPACK's.
  tpu_eigh = jax_private.platform_lowerings["tpu"].get(lax_linalg.eigh_p)
  if tpu_eigh is not None:
    rules.append((lax_linalg.eigh_p, _eigh_rule(tpu_eigh.rule)))
  # JAX has only LAPACK's (and GPU solvers') rules for these.
  rules += [
    form_rule(lax_linalg.hessenberg_p, householder_form(householder.hessenberg)),
    form_rule(lax_linalg.tridiagonal_p, householder_form(householder.tridiagonal, "lower")),
    form_rule(jax_private.geqp3_p, householder_form(householder.geqp3)),
  ]
  return tuple(rules)


def _is_static(shape) -> bool:
  return not any(jax_export.is_symbolic_dim(d) for d in shape)
