"""Groups of equations lowered as one TF op, where JAX's program has the
structure of an op TF (and TFLite, TF.js) computes as a whole.

`jax.nn.softmax` (and `log_softmax`) reaches the jaxpr as nine equations (a max reduction made
NaN- and signed-zero-aware, a subtraction, exp, a sum, a division, and the
broadcasts between them). One by one they become some twenty TF ops; as a
whole they are TF's Softmax (LogSoftmax), which TFLite runs as one SOFTMAX
(LOG_SOFTMAX) kernel, and which its int8 quantization gives a fixed output
range instead of one calibrated range per intermediate value. A
group is fused only when its intermediate values are used nowhere else, so
nothing outside it can tell the difference.

`jax.nn.relu` of a sum with a broadcast operand (a bias, a batch norm's
shift), and of a residual sum of one, is TF's Relu alone. JAX's relu gives
+0.0 for -0.0, TF's Relu keeps -0.0, and telling the zeros apart costs two ops
over the whole activation (or an Abs, which XLA drops). A sum is -0.0 only
where both of its terms are; so making the broadcast term's zeros +0.0, a few
ops on a vector (constants where the bias is one), leaves the sum no -0.0 for
Relu to keep, and TF's graph optimizer and converters see a plain biased
Relu.

A dense layer (a dot_general over trailing axes, a bias, and maybe
`jax.nn.gelu`'s tanh form) is a MatMul, BiasAdd and GELU on the rows
flattened to two dimensions, which TF's graph optimizer fuses into one
kernel, and one Reshape after them.

`plan(jaxpr, hide)` finds the groups; the interpreter lowers each group at its last
equation and skips the others. Nothing here lowers a single primitive: that
is the rules' job.
"""

import collections
import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import tensorflow as tf

from jax2tf.graph import semantics
from jax2tf.shapes import dim_eval

Hide = Callable[[tf.Tensor, str], tf.Tensor]


@dataclasses.dataclass(frozen=True)
class Fused:
  name: str  # the TF name scope of the group
  inputs: tuple  # jaxpr variables the group reads
  members: frozenset  # indices of its equations; the last one gives the output
  lower: Callable[..., tf.Tensor]  # lower(*input tensors) -> the output


def is_var(v) -> bool:
  """Whether a jaxpr operand is a variable (not a literal)."""
  return hasattr(v, "count") or not hasattr(v, "val")


class _Graph:
  """Producers, readers and use counts of a jaxpr's variables."""

  def __init__(self, jaxpr):
    self.eqns = jaxpr.eqns
    self.producer: dict = {}
    self.uses: collections.Counter = collections.Counter()
    # The equations reading each variable, once per operand that reads it.
    self.readers: dict = collections.defaultdict(list)
    for i, eqn in enumerate(jaxpr.eqns):
      for v in eqn.invars:
        if is_var(v):
          self.uses[v] += 1
          self.readers[v].append(i)
      for v in eqn.outvars:
        self.producer[v] = i
    for v in jaxpr.outvars:
      if is_var(v):
        self.uses[v] += 1

  def made_by(self, v, name: str, uses: int = 1):
    """The index of the equation named `name` producing `v`, if `v` is used
    exactly `uses` times; else None."""
    if not is_var(v) or self.uses[v] != uses:
      return None
    i = self.producer.get(v)
    if i is None or self.eqns[i].primitive.name != name:
      return None
    return i


def _literal(v, value) -> bool:
  if is_var(v):
    return False
  return np.asarray(v.val).shape == () and np.asarray(v.val) == value


def _shifted_by_max(g: _Graph, sub_i: int, members: list):
  """`x` where equation `sub_i` is `x - stop_gradient(max(reduce_max(x), -inf))`
  broadcast back over x's last axis, as jax.nn.softmax and log_softmax shift
  their input (adding the equations to `members`); else None."""
  x, shift = g.eqns[sub_i].invars
  i = g.made_by(shift, "stop_gradient")
  if i is not None:
    members.append(i)
    shift = g.eqns[i].invars[0]
  bmax_i = g.made_by(shift, "broadcast_in_dim")
  if bmax_i is None:
    return None
  members.append(bmax_i)
  m = g.eqns[bmax_i].invars[0]
  i = g.made_by(m, "max")
  if i is not None:
    a, b = g.eqns[i].invars
    if not (_literal(a, -np.inf) or _literal(b, -np.inf)):
      return None
    members.append(i)
    m = b if _literal(a, -np.inf) else a
  max_i = g.made_by(m, "reduce_max")
  if max_i is None or g.eqns[max_i].invars[0] is not x:
    return None
  members.append(max_i)
  if not _over_last_axis(g, x, reductions=(max_i,), broadcasts=(bmax_i,)):
    return None
  return x


