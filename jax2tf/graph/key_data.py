"""Jaxprs on PRNG key data: how graph serialization carries key arrays.

A key array (a value of JAX's `key<impl>` dtype) travels through the TF graph
as its key data: a uint32 tensor whose shape is the key array's shape followed
by the implementation's key shape ((2,) for threefry, (4,) for rbg).

Any primitive may take key arrays: slicing, reshaping, selecting, carrying
them through loops. JAX lowers those on the key data with trailing key
dimensions; here a jaxpr that mentions keys is re-traced into one on key
data, where a structural primitive applied to keys is vmapped over the
trailing key-data axes (the key data of one key moves as a unit), and the
key-level primitives (seed, split, fold_in, bits, gamma) become the key
implementation's own functions on key data.
"""

import functools

import jax
import jax.extend.core as jax_ext_core
from jax.experimental import custom_partitioning, scheduling_groups
from jax.extend.core import primitives as core_primitives

from jax2tf import equations
from jax2tf.graph import registry
from jax2tf.internals import jax_private


def physical_aval(aval):
  """The aval of a value's TF representation (key arrays become key data)."""
  return jax_private.physical_aval(aval)


def is_key(aval) -> bool:
  """Whether `aval` (or a value) has a PRNG key dtype."""
  dtype = getattr(aval, "dtype", None)
  try:
    return dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)
  except TypeError:
    return False


def impl_of(aval):
  """The PRNG implementation of a key array's aval."""
  return aval.dtype._impl


def _vmapped(n: int, f):
  for _ in range(n):
    f = jax.vmap(f)
  return f


# The key-level primitives as JAX functions on key data, like JAX's lowerings.


def seed_fn(seed_aval, impl):
  return _vmapped(len(seed_aval.shape), impl.seed)


def split_fn(keys_aval, shape):
  impl = impl_of(keys_aval)
  return _vmapped(len(keys_aval.shape), lambda k: impl.split(k, shape))


def fold_in_fn(keys_aval, batch):
  impl = impl_of(keys_aval)
  batch = tuple(batch)

  def fn(k, m):
    # Key batch and message shapes broadcast against each other.
    k = jax.numpy.broadcast_to(k, batch + tuple(impl.key_shape))
    m = jax.numpy.broadcast_to(m, batch)
    return _vmapped(len(batch), impl.fold_in)(k, m)

  return fn


def bits_fn(keys_aval, bit_width, shape):
  impl = impl_of(keys_aval)
  return _vmapped(len(keys_aval.shape), lambda k: impl.random_bits(k, bit_width, shape))


def gamma_jaxpr(keys_aval, a_aval, log_space):
  # JAX lowers random_gamma by the same function on every platform; tracing
  # it keeps the rejection sampler (a while loop) and its bits identical.
  fn = functools.partial(jax_private.gamma_impl, log_space=log_space, use_vmap=True)
  closed = jax.make_jaxpr(fn)(
    *[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (keys_aval, a_aval)]
  )
  return key_data_jaxpr(closed)


# -- jaxprs on key data
#
# Any primitive may take key arrays: slicing, reshaping, selecting, carrying
# them through loops. JAX lowers those on the key data with trailing key
# dimensions; here a jaxpr that mentions keys is re-traced into one on key
# data, where a structural primitive applied to keys is vmapped over the
# trailing key-data axes (the key data of one key moves as a unit).

# JAX 0.10's eval_jaxpr primitive (JAX stages it as closed_call); from 0.12 on
# it is call_p itself.
_EVAL_JAXPR_P = (
  None
  if jax_private.eval_jaxpr_p in (core_primitives.call_p, core_primitives.closed_call_p)
  else jax_private.eval_jaxpr_p
)

# jax.experimental.scheduling_groups.xla_metadata_call: JAX 0.10 defines its
# primitive in that public module, 0.12 in a private one.
_XLA_METADATA_CALL_P = jax_private.xla_metadata_call_p or getattr(
  scheduling_groups, "xla_metadata_call_p", None
)

# Primitives whose meaning is their body: graph serialization inlines them
# (rules/calls.py), and key arrays inside them are lowered here like any other
# code. A composite is a named group of ops with a reference decomposition.
# compute_on (host offloading), xla_metadata_call (attributes for XLA's
# scheduler) and custom_partitioning (an SPMD partitioning callback) change
# where or how XLA runs the body, not what it computes.
CALL_LIKE_PRIMITIVES = tuple(
  p
  for p in (
    core_primitives.jit_p,
    core_primitives.closed_call_p,
    core_primitives.call_p,
    _EVAL_JAXPR_P,
    core_primitives.remat_p,
    core_primitives.custom_jvp_call_p,
    core_primitives.custom_vjp_call_p,
    jax_private.composite_p,
    jax_private.custom_vmap_p,  # its batching rule matters only under vmap
    jax_private.linear_call_p,  # its transpose matters only under transposition
    jax_private.compute_on_p,
    _XLA_METADATA_CALL_P,
    custom_partitioning.custom_partitioning_p,
  )
  if p is not None
)


