"""The TF side of call_tf: flat TF functions and what JAX needs to know about them.

The `call_tf` primitive carries one `TfFunction`: a Python callable from a flat
list of TF tensors (at JAX dtypes) to a flat list of TF tensors. Derivatives and
batching build new `TfFunction`s on top of an existing one (`JvpFunction`,
`VjpFunction`, `BatchedFunction`), so every transformation of a call is again
a call of some TF function, which every lowering (eager, jit, convert) handles
the same way.

Each function keeps two caches keyed by the abstract signature: the traced
`ConcreteFunction` (for output shapes and for `call_tf_graph`) and the
XLA-compiled module (for the jit lowering), so TensorFlow traces and compiles
once per signature.
"""

import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import numpy as np
import tensorflow as tf
from jax import export as jax_export

from jax2tf import nesting
from jax2tf.dtypes import is_differentiable, jax_dtype


def _dim_or_none(d):
  return int(d) if not jax_export.is_symbolic_dim(d) else None


def spec_of(aval) -> tf.TensorSpec:
  return tf.TensorSpec([_dim_or_none(d) for d in aval.shape], tf.as_dtype(np.dtype(aval.dtype)))


def _spec_key(specs) -> tuple:
  return tuple((tuple(s.shape.as_list()), s.dtype) for s in specs)


def is_static(aval) -> bool:
  return not any(jax_export.is_symbolic_dim(d) for d in aval.shape)


def _describe_shapes(avals) -> str:
  return ", ".join(f"{np.dtype(a.dtype).name}{list(a.shape)}" for a in avals) or "()"


class TfFunction:
  """A flat TF function and its per-signature caches."""

  kind = "call_tf"

  def __init__(self, name: str):
    self.name = name
    self._lock = threading.RLock()
    self._concrete: dict = {}
    self._compiled: dict = {}
    self._derived: dict = {}
    self._tf_function = None

  # -- to be provided by subclasses --------------------------------------
  def flat_fn(self, *xs: tf.Tensor) -> list:
    raise NotImplementedError

  def out_avals(self, in_avals: Sequence) -> tuple:
    raise NotImplementedError

  def __repr__(self):
    return f"<{self.kind} {self.name}>"

  # -- TF tracing --------------------------------------------------------
  @property
  def tf_function(self):
    if self._tf_function is None:
      self._tf_function = tf.function(self.flat_fn, autograph=False)
    return self._tf_function

  def concrete(self, specs: Sequence[tf.TensorSpec]):
    """The ConcreteFunction for `specs` (None for unknown dimensions)."""
    key = _spec_key(specs)
    with self._lock:
      cf = self._concrete.get(key)
      if cf is None:
        cf = self.tf_function.get_concrete_function(*specs)
        self._concrete[key] = cf
      self._after_trace(key)
      return cf

  def _after_trace(self, key):
    pass

  def traced_out_avals(self, in_avals) -> list:
    """Output (shape-with-None, dtype) pairs as TF infers them."""
    cf = self.concrete([spec_of(a) for a in in_avals])
    return [
      (tuple(o.shape.as_list()) if o.shape.rank is not None else None, o.dtype)
      for o in tf.nest.flatten(cf.structured_outputs)
    ]

  def call(self, tensors: Sequence[tf.Tensor]) -> list:
    """Calls the function as a TF graph function (inside a TF graph or eagerly)."""
    return list(self.tf_function(*tensors))

  def call_in_place(self, tensors: Sequence[tf.Tensor]) -> list:
    """Runs the Python function in the current TF context: op by op in eager
    mode (so TF code that XLA cannot compile and outputs of data-dependent
    shape work), or as ops of the graph being built inside a tf.function."""
    return list(self.flat_fn(*tensors))

  # -- XLA compilation (jit lowering) ------------------------------------
  def compiled(self, in_avals, device_name: str, platform_name: str, compile_fn: Callable):
    key = (_spec_key([spec_of(a) for a in in_avals]), device_name, platform_name)
    with self._lock:
      res = self._compiled.get(key)
      if res is None:
        res = compile_fn(self, in_avals, device_name, platform_name)
        self._compiled[key] = res
      return res

  # -- derived functions -------------------------------------------------
  def derived(self, key, make):
    with self._lock:
      d = self._derived.get(key)
      if d is None:
        d = make()
        self._derived[key] = d
      return d

  def jvp_function(self, n_in: int) -> "JvpFunction":
    return self.derived(("jvp", n_in), lambda: JvpFunction(self, n_in))

  def vjp_function(self, n_in: int) -> "VjpFunction":
    return self.derived(("vjp", n_in), lambda: VjpFunction(self, n_in))

  def batched_function(self, batched: tuple) -> "BatchedFunction":
    return self.derived(("vmap", batched), lambda: BatchedFunction(self, batched))


