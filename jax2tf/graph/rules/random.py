"""Pseudo-random numbers: key arrays, threefry2x32, rng_bit_generator.

A key array (a value of JAX's `key<impl>` dtype) travels through the TF graph
as its key data: a uint32 tensor whose shape is the key array's shape followed
by the implementation's key shape ((2,) for threefry, (4,) for rbg). Wrapping
and unwrapping are therefore no-ops.

The key-level primitives (seed, split, fold_in, bits) are defined by the key
implementation's Python functions on key data. Their rules trace those same
functions to a jaxpr and lower it, so the bits follow whatever JAX computes
(including configuration such as `jax_threefry_partitionable`) and only the
primitives underneath (threefry2x32, iota_2x32_shape, rng_bit_generator and
ordinary lax operations) need TF code of their own.

Cases: random_cases.py
"""

import functools

import jax
import numpy as np
import tensorflow as tf
from jax._src import ad_checkpoint
from jax._src import core as jax_src_core
from jax._src.random import prng as jax_prng
import jax.extend.core as jax_ext_core
from jax.extend.core import primitives as core_primitives

from jax2tf.graph.registry import register

try:  # a private module: its location has moved between JAX versions
  from jax._src.random import core as _jax_random_core
except ImportError:  # pragma: no cover
  _jax_random_core = None


def physical_aval(aval):
  """The aval of a value's TF representation (key arrays become key data)."""
  return jax_src_core.physical_aval(aval)


def is_key(aval) -> bool:
  """Whether `aval` (or a value) has a PRNG key dtype."""
  dtype = getattr(aval, "dtype", None)
  try:
    return dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)
  except TypeError:
    return False


def _impl(aval):
  return aval.dtype._impl


def _vmapped(n: int, f):
  for _ in range(n):
    f = jax.vmap(f)
  return f


# The key-level primitives as JAX functions on key data, like JAX's lowerings.

def _seed_fn(seed_aval, impl):
  return _vmapped(len(seed_aval.shape), impl.seed)


def _split_fn(keys_aval, shape):
  impl = _impl(keys_aval)
  return _vmapped(len(keys_aval.shape), lambda k: impl.split(k, shape))


def _fold_in_fn(keys_aval, batch):
  impl = _impl(keys_aval)
  batch = tuple(batch)

  def fn(k, m):
    # Key batch and message shapes broadcast against each other.
    k = jax.numpy.broadcast_to(k, batch + tuple(impl.key_shape))
    m = jax.numpy.broadcast_to(m, batch)
    return _vmapped(len(batch), impl.fold_in)(k, m)
  return fn


def _bits_fn(keys_aval, bit_width, shape):
  impl = _impl(keys_aval)
  return _vmapped(len(keys_aval.shape), lambda k: impl.random_bits(k, bit_width, shape))


def _gamma_jaxpr(keys_aval, a_aval, log_space):
  # JAX lowers random_gamma by the same function on every platform; tracing
  # it keeps the rejection sampler (a while loop) and its bits identical.
  fn = functools.partial(_jax_random_core._gamma_impl, log_space=log_space, use_vmap=True)
  closed = jax.make_jaxpr(fn)(*[jax.ShapeDtypeStruct(a.shape, a.dtype)
                                for a in (keys_aval, a_aval)])
  return key_data_jaxpr(closed)


def _lower_traced(ctx, fn, args, avals):
  """Lowers the JAX function `fn` of key data applied to `args` (avals `avals`)."""
  specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals]
  closed = key_data_jaxpr(jax.make_jaxpr(fn)(*specs))
  return ctx.lower_jaxpr(closed, args)


@register(jax_prng.random_wrap_p)
def _random_wrap(ctx, base_arr, *, impl):
  del impl  # the TF value is the key data either way
  return base_arr


@register(jax_prng.random_unwrap_p)
def _random_unwrap(ctx, keys):
  return keys


