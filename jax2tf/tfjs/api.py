"""`to_tfjs`: a JAX function to a TensorFlow.js graph model directory."""

import dataclasses
import functools
import json
import os
from collections.abc import Callable, Sequence

import jax
import numpy as np
import tensorflow as tf

from jax2tf import targets
from jax2tf.deploy import artifacts, signature
from jax2tf.options import DisabledSafetyCheck, require_bool
from jax2tf.tfjs import freeze, graph_model, optimize, refusals, webgl

# Graph serialization without XLA ops: ordinary TF ops, which TF.js maps to
# its kernels (it has no XlaCallModule, nor any Xla* op), with the rules'
# forms for TF.js (uint32 in int32 lanes, exact int32 arithmetic).
CONVERT_OPTIONS = {"native_serialization": False, "enable_xla": False, "target": targets.TFJS}


@dataclasses.dataclass(frozen=True)
class TFJSModel:
  """A TF.js graph model: its files (`model.json` and the weight shards, by
  name), the inputs it takes in the JAX function's order, the outputs it
  returns in the order of JAX's flattened result, and the directory it was
  written to (None until saved)."""

  files: dict[str, bytes]
  input_names: tuple[str, ...]
  output_names: tuple[str, ...]
  path: str | None = None

  @property
  def model_json(self) -> dict:
    return json.loads(self.files[graph_model.MODEL_JSON])

  def save(self, path: str | os.PathLike, overwrite: bool = False) -> "TFJSModel":
    """Writes the files into the directory `path`, atomically (a failure
    leaves no directory; an existing one is replaced only with `overwrite`)."""

    def write(folder):
      for name, content in self.files.items():
        with open(os.path.join(folder, name), "wb") as f:
          f.write(content)

    artifacts.write_directory_atomically(path, write, overwrite=overwrite)
    return dataclasses.replace(self, path=os.path.abspath(os.fspath(path)))


def _check_disabled(disabled_checks) -> tuple:
  for check in disabled_checks:
    if getattr(check, "_impl", None) != "shape_assertions":
      raise ValueError(
        "disabled_checks: to_tfjs can only disable "
        f"jax2tf.DisabledSafetyCheck.shape_assertions(), got {check!r}"
      )
  return tuple(disabled_checks)


def _is_uint32(x) -> bool:
  return hasattr(x, "dtype") and np.dtype(x.dtype) == np.uint32


def _as_int32_spec(spec):
  if not _is_uint32(spec):
    return spec
  if isinstance(spec, jax.ShapeDtypeStruct):
    return jax.ShapeDtypeStruct(spec.shape, np.int32)
  return np.asarray(spec).view(np.int32)


def _uint32_as_int32(fun: Callable, input_specs: Sequence, params):
  """`fun`, its input specs and params with every uint32 array crossing the
  model's boundary as int32 of the same bits: TF.js has no unsigned tensors
  (in JavaScript, an Int32Array over a Uint32Array's buffer). The last item
  is filled when `fun` is traced: whether each flat result is uint32."""
  unsigned_inputs = [_is_uint32(s) for s in input_specs]
  unsigned_params = jax.tree_util.tree_map(_is_uint32, params)
  unsigned_results: list[bool] = []

  def to_uint32(x, unsigned):
    return jax.lax.bitcast_convert_type(x, np.uint32) if unsigned else x

  def from_uint32(y):
    return jax.lax.bitcast_convert_type(y, np.int32) if _is_uint32(y) else y

  @functools.wraps(fun)
  def wrapped(*args):
    n = len(args) - len(unsigned_inputs)  # 1 with params, else 0
    if params is not None:
      args = (jax.tree_util.tree_map(to_uint32, args[0], unsigned_params), *args[1:])
    inputs = [to_uint32(x, u) for x, u in zip(args[n:], unsigned_inputs)]
    result = fun(*args[:n], *inputs)
    unsigned_results[:] = [_is_uint32(y) for y in jax.tree_util.tree_leaves(result)]
    return jax.tree_util.tree_map(from_uint32, result)

  specs = [_as_int32_spec(s) for s in input_specs]
  params = jax.tree_util.tree_map(_as_int32_spec, params)
  return wrapped, specs, params, unsigned_inputs, unsigned_results


def _converted_by() -> str:
  from jax2tf import __version__  # pylint: disable=import-outside-toplevel

  return f"jax2tf {__version__}"


def to_tfjs(
  fun: Callable,
  *input_specs,
  params=None,
  polymorphic_shapes: Sequence | str | None = None,
  disabled_checks: Sequence[DisabledSafetyCheck] = (),
  path=None,
  overwrite: bool = False,
) -> TFJSModel:
  """A TensorFlow.js graph model computing what `fun` computes.

  Args:
    fun: a JAX function of arrays; called as `fun(params, *inputs)` when
      `params` is given, else `fun(*inputs)`. Results may be a pytree of
      arrays: the model's outputs are its leaves, `output_0`, `output_1`, ...
    *input_specs: one per input, an array or a `jax.ShapeDtypeStruct`
      (float32, int32 or bool). The model's signature names the inputs after
      `fun`'s parameters.
    params: a pytree of arrays, stored as the model's weights.
    polymorphic_shapes: one shape spec per input (as in `jax2tf.convert`);
      polymorphic dimensions are unknown (-1) in the model.
    disabled_checks: `[jax2tf.DisabledSafetyCheck.shape_assertions()]` leaves
      out the checks that input shapes satisfy `polymorphic_shapes` (the
      model then trusts its callers). With them, inputs outside the specs
      make the model fail (jax2tf/tfjs/shape_checks.py says how).
    path: also write the model into this directory, atomically.
    overwrite: replace an existing directory at `path`.

  Returns:
    A `TFJSModel`: the files, the input and output names, and `path`.

  Raises:
    TFJSConversionError: the graph needs an op or a dtype that TF.js lacks;
      the message names the JAX primitive, the TF op and the remedies.
  """
  require_bool("overwrite", overwrite)
  options = {**CONVERT_OPTIONS, "disabled_checks": _check_disabled(disabled_checks)}
  fun, input_specs, params, unsigned_inputs, unsigned_results = _uint32_as_int32(
    fun, input_specs, params
  )
  traced = signature.trace(
    fun,
    input_specs,
    params=params,
    polymorphic_shapes=polymorphic_shapes,
    convert_options=options,
  )
  frozen = freeze.freeze(traced)
  refusals.check(frozen, traced.jaxpr)
  frozen = optimize.optimize(frozen)
  uint32 = [n for n, u in zip(frozen.inputs, unsigned_inputs) if u]
  uint32 += [signature.output_name(i) for i, u in enumerate(unsigned_results) if u]
  files = graph_model.model_files(
    frozen,
    generated_by=tf.__version__,
    converted_by=_converted_by(),
    uint32=uint32,
    webgl_inexact=webgl.bit_primitives(frozen.graph_def),
  )
  model = TFJSModel(files, tuple(frozen.inputs), tuple(frozen.outputs))
  if path is not None:
    model = model.save(path, overwrite=overwrite)
  return model
