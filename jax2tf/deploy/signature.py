"""The TF function that the deployment converters read (TFLite's, and TF.js's
freezing): inputs named after the JAX function's parameters, unknown sizes for
polymorphic dimensions, parameters as variables (which the converter freezes
into the model's weights), and outputs named `output_0`, `output_1`, ... in the
order of JAX's flattened result. The names and symbolic shapes of the inputs
and outputs need no TensorFlow: the litert route, which takes no TF function,
names its signature with them.
"""

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from jax2tf import shapes
from jax2tf.deploy import provenance
from jax2tf.options import make_options

_OUTPUT = "output_{}"


@dataclasses.dataclass(frozen=True)
class InputSpec:
  name: str
  shape: tuple  # ints, None where the dimension is polymorphic
  dtype: np.dtype


@dataclasses.dataclass
class Traced:
  """A tf.function ready for the converter, and what it was made from."""

  function: Any  # a tf.function with an input signature
  module: Any  # a tf.Module, which holds the parameter variables
  inputs: tuple[InputSpec, ...]
  output_tree: Any  # the treedef of JAX's result
  jax_fun: Callable  # inputs -> result, parameters bound, for verification
  specs: Sequence  # what jax_fun was traced over

  @functools.cached_property
  def jaxpr(self):
    """`jax_fun`'s closed jaxpr over `specs`, traced once for the checks and
    rewrites that read it; None where JAX cannot trace it."""
    return provenance.closed_jaxpr(self.jax_fun, self.specs)


def output_name(i: int) -> str:
  return _OUTPUT.format(i)


def output_index(name: str) -> int:
  match = re.fullmatch(r"output_(\d+)", name)
  if match is None:
    raise ValueError(f"{name!r} is not an output of a model written by jax2tf.to_tflite")
  return int(match.group(1))


def input_names(fun: Callable, count: int, skip_first: bool) -> list[str]:
  """The names of `fun`'s positional parameters that receive the inputs
  (after the parameters' slot when `skip_first`), or x0, x1, ... where the
  signature does not give them (a *args function, a builtin)."""
  try:
    parameters = list(inspect.signature(fun).parameters.values())
  except (TypeError, ValueError):
    parameters = []
  positional = []
  for p in parameters:
    if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
      positional.append(p.name)
    else:
      break
  if skip_first:
    positional = positional[1:]
  names = positional[:count] if len(positional) >= count else []
  if not names or len(set(names)) != count:
    names = [f"x{i}" for i in range(count)]
  return names


def _as_spec(spec, position: int) -> jax.ShapeDtypeStruct:
  if isinstance(spec, jax.ShapeDtypeStruct):
    return spec
  if hasattr(spec, "shape") and hasattr(spec, "dtype"):
    return jax.ShapeDtypeStruct(tuple(spec.shape), np.dtype(spec.dtype))
  raise TypeError(
    f"input_specs[{position}]: expected an array or a jax.ShapeDtypeStruct, got "
    f"{type(spec).__name__}; pass one per input array (the signature of a TFLite or "
    "TF.js model takes arrays, not pytrees)"
  )


def input_specs(
  fun: Callable, specs: Sequence, polymorphic_shapes, has_params: bool
) -> tuple[InputSpec, ...]:
  return symbolic_inputs(fun, specs, polymorphic_shapes, has_params)[0]


