"""`to_tflite`: a JAX function to a `.tflite` flatbuffer, checked on LiteRT."""

import logging
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import export as jax_export

from jax2tf import extras, targets
from jax2tf.deploy import artifacts, provenance, signature
from jax2tf.lite import infinities, litert_converter, litert_quantize, rewrite, runtime
from jax2tf.lite.errors import TFLiteConversionError
from jax2tf.native import module_rewrite, target_lowerings
from jax2tf.options import require_bool

logger = logging.getLogger("jax2tf.lite")

# Route name -> the options of jax2tf.convert it converts with. The graph
# route feeds the converter ordinary TF ops; the native route feeds it the
# StableHLO module inside XlaCallModule, which the converter legalizes: JAX's
# own module, without the rewrites that make TF's XLA compute JAX's answers.
# The litert route takes no TF function: JAX's own StableHLO, rewritten by its
# target's pipeline, goes to the standalone litert-converter. The other two
# need TensorFlow (and import TF's converter, lite/converter.py, when taken).
ROUTES: dict[str, dict[str, Any]] = {
  "graph": {"native_serialization": False, "enable_xla": False, "target": targets.TFLITE},
  "native": {"native_serialization": True, "target": targets.TFLITE},
  "litert": {"target": targets.LITERT},
}
AUTO_ORDER = ("graph", "native", "litert")
# The routes that need no TensorFlow: what "auto" tries where it is missing.
WITHOUT_TENSORFLOW = ("litert",)
QUANTIZATIONS = (None, "float16", "dynamic_int8", "int8")
DEFAULT_TOLERANCE = (1e-4, 1e-4)

# Primitives whose native-route lowering LiteRT runs with its own MAXIMUM /
# MINIMUM kernels (elementwise, in reductions and in pools), which return the
# other operand where JAX returns NaN, and may differ in the sign of zero.
NAN_BLIND_ON_NATIVE_ROUTE = frozenset(
  {
    "max",
    "min",
    "clamp",
    "reduce_max",
    "reduce_min",
    "argmax",
    "argmin",
    "reduce_window_max",
    "reduce_window_min",
    "cummax",
    "cummin",
  }
)

# One flatbuffer holds at most 2 GiB (32-bit offsets).
FLATBUFFER_LIMIT = 2**31


class LiteModel(bytes):
  """The flatbuffer's bytes, with how they were made: `route` ("graph",
  "native" or "litert"), `input_names` (the serving signature's inputs, in the JAX
  function's order), `quantize`, and `max_error` (the largest absolute
  difference from `jax.jit` found by the verification, or None)."""

  route: str
  input_names: tuple
  quantize: str | None
  max_error: float | None

  def __new__(cls, content: bytes, **attributes):
    obj = super().__new__(cls, content)
    for k, v in attributes.items():
      setattr(obj, k, v)
    return obj


class VerificationError(AssertionError):
  """The converted model runs on LiteRT but does not compute what JAX does
  (or fails to run)."""


def _example_inputs(specs, inputs) -> list[np.ndarray]:
  rng = np.random.default_rng(0)
  out = []
  for spec, declared in zip(specs, inputs):
    if isinstance(spec, np.ndarray) or hasattr(spec, "__array__"):
      out.append(np.asarray(spec))
      continue
    dt = np.dtype(declared.dtype)
    shape = tuple(spec.shape)
    if dt == np.bool_:
      out.append(rng.random(shape) < 0.5)
    elif dt.kind in "iu":
      out.append(rng.integers(0, 8, shape).astype(dt))
    else:
      out.append(rng.uniform(-1, 1, shape).astype(dt))
  return out


def _param_bytes(params) -> int:
  return sum(np.asarray(p).nbytes for p in jax.tree_util.tree_leaves(params))