_BODY_PARAMS = ("jaxpr", "call_jaxpr", "call", "callee")


def call_body(params):
  """The body of a call-like primitive: `jaxpr` for jit, remat, eval_jaxpr,
  compute_on and xla_metadata_call, `call` for custom_vmap and
  custom_partitioning, `callee` for linear_call,
  `call_jaxpr` for the others (and composites from JAX 0.12)."""
  return next(params[name] for name in _BODY_PARAMS if name in params)


def _sub_jaxprs(params):
  for v in params.values():
    for item in v if isinstance(v, (tuple, list)) else (v,):
      if isinstance(item, (jax_ext_core.Jaxpr, jax_ext_core.ClosedJaxpr)):
        yield item


def _open(jaxpr_like):
  if isinstance(jaxpr_like, jax_ext_core.ClosedJaxpr):
    return jaxpr_like.jaxpr, list(jaxpr_like.consts)
  return jaxpr_like, []


def mentions_keys(jaxpr_like) -> bool:
  jaxpr, _ = _open(jaxpr_like)
  if any(is_key(v.aval) for v in (*jaxpr.constvars, *jaxpr.invars, *jaxpr.outvars)):
    return True
  for eqn in jaxpr.eqns:
    if any(is_key(v.aval) for v in (*eqn.invars, *eqn.outvars)):
      return True
    if any(mentions_keys(j) for j in _sub_jaxprs(eqn.params)):
      return True
  return False


def key_data_jaxpr(jaxpr_like):
  """An equivalent closed jaxpr whose values are all key data (no key types)."""
  if not mentions_keys(jaxpr_like):
    return jaxpr_like
  try:
    return _key_data_jaxpr_cached(jaxpr_like)
  except TypeError:  # unhashable parameters somewhere
    return _key_data_jaxpr(jaxpr_like)


def _key_data_jaxpr(jaxpr_like):
  jaxpr, consts = _open(jaxpr_like)
  specs = [
    jax.ShapeDtypeStruct(physical_aval(v.aval).shape, physical_aval(v.aval).dtype)
    for v in jaxpr.invars
  ]
  consts = [_as_key_data(c) for c in consts]
  return jax.make_jaxpr(lambda *args: _eval_on_key_data(jaxpr, consts, args))(*specs)


_key_data_jaxpr_cached = functools.lru_cache(maxsize=256)(_key_data_jaxpr)


def _as_key_data(value):
  return jax.random.key_data(value) if is_key(value) else value


def _eval_on_key_data(jaxpr, consts, args) -> list:
  env: dict = {}

  def read(v):
    if isinstance(v, jax_ext_core.Literal):
      return _as_key_data(v.val)
    return env[v]

  for v, c in zip(jaxpr.constvars, consts):
    env[v] = c
  for v, a in zip(jaxpr.invars, args):
    env[v] = a
  for eqn in jaxpr.eqns:
    outs = _eqn_on_key_data(eqn, [read(v) for v in eqn.invars])
    for v, o in zip(eqn.outvars, outs):
      if not isinstance(v, jax_ext_core.DropVar):
        env[v] = o
  return [read(v) for v in jaxpr.outvars]


def _run(jaxpr_like, args) -> list:
  jaxpr, consts = _open(jaxpr_like)
  return _eval_on_key_data(jaxpr, [_as_key_data(c) for c in consts], list(args))