def symbolic_inputs(
  fun: Callable, specs: Sequence, polymorphic_shapes, has_params: bool
) -> tuple[tuple[InputSpec, ...], list[jax.ShapeDtypeStruct]]:
  """The inputs' specs (named after `fun`'s parameters) and their symbolic
  avals, polymorphic dimensions sharing one scope, for `jax.export`."""
  structs = [_as_spec(s, i) for i, s in enumerate(specs)]
  if polymorphic_shapes is None:
    polymorphic_shapes = [None] * len(structs)
  elif isinstance(polymorphic_shapes, str):
    polymorphic_shapes = [polymorphic_shapes]
  polymorphic_shapes = list(polymorphic_shapes)
  if len(polymorphic_shapes) != len(structs):
    raise ValueError(
      f"polymorphic_shapes: expected one entry per input spec ({len(structs)}), "
      f"got {len(polymorphic_shapes)}: {polymorphic_shapes}"
    )
  names = input_names(fun, len(structs), has_params)
  leaves = [shapes.ArgLeaf(n, tuple(s.shape), np.dtype(s.dtype)) for n, s in zip(names, structs)]
  # One leaf per input: the specs' own checks, with messages naming the input.
  per_leaf = shapes.spec_for_each_leaf(polymorphic_shapes, list(range(len(structs))))
  symbolic = shapes.symbolic_avals(leaves, per_leaf)
  inputs = tuple(
    InputSpec(name, tuple(d if isinstance(d, int) else None for d in sym.shape), np.dtype(s.dtype))
    for name, s, sym in zip(names, structs, symbolic)
  )
  return inputs, symbolic


def _convert(fun: Callable, polymorphic_shapes, convert_options: dict) -> Callable:
  """`jax2tf.convert` without gradients, with the route's options (which may
  name the target, beyond convert's parameters, and
  native_serialization_platforms, target_tf_version or disabled_checks)."""
  from jax2tf.api import converted_function  # pylint: disable=import-outside-toplevel

  options = make_options(
    polymorphic_shapes=polymorphic_shapes,
    polymorphic_constraints=(),
    with_gradient=False,
    enable_xla=convert_options.get("enable_xla", True),
    native_serialization=convert_options["native_serialization"],
    native_serialization_platforms=convert_options.get("native_serialization_platforms"),
    native_serialization_disabled_checks=tuple(convert_options.get("disabled_checks", ())),
    target_tf_version=convert_options.get("target_tf_version"),
    target=convert_options.get("target"),
  )
  return converted_function(fun, options)


def trace(
  fun: Callable,
  specs: Sequence,
  *,
  params=None,
  polymorphic_shapes=None,
  convert_options: dict,
) -> Traced:
  """`fun` (called as fun(params, *inputs) when params is given) as a
  tf.function over `specs`, converted with `convert_options`."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  has_params = params is not None
  inputs = input_specs(fun, specs, polymorphic_shapes, has_params)
  poly = None if polymorphic_shapes is None else list(polymorphic_shapes)
  if isinstance(polymorphic_shapes, str):
    poly = [polymorphic_shapes]
  module = tf.Module()
  if has_params:
    jax_fun = lambda *xs: fun(params, *xs)  # noqa: E731
    # Variables, not constants: the converter freezes them into weight
    # buffers, and no GraphDef (limited to 2 GiB) has to hold them.
    variables = jax.tree_util.tree_map(lambda p: tf.Variable(np.asarray(p)), params)
    # The module tracks the variables; the pytree stays a JAX pytree (a
    # tf.Module would wrap its dicts and lists).
    module.variables_list = jax.tree_util.tree_leaves(variables)
    converted = _convert(
      lambda p, *xs: fun(p, *xs), None if poly is None else [None, *poly], convert_options
    )
    call = lambda *xs: converted(variables, *xs)  # noqa: E731
  else:
    jax_fun = lambda *xs: fun(*xs)  # noqa: E731
    converted = _convert(jax_fun, poly, convert_options)
    call = converted

  tree_holder = {}

  def serving(*xs):
    flat, tree = jax.tree_util.tree_flatten(call(*xs))
    tree_holder["tree"] = tree
    return {output_name(i): tf.identity(o) for i, o in enumerate(flat)}

  signature = [tf.TensorSpec(i.shape, tf.as_dtype(i.dtype), name=i.name) for i in inputs]
  function = tf.function(serving, autograph=False, input_signature=signature)
  function.get_concrete_function()  # traces, and fills tree_holder
  return Traced(function, module, inputs, tree_holder["tree"], jax_fun, tuple(specs))
