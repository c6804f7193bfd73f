"""`convert`: a JAX function as a TensorFlow-callable."""

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable

import jax
import numpy as np
import tensorflow as tf

from jax2tf import closures, nesting, targets, tf_dims, trackable_pytrees
from jax2tf.autodiff import gradients
from jax2tf.dtypes import jax_dtype
from jax2tf.internals import tf_private
from jax2tf.native import call_module, exporting, split
from jax2tf.native import shardings as native_shardings
from jax2tf.options import (
  DEFAULT_NATIVE_SERIALIZATION,
  KNOWN_PLATFORMS,
  ConvertOptions,
  checks_disabled_by_tf_flags,
  make_options,
)
from jax2tf.shapes import ArgLeaf, PolyShape, spec_for_each_leaf, symbolic_avals
from jax2tf.shapes.specs import STRUCTURE_ERROR
from jax2tf.signature_locks import OnceCache

# As importing JAX's jax2tf does: tf.Module's list, tuple and dict wrappers
# become pytrees (jax2tf/trackable_pytrees.py).
trackable_pytrees.register()


def convert(
  fun_jax: Callable,
  *,
  polymorphic_shapes=None,
  polymorphic_constraints=(),
  with_gradient: bool = True,
  enable_xla: bool = True,
  native_serialization=DEFAULT_NATIVE_SERIALIZATION,
  native_serialization_platforms=None,
  native_serialization_disabled_checks=(),
  target_tf_version: str | None = None,
) -> Callable:
  """Returns a TensorFlow function computing what `fun_jax` computes.

  Args:
    fun_jax: a jittable JAX function (or a `jax.jit` of one, which keeps its
      shardings). Arguments and results are pytrees of arrays.
    polymorphic_shapes: None, a shape spec for every positional argument, a
      sequence of pytree prefixes (one per positional argument), or a dict from parameter
      names (positional or keyword) to specs. A spec is a string like
      `"(b, _, 28)"` or a `PolyShape`.
    polymorphic_constraints: strings like `"a >= b"`, `"floordiv(b, 2) == a"`.
    with_gradient: attach a TF gradient computed by JAX's VJP; if False any
      gradient request fails.
    enable_xla: False needs graph serialization.
    native_serialization: StableHLO inside XlaCallModule (default from the
      environment variable JAX2TF_DEFAULT_NATIVE_SERIALIZATION, true if unset).
    native_serialization_platforms: platforms to lower for, e.g.
      `("cpu", "cuda", "tpu")`; default JAX's default backend.
    native_serialization_disabled_checks: `DisabledSafetyCheck` values.
    target_tf_version: a TensorFlow release ("2.21") that will run the result,
      when it is older than the installed one; default the installed TF (or the
      environment variable JAX2TF_TARGET_TF_VERSION).
  """
  if not callable(fun_jax):
    raise TypeError(f"convert: fun_jax must be callable, got {fun_jax!r}")
  options = make_options(
    polymorphic_shapes=polymorphic_shapes,
    polymorphic_constraints=polymorphic_constraints,
    with_gradient=with_gradient,
    enable_xla=enable_xla,
    native_serialization=native_serialization,
    native_serialization_platforms=native_serialization_platforms,
    native_serialization_disabled_checks=native_serialization_disabled_checks,
    target_tf_version=target_tf_version,
  )
  return converted_function(fun_jax, options)


def converted_function(fun_jax: Callable, options: ConvertOptions) -> Callable:
  """`convert` with its options already made (the deployment routes make
  options that `convert`'s parameters do not reach)."""
  converted = _Converted(fun_jax, options)

  @functools.wraps(fun_jax)
  def converted_fun_tf(*args, **kwargs):
    nesting.check_outside_jax_transformations(converted.name)
    return converted(args, kwargs)

  converted_fun_tf._jax2tf_converted = converted  # type: ignore[attr-defined]  # for introspection and tests
  signature = _tf_signature(fun_jax)
  if signature is not None:
    converted_fun_tf.__signature__ = signature  # type: ignore[attr-defined]
  return converted_fun_tf