def _eqn_on_key_data(eqn, args) -> list:
  prim, params = eqn.primitive, eqn.params
  avals_in = [v.aval for v in eqn.invars]
  avals_out = [v.aval for v in eqn.outvars]
  keys_here = any(is_key(a) for a in (*avals_in, *avals_out))
  subs = [j for j in _sub_jaxprs(params) if mentions_keys(j)]
  if not keys_here and not subs:
    return equations.bind(eqn, args)
  if prim in (jax_private.random_wrap_p, jax_private.random_unwrap_p) or prim is getattr(
    jax_private, "random_clone_p", None
  ):
    return [args[0]]
  if prim is core_primitives.random_seed_p:
    return [seed_fn(avals_in[0], params["impl"])(*args)]
  if prim is core_primitives.random_split_p:
    return [split_fn(avals_in[0], params["shape"])(*args)]
  if prim is core_primitives.random_fold_in_p:
    return [fold_in_fn(avals_in[0], avals_out[0].shape)(*args)]
  if prim is core_primitives.random_bits_p:
    return [bits_fn(avals_in[0], params["bit_width"], params["shape"])(*args)]
  if prim is core_primitives.random_gamma_p:
    return _run(gamma_jaxpr(avals_in[0], avals_in[1], params["log_space"]), args)
  if prim in CALL_LIKE_PRIMITIVES:
    return _run(call_body(params), args)
  if prim is core_primitives.cond_p:
    index, *ops = args
    branches = [(lambda b: lambda *o: _run(b, o))(b) for b in params["branches"]]
    return list(jax.lax.switch(index, branches, *ops))
  if prim is core_primitives.while_p:
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cconsts, bconsts, init = args[:nc], args[nc : nc + nb], args[nc + nb :]
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    batched = bool(_open(cond_jaxpr)[0].outvars[0].aval.shape)

    def cond(c):
      (pred,) = _run(cond_jaxpr, [*cconsts, *c])
      return jax.numpy.any(pred) if batched else pred

    def body(c):
      new = _run(body_jaxpr, [*bconsts, *c])
      if batched:  # a vmapped loop: only the elements still running advance
        (pred,) = _run(cond_jaxpr, [*cconsts, *c])
        new = [
          jax.numpy.where(pred.reshape(pred.shape + (1,) * (n.ndim - pred.ndim)), n, o)
          for n, o in zip(new, c)
        ]
      return tuple(new)

    return list(jax.lax.while_loop(cond, body, tuple(init)))
  if prim is core_primitives.scan_p:
    return _scan_on_key_data(params, args)
  if subs:
    raise registry.unsupported_params_error(
      prim,
      params,
      "PRNG key arrays inside its sub-computations have no TF "
      "representation here; pass raw uint32 keys (jax.random.key_data) into it",
    )
  return _vmap_over_key_data(prim, params, avals_in, avals_out, args)


def _scan_on_key_data(params, args):
  if params.get("ft_in") is not None:
    consts_g, carry_g, _ = params["ft_in"].unpack()
    n_consts, n_carry = len(consts_g), len(carry_g)
  else:
    n_consts, n_carry = params["num_consts"], params["num_carry"]
  consts, init = args[:n_consts], args[n_consts : n_consts + n_carry]
  xs = args[n_consts + n_carry :]

  def body(carry, x):
    outs = _run(params["jaxpr"], [*consts, *carry, *x])
    return tuple(outs[:n_carry]), tuple(outs[n_carry:])

  carry, ys = jax.lax.scan(
    body,
    tuple(init),
    tuple(xs),
    length=params["length"],
    reverse=params["reverse"],
    unroll=params["unroll"],
  )
  return [*carry, *ys]


def _vmap_over_key_data(prim, params, avals_in, avals_out, args):
  if not any(is_key(a) for a in avals_in):
    if prim.name in ("empty", "empty2"):  # unspecified contents: any key data will do
      return [jax.numpy.zeros(physical_aval(a).shape, physical_aval(a).dtype) for a in avals_out]
    raise registry.unsupported_params_error(
      prim,
      params,
      "it makes PRNG key arrays out of non-key operands; make the "
      "keys with jax.random.key/wrap_key_data instead",
    )
  key_avals = [a for a in (*avals_in, *avals_out) if is_key(a)]
  key_ndim = len(impl_of(key_avals[0]).key_shape)
  key_out = [is_key(a) for a in avals_out]
  if prim in (jax.lax.eq_p, jax.lax.ne_p) and not any(key_out):
    # Keys are equal when all their key data is.
    same = jax.numpy.all(args[0] == args[1], axis=tuple(range(-key_ndim, 0)))
    return [same if prim is jax.lax.eq_p else ~same]
  if not all(key_out):
    raise registry.unsupported_params_error(
      prim,
      params,
      "it maps PRNG key arrays to non-key results; apply it to jax.random.key_data(keys) instead",
    )

  def apply(*xs):
    out = prim.bind(*xs, **params)
    return tuple(out) if prim.multiple_results else out

  fn = apply
  in_axes = tuple(-1 if is_key(a) else None for a in avals_in)
  out_axes = tuple(-1 for _ in avals_out) if prim.multiple_results else -1
  for _ in range(key_ndim):
    fn = jax.vmap(fn, in_axes=in_axes, out_axes=out_axes)
  out = fn(*args)
  return list(out) if prim.multiple_results else [out]