if _jax_random_core is not None and hasattr(_jax_random_core, "random_clone_p"):
  @register(_jax_random_core.random_clone_p)
  def _random_clone(ctx, keys):
    return keys


@register(jax_prng.random_seed_p)
def _random_seed(ctx, seeds, *, impl):
  return _lower_traced(ctx, _seed_fn(ctx.avals_in[0], impl), [seeds], ctx.avals_in)[0]


@register(jax_prng.random_split_p)
def _random_split(ctx, keys, *, shape):
  aval, = ctx.avals_in
  return _lower_traced(ctx, _split_fn(aval, shape), [keys], [physical_aval(aval)])[0]


@register(jax_prng.random_fold_in_p)
def _random_fold_in(ctx, keys, msgs):
  keys_aval, msgs_aval = ctx.avals_in
  fn = _fold_in_fn(keys_aval, ctx.aval_out.shape)
  return _lower_traced(ctx, fn, [keys, msgs], [physical_aval(keys_aval), msgs_aval])[0]


@register(jax_prng.random_bits_p)
def _random_bits(ctx, keys, *, bit_width, shape):
  aval, = ctx.avals_in
  fn = _bits_fn(aval, bit_width, shape)
  return _lower_traced(ctx, fn, [keys], [physical_aval(aval)])[0]


if _jax_random_core is not None and hasattr(_jax_random_core, "_gamma_impl"):
  @register(core_primitives.random_gamma_p)
  def _random_gamma(ctx, keys, a, *, log_space):
    closed = _gamma_jaxpr(ctx.avals_in[0], ctx.avals_in[1], log_space)
    return ctx.lower_jaxpr(closed, [keys, a])[0]


# -- jaxprs on key data
#
# Any primitive may take key arrays: slicing, reshaping, selecting, carrying
# them through loops. JAX lowers those on the key data with trailing key
# dimensions; here a jaxpr that mentions keys is re-traced into one on key
# data, where a structural primitive applied to keys is vmapped over the
# trailing key-data axes (the key data of one key moves as a unit).

_CALL_JAXPR_PARAM = {
    core_primitives.jit_p: "jaxpr",
    core_primitives.closed_call_p: "call_jaxpr",
    core_primitives.call_p: "call_jaxpr",
    ad_checkpoint.remat_p: "jaxpr",
    core_primitives.custom_jvp_call_p: "call_jaxpr",
    core_primitives.custom_vjp_call_p: "call_jaxpr",
}


def _sub_jaxprs(params):
  for v in params.values():
    for item in (v if isinstance(v, (tuple, list)) else (v,)):
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
  specs = [jax.ShapeDtypeStruct(physical_aval(v.aval).shape, physical_aval(v.aval).dtype)
           for v in jaxpr.invars]
  consts = [_as_key_data(c) for c in consts]
  return jax.make_jaxpr(lambda *args: _eval_on_key_data(jaxpr, consts, args))(*specs)


_key_data_jaxpr_cached = functools.lru_cache(maxsize=256)(_key_data_jaxpr)


def _as_key_data(value):
  return jax.random.key_data(value) if is_key(value) else value