def dynamic_shape_error(name: str, in_avals, found) -> ValueError:
  shown = ", ".join(str(list(s) if s is not None else "<unknown rank>") for s, _ in found)
  return ValueError(
    f"call_tf cannot call functions whose output has dynamic shape: the TF function "
    f"{name}, called with arguments {_describe_shapes(in_avals)}, has output shapes "
    f"[{shown}] according to TensorFlow's shape inference (None is a dimension TF "
    "does not know before running). Under jax.jit, lax control flow, vmap of a "
    "staged function or jax2tf.convert with polymorphic shapes, JAX must know the "
    "result shapes: pass output_shape_dtype=jax.ShapeDtypeStruct(shape, dtype) "
    "(a pytree matching the results; shapes may use the symbolic dimensions of "
    "the arguments) to call_tf, or call the function outside JAX staging, where it "
    "runs in TF eager mode with any output shape."
  )


class DeclaredOutputs(NamedTuple):
  """`output_shape_dtype`, flattened: `avals` are what JAX sees (dtypes
  canonicalized), `dtypes` what the user wrote (compared with what TF returns)."""

  avals: list
  tree: Any
  dtypes: list


class OutputMismatchError(ValueError):
  """What the TF function returns disagrees with `output_shape_dtype`."""


class UnsupportedResultError(ValueError, TypeError):
  """A result of the TF function that JAX cannot represent.

  A ValueError as in JAX's own call_tf; also a TypeError, which this package
  raised for string, resource and variant results before."""


def _jax_tf_dtype(t: tf.Tensor) -> tf.DType:
  """The TF dtype of what JAX makes of `t` (64-bit types narrowed without x64)."""
  return tf.as_dtype(jax_dtype(t.dtype))


def _describe_result(r) -> str:
  if isinstance(r, tf.TensorArray):
    return "a tf.TensorArray (return ta.stack() for its elements as one tensor)"
  dtype = getattr(r, "dtype", None)
  if isinstance(dtype, tf.DType):
    return f"a {type(r).__name__} of TF dtype {dtype.name}"
  return f"a {type(r).__name__} ({r!r:.60})"


