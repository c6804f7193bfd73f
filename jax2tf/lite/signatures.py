"""Several signatures in one `.tflite`: `to_tflite_signatures`.

A model with named entry points over one set of weights, as generative
models are deployed on LiteRT (LiteRT-LM, litert-torch): `prefill` and
`decode` of a language model, each taking and returning its KV cache.

Each function is exported by `jax.export` and rewritten as on the litert
route (`to_tflite(route="litert")`); the modules' `main` functions are
renamed after their signatures and merged into one module
(`converter_api_ext.merge_modules`, which renames the private functions
that collide), each function gets its signature (`set_signature` on the
function), and the merged module is converted once. The parameters are
constants of each function; the converter's flatbuffer exporter writes one
buffer for constants of equal type and content, so weights that every
function reads as they are (as `params[...]`, not transformed differently
per function) are stored once.

Nothing here imports TensorFlow.
"""

import dataclasses
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

from jax2tf.deploy import artifacts, signature
from jax2tf.lite import api, litert_converter, rewrite
from jax2tf.options import require_bool

ROUTES = ("litert", "auto")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


@dataclasses.dataclass(frozen=True)
class Signature:
  """One entry point of the model: its inputs' names in the function's
  order (those JAX keeps: an argument nothing reads is left out), its
  outputs' names (`output_0`, ... in the order of JAX's flattened result),
  and the largest absolute difference from `jax.jit` that the verification
  found (None without verification)."""

  name: str
  input_names: tuple[str, ...]
  output_names: tuple[str, ...]
  max_error: float | None


class LiteSignaturesModel(bytes):
  """The flatbuffer's bytes, with `route` ("litert") and `signatures`
  ({name: Signature}, in the order given). `jax2tf.lite.run(model, *args,
  signature=name)` runs one, taking positional inputs in its function's
  order."""

  route: str
  signatures: dict[str, Signature]

  def __new__(cls, content: bytes, *, route: str, signatures: dict[str, Signature]):
    obj = super().__new__(cls, content)
    obj.route = route
    obj.signatures = signatures
    return obj

  @property
  def signature_inputs(self) -> dict[str, tuple[str, ...]]:
    """{signature: its input names in the function's order}, for `run`."""
    return {name: s.input_names for name, s in self.signatures.items()}


@dataclasses.dataclass
class _Entry:
  name: str
  fun: Callable
  specs: tuple
  polymorphic_shapes: Any
  text: str = ""
  inputs: tuple = ()
  kept: tuple = ()
  output_names: tuple = ()
  jax_fun: Callable | None = None

  @property
  def input_names(self) -> tuple[str, ...]:
    return tuple(self.inputs[k].name for k in self.kept)


def to_tflite_signatures(
  signatures: Mapping[str, tuple],
  *,
  params=None,
  polymorphic_shapes: Mapping[str, Any] | None = None,
  route: str = "litert",
  verify: bool = True,
  tolerance: tuple = api.DEFAULT_TOLERANCE,
  path=None,
) -> LiteSignaturesModel:
  """One TFLite / LiteRT flatbuffer with a signature per function, sharing
  the weights `params`.

  ```python
  model = jax2tf.to_tflite_signatures(
      {"prefill": (prefill, tokens),
       "decode": (decode, token, pos, k_cache, v_cache)},
      params=params)
  logits, k_cache, v_cache = jax2tf.lite.run(model, tokens, signature="prefill")
  ```

  Args:
    signatures: {name: (fun, *input_specs)}, in the order the model lists
      them. A name is a letter followed by letters, digits and underscores
      ("prefill", "decode", "serving_default"). `fun` is called as
      `fun(params, *inputs)` when `params` is given, else `fun(*inputs)`;
      its results may be a pytree of arrays (the signature's outputs are
      its leaves, `output_0`, `output_1`, ...). Each input spec is an array
      (also the verification's input) or a `jax.ShapeDtypeStruct`; the
      signature names its inputs after `fun`'s parameters.
    params: a pytree of arrays, the weights of every function, stored once
      where the functions read them unchanged.
    polymorphic_shapes: {name: one shape spec per input of that signature}
      (as in `to_tflite`); signatures left out have static shapes. Each
      signature has its own dimension variables.
    route: "litert" (JAX's StableHLO through the standalone
      litert-converter, without TensorFlow), the only route that writes
      several signatures so far; "auto" means it too.
    verify: run each signature on LiteRT on its example inputs (random
      values for ShapeDtypeStructs) and compare with `jax.jit` of its
      function.
    tolerance: (rtol, atol) of that comparison, for float outputs.
    path: also write the flatbuffer there, atomically.

  Returns:
    The flatbuffer (a `bytes`), as a `LiteSignaturesModel` that lists its
    signatures.

  Raises:
    ValueError: a bad argument; the message names it.
    LiteRTConversionError: litert-converter refused a function; the
      message names the signature, the op and the JAX primitive.
    VerificationError: a signature does not compute what JAX does; the
      message names the signature.
    ImportError: litert-converter (or, to verify, ai-edge-litert) is
      missing.
  """
  entries = _entries(signatures, params, polymorphic_shapes)
  if route not in ROUTES:
    raise ValueError(
      f"route: only 'litert' writes several signatures in one model so far, got {route!r}. "
      "The graph and native routes go through TF's converter, which this function does not "
      "use; convert each function with to_tflite(route=...) for one model per function."
    )
  api._check_args("litert", None, None, tuple(tolerance), False)
  require_bool("verify", verify)
  if params is not None and api._param_bytes(params) >= api.FLATBUFFER_LIMIT:
    raise ValueError(
      f"params: {api._param_bytes(params) / 2**30:.2f} GiB of parameters do not fit in one "
      f"TFLite flatbuffer, which holds at most {api.FLATBUFFER_LIMIT / 2**30:.0f} GiB"
    )
  for e in entries:
    _export(e, params)
  content = _convert(entries)
  content = rewrite.simplify(content, "litert")
  found: dict[str, Signature] = {}
  for e in entries:
    assert e.jax_fun is not None
    try:
      checked = api._checked_model(
        content,
        "litert",
        e.specs,
        e.inputs,
        e.jax_fun,
        None,
        verify,
        tuple(tolerance),
        e.kept,
        signature=e.name,
      )
    except api.VerificationError as err:
      raise api.VerificationError(f"signature {e.name!r}: {err}") from err
    found[e.name] = Signature(e.name, e.input_names, e.output_names, checked.max_error)
  model = LiteSignaturesModel(content, route="litert", signatures=found)
  if path is not None:
    artifacts.write_atomically(path, bytes(model))
  return model