# The names of the graph ops that give a converted function's argument leaves
# and results, as JAX's jax2tf names them (code that edits or inspects the
# graphs looks them up). Where an op is made anyway (a cast, a constant,
# PreventGradient) it gets the name; otherwise an Identity carries it, in
# graphs only.
OUT_OP_NAME = "jax2tf_out"


def arg_op_name(index: int) -> str:
  return f"jax2tf_arg_{index}"


def _tf_signature(fun) -> inspect.Signature | None:
  """The signature `tf.function` should see: the JAX function's required
  positional parameters (so TF names its inputs after them), then *args and
  **kwargs. Parameters with defaults are left out: tf.function would bind the
  defaults and pass them as (tensor) arguments, where JAX should apply them."""
  try:
    sig = inspect.signature(fun)
  except (TypeError, ValueError):
    return None
  P = inspect.Parameter
  required = [
    p
    for p in sig.parameters.values()
    if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD) and p.default is P.empty
  ]
  taken = {p.name for p in required}
  rest = [
    P(_unused(n, taken), kind)
    for n, kind in (("args", P.VAR_POSITIONAL), ("kwargs", P.VAR_KEYWORD))
  ]
  return sig.replace(parameters=required + rest, return_annotation=P.empty)


def _unused(name: str, taken: set) -> str:
  """`name`, or with underscores before it, unlike any of `taken` (a
  function may have a parameter called args or kwargs)."""
  while name in taken:
    name = "_" + name
  return name


def _may_change_shape(leaf) -> bool:
  """Whether a graph value can have another shape at run time than its
  static one: not a variable's read (a variable of a known shape keeps it)."""
  return not isinstance(leaf, tf.Variable)


def _plain_containers(x):
  """`x` with TF's trackable wrappers made plain lists, tuples and dicts:
  parameters kept as variables of a tf.Module come in them (`m.params =
  tf.nest.map_structure(tf.Variable, params)`). Though registered as pytrees,
  the wrappers flatten a dict in insertion order, with no key paths, and
  unflatten to a wrapper; plain containers give the JAX function what jax.jit
  would, and argument names with keys."""
  kind = trackable_pytrees.wrapper_types().get(type(x), type(x))
  if kind is dict:
    return {k: _plain_containers(v) for k, v in x.items()}
  if kind in (list, tuple):
    return kind(_plain_containers(v) for v in x)
  return x


def _op_name(text: str) -> str:
  return re.sub(r"[^A-Za-z0-9_.\-/]", "_", text)


def _fun_name(fun) -> str:
  return getattr(fun, "__name__", None) or type(fun).__name__


def _positional_names(fun) -> list[str]:
  try:
    sig = inspect.signature(fun)
  except (TypeError, ValueError):
    return []
  return [
    p.name
    for p in sig.parameters.values()
    if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
  ]