def _check_args(route, quantize, representative_dataset, tolerance, allow_flex):
  if route != "auto" and route not in ROUTES:
    *others, last = (repr(r) for r in ("auto", *ROUTES))
    raise ValueError(f"route: expected {', '.join(others)} or {last}, got {route!r}")
  if route == "litert" and allow_flex:
    raise ValueError(
      "allow_flex=True: route 'litert' writes builtin LiteRT operators only (the standalone "
      "litert-converter has no TF ops); use route='graph' or 'native' for the Flex delegate"
    )
  if quantize not in QUANTIZATIONS:
    raise ValueError(f"quantize: expected one of {QUANTIZATIONS}, got {quantize!r}")
  if quantize == "int8" and representative_dataset is None:
    raise ValueError(
      "quantize='int8' needs representative_dataset: a callable returning an iterable "
      "of input samples (one array per input each), from which the converter "
      "calibrates the activations' ranges"
    )
  if representative_dataset is not None and not callable(representative_dataset):
    raise TypeError(
      "representative_dataset: expected a callable returning an iterable of samples "
      f"(one array per input each), got {type(representative_dataset).__name__}"
    )
  if quantize != "int8" and representative_dataset is not None:
    raise ValueError(f"representative_dataset is only used with quantize='int8', got {quantize=}")
  if len(tolerance) != 2:
    raise ValueError(f"tolerance: expected (rtol, atol), got {tolerance!r}")


def _max_error(expected, actual, tolerance, route) -> float:
  if len(expected) != len(actual):
    raise VerificationError(
      f"route {route!r}: {len(actual)} outputs on LiteRT, JAX has {len(expected)}"
    )
  rtol, atol = tolerance
  worst = 0.0
  for i, (e, a) in enumerate(zip(expected, actual)):
    e = np.asarray(e)
    if e.shape != a.shape or e.dtype != a.dtype:
      raise VerificationError(
        f"route {route!r}: output {i} is {a.dtype}{list(a.shape)} on LiteRT, "
        f"{e.dtype}{list(e.shape)} in JAX"
      )
    if not jax.numpy.issubdtype(e.dtype, jax.numpy.inexact):  # bfloat16 too
      bad = np.count_nonzero(e != a)
      if bad:
        raise VerificationError(f"route {route!r}: output {i} differs from JAX at {bad} positions")
      continue
    if np.iscomplexobj(e):  # each part compared as a real
      e, a = np.stack([e.real, e.imag], -1), np.stack([a.real, a.imag], -1)
    e64, a64 = e.astype(np.float64), a.astype(np.float64)
    same_nan = np.array_equal(np.isnan(e64), np.isnan(a64))
    finite = np.isfinite(e64)
    if not same_nan or not np.array_equal(
      e64[~finite & ~np.isnan(e64)], a64[~finite & ~np.isnan(e64)]
    ):
      raise VerificationError(f"route {route!r}: output {i}: NaN or infinities differ from JAX")
    if finite.any():
      diff = np.abs(e64[finite] - a64[finite])
      worst = max(worst, float(diff.max()))
      output_rtol = _rtol_for(e.dtype, rtol)
      limit = atol + output_rtol * np.abs(e64[finite])
      if (diff > limit).any():
        raise VerificationError(
          f"route {route!r}: output {i} differs from JAX by up to {diff.max():.3g} "
          f"(tolerance rtol={output_rtol}, atol={atol})"
        )
  return worst


def _rtol_for(dtype: np.dtype, rtol: float) -> float:
  """`rtol`, but for a float16 output at least two units in its last place
  (TFLite's signatures carry no bfloat16): LiteRT computes it in float32 and
  rounds it once per primitive, and a tolerance finer than the dtype holds
  would refuse a model for its dtype alone."""
  if dtype == np.float16:
    return max(rtol, 2 * float(np.finfo(np.float16).eps))
  return rtol


def _on_floats(eqn) -> bool:
  """Whether an equation reads floats: only they have NaN and signed zeros."""
  return any(
    jax.numpy.issubdtype(getattr(v.aval, "dtype", np.int32), np.inexact) for v in eqn.invars
  )