def _eval_on_key_data(jaxpr, consts, args) -> list:
  env = {}

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
    # Higher-order primitives (custom_jvp_call, ...) rebuild their
    # sub-computations as bind-time functions from the equation's parameters.
    out = prim.bind(*args, **prim.get_bind_params(params))
    return list(out) if prim.multiple_results else [out]
  if prim in (jax_prng.random_wrap_p, jax_prng.random_unwrap_p) or \
      prim is getattr(_jax_random_core, "random_clone_p", None):
    return [args[0]]
  if prim is jax_prng.random_seed_p:
    return [_seed_fn(avals_in[0], params["impl"])(*args)]
  if prim is jax_prng.random_split_p:
    return [_split_fn(avals_in[0], params["shape"])(*args)]
  if prim is jax_prng.random_fold_in_p:
    return [_fold_in_fn(avals_in[0], avals_out[0].shape)(*args)]
  if prim is jax_prng.random_bits_p:
    return [_bits_fn(avals_in[0], params["bit_width"], params["shape"])(*args)]
  if prim is core_primitives.random_gamma_p:
    return _run(_gamma_jaxpr(avals_in[0], avals_in[1], params["log_space"]), args)
  if prim in _CALL_JAXPR_PARAM:
    return _run(params[_CALL_JAXPR_PARAM[prim]], args)
  if prim is core_primitives.cond_p:
    index, *ops = args
    branches = [(lambda b: lambda *o: _run(b, o))(b) for b in params["branches"]]
    return list(jax.lax.switch(index, branches, *ops))
  if prim is core_primitives.while_p:
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cconsts, bconsts, init = args[:nc], args[nc:nc + nb], args[nc + nb:]
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    batched = bool(_open(cond_jaxpr)[0].outvars[0].aval.shape)

    def cond(c):
      pred, = _run(cond_jaxpr, [*cconsts, *c])
      return jax.numpy.any(pred) if batched else pred

    def body(c):
      new = _run(body_jaxpr, [*bconsts, *c])
      if batched:  # a vmapped loop: only the elements still running advance
        pred, = _run(cond_jaxpr, [*cconsts, *c])
        new = [jax.numpy.where(pred.reshape(pred.shape + (1,) * (n.ndim - pred.ndim)), n, o)
               for n, o in zip(new, c)]
      return tuple(new)

    return list(jax.lax.while_loop(cond, body, tuple(init)))
  if prim is core_primitives.scan_p:
    return _scan_on_key_data(params, args)
  if subs:
    raise NotImplementedError(
        f"graph serialization cannot convert '{prim}' with PRNG key arrays inside its "
        "sub-computations; use raw uint32 keys (jax.random.key_data) there")
  return _vmap_over_key_data(prim, params, avals_in, avals_out, args)


def _scan_on_key_data(params, args):
  if params.get("ft_in") is not None:
    consts_g, carry_g, _ = params["ft_in"].unpack()
    n_consts, n_carry = len(consts_g), len(carry_g)
  else:
    n_consts, n_carry = params["num_consts"], params["num_carry"]
  consts, init = args[:n_consts], args[n_consts:n_consts + n_carry]
  xs = args[n_consts + n_carry:]

  def body(carry, x):
    outs = _run(params["jaxpr"], [*consts, *carry, *x])
    return tuple(outs[:n_carry]), tuple(outs[n_carry:])

  carry, ys = jax.lax.scan(body, tuple(init), tuple(xs), length=params["length"],
                           reverse=params["reverse"], unroll=params["unroll"])
  return [*carry, *ys]


def _vmap_over_key_data(prim, params, avals_in, avals_out, args):
  if not any(is_key(a) for a in avals_in):
    if prim.name in ("empty", "empty2"):  # unspecified contents: any key data will do
      return [jax.numpy.zeros(physical_aval(a).shape, physical_aval(a).dtype)
              for a in avals_out]
    raise NotImplementedError(
        f"graph serialization cannot convert '{prim}' producing PRNG key arrays")
  key_avals = [a for a in (*avals_in, *avals_out) if is_key(a)]
  key_ndim = len(_impl(key_avals[0]).key_shape)
  key_out = [is_key(a) for a in avals_out]
  if prim in (jax.lax.eq_p, jax.lax.ne_p) and not any(key_out):
    # Keys are equal when all their key data is.
    same = jax.numpy.all(args[0] == args[1], axis=tuple(range(-key_ndim, 0)))
    return [same if prim is jax.lax.eq_p else ~same]
  if not all(key_out):
    raise NotImplementedError(
        f"graph serialization cannot convert '{prim}' on PRNG key arrays with "
        "non-key results")

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


# Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as
# easy as 1, 2, 3", SC 2011): the rotation schedule and the key-schedule parity
# constant of that paper. uint32 arithmetic in TF wraps like JAX's.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KS_PARITY = 0x1BD11BDA