class _Converted:
  """The state behind one converted function: options and the export cache."""

  def __init__(self, fun_jax: Callable, options: ConvertOptions):
    self.fun_jax = fun_jax
    self.name = _fun_name(fun_jax)
    self.options = options
    self.param_names = _positional_names(fun_jax)
    self.fun_jit = fun_jax if hasattr(fun_jax, "trace") else jax.jit(fun_jax)
    self.backend = _NativeBackend if options.native_serialization else _GraphBackend
    # Both caches are shared by every thread calling the function: a raw
    # signature maps to the same _Lowered whichever thread stores it, and the
    # export behind a symbolic signature runs once (OnceCache).
    self._by_signature: dict = {}  # raw argument signature -> _Lowered
    self._by_avals = OnceCache()  # symbolic signature -> _Lowered

  # -- arguments ---------------------------------------------------------
  def _leaf_name(self, path) -> str:
    head, rest = path[0], path[1:]
    if head.idx == 0:  # positional
      i = rest[0].idx
      base = self.param_names[i] if i < len(self.param_names) else f"args[{i}]"
    else:
      base = str(rest[0].key)
    return base + jax.tree_util.keystr(tuple(rest[1:]))

  def _tf_leaf(self, leaf, name, index: int) -> tf.Tensor:
    """The TF value of argument leaf `index` (named `name`), in JAX's dtype;
    in a graph, the op giving it is named `jax2tf_arg_{index}`."""
    in_graph = not tf.executing_eagerly()
    if isinstance(leaf, (tf.Tensor, tf.Variable)):
      t = tf.convert_to_tensor(leaf)
      if t.dtype == tf.string or t.dtype == tf.resource or t.dtype == tf.variant:
        raise TypeError(
          f"argument {name} has TF dtype {t.dtype.name}, which JAX "
          "cannot represent; pass numeric or boolean tensors"
        )
      want = jax_dtype(t.dtype)
      if in_graph and t.shape.rank is not None and _may_change_shape(leaf):
        # A concrete function does not check the shapes it is called with;
        # without this a mismatch surfaces inside XlaCallModule as an
        # anonymous "invalid refinement for argument 0". Reading the
        # caller's tensor, whose name TF's message gives ("Shape of tensor
        # images ..."); it is the named op unless a cast follows.
        if t.dtype == want:
          return tf.ensure_shape(t, t.shape, name=arg_op_name(index))
        t = tf.ensure_shape(t, t.shape, name=_op_name(f"check_shape_of_{name}"))
      if t.dtype != want:
        return tf.cast(t, want, name=arg_op_name(index))
      return tf.identity(t, name=arg_op_name(index)) if in_graph else t
    if isinstance(leaf, (tf.TensorSpec,)):
      raise TypeError(
        f"argument {name} is a tf.TensorSpec; call the converted function under "
        "tf.function(...).get_concrete_function(spec) instead of passing the spec"
      )
    try:
      arr = np.asarray(leaf)
    except Exception as e:
      raise TypeError(
        f"argument {name}: cannot turn {type(leaf).__name__} into an array: {e}"
      ) from None
    # ml_dtypes' bfloat16/float8 arrays have kind 'V' but are numbers to JAX.
    numeric = arr.dtype.kind in "biufc" or (
      arr.dtype.kind == "V" and jax.dtypes.issubdtype(arr.dtype, np.inexact)
    )
    if not numeric:
      raise TypeError(
        f"argument {name} has dtype {arr.dtype} (value {leaf!r:.60}); "
        "expected a numeric or boolean array, scalar or tf.Tensor"
      )
    return tf.constant(arr.astype(jax_dtype(arr.dtype), copy=False), name=arg_op_name(index))

  def _polymorphic_prefix(self, args, kwargs):
    spec = self.options.polymorphic_shapes
    if spec is None:
      return (None,) * len(args), {k: None for k in kwargs}
    if isinstance(spec, (str, PolyShape)):
      spec = (spec,) * len(args)  # one spec for each positional argument, as upstream
    if isinstance(spec, dict) and spec and set(spec) <= set(self.param_names) | set(kwargs):
      positional = tuple(
        spec.get(self.param_names[i]) if i < len(self.param_names) else None
        for i in range(len(args))
      )
      return positional, {k: spec.get(k) for k in kwargs}
    if isinstance(spec, dict):
      unknown = sorted(map(str, set(spec) - set(self.param_names) - set(kwargs)))
      # ValueError, as for any other polymorphic_shapes that does not fit the
      # arguments (and as JAX's jax2tf, which reads the dict as a prefix of
      # the positional arguments' tuple and fails on its structure).
      raise ValueError(
        f"{STRUCTURE_ERROR}polymorphic_shapes is a dict, so its keys must be parameter names of "
        f"{self.name}; unknown key(s) {unknown}, parameters "
        f"{self.param_names + sorted(kwargs)}. (A dict for a single dict-valued "
        "argument must be wrapped in a list: polymorphic_shapes=[{...}].)"
      )
    if not isinstance(spec, (list, tuple)):
      raise TypeError(
        "polymorphic_shapes must be None, a shape spec, a sequence with one entry "
        "per positional argument, or a dict from parameter names to specs; got "
        f"{type(spec).__name__}"
      )
    if len(spec) != len(args):
      raise ValueError(
        f"{STRUCTURE_ERROR}polymorphic_shapes has {len(spec)} entries but {self.name} was called "
        f"with {len(args)} positional argument(s); give one spec (or None) per "
        "positional argument, or a dict keyed by parameter name"
      )
    return tuple(spec), {k: None for k in kwargs}

  def _specs_per_leaf(self, prefix, args, kwargs):
    try:
      return spec_for_each_leaf(prefix, (args, kwargs), describe=f"the arguments of {self.name}")
    except ValueError:
      # The whole-call structures are hard to read; find the argument whose
      # spec does not fit and raise with its name and its own structures.
      positional, keyword = prefix
      for i, (spec, arg) in enumerate(zip(positional, args)):
        name = self.param_names[i] if i < len(self.param_names) else f"args[{i}]"
        spec_for_each_leaf(spec, arg, describe=f"argument {name} of {self.name}")
      for k in sorted(kwargs):
        spec_for_each_leaf(
          keyword.get(k), kwargs[k], describe=f"keyword argument {k} of {self.name}"
        )
      raise

  # -- calling -------------------------------------------------------------
  def __call__(self, args: tuple, kwargs: dict):
    args, kwargs = _plain_containers((args, kwargs))
    path_leaves, in_tree = jax.tree_util.tree_flatten_with_path((args, kwargs))
    names = [self._leaf_name(p) for p, _ in path_leaves]
    if not tf.executing_eagerly():  # arrays would become constants of the graph
      closures.check_argument_bytes(
        [
          (n, x)
          for (_, x), n in zip(path_leaves, names)
          if not isinstance(x, (tf.Tensor, tf.Variable))
        ],
        self.name,
      )
    tensors = [self._tf_leaf(x, n, i) for i, ((_, x), n) in enumerate(zip(path_leaves, names))]
    raw_key = (in_tree, tuple((tuple(t.shape.as_list()), t.dtype) for t in tensors))
    entry = self._by_signature.get(raw_key)
    if entry is None:
      entry = self._lookup_or_export(args, kwargs, names, tensors, in_tree)
      self._by_signature[raw_key] = entry
    outs = entry.call(tensors)
    return jax.tree_util.tree_unflatten(entry.module.out_tree, outs)

  def _lookup_or_export(self, args, kwargs, names, tensors, in_tree):
    prefix = self._polymorphic_prefix(args, kwargs)
    specs = self._specs_per_leaf(prefix, args, kwargs)
    leaves = [
      ArgLeaf(n, tuple(t.shape.as_list()), np.dtype(t.dtype.as_numpy_dtype))
      for n, t in zip(names, tensors)
    ]
    avals = symbolic_avals(leaves, specs, self.options.polymorphic_constraints)
    aval_key = (in_tree, tuple((str(a.shape), a.dtype) for a in avals))

    def export():
      args_avals, kwargs_avals = jax.tree_util.tree_unflatten(in_tree, avals)
      return _Lowered.from_user_function(self, args_avals, kwargs_avals, specs, names)

    return self._by_avals.get_or_make(aval_key, export)