def _over_last_axis(g: _Graph, x, reductions, broadcasts) -> bool:
  """Whether the reductions are over float32 `x`'s last axis and the
  broadcasts put their results back along it."""
  rank = len(x.aval.shape)
  return (
    rank > 0
    and np.dtype(x.aval.dtype) == np.float32
    and all(tuple(g.eqns[j].params["axes"]) == (rank - 1,) for j in reductions)
    and all(
      tuple(g.eqns[j].params["broadcast_dimensions"]) == tuple(range(rank - 1))
      and g.eqns[j].outvars[0].aval.shape[-1] == 1
      for j in broadcasts
    )
  )


def _softmax_ending_at(g: _Graph, end: int, hide: Hide) -> Fused | None:
  """jax.nn.softmax(x) over x's last axis, ending with `div(e, sum)`."""
  div = g.eqns[end]
  e, denominator = div.invars
  exp_i = g.made_by(e, "exp", uses=2)
  bsum_i = g.made_by(denominator, "broadcast_in_dim")
  if exp_i is None or bsum_i is None:
    return None
  sum_i = g.made_by(g.eqns[bsum_i].invars[0], "reduce_sum")
  if sum_i is None or g.eqns[sum_i].invars[0] is not e:
    return None
  sub_i = g.made_by(g.eqns[exp_i].invars[0], "sub")
  if sub_i is None:
    return None
  members = [end, exp_i, bsum_i, sum_i, sub_i]
  x = _shifted_by_max(g, sub_i, members)
  if x is None or not _over_last_axis(g, x, reductions=(sum_i,), broadcasts=(bsum_i,)):
    return None
  if _summed_over_last_axis_by_every_reader(g, div.outvars[0]):
    return Fused("softmax", (x,), frozenset(members), _softmax_rows_summed)
  return Fused("softmax", (x,), frozenset(members), _softmax)


def _summed_over_last_axis_by_every_reader(g: _Graph, v) -> bool:
  """Whether every reader of `v` is a dot_general that contracts v's last
  axis (attention's probabilities times the values): each of its results
  sums a product with every element of a row, so one NaN in the row makes
  the result NaN, as a row of NaN does."""
  last = len(v.aval.shape) - 1
  readers = g.readers.get(v, [])
  for i in set(readers):
    eqn = g.eqns[i]
    if eqn.primitive.name != "dot_general":
      return False
    contracting = eqn.params["dimension_numbers"][0]
    if any(last not in contracting[k] for k, u in enumerate(eqn.invars) if u is v):
      return False
  # A use outside the equations (the jaxpr's result) sees the row itself.
  return len(readers) == g.uses[v]


def _softmax(x: tf.Tensor) -> tf.Tensor:
  s = tf.nn.softmax(x, axis=-1)
  # XLA's (and JAX's) softmax gives a row of NaN where the row holds a NaN or
  # +inf (x - max is NaN there, and so is the sum); TF's CPU kernel gives NaN
  # at those entries only. Each such row has a NaN, so its sum is NaN, and
  # adding 0 * sum spreads it; other rows sum to about 1 and stay unchanged.
  return s + tf.zeros([], s.dtype) * tf.reduce_sum(s, axis=-1, keepdims=True)


def _softmax_rows_summed(x: tf.Tensor) -> tf.Tensor:
  # Read only by sums over its rows, which a single NaN of a row already
  # makes NaN: spreading it (a reduction and an add over the whole tensor,
  # 8% of a Transformer LM's time in TF without XLA) would change no result.
  return tf.nn.softmax(x, axis=-1)