class PrimalFunction(TfFunction):
  """The user's TF callable, for one pytree structure of the arguments."""

  def __init__(self, callable_tf, name: str, in_tree, declared_out: DeclaredOutputs | None):
    super().__init__(name)
    self.callable_tf = callable_tf
    self.in_tree = in_tree
    self.declared_out = declared_out
    self.out_tree = None if declared_out is None else declared_out.tree
    self._out_trees: dict = {}

  def flat_fn(self, *xs):
    args, kwargs = jax.tree_util.tree_unflatten(self.in_tree, xs)
    with nesting.running_tf_code_for_jax():
      res = self.callable_tf(*args, **kwargs)
    # None alone is no results (a function run for its effects, as
    # tf.print); a None among results is refused.
    none_is_leaf = None if res is None else (lambda x: x is None)
    leaves, tree = jax.tree_util.tree_flatten(res, is_leaf=none_is_leaf)
    if any(l is None for l in leaves):
      raise TypeError(
        f"call_tf: the TF function {self.name} returned None inside its "
        "results; return tensors (or pytrees of tensors) only"
      )
    tensors = [self._as_tensor(r, i) for i, r in enumerate(leaves)]
    if self.declared_out is not None:
      # Checked on what TF returns, before JAX's dtype canonicalization, so
      # every path (eager, jit, convert) checks the same thing.
      given = ", ".join(f"{x.dtype.name}{x.shape.as_list()}" for x in xs) or "()"
      self._check_returned(tree, tensors, f"arguments {given}")
    self.out_tree = tree
    return [t if t.dtype == _jax_tf_dtype(t) else tf.cast(t, _jax_tf_dtype(t)) for t in tensors]

  def _after_trace(self, key):
    # A cache hit does not run flat_fn, so the tree is remembered per signature.
    if self.out_tree is not None:
      self._out_trees.setdefault(key, self.out_tree)
    tree = self._out_trees.get(key)
    if tree is not None:
      self.out_tree = tree

  def _as_tensor(self, r, i: int) -> tf.Tensor:
    expected = (
      "; the TF function must return tf.Tensors (or pytrees of values convertible "
      "to tensors) of numeric or boolean TF dtype"
    )
    try:
      t = tf.convert_to_tensor(r)
    except (TypeError, ValueError) as e:
      raise UnsupportedResultError(
        f"call_tf: result {i} of the TF function {self.name} is {_describe_result(r)}, "
        f"which is not convertible to a tensor, so JAX cannot represent it{expected}"
      ) from e
    if t.dtype in (tf.string, tf.resource, tf.variant):
      raise UnsupportedResultError(
        f"call_tf: result {i} of the TF function {self.name} has TF dtype "
        f"{t.dtype.name}, which JAX cannot represent; return numeric or boolean "
        "tensors (e.g. tf.strings.length(...) instead of a string)"
      )
    return t

  def _check_returned(self, tree, tensors, arguments: str):
    declared = self.declared_out
    assert declared is not None
    if tree != declared.tree:
      raise OutputMismatchError(
        f"call_tf: output_shape_dtype has the structure {declared.tree}, but the TF "
        f"function {self.name} returns {tree}; output_shape_dtype must be a pytree "
        "with one jax.ShapeDtypeStruct per result (explicit None declares no results; "
        "leave output_shape_dtype out to have the results inferred)"
      )
    for i, (t, want) in enumerate(zip(tensors, declared.dtypes)):
      got = np.dtype(t.dtype.as_numpy_dtype)
      # The declaration names the dtype TF returns, or the dtype JAX makes of
      # it (with jax_enable_x64 off, int32 for a TF int64 result); a declared
      # float64 for a float32 result is a mistake in either mode.
      if want not in (got, jax_dtype(got)):
        shape = declared.avals[i].shape
        canonical = "" if jax_dtype(got) == got else f" (or {jax_dtype(got).name})"
        raise OutputMismatchError(
          f"call_tf: output_shape_dtype declares result {i} of the TF function "
          f"{self.name} as {want.name}{list(shape)}, but TF computes "
          f"{got.name}{t.shape.as_list() if t.shape.rank is not None else '[?]'} "
          f"for {arguments}; declare {got.name}{canonical}"
        )
    found = [
      (t.shape.as_list() if t.shape.rank is not None else None, _jax_tf_dtype(t)) for t in tensors
    ]
    self._compare_with_declared(found, declared.avals, arguments)

  def out_avals(self, in_avals) -> tuple:
    if self.declared_out is not None:
      declared = self.declared_out.avals
      self._check_declared(in_avals, declared)
      return tuple(declared)
    try:
      found = self.traced_out_avals(in_avals)
    except Exception as e:
      if hasattr(e, "add_note"):
        e.add_note(
          f"(while tracing the TF function {self.name} called through "
          f"jax2tf.call_tf with arguments {_describe_shapes(in_avals)})"
        )
      raise
    if any(s is None or None in s for s, _ in found):
      raise dynamic_shape_error(self.name, in_avals, found)
    return tuple(jax.core.ShapedArray(s, np.dtype(d.as_numpy_dtype)) for s, d in found)

  def _check_declared(self, in_avals, declared):
    try:
      found = self.traced_out_avals(in_avals)
    except (OutputMismatchError, UnsupportedResultError):
      raise
    except Exception:
      # Declared shapes exist for functions TF cannot trace at unknown
      # dimensions; such a function is checked when it runs.
      return
    self._compare_with_declared(found, declared, f"arguments {_describe_shapes(in_avals)}")

  def _compare_with_declared(self, found, declared, arguments: str):
    """Raises naming the first result whose (shape, TF dtype) in `found`
    disagrees with its declared aval; unknown dimensions agree with any."""
    if len(found) != len(declared):
      raise OutputMismatchError(
        f"call_tf: output_shape_dtype declares {len(declared)} result(s) for the TF "
        f"function {self.name}, but it returns {len(found)} "
        f"(shapes {[s for s, _ in found]}); output_shape_dtype must be a pytree "
        "with one jax.ShapeDtypeStruct per result"
      )
    for i, ((shape, dtype), aval) in enumerate(zip(found, declared)):
      want = np.dtype(aval.dtype)
      if np.dtype(dtype.as_numpy_dtype) != want:
        raise OutputMismatchError(
          f"call_tf: output_shape_dtype declares result {i} of the TF function "
          f"{self.name} as {want.name}{list(aval.shape)}, but TF computes "
          f"{dtype.name} (after JAX's dtype canonicalization); fix the declared dtype"
        )
      if shape is None:
        continue
      ok = len(shape) == len(aval.shape) and all(
        s is None or jax_export.is_symbolic_dim(d) or int(d) == s for s, d in zip(shape, aval.shape)
      )
      if not ok:
        raise OutputMismatchError(
          f"call_tf: output_shape_dtype declares result {i} of the TF function "
          f"{self.name} with shape {tuple(aval.shape)}, but TF gives {list(shape)} "
          f"for {arguments}; fix the declared shape"
        )