class _NativeBackend:
  """StableHLO inside XlaCallModule; split into several modules around
  call_tf(..., call_tf_graph=True) calls (native/split.py)."""

  @staticmethod
  def lower(fun_jit, args_avals, kwargs_avals, *, name, options):
    export = functools.partial(
      exporting.export_native,
      platforms=options.platforms,
      disabled_checks=options.disabled_checks,
      target_tf_version=options.target_tf_version,
      target=options.target,
    )
    module = split.lower_split(fun_jit, args_avals, kwargs_avals, fun_name=name, export=export)
    if module is None:
      module = export(fun_jit, args_avals, kwargs_avals, fun_name=name)
    return module

  @staticmethod
  def call(module, tensors):
    if isinstance(module, split.SplitModule):
      return split.call_split_module(module, tensors)
    return call_module.call_native_module(module, tensors)


class _GraphBackend:
  """One TF op (or a few) per JAX primitive."""

  @staticmethod
  def lower(fun_jit, args_avals, kwargs_avals, *, name, options):
    from jax2tf.graph import lowering as graph_lowering

    del name
    return graph_lowering.trace_graph(
      fun_jit,
      args_avals,
      kwargs_avals,
      target=options.target,
    )

  @staticmethod
  def call(module, tensors):
    from jax2tf.graph import lowering as graph_lowering

    return graph_lowering.call_graph_module(module, tensors)


