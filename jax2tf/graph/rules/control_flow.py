"""Control flow: cond/switch, while_loop/fori_loop and scan, as TF control flow.

Branches and loop bodies are sub-jaxprs lowered inside TF's functional
control flow (If/Case/While ops in graphs). Loop-carried values keep the
shapes of their avals: a symbolic dimension becomes an unknown (None) TF
dimension in the loop's shape invariants, every constant one stays fixed.

Cases: tests/cases/control_flow.py
"""

import tensorflow as tf
from jax import lax
from jax.extend.core import primitives as core_primitives

from jax2tf.graph import registry, scan_hoisting
from jax2tf.graph.key_data import key_data_jaxpr
from jax2tf.graph.registry import register
from jax2tf.internals import jax_private, tf_private
from jax2tf.shapes import dim_eval


def physical_aval(aval):
  """The aval of a value's TF representation (key arrays become key data)."""
  return jax_private.physical_aval(aval)


def _static_shape(aval) -> tf.TensorShape:
  """The TF static shape of a value of `aval`: None where the dim is symbolic."""
  shape = physical_aval(aval).shape
  return tf.TensorShape([int(d) if dim_eval.is_constant(d) else None for d in shape])


def _tf_dtype(ctx, aval) -> tf.DType:
  """The TF dtype holding `aval` (key arrays as their key data)."""
  return ctx.tf_dtype(physical_aval(aval))


def _keep_shapes(values, shapes):
  """Gives loop-body results at least the static shapes of the loop invariants.

  A body may compute a dimension the graph cannot infer statically (e.g. a
  reshape to a computed shape) although JAX knows it is unchanged; TF's
  while_loop would then reject the iteration as changing the shape.
  """
  if tf.executing_eagerly():
    return list(values)
  out = []
  for v, s in zip(values, shapes):
    merged = v.shape.merge_with(s)
    if v.shape.rank is None or merged.as_list() != v.shape.as_list():
      v = tf.ensure_shape(v, merged)
    out.append(v)
  return out


# -- buffers whose contents JAX leaves unspecified


@register(jax_private.empty_p)
def _empty(ctx, *, shape, dtype, out_sharding=None):
  # Loop and branch residuals that JAX allocates without initialising; any
  # value is correct, zeros are deterministic.
  del shape, dtype, out_sharding
  aval = ctx.aval_out
  return tf.zeros(ctx.shape(physical_aval(aval).shape), _tf_dtype(ctx, aval))


@register(core_primitives.empty2_p)
def _empty2(ctx, *, dtype, memory_space=None):
  del dtype, memory_space
  aval = ctx.aval_out
  return tf.zeros(ctx.shape(physical_aval(aval).shape), _tf_dtype(ctx, aval))


# -- cond / switch


def _branch_index_in_range(i: int, n: int) -> int:
  # XLA's Conditional runs the last branch for an out-of-range index.
  return i if 0 <= i < n else n - 1


# Tokens order side effects in XLA. The graph's ops carry no such effects
# (callbacks are refused), so a token is a placeholder that nothing reads.
@register(lax.create_token_p)
def _create_token(ctx, *_):
  return tf.constant(False)


@register(lax.after_all_p)
def _after_all(ctx, *tokens):
  del tokens
  return tf.constant(False)


@register(jax_private.check_p, uint32_as_int32_bits=True)
def _check(ctx, *err_args, err_tree, debug):
  # checkify.debug_check does nothing unless checkify.checkify functionalizes
  # it (then it is ordinary ops, and no check is left). A plain checkify.check
  # that was not functionalized is refused by jax.jit too, with this error;
  # JAX's jax_xla_runtime_errors mode raises it from a Python callback at run
  # time, which a TF graph cannot call.
  del ctx, err_args, err_tree
  if not debug:
    raise ValueError(
      "Graph serialization met a checkify.check that was not functionalized: wrap "
      "the function in checkify.checkify before converting it (and return or "
      "raise its error outside), or use checkify.debug_check, which is a no-op "
      "outside checkify.checkify. jax.jit refuses such a check the same way."
    )
  return []