def _warn_nan_blind(traced) -> None:
  applied = provenance.primitive_lines(traced.jaxpr, keep=_on_floats)
  blind = sorted(NAN_BLIND_ON_NATIVE_ROUTE & set(applied))
  if not blind:
    return
  where = [f"{p} (at {', '.join(applied[p][:2])})" if applied[p] else p for p in blind]
  warnings.warn(
    "to_tflite(route='native'): LiteRT's MAXIMUM/MINIMUM kernels, which run "
    + ", ".join(where)
    + ", may drop NaN where JAX propagates it and differ in the sign of zero, and TF's "
    "converter drops one with an operand that it folds to infinities (the max of an "
    "empty slice); the graph route keeps JAX's semantics",
    stacklevel=4,
  )


def _one_route(
  fun,
  specs,
  route,
  params,
  polymorphic_shapes,
  allow_flex,
  quantize,
  representative_dataset,
  verify,
  tolerance,
) -> LiteModel:
  if route == "litert":
    return _litert_route(
      fun, specs, params, polymorphic_shapes, quantize, representative_dataset, verify, tolerance
    )
  extras.require_tensorflow(f"to_tflite(route={route!r})")
  from jax2tf.lite import converter  # pylint: disable=import-outside-toplevel

  convert_options = ROUTES[route]
  if quantize == "int8":
    # int8 tensors hold no -0.0: the rules leave out the 1/x that tells the
    # zeros apart, whose zero divisor LiteRT's int8 DIV refuses.
    convert_options = {**convert_options, "target": targets.TFLITE_INT8}
  traced = signature.trace(
    fun,
    specs,
    params=params,
    polymorphic_shapes=polymorphic_shapes,
    convert_options=convert_options,
  )
  if route == "native":
    _warn_nan_blind(traced)
  content = converter.convert_traced(
    traced,
    route=route,
    allow_flex=allow_flex,
    quantize=quantize,
    representative_dataset=representative_dataset,
  )
  # Native: the converter leaves a polymorphic module's shapes to run-time
  # arithmetic, which keeps LiteRT from planning (and XNNPack from running)
  # everything after it, and its bias, ReLU and pool fusions undone. Graph:
  # the ABS after each ReLU can often go or move past a pool.
  content = rewrite.simplify(content, route, restore_infinities=infinities.restorable(traced.jaxpr))
  return _checked_model(
    content, route, specs, traced.inputs, traced.jax_fun, quantize, verify, tolerance
  )


def _checked_model(
  content,
  route,
  specs,
  inputs,
  jax_fun,
  quantize,
  verify,
  tolerance,
  kept=None,
  signature=runtime.SIGNATURE,
) -> LiteModel:
  """The model, verified on LiteRT against `jax.jit(jax_fun)` when `verify`.
  `kept`: the positions of the inputs the model takes, where it takes fewer
  than `jax_fun` (JAX drops the arguments nothing reads). `signature`: the
  model's signature that computes `jax_fun`."""
  kept = tuple(range(len(inputs))) if kept is None else tuple(kept)
  names = tuple(inputs[k].name for k in kept)
  max_error = None
  if verify:
    args = _example_inputs(specs, inputs)
    try:
      actual = runtime.run(
        content, *[args[k] for k in kept], input_names=names, signature=signature
      )
    except (RuntimeError, ValueError) as e:
      # LiteRT raises ValueError for an operator it has no kernel for.
      raise VerificationError(f"route {route!r}: LiteRT fails to run the model: {e}") from e
    expected = [np.asarray(x) for x in jax.tree_util.tree_leaves(jax.jit(jax_fun)(*args))]
    if quantize is None:
      max_error = _max_error(expected, actual, tolerance, route)
    else:
      # Quantized numbers differ from JAX's by design; the shapes and dtypes
      # must still agree. Accuracy is judged on data (docs/tflite.md).
      _max_error(expected, actual, (np.inf, np.inf), route)
  return LiteModel(content, route=route, input_names=names, quantize=quantize, max_error=max_error)


# jax.export's own custom-call check knows neither the primitive behind a
# target nor what LiteRT runs; the converter's refusal names both.
_ALL_CUSTOM_CALLS = jax_export.DisabledSafetyCheck.custom_call("ALL")