def _shape_assertions_disabled(options: ConvertOptions) -> bool:
  if any(dc._impl == "shape_assertions" for dc in options.disabled_checks):
    return True
  # The spec's process-wide switch for native modules; graph serialization's
  # checks are ordinary TF asserts, which that flag has never covered.
  return options.native_serialization and "shape_assertions" in checks_disabled_by_tf_flags()


class _Lowered:
  """One lowered signature, callable from TF with (or without) a JAX gradient."""

  def __init__(self, backend, module, flat_fun: Callable, options: ConvertOptions, name: str):
    self.backend = backend
    self.module = module
    self.flat_fun = flat_fun
    self.options = options
    self.name = name
    # The VJP and the shape-checks module, each lowered once on first use
    # (by whichever thread needs it first).
    self._lazy = OnceCache()
    # The arguments are checked against the specs before the lowered
    # computation sees them, with the spec's message. Native modules check
    # inside XlaCallModule too, but only after refining the whole module, which
    # can fail first with a less helpful message; graph ops would otherwise
    # run on mismatched shapes (a MatMul failing, or worse, not failing).
    self._check_shapes = tf_dims.is_polymorphic(module.in_avals) and not _shape_assertions_disabled(
      options
    )
    self._checked_shapes: set = set()
    # Under XLA compilation TF drops the Assert ops above: a graph
    # computation would run on shapes that break the specs, and XlaCallModule
    # refines the whole body before its own shape assertions run, so a body
    # that cannot be refined hides the spec's message. A module with the
    # same arguments and an empty body refines always; its assertions give
    # the message, for either serialization. Built on first use inside an
    # XLA context (None: not needed).
    self._lower_assertions: Callable | None = None

  @classmethod
  def from_user_function(cls, conv: "_Converted", args_avals, kwargs_avals, specs, names):
    in_tree = jax.tree_util.tree_structure((args_avals, kwargs_avals))

    def flat_fun(*flat_args):
      a, k = jax.tree_util.tree_unflatten(in_tree, flat_args)
      return jax.tree_util.tree_leaves(conv.fun_jax(*a, **k))

    def lower(fun_jit):
      return conv.backend.lower(
        fun_jit, args_avals, kwargs_avals, name=conv.name, options=conv.options
      )

    try:
      closures.check_constant_bytes(conv.fun_jit, args_avals, kwargs_avals, conv.name)
      module = lower(conv.fun_jit)
      if any(np.dtype(a.dtype) == jax.dtypes.float0 for a in module.out_avals):
        module = lower(jax.jit(exporting.float0_free(conv.fun_jax)))
    except Exception as e:
      _add_conversion_note(e, conv.name, specs, names)
      raise
    lowered = cls(conv.backend, module, flat_fun, conv.options, conv.name)
    lowered._lower_assertions = lambda: _NativeBackend.lower(
      jax.jit(_no_results),
      args_avals,
      kwargs_avals,
      name=f"the shape checks of {conv.name}",
      options=_assertion_module_options(conv),
    )
    return lowered

  def _checked(self, tensors) -> tuple[list, list]:
    """`tensors` checked against the specs, and the checks that the
    computation must wait for (none if they are built into `tensors`)."""
    if not self._check_shapes:
      return tensors, []
    shapes = tuple(tuple(t.shape.as_list()) for t in tensors)
    if shapes in self._checked_shapes:
      return tensors, []
    assertions = tf_dims.check_argument_shapes(self.module.in_avals, self.module.in_tree, tensors)
    if not assertions:  # static shapes, checked now
      self._checked_shapes.add(shapes)
      return tensors, []
    if self._lower_assertions is not None and tf_private.tracing_for_xla():
      module = self._lazy.get_or_make("assertions", self._lower_assertions)
      # A control edge suffices: tf2xla compiles in an order that respects it.
      assertions = assertions + _NativeBackend.call(module, tensors)
    if self.backend is _NativeBackend:
      # The module's ops (XlaCallModule) take the checks as control inputs,
      # below: no op of its own.
      return tensors, assertions
    # Graph ops read the arguments one by one: each waits for the checks.
    with tf.control_dependencies(assertions):
      return [tf.identity(t) for t in tensors], []

  def _call_module(self, tensors):
    tensors, assertions = self._checked(tensors)
    with tf.control_dependencies(assertions):
      return self.backend.call(self.module, tensors)

  def call(self, tensors):
    """The results of the lowered function on the flat `tensors`; in a graph
    each is an op named `jax2tf_out` (TF numbers the others: `jax2tf_out_1`,
    ...)."""
    if not self.options.with_gradient:
      return gradients.prevent_gradient(self._call_module(tensors), self.name, op_name=OUT_OP_NAME)
    outs = gradients.call_with_custom_gradient(
      self._call_module,
      self._call_vjp,
      self.module.in_avals,
      self.module.out_avals,
      tensors,
    )
    if tf.executing_eagerly():
      return outs
    return [tf.identity(o, name=OUT_OP_NAME) for o in outs]

  def _call_vjp(self, tensors):
    # Named as JAX's jax2tf names the ops of its VJP: jax2tf_vjp/jax2tf_arg_0, ...
    with tf.name_scope("jax2tf_vjp"):
      if not tf.executing_eagerly():
        tensors = [tf.identity(t, name=arg_op_name(i)) for i, t in enumerate(tensors)]
      return self.vjp().call(tensors)

  def vjp(self) -> "_Lowered":
    return self._lazy.get_or_make("vjp", self._lower_vjp)

  def _lower_vjp(self) -> "_Lowered":
    name = f"vjp of {self.name}"
    jit_kwargs = native_shardings.vjp_jit_kwargs(self.module)
    module, vjp_fun = gradients.lower_vjp(
      lambda fun, avals: self.backend.lower(
        jax.jit(fun, **jit_kwargs), avals, {}, name=name, options=self.options
      ),
      self.name,
      self.flat_fun,
      self.module.in_avals,
      self.module.out_avals,
    )
    vjp = _Lowered(self.backend, module, vjp_fun, self.options, name)
    # Its arguments are the primal's, checked by the forward call, and
    # cotangents of the primal's results, which TF gives in their shapes:
    # checking again would only add ops to every SavedModel.
    vjp._check_shapes = False
    return vjp