def _entries(signatures, params, polymorphic_shapes) -> list[_Entry]:
  if not isinstance(signatures, Mapping):
    raise ValueError(
      "signatures: expected a mapping {name: (function, *input_specs)}, got "
      f"{type(signatures).__name__}"
    )
  if not signatures:
    raise ValueError("signatures: expected at least one {name: (function, *input_specs)}, got {}")
  if polymorphic_shapes is None:
    polymorphic_shapes = {}
  if not isinstance(polymorphic_shapes, Mapping):
    raise ValueError(
      "polymorphic_shapes: expected a mapping {signature name: one shape spec per input}, "
      f"got {type(polymorphic_shapes).__name__}"
    )
  unknown = sorted(set(polymorphic_shapes) - set(signatures), key=str)
  if unknown:
    raise ValueError(
      f"polymorphic_shapes: {unknown} name no signature; the signatures are {list(signatures)}"
    )
  entries = []
  for name, value in signatures.items():
    if not isinstance(name, str) or not _NAME.fullmatch(name):
      raise ValueError(
        f"signatures: the name {name!r} is not a letter followed by letters, digits and "
        "underscores (e.g. 'prefill', 'decode')"
      )
    if not isinstance(value, (tuple, list)) or not value or not callable(value[0]):
      raise ValueError(
        f"signatures[{name!r}]: expected (function, *input_specs), got {type(value).__name__}"
        + (
          f" starting with {type(value[0]).__name__}"
          if isinstance(value, (tuple, list)) and value
          else ""
        )
      )
    fun, *specs = value
    _check_arity(name, fun, len(specs), params is not None)
    entries.append(_Entry(name, fun, tuple(specs), polymorphic_shapes.get(name)))
  return entries


def _check_arity(name: str, fun: Callable, count: int, has_params: bool) -> None:
  """A ValueError where `fun` cannot take `count` inputs (after the
  parameters when `has_params`)."""
  try:
    parameters = list(inspect.signature(fun).parameters.values())
  except (TypeError, ValueError):  # a builtin without a signature
    return
  if any(p.kind == p.VAR_POSITIONAL for p in parameters):
    return
  positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
  required = [p for p in positional if p.default is p.empty]
  if has_params:
    if not positional:
      raise ValueError(
        f"signatures[{name!r}]: {_name_of(fun)} takes no arguments, but params are given "
        "(each function is called as fun(params, *inputs))"
      )
    positional, required = positional[1:], required[1:]
  if not len(required) <= count <= len(positional):
    takes = ", ".join(p.name for p in positional) or "nothing"
    after = " after params" if has_params else ""
    raise ValueError(
      f"signatures[{name!r}]: {_name_of(fun)} takes {len(positional)} inputs{after} "
      f"({takes}), got {count} input specs"
    )


def _name_of(fun: Callable) -> str:
  return getattr(fun, "__qualname__", None) or type(fun).__name__


def _export(e: _Entry, params) -> None:
  try:
    text, inputs, kept, n_outputs, jax_fun = api._litert_module(
      e.fun, e.specs, params, e.polymorphic_shapes
    )
  except ValueError as err:
    raise ValueError(f"signatures[{e.name!r}]: {err}") from err
  except TypeError as err:
    raise TypeError(f"signatures[{e.name!r}]: {err}") from err
  e.text, e.inputs, e.kept, e.jax_fun = text, tuple(inputs), tuple(kept), jax_fun
  e.output_names = tuple(signature.output_name(i) for i in range(n_outputs))


def _convert(entries: list[_Entry]) -> bytes:
  """The flatbuffer of the entries' modules merged into one, a signature each."""
  modules = [
    litert_converter.SignatureModule(e.name, e.text, e.input_names, e.output_names) for e in entries
  ]
  try:
    return litert_converter.convert_signatures(modules)
  except litert_converter.LiteRTConversionError:
    _raise_for_one(entries)  # name the signature the converter refuses alone
    raise


def _raise_for_one(entries: list[_Entry]) -> None:
  """Converts each entry alone, raising the refusal of the first that the
  converter refuses, with its signature's name; returns where each
  converts alone."""
  for e in entries:
    try:
      litert_converter.convert(
        e.text, input_names=e.input_names, output_names=e.output_names, signature=e.name
      )
    except litert_converter.LiteRTConversionError as err:
      raise litert_converter.LiteRTConversionError(
        f"signature {e.name!r}: {err}", err.problems
      ) from err