def _log_softmax_ending_at(g: _Graph, end: int, hide: Hide) -> Fused | None:
  """jax.nn.log_softmax(x) over x's last axis, ending with
  `sub(shifted, log(sum(exp(shifted))))`."""
  shifted, log_sum = g.eqns[end].invars
  sub_i = g.made_by(shifted, "sub", uses=2)
  log_i = g.made_by(log_sum, "log")
  if sub_i is None or log_i is None:
    return None
  bsum_i = g.made_by(g.eqns[log_i].invars[0], "broadcast_in_dim")
  if bsum_i is None:
    return None
  sum_i = g.made_by(g.eqns[bsum_i].invars[0], "reduce_sum")
  if sum_i is None:
    return None
  exp_i = g.made_by(g.eqns[sum_i].invars[0], "exp")
  if exp_i is None or g.eqns[exp_i].invars[0] is not shifted:
    return None
  members = [end, sub_i, log_i, bsum_i, sum_i, exp_i]
  x = _shifted_by_max(g, sub_i, members)
  if x is None or not _over_last_axis(g, x, reductions=(sum_i,), broadcasts=(bsum_i,)):
    return None
  return Fused("log_softmax", (x,), frozenset(members), _log_softmax)


def _log_softmax(x: tf.Tensor) -> tf.Tensor:
  return tf.nn.log_softmax(x, axis=-1)


def _relu_operand(eqn):
  """The variable that `eqn` computes max(v, +0.0) of, directly or as the
  one equation of a call (jax.nn.relu is a custom_jvp of a jit of it);
  else None."""
  name = eqn.primitive.name
  if name == "max":
    a, b = eqn.invars
    for v, zero in ((a, b), (b, a)):
      if is_var(v) and _literal(zero, 0.0) and not np.signbit(np.asarray(zero.val)):
        return v
    return None
  inner = eqn.params.get("call_jaxpr", eqn.params.get("jaxpr"))
  if name not in _CALLS or inner is None or len(eqn.invars) != 1:
    return None
  inner = getattr(inner, "jaxpr", inner)
  if len(inner.eqns) != 1 or list(inner.outvars) != list(inner.eqns[0].outvars):
    return None
  if _relu_operand(inner.eqns[0]) is not inner.invars[0]:
    return None
  return eqn.invars[0]


_CALLS = ("custom_jvp_call", "jit", "pjit")


def _broadcast_into(v, out) -> bool:
  """Whether operand `v` of an elementwise op is broadcast into its result
  `out` (a literal, or size 1 along an axis where `out` is not)."""
  shape = v.aval.shape if is_var(v) else np.shape(v.val)
  out_shape = out.aval.shape
  if len(shape) == 0:
    return True
  return len(shape) == len(out_shape) and any(
    _is_one(d) and not _is_one(o) for d, o in zip(shape, out_shape)
  )


def _is_one(d) -> bool:
  # A symbolic dimension is not an int, and may be 1 or more.
  return isinstance(d, (int, np.integer)) and d == 1


def _sum_without_negative_zero(g: _Graph, v, members: list, hide: Hide, depth: int = 2):
  """How to compute `v`, a float32 `add` used once, with no -0.0: as
  `p + q` with the zeros of its broadcast operand `q` made +0.0, or as a sum
  of such a sum (up to `depth` adds deep: a residual block's). Returns the
  operands and a function of their tensors, adding the adds to `members`;
  else None."""
  i = g.made_by(v, "add")
  if i is None:
    return None
  x, y = g.eqns[i].invars
  out = g.eqns[i].outvars[0]
  if np.dtype(out.aval.dtype) != np.float32:
    return None

  def add(a, b):
    # As the add rule adds: a sum of sums is not left for grappler to regroup.
    return tf.add(*semantics.in_written_order(a, b, semantics.SUMS, hide))

  for p, q in ((x, y), (y, x)):
    if is_var(p) and _broadcast_into(q, out):
      members.append(i)
      return (p, q), lambda tp, tq: add(tp, semantics.positive_zeros(tq))
  if depth > 1:
    for p, q in ((x, y), (y, x)):
      found = _sum_without_negative_zero(g, p, members, hide, depth - 1)
      if found is not None:
        members.append(i)
        operands, build = found
        n = len(operands)
        return (*operands, q), lambda *ts: add(build(*ts[:n]), ts[n])
  return None


def _relu_ending_at(g: _Graph, end: int, hide: Hide) -> Fused | None:
  """jax.nn.relu (or lax.max(x, 0.0)) of a sum with a broadcast term."""
  x = _relu_operand(g.eqns[end])
  if x is None:
    return None
  members = [end]
  found = _sum_without_negative_zero(g, x, members, hide)
  if found is None:
    return None
  operands, build = found

  def lower(*ts):
    # The sum holds no -0.0, so TF's Relu gives JAX's answer: +0.0 for every
    # zero, NaN for NaN; hidden, the sum keeps the Relu out of a fused
    # oneDNN kernel, whose Relu turns NaN into 0.
    return tf.nn.relu(hide(build(*ts), "fused_relu"))

  return Fused("relu", operands, frozenset(members), lower)