@register(core_primitives.cond_p, uint32_as_int32_bits=True)
def _cond(ctx, index, *operands, branches, **_):
  # Other parameters (e.g. `linear` in some JAX versions) are hints for
  # differentiation; the forward computation does not depend on them.
  fns = [(lambda b=b: ctx.lower_jaxpr(key_data_jaxpr(b), operands)) for b in branches]
  if len(fns) == 1:
    return fns[0]()
  if tf.executing_eagerly():
    # Only the chosen branch runs, as it would in JAX.
    return fns[_branch_index_in_range(int(index.numpy()), len(fns))]()
  if not ctx.avals_out:
    return []
  out_shapes = [_static_shape(a) for a in ctx.avals_out]
  if len(fns) == 2:
    # index 0 runs branches[0]; any other value, the last branch.
    outs = tf.cond(tf.equal(index, tf.constant(0, index.dtype)), fns[0], fns[1])
  else:
    outs = tf.switch_case(tf.cast(index, tf.int32), fns)
  return _keep_shapes(list(outs), out_shapes)


@register(jax_private.platform_index_p)
def _platform_index(ctx, *, platforms, **_):
  # lax.platform_dependent: JAX resolves the index when it lowers for a
  # platform. Graph serialization emits portable TF ops, whose semantics the
  # rules take from JAX on CPU, so the CPU branch is the one to run (the
  # branches compute the same function, each tuned for its platform); without
  # one, the default branch (None) is what JAX runs on CPU.
  for wanted in ("cpu", None):
    for i, ps in enumerate(platforms):
      if ps == wanted or (ps is not None and wanted in ps):
        return tf.constant(i, tf.int32)
  raise registry.unsupported_params_error(
    ctx.primitive,
    dict(platforms=platforms),
    "lax.platform_dependent has neither a 'cpu' nor a default branch",
  )


# -- while


