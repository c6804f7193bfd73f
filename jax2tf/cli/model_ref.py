"""The model a command names: `package.module:NAME`.

NAME is a callable taking no arguments that returns a mapping (or an object
with the same attributes) describing the model:

    fn                  the JAX function: fn(params, *inputs) with params,
                        else fn(*inputs); its result is an array or a pytree
    inputs              a sequence of example arrays, one per input
    params              (optional) the parameters' pytree, stored as weights
    polymorphic_shapes  (optional) one shape spec per input, "(b, 28, 28, 1)"

Instead of `fn`, a Flax linen model may be given as `module` (a
`flax.linen.Module`): `fn` is then its `apply`, and `params` default to
`module.init(PRNGKey(0), *inputs)`. A checkpoint replaces the parameters,
read into their structure: a file written by `flax.serialization.to_bytes`
(`--checkpoint FILE`), or a directory written by Orbax
(`orbax.checkpoint.StandardCheckpointer().save(DIR, params)`).

The module is imported with the current directory first on `sys.path`, as
`python -m` would.
"""

import dataclasses
import importlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from jax2tf.cli.errors import UsageError

_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
PROTOCOL = (
  "a callable of no arguments returning {'fn' (or a Flax linen 'module'), 'inputs'"
  "[, 'params', 'polymorphic_shapes']}"
)


@dataclasses.dataclass(frozen=True)
class Model:
  ref: str
  fn: Callable
  inputs: tuple  # NumPy arrays
  params: Any = None
  polymorphic_shapes: tuple | None = None

  def jax_fun(self) -> Callable:
    """inputs -> result, with the parameters bound."""
    if self.params is None:
      return self.fn
    return lambda *xs: self.fn(self.params, *xs)


def _field(made, name: str, default=None):
  if isinstance(made, Mapping):
    return made.get(name, default)
  return getattr(made, name, default)


def _linen(made, inputs):
  """(fn, params) of a Flax linen module."""
  import jax  # pylint: disable=import-outside-toplevel

  module = _field(made, "module")
  params = _field(made, "params")
  if params is None:
    params = module.init(jax.random.PRNGKey(0), *inputs)
  return module.apply, params


def _restore_orbax(ref: str, params, checkpoint: str):
  try:
    import orbax.checkpoint as ocp  # pylint: disable=import-outside-toplevel
  except ImportError as e:
    raise UsageError(
      f"--checkpoint: {checkpoint} is a directory, read as an Orbax checkpoint, which needs "
      "orbax-checkpoint (pip install orbax-checkpoint)"
    ) from e
  try:
    return ocp.StandardCheckpointer().restore(os.path.abspath(checkpoint), params)
  except Exception as e:  # a missing or mismatched checkpoint
    first = (str(e).strip().splitlines() or [""])[0]
    raise UsageError(
      f"--checkpoint: {checkpoint} is not an Orbax checkpoint of {ref}'s parameters "
      f"({type(e).__name__}: {first})"
    ) from e


def _restore(ref: str, params, checkpoint: str):
  if params is None:
    raise UsageError(f"--checkpoint: {ref} has no params to read the checkpoint into")
  if os.path.isdir(checkpoint):
    return _restore_orbax(ref, params, checkpoint)
  try:
    from flax import serialization  # pylint: disable=import-outside-toplevel
  except ImportError as e:
    raise UsageError("--checkpoint: reading a Flax checkpoint needs flax (pip install flax)") from e
  try:
    with open(checkpoint, "rb") as f:
      return serialization.from_bytes(params, f.read())
  except OSError as e:
    raise UsageError(f"--checkpoint: cannot read {checkpoint} ({e.strerror})") from e
  except Exception as e:  # msgpack or structure errors
    raise UsageError(
      f"--checkpoint: {checkpoint} is not a flax.serialization checkpoint of {ref}'s "
      f"parameters ({type(e).__name__}: {e})"
    ) from e


def load(ref: str, checkpoint: str | None = None) -> Model:
  if not _REF.fullmatch(ref):
    raise UsageError(f"model: expected package.module:NAME, got {ref!r}")
  module_name, name = ref.split(":")
  if os.getcwd() not in sys.path:
    sys.path.insert(0, os.getcwd())
  try:
    module = importlib.import_module(module_name)
  except ImportError as e:
    raise UsageError(f"model {ref}: cannot import {module_name} ({e})") from e
  factory = getattr(module, name, None)
  if not callable(factory):
    raise UsageError(f"model {ref}: {module_name} has no callable {name}; expected {PROTOCOL}")
  made = factory()
  fn = _field(made, "fn")
  inputs = _field(made, "inputs")
  if fn is None and _field(made, "module") is not None and inputs is not None:
    fn, params = _linen(made, inputs)
  else:
    params = _field(made, "params")
  if not callable(fn):
    raise UsageError(f"model {ref}: {name}() gave no callable 'fn'; expected {PROTOCOL}")
  if inputs is None or isinstance(inputs, (str, bytes)) or not hasattr(inputs, "__len__"):
    raise UsageError(
      f"model {ref}: {name}() gave 'inputs' = {type(inputs).__name__}; expected a sequence of "
      "example arrays, one per input"
    )
  arrays = []
  for i, x in enumerate(inputs):
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
      raise UsageError(f"model {ref}: inputs[{i}] is a {type(x).__name__}, not an array")
    arrays.append(np.asarray(x))
  poly = _field(made, "polymorphic_shapes")
  if poly is not None:
    poly = tuple(poly)
    if len(poly) != len(arrays):
      raise UsageError(
        f"model {ref}: polymorphic_shapes has {len(poly)} entries for {len(arrays)} inputs"
      )
  if checkpoint is not None:
    params = _restore(ref, params, checkpoint)
  return Model(ref, fn, tuple(arrays), params, poly)