def _float32_literal(v, value) -> bool:
  return not is_var(v) and np.shape(v.val) == () and np.float32(v.val) == np.float32(value)


def _with_literal(g: _Graph, i: int, name: str, value):
  """The variable operand of equation `i` if it is `name`(operand, value) in
  either order, with float32 literal `value`; else None."""
  eqn = g.eqns[i]
  if eqn.primitive.name != name or len(eqn.invars) != 2:
    return None
  a, b = eqn.invars
  for v, lit in ((a, b), (b, a)):
    if is_var(v) and _float32_literal(lit, value):
      return v
  return None


def _only_reader(g: _Graph, v) -> int | None:
  """The one equation reading `v`, if nothing else (the jaxpr's results
  included) reads it; else None."""
  readers = g.readers.get(v, [])
  if g.uses[v] != 1 or len(readers) != 1:
    return None
  return readers[0]


def _reads_both(eqn, u, v) -> bool:
  """Whether the two operands of `eqn` are the variables `u` and `v`."""
  a, b = eqn.invars
  return (a is u and b is v) or (a is v and b is u)


# jax.nn.gelu(x, approximate=True): x * (0.5 * (1 + tanh(c * (x + k * x**3)))).
_GELU_TANH = (np.float32(np.sqrt(2 / np.pi)), np.float32(0.044715))


def _gelu_tanh_of(g: _Graph, v, members: list) -> int | None:
  """The index of the equation ending jax.nn.gelu(v, approximate=True), if
  its equations read `v` and one another only (adding them to `members`);
  else None."""
  c, k = _GELU_TANH
  readers = g.readers.get(v, [])
  if g.uses[v] != 3 or len(set(readers)) != 3:
    return None
  cube = [i for i in readers if g.eqns[i].primitive.name == "integer_pow"]
  if len(cube) != 1 or g.eqns[cube[0]].params["y"] != 3:
    return None
  chain = [cube[0]]
  steps = (("mul", k), ("add", None), ("mul", c), ("tanh", None), ("add", 1.0), ("mul", 0.5))
  for name, value in steps:
    u = g.eqns[chain[-1]].outvars[0]
    i = _only_reader(g, u)
    if i is None:
      return None
    eqn = g.eqns[i]
    if value is not None:
      if _with_literal(g, i, name, value) is not u:
        return None
    elif name == "add":  # x + k * x**3
      if eqn.primitive.name != "add" or not _reads_both(eqn, v, u) or i not in readers:
        return None
    elif eqn.primitive.name != name:
      return None
    chain.append(i)
  end = _only_reader(g, g.eqns[chain[-1]].outvars[0])
  if end is None or end not in readers or g.eqns[end].primitive.name != "mul":
    return None
  if not _reads_both(g.eqns[end], v, g.eqns[chain[-1]].outvars[0]):
    return None
  members.extend([*chain, end])
  return end


def _gelu_tanh(x: tf.Tensor) -> tf.Tensor:
  # JAX's formula with the 0.5 moved onto x (a multiplication by 0.5 is
  # exact), in the op order TF's graph optimizer fuses into the MatMul
  # before it (a oneDNN matmul with a GELU epilogue): a third of a
  # Transformer's dense layer time in TF without XLA.
  c, k = _GELU_TANH
  cube = x * x * x
  return 0.5 * x * (1 + tf.tanh(c * (x + k * cube)))


def _contracts_trailing_axes(eqn) -> bool:
  """Whether dot_general `eqn` contracts the trailing axes of its left
  operand with the leading axes of its right one, in order, with no batch
  axes: a matrix product of the operands flattened to two dimensions."""
  (lhs_c, rhs_c), (lhs_b, rhs_b) = eqn.params["dimension_numbers"]
  lhs_rank = len(eqn.invars[0].aval.shape)
  k = len(lhs_c)
  return (
    not lhs_b
    and not rhs_b
    and k > 0
    and tuple(lhs_c) == tuple(range(lhs_rank - k, lhs_rank))
    and tuple(rhs_c) == tuple(range(k))
  )


def _static_positive(shape) -> bool:
  return all(isinstance(d, (int, np.integer)) and d > 0 for d in shape)