def _u32(c):
  return tf.constant(c, tf.uint32)


def _rotate_left(x, r: int):
  return tf.bitwise.bitwise_or(tf.bitwise.left_shift(x, _u32(r)),
                               tf.bitwise.right_shift(x, _u32(32 - r)))


@register(core_primitives.threefry2x32_p)
def _threefry2x32(ctx, k1, k2, x1, x2):
  ks = [k1, k2, tf.bitwise.bitwise_xor(tf.bitwise.bitwise_xor(k1, k2), _u32(_KS_PARITY))]
  a, b = x1 + ks[0], x2 + ks[1]
  for group in range(5):
    for r in _ROTATIONS[group % 2]:
      a = a + b
      b = tf.bitwise.bitwise_xor(_rotate_left(b, r), a)
    a = a + ks[(group + 1) % 3]
    b = b + ks[(group + 2) % 3] + _u32(group + 1)
  out_shape = ctx.shape(ctx.avals_out[0].shape)
  # The operands broadcast; a result that only saw scalars needs the full shape.
  return [tf.broadcast_to(a, out_shape), tf.broadcast_to(b, out_shape)]


@register(jax_prng.iota_2x32_shape_p)
def _iota_2x32_shape(ctx, *, shape):
  # The row-major position of each element as a 64-bit count, split in halves.
  size = 1
  for d in shape:
    size = size * ctx.dim(d)
  counts = tf.range(tf.cast(size, tf.int64), dtype=tf.int64)
  lo = tf.cast(tf.bitwise.bitwise_and(counts, tf.constant(0xFFFFFFFF, tf.int64)), tf.uint32)
  hi = tf.cast(tf.bitwise.right_shift(counts, tf.constant(32, tf.int64)), tf.uint32)
  out_shape = ctx.shape(shape)
  return [tf.reshape(hi, out_shape), tf.reshape(lo, out_shape)]


# XLA's RandomAlgorithm (as in jax.lax.RandomAlgorithm) -> TF's Algorithm ints
# that XlaRngBitGenerator takes: PHILOX=1, THREEFRY=2, AUTO_SELECT=3.
_TF_RNG_ALGORITHM = {0: 3, 1: 2, 2: 1}


@register(core_primitives.rng_bit_generator_p, no_xla=False)
def _rng_bit_generator(ctx, key, *, shape, dtype, algorithm, out_sharding=None):
  del out_sharding
  from tensorflow.compiler.tf2xla.python import xla as tfxla  # pylint: disable=g-import-not-at-top
  dtype = np.dtype(dtype)
  key_aval = ctx.avals_in[0]
  # JAX keeps the state as u32[4]; the XLA op takes it as u64[2].
  as_u32 = np.dtype(key_aval.dtype) == np.uint32
  state = tf.bitcast(tf.reshape(key, [2, 2]), tf.uint64) if as_u32 else key
  # XlaRngBitGenerator has no uint16 output; JAX's uint16 bits are the low
  # halves of the uint32 bits (checked against JAX on CPU).
  gen_dtype = tf.uint32 if dtype == np.uint16 else tf.as_dtype(dtype)
  new_state, bits = tfxla.rng_bit_generator(
      _TF_RNG_ALGORITHM[int(getattr(algorithm, "value", algorithm))], state,
      ctx.shape(shape), gen_dtype)
  if gen_dtype != tf.as_dtype(dtype):
    bits = tf.cast(bits, tf.as_dtype(dtype))
  if as_u32:
    new_state = tf.reshape(tf.bitcast(new_state, tf.uint32), [4])
  return [new_state, bits]


@register(core_primitives.rng_uniform_p)
def _rng_uniform(ctx, minval, maxval, *, shape):
  # JAX gives no guarantee about these bits (XLA's stateful RngUniform); only
  # the distribution and the range [minval, maxval) carry over.
  return tf.random.uniform(ctx.shape(shape), minval, maxval, dtype=ctx.tf_dtype())