def _dense_grads(grads, like):
  # TF gives None for an unconnected input and tf.IndexedSlices for one read
  # sparsely (tf.gather); JAX wants one dense array per input.
  return [tf.zeros_like(x) if g is None else tf.convert_to_tensor(g) for g, x in zip(grads, like)]


class JvpFunction(TfFunction):
  """Forward mode: (primals, tangents of the float primals) -> tangents of the
  float results, by `tf.autodiff.ForwardAccumulator`. Linear in the tangents;
  JAX transposes it with `base.vjp_function`."""

  kind = "call_tf_jvp"

  def __init__(self, base: TfFunction, n_in: int):
    super().__init__(f"jvp({base.name})")
    self.base, self.n_in = base, n_in

  def diff_in(self, in_avals):
    return [i for i in range(self.n_in) if is_differentiable(in_avals[i].dtype)]

  def flat_fn(self, *xs):
    primals, tangents = list(xs[: self.n_in]), list(xs[self.n_in :])
    diff = [i for i, p in enumerate(primals) if is_differentiable(p.dtype.as_numpy_dtype)]
    watched = [tf.identity(primals[i]) for i in diff]
    for i, w in zip(diff, watched):
      primals[i] = w
    with tf.autodiff.ForwardAccumulator(watched, tangents) as acc:
      outs = self.base.flat_fn(*primals)
    res = []
    for o in outs:
      if is_differentiable(o.dtype.as_numpy_dtype):
        res.append(acc.jvp(o, unconnected_gradients=tf.UnconnectedGradients.ZERO))
    return res

  def out_avals(self, in_avals):
    base_out = self.base.out_avals(in_avals[: self.n_in])
    return tuple(a for a in base_out if is_differentiable(a.dtype))