def _dense_from(g: _Graph, dot_i: int, hide: Hide) -> Fused | None:
  """A float32 dense layer: `dot_general(x, w)` over x's trailing axes,
  plus a bias along the result's trailing axes, then maybe
  jax.nn.gelu(approximate=True). Lowered as MatMul, BiasAdd and the GELU on
  the flattened rows, and one Reshape after them: TF's graph optimizer fuses
  the three into one kernel, which it cannot across the Reshape a
  dot_general of more than two dimensions needs."""
  dot = g.eqns[dot_i]
  x, w = dot.invars
  out = dot.outvars[0]
  if not (is_var(x) and is_var(w)) or not _contracts_trailing_axes(dot):
    return None
  if any(np.dtype(v.aval.dtype) != np.float32 for v in (x, w, out)):
    return None
  k = len(dot.params["dimension_numbers"][0][0])
  contracted, w_free = w.aval.shape[:k], w.aval.shape[k:]
  n_free = len(x.aval.shape) - k
  # A contraction of one element is a product (`_products` in the dot rule),
  # which keeps -0.0 and inf * 0 where a MatMul would not.
  if not _static_positive(w.aval.shape) or int(np.prod(contracted)) == 1:
    return None
  # An empty operand is the dot rule's (TF's graph optimizer can crash on
  # matmuls of empty operands).
  if any(dim_eval.is_zero(d) for d in x.aval.shape):
    return None
  add_i = _only_reader(g, out)
  if add_i is None or g.eqns[add_i].primitive.name != "add":
    return None
  a, b = g.eqns[add_i].invars
  bias = b if a is out else a
  if not is_var(bias) or bias is out or np.dtype(bias.aval.dtype) != np.float32:
    return None
  if tuple(bias.aval.shape) != (1,) * n_free + tuple(w_free):
    return None
  members = [dot_i, add_i]
  biased = g.eqns[add_i].outvars[0]
  gelu = _gelu_tanh_of(g, biased, members) is not None
  x_free = x.aval.shape[:n_free]
  rows = int(np.prod(contracted))
  cols = int(np.prod(w_free))

  def flat(t, rank, shape):
    # Only where the rank differs: a Reshape to the same shape is still an
    # op for the converters (TF.js keeps it).
    return t if t.shape.rank == rank else tf.reshape(t, shape)

  def lower(tx, tw, tb):
    y = tf.linalg.matmul(flat(tx, 2, [-1, rows]), flat(tw, 2, [rows, cols]))
    y = tf.nn.bias_add(y, flat(tb, 1, [cols]))
    if gelu:
      y = _gelu_tanh(y)
    if n_free == 1 and len(w_free) == 1:
      return y
    lead = list(x_free) if _static_positive(x_free) else tf.shape(tx)[:n_free]
    if isinstance(lead, list):
      return tf.reshape(y, lead + list(w_free))
    return tf.reshape(y, tf.concat([lead, tf.constant(list(w_free), lead.dtype)], 0))

  return Fused("dense_gelu" if gelu else "dense", (x, w, bias), frozenset(members), lower)


Matcher = Callable[[_Graph, int, Hide], Fused | None]

# Tiers of (primitive, matcher), tried in order over the whole jaxpr: a later
# tier takes only equations no earlier one took (a dense layer's bias add
# followed by a relu stays the relu's, which keeps its NaN).
_TIERS: Sequence[Sequence[tuple[str, Matcher]]] = (
  (
    ("div", _softmax_ending_at),
    ("sub", _log_softmax_ending_at),
    *((name, _relu_ending_at) for name in ("max", *_CALLS)),
  ),
  (("dot_general", _dense_from),),
)


def plan(jaxpr, hide: Hide) -> dict[int, Fused]:
  """The fused groups of `jaxpr`, by the index of their last equation;
  `hide(x, rewrite)` keeps `x` from TF's graph optimizer where the target
  runs it (LoweringEnv.hide_from_grappler)."""
  names = {name for tier in _TIERS for name, _ in tier}
  if not any(eqn.primitive.name in names for eqn in jaxpr.eqns):
    return {}
  g = _Graph(jaxpr)
  groups: dict[int, Fused] = {}
  taken: set = set()
  for tier in _TIERS:
    for i, eqn in enumerate(jaxpr.eqns):
      for name, match in tier:
        if eqn.primitive.name != name:
          continue
        fused = match(g, i, hide)
        if fused is not None and not (fused.members & taken):
          groups[max(fused.members)] = fused
          taken |= fused.members
          break
  return groups