def _litert_route(
  fun, specs, params, polymorphic_shapes, quantize, representative_dataset, verify, tolerance
) -> LiteModel:
  """JAX's StableHLO, rewritten by the LITERT target's pipeline, through the
  standalone litert-converter: no TensorFlow. Quantized afterwards, from the
  float flatbuffer, by ai-edge-quantizer (lite/litert_quantize.py)."""
  if quantize is not None:
    # Missing, it fails before the conversion, naming the extra.
    litert_quantize.require()
  text, inputs, kept, n_outputs, jax_fun = _litert_module(fun, specs, params, polymorphic_shapes)
  input_names = [inputs[k].name for k in kept]
  content = litert_converter.convert(
    text,
    input_names=input_names,
    output_names=[signature.output_name(i) for i in range(n_outputs)],
  )
  content = rewrite.simplify(content, "litert")
  if quantize is not None:
    content = litert_quantize.quantize(
      content,
      quantize,
      input_names=input_names,
      representative_dataset=representative_dataset,
    )
  return _checked_model(
    content, "litert", specs, inputs, jax_fun, quantize, verify, tolerance, kept
  )


def _litert_module(fun, specs, params, polymorphic_shapes):
  """(module text, inputs, kept, number of outputs, jax_fun): `fun` exported
  by `jax.export` and rewritten by the LITERT target's pipeline; its `main`
  takes the inputs at the positions `kept` and returns the outputs."""
  has_params = params is not None
  inputs, avals = signature.symbolic_inputs(fun, specs, polymorphic_shapes, has_params)
  if has_params:
    jax_fun = lambda *xs: fun(params, *xs)  # noqa: E731
  else:
    jax_fun = lambda *xs: fun(*xs)  # noqa: E731
  exported = jax_export.export(
    # Every input stays an input of the model, read or not, as on the other
    # routes (JAX drops unread ones from its module by default).
    jax.jit(jax_fun, keep_unused=True),
    platforms=("cpu",),
    disabled_checks=(_ALL_CUSTOM_CALLS,),
    # Linear algebra as StableHLO ops and XLA-expanded custom calls, not
    # LAPACK's, as for TF; what LiteRT has no kernel for as JAX forms.
    _override_lowering_rules=target_lowerings.lowering_rules(targets.LITERT),
  )(*avals)
  pipeline = targets.LITERT.native_pipeline
  assert pipeline is not None
  text = module_rewrite.rewrite(exported.mlir_module_serialized, pipeline)
  kept = sorted(exported.module_kept_var_idx)
  return text, inputs, kept, len(exported.out_avals), jax_fun


def _routes(route: str) -> tuple[tuple[str, ...], str]:
  """The routes to try, and what the error says of those left untried."""
  if route != "auto":
    return (route,), ""
  if extras.has_tensorflow():
    return AUTO_ORDER, ""
  skipped = [r for r in AUTO_ORDER if r not in WITHOUT_TENSORFLOW]
  logger.info(
    "to_tflite: TensorFlow is not installed; route 'auto' tries %s only (not %s)",
    ", ".join(WITHOUT_TENSORFLOW),
    ", ".join(skipped),
  )
  untried = (
    f" (TensorFlow is not installed, so route 'auto' tried {', '.join(WITHOUT_TENSORFLOW)} "
    f"only, not {', '.join(skipped)}: {extras.INSTALL})"
  )
  return tuple(r for r in AUTO_ORDER if r in WITHOUT_TENSORFLOW), untried