class VjpFunction(TfFunction):
  """Reverse mode: (primals, cotangents of the float results) -> cotangents of
  the float primals, by `tf.GradientTape`, so TF custom gradients apply."""

  kind = "call_tf_vjp"

  def __init__(self, base: TfFunction, n_in: int):
    super().__init__(f"vjp({base.name})")
    self.base, self.n_in = base, n_in

  def flat_fn(self, *xs):
    primals, cts = list(xs[: self.n_in]), list(xs[self.n_in :])
    diff = [i for i, p in enumerate(primals) if is_differentiable(p.dtype.as_numpy_dtype)]
    with tf.GradientTape(persistent=False, watch_accessed_variables=False) as tape:
      watched = [tf.identity(primals[i]) for i in diff]
      tape.watch(watched)
      for i, w in zip(diff, watched):
        primals[i] = w
      outs = self.base.flat_fn(*primals)
    diff_outs = [o for o in outs if is_differentiable(o.dtype.as_numpy_dtype)]
    if not diff_outs or not watched:
      return [tf.zeros_like(w) for w in watched]
    grads = tape.gradient(
      diff_outs, watched, output_gradients=cts, unconnected_gradients=tf.UnconnectedGradients.ZERO
    )
    return [tf.cast(g, w.dtype) for g, w in zip(_dense_grads(grads, watched), watched)]

  def out_avals(self, in_avals):
    return tuple(
      jax.core.ShapedArray(a.shape, a.dtype)
      for a in in_avals[: self.n_in]
      if is_differentiable(a.dtype)
    )


class BatchedFunction(TfFunction):
  """vmap: the base function mapped over the leading axis of the batched
  arguments with `tf.vectorized_map` (see docs/call_tf.md for why)."""

  kind = "call_tf_vmap"

  def __init__(self, base: TfFunction, batched: tuple):
    super().__init__(f"vmap({base.name})")
    self.base, self.batched = base, batched

  def flat_fn(self, *xs):
    elems = [x for x, b in zip(xs, self.batched) if b]

    def one(row):
      it = iter(row)
      return self.base.flat_fn(*[next(it) if b else x for x, b in zip(xs, self.batched)])

    return list(tf.vectorized_map(one, elems, fallback_to_while_loop=True))

  def out_avals(self, in_avals):
    unbatched = [
      jax.core.ShapedArray(a.shape[1:], a.dtype) if b else a for a, b in zip(in_avals, self.batched)
    ]
    n = next(a.shape[0] for a, b in zip(in_avals, self.batched) if b)
    return tuple(
      jax.core.ShapedArray((n, *a.shape), a.dtype) for a in self.base.out_avals(unbatched)
    )


class _Infer:
  """The default of call_tf's `output_shape_dtype`: infer the results from TF.
  (None cannot be the default: it is the pytree of a function without results.)"""

  def __repr__(self):
    return "<inferred from TF>"


INFER = _Infer()


def declared_outputs(output_shape_dtype, name: str) -> DeclaredOutputs | None:
  """`output_shape_dtype` flattened, or None when it is to be inferred."""
  if output_shape_dtype is INFER:
    return None
  leaves, tree = jax.tree_util.tree_flatten(output_shape_dtype)
  avals, dtypes = [], []
  for i, l in enumerate(leaves):
    if not (hasattr(l, "shape") and hasattr(l, "dtype")):
      raise TypeError(
        f"call_tf({name}): output_shape_dtype must be a pytree of "
        f"jax.ShapeDtypeStruct (or arrays), but leaf {i} is {l!r:.80}"
      )
    dtype = l.dtype.as_numpy_dtype if isinstance(l.dtype, tf.DType) else l.dtype
    dtypes.append(np.dtype(dtype))
    avals.append(jax.core.ShapedArray(tuple(l.shape), jax_dtype(dtype)))
  return DeclaredOutputs(avals, tree, dtypes)