@register(core_primitives.while_p, uint32_as_int32_bits=True)
def _while(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  cond_consts = list(args[:cond_nconsts])
  body_consts = list(args[cond_nconsts : cond_nconsts + body_nconsts])
  init = list(args[cond_nconsts + body_nconsts :])
  shapes = [_static_shape(a) for a in ctx.avals_in[cond_nconsts + body_nconsts :]]
  cond_jaxpr, body_jaxpr = key_data_jaxpr(cond_jaxpr), key_data_jaxpr(body_jaxpr)

  # A vmapped loop whose predicate is batched runs while any element's
  # predicate holds, and advances only the elements whose predicate holds.
  batched = bool(ctx.avals_in and _cond_out_aval(cond_jaxpr).shape)

  def cond(*carry):
    (pred,) = ctx.lower_jaxpr(cond_jaxpr, cond_consts + list(carry))
    return tf.reduce_any(pred) if batched else pred

  def body(*carry):
    new = ctx.lower_jaxpr(body_jaxpr, body_consts + list(carry))
    if batched:
      (pred,) = ctx.lower_jaxpr(cond_jaxpr, cond_consts + list(carry))
      new = [_select_leading(pred, n, old) for n, old in zip(new, carry)]
    return tuple(_keep_shapes(new, shapes))

  if not init:
    raise registry.unsupported_params_error(
      ctx.primitive,
      {"loop-carried values": 0},
      "TF's while_loop needs at least one loop-carried value; a loop that carries "
      "nothing leaves nothing for the function to return, so remove it",
    )
  outs = tf.while_loop(cond, body, tuple(init), shape_invariants=tuple(shapes))
  return list(outs)


def _cond_out_aval(cond_jaxpr):
  jaxpr = cond_jaxpr.jaxpr if hasattr(cond_jaxpr, "consts") else cond_jaxpr
  return jaxpr.outvars[0].aval


def _select_leading(pred, on_true, on_false):
  """where(pred, on_true, on_false) with `pred` covering the leading dims."""
  extra = len(on_true.shape) - len(pred.shape)
  if extra:
    pred = tf.reshape(pred, tf.concat([tf.shape(pred), tf.ones([extra], tf.int32)], 0))
    pred = tf.broadcast_to(pred, tf.shape(on_true))
  return tf.where(pred, on_true, on_false)


# -- scan


def _scan_counts(num_consts, num_carry, ft_in):
  if ft_in is not None:  # newer JAX: the groups (consts, carry, xs) of a flat tree
    consts, carry, _ = ft_in.unpack()
    return len(consts), len(carry)
  return num_consts, num_carry


@register(core_primitives.scan_p, uint32_as_int32_bits=True)
def _scan(
  ctx,
  *args,
  reverse,
  length,
  jaxpr,
  unroll,
  num_consts=None,
  num_carry=None,
  ft_in=None,
  ft_out=None,
  linear=None,
  _split_transpose=False,
):
  # `unroll`, `linear` and `_split_transpose` only shape how XLA or the
  # transposition sees the loop; the values are those of a plain loop.
  del unroll, linear, _split_transpose, ft_out
  n_consts, n_carry = _scan_counts(num_consts, num_carry, ft_in)
  consts = list(args[:n_consts])
  init = list(args[n_consts : n_consts + n_carry])
  xs = list(args[n_consts + n_carry :])
  carry_shapes = [_static_shape(a) for a in ctx.avals_in[n_consts : n_consts + n_carry]]
  y_avals = ctx.avals_out[n_carry:]
  y_shapes = [_static_shape(a)[1:] for a in y_avals]
  n = ctx.dim(length)
  jaxpr = key_data_jaxpr(jaxpr)

  if isinstance(n, int) and n == 0:
    return init + [tf.zeros(ctx.shape(physical_aval(a).shape), _tf_dtype(ctx, a)) for a in y_avals]

  # XLA reads a scan's joined input projections slower (sibling_matmuls).
  join = not tf_private.tracing_for_xla()
  hoisted = scan_hoisting.split(jaxpr, n_consts, n_carry, n, join_groups=join)
  if hoisted is not None:
    before = ctx.lower_jaxpr(hoisted.before, consts + (xs if hoisted.takes_xs else []))
    consts = consts + before[: hoisted.n_invariant]
    xs = [xs[i] for i in hoisted.xs_kept] + before[hoisted.n_invariant :]
    jaxpr = hoisted.body

  scan = _scan_in_tensor_arrays
  if any(d is None for s in y_shapes for d in s):
    # TFLite's converter lowers the TensorArray writes (TensorListSetItem)
    # only for a static element shape.
    scan = ctx.kernel_or("TensorListSetItem", scan, _scan_scattering)
  return scan(ctx, jaxpr, consts, init, xs, n, reverse, carry_shapes, y_avals)


def _scan_in_tensor_arrays(ctx, jaxpr, consts, init, xs, n, reverse, carry_shapes, y_avals):
  """The scan with its per-step outputs written into TensorArrays."""
  n_carry = len(init)
  y_shapes = [_static_shape(a)[1:] for a in y_avals]

  def body(i, carry, ys):
    idx = (n - 1 - i) if reverse else i
    x_i = [tf.gather(x, idx) for x in xs]
    outs = ctx.lower_jaxpr(jaxpr, consts + list(carry) + x_i)
    new_carry = _keep_shapes(outs[:n_carry], carry_shapes)
    ys = [ta.write(idx, y) for ta, y in zip(ys, outs[n_carry:])]
    return i + 1, tuple(new_carry), tuple(ys)

  ys0 = tuple(
    tf.TensorArray(_tf_dtype(ctx, a), size=n, element_shape=s, infer_shape=True)
    for a, s in zip(y_avals, y_shapes)
  )
  i0 = tf.constant(0, tf.int32)
  _, carry, ys = tf.while_loop(
    lambda i, *_: i < n,
    body,
    (i0, tuple(init), ys0),
    shape_invariants=(i0.shape, tuple(carry_shapes), tuple(tf.TensorShape([]) for _ in ys0)),
    maximum_iterations=n,
  )
  return list(carry) + [_stacked(ta, s) for ta, s in zip(ys, y_shapes)]


def _scan_scattering(ctx, jaxpr, consts, init, xs, n, reverse, carry_shapes, y_avals):
  """The scan with its per-step outputs written into full-size buffers by
  scatter, for outputs of dynamic size without XLA: TFLite's converter
  lowers the TensorArray of the other path only for a static element shape."""
  n_carry = len(init)

  def body(i, carry, ys):
    idx = (n - 1 - i) if reverse else i
    x_i = [tf.gather(x, idx) for x in xs]
    outs = ctx.lower_jaxpr(jaxpr, consts + list(carry) + x_i)
    new_carry = _keep_shapes(outs[:n_carry], carry_shapes)
    at = tf.reshape(idx, [1, 1])
    ys = [tf.tensor_scatter_nd_update(acc, at, y[None]) for acc, y in zip(ys, outs[n_carry:])]
    return i + 1, tuple(new_carry), tuple(ys)

  ys0 = tuple(tf.zeros(ctx.shape(physical_aval(a).shape), _tf_dtype(ctx, a)) for a in y_avals)
  i0 = tf.constant(0, tf.int32)
  _, carry, ys = tf.while_loop(
    lambda i, *_: i < n,
    body,
    (i0, tuple(init), ys0),
    shape_invariants=(i0.shape, tuple(carry_shapes), tuple(_static_shape(a) for a in y_avals)),
    maximum_iterations=n,
  )
  return list(carry) + list(ys)


def _stacked(ta, element_shape):
  res = ta.stack()
  if not tf.executing_eagerly():
    res = _keep_shapes([res], [tf.TensorShape([None]).concatenate(element_shape)])[0]
  return res