def to_tflite(
  fun: Callable,
  *input_specs,
  params=None,
  polymorphic_shapes: Sequence | str | None = None,
  route: str = "auto",
  quantize: str | None = None,
  representative_dataset: Callable | None = None,
  allow_flex: bool = False,
  verify: bool = True,
  tolerance: tuple = DEFAULT_TOLERANCE,
  path=None,
) -> LiteModel:
  """A TFLite / LiteRT flatbuffer computing what `fun` computes.

  Args:
    fun: a JAX function of arrays; called as `fun(params, *inputs)` when
      `params` is given, else `fun(*inputs)`. Results may be a pytree of
      arrays: the model's outputs are its leaves, `output_0`, `output_1`, ...
    *input_specs: one per input, an array (also used as the verification
      input) or a `jax.ShapeDtypeStruct`. The serving signature names them
      after `fun`'s parameters.
    params: a pytree of arrays, stored as the model's weights.
    polymorphic_shapes: one shape spec per input (as in `jax2tf.convert`);
      polymorphic dimensions become dynamic in the model
      (`resize_tensor_input` on LiteRT).
    route: "graph" (graph serialization with enable_xla=False: ordinary TF
      ops), "native" (the StableHLO module, legalized by the converter),
      "litert" (JAX's StableHLO through the standalone litert-converter,
      without TensorFlow: `pip install "jax2tf[litert]"`), or "auto": the
      first of graph, native, litert that converts and verifies (litert
      only, where TensorFlow is not installed; the graph and native routes
      need it).
    quantize: None, "float16" (weights), "dynamic_int8" (weights, with
      activations quantized at run time) or "int8" (weights and activations,
      calibrated on `representative_dataset`; inputs and outputs stay float;
      max/min then treat -0.0 as +0.0, as int8 tensors have one zero).
    representative_dataset: for quantize="int8", a callable returning an
      iterable of samples, each a list with one array per input.
    allow_flex: also allow TF ops through the Flex delegate (SELECT_TF_OPS),
      which the app must then link; builtin TFLite ops only by default.
    verify: run the model on LiteRT (`ai-edge-litert`) on the inputs given as
      arrays (random values for ShapeDtypeStructs) and compare with `jax.jit`.
    tolerance: (rtol, atol) of that comparison, for float outputs.
    path: also write the flatbuffer there, atomically.

  Returns:
    The flatbuffer (a `bytes`), as a `LiteModel` that also says which route
    it took.

  Raises:
    TFLiteConversionError: no route converts with the allowed ops; the
      message names the JAX primitive, the TF op and the remedies.
  """
  _check_args(route, quantize, representative_dataset, tuple(tolerance), allow_flex)
  require_bool("allow_flex", allow_flex)
  require_bool("verify", verify)
  if params is not None and _param_bytes(params) >= FLATBUFFER_LIMIT:
    raise ValueError(
      f"params: {_param_bytes(params) / 2**30:.2f} GiB of parameters do not fit in one TFLite "
      f"flatbuffer, which holds at most {FLATBUFFER_LIMIT / 2**30:.0f} GiB"
    )
  if allow_flex:
    warnings.warn(
      "to_tflite(allow_flex=True): the model may contain TF ops that only the Flex "
      "delegate runs; an app loading it must link the Flex delegate "
      "(tensorflow-lite-select-tf-ops), which adds several MB",
      stacklevel=2,
    )
  routes, untried = _routes(route)
  failures: list[tuple[str, Exception]] = []
  for r in routes:
    try:
      model = _one_route(
        fun,
        input_specs,
        r,
        params,
        polymorphic_shapes,
        allow_flex,
        quantize,
        representative_dataset,
        verify,
        tolerance,
      )
    except (TFLiteConversionError, VerificationError) as e:
      if route != "auto":
        raise
      logger.info("to_tflite: route %r failed: %s", r, e)
      failures.append((r, e))
      continue
    except ImportError as e:
      # The litert route without litert-converter: auto passes it over.
      if route != "auto" or r != "litert":
        raise
      logger.info("to_tflite: route %r failed: %s", r, e)
      failures.append((r, e))
      continue
    logger.info("to_tflite: route %r converted%s", r, " and verified" if verify else "")
    if path is not None:
      artifacts.write_atomically(path, bytes(model))
    return model
  details = "\n\n".join(f"[{r}] {e}" for r, e in failures)
  raise TFLiteConversionError(
    f"to_tflite: no route ({', '.join(routes)}) converts and verifies with the allowed "
    f"ops{untried}:\n\n{details}"
  )