def _assertion_module_options(conv: "_Converted") -> ConvertOptions:
  if conv.backend is _NativeBackend:
    return conv.options
  # A graph computation runs wherever TF compiles it, so its checks must too;
  # they are a native module, which TF's XLA reads.
  return dataclasses.replace(conv.options, platforms=KNOWN_PLATFORMS, target=targets.TF_XLA)


def _no_results(*args, **kwargs):
  del args, kwargs
  return np.int32(0)


def _add_conversion_note(e: Exception, name: str, specs, names):
  if not hasattr(e, "add_note"):
    return
  poly = [f"{n}: {s}" for n, s in zip(names, specs) if s is not None]
  note = f"(while converting {name} with jax2tf.convert"
  if poly:
    note += "; polymorphic shapes " + ", ".join(poly)
  note += ")"
  if isinstance(
    e,
    (
      jax.errors.ConcretizationTypeError,
      jax.errors.TracerBoolConversionError,
      jax.errors.TracerIntegerConversionError,
      jax.errors.TracerArrayConversionError,
    ),
  ):
    note += (
      "\nThe function must be jittable to be converted: it was traced with "
      "abstract values and tried to use one as a concrete Python value "
      "(see the tracer error above)."
    )
  if isinstance(e, jax.errors.InconclusiveDimensionOperation):
    # JAX states the failed division as a remainder; the spec (and users'
    # searches) know it as "Cannot divide 'size' by 'divisor'".
    m = _REMAINDER.search(str(e))
    if m:
      divisor = "".join(m.group(2).split())
      note += f"\nDetails: Cannot divide '{m.group(1).strip()}' by '{divisor}'."
  e.add_note(note)


_REMAINDER = re.compile(r"The remainder mod\((.+), ([^,()]+)\) should be 0")
