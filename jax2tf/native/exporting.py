"""Export a jitted JAX function to a TF-executable native module."""

import dataclasses
import logging
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import export as jax_export

from jax2tf.call_tf import function_list as call_tf_function_list
from jax2tf.internals import jax_private
from jax2tf.native import module_rewrite, shardings, target_lowerings, versions
from jax2tf.targets import TF_XLA, Target

logger = logging.getLogger("jax2tf")

LARGE_MODULE_ENV_VAR = "JAX2TF_LARGE_MODULE_BYTES"
DEFAULT_LARGE_MODULE_BYTES = 100 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class NativeModule:
  """A serialized module plus what XlaCallModule needs to call it."""

  serialized: bytes
  calling_convention_version: int
  in_avals: tuple  # symbolic avals, flat, all arguments (kept or not)
  out_avals: tuple
  in_tree: Any
  out_tree: Any
  kept_var_idx: tuple[int, ...]
  platforms: tuple[str, ...]
  disabled_checks: tuple[str, ...]
  nr_devices: int
  stablehlo_version: str
  use_shardy_partitioner: bool
  # Serialized xla.OpSharding per argument (all, kept or not) and result;
  # None where the function leaves the sharding unspecified.
  in_shardings: tuple = ()
  out_shardings: tuple = ()
  # The same as JAX shardings (None where unspecified), for jax.jit: the VJP
  # is lowered with them (jax2tf/native/shardings.py).
  in_jax_shardings: tuple = ()
  out_jax_shardings: tuple = ()
  # shard_map (manual partitioning): only an SPMD-partitioning TF runtime
  # (TPU) can execute it.
  manual_partitioning: bool = False
  # TF ConcreteFunctions that the module calls through
  # `stablehlo.custom_call @tf.call_tf_function` (call_tf), by index.
  function_list: tuple = ()


def _effects_error(fun_name: str, effects) -> NotImplementedError:
  return NotImplementedError(
    f"Cannot convert {fun_name} with native serialization: it has effects "
    f"{sorted(str(e) for e in effects)}. Host callbacks (jax.debug.print, "
    "jax.debug.callback, io_callback, pure_callback) run Python inside the JAX "
    "process and cannot be carried into a TensorFlow graph. Remove them before "
    "converting (e.g. guard debug prints with a flag)."
  )


def _is_callback_error(e: Exception) -> bool:
  return _is_callback_target(str(e))


def _is_callback_target(text: str) -> bool:
  return "callback" in text.lower() or "xla_python" in text or "xla_ffi_python" in text


_ALL_CUSTOM_CALLS = jax_export.DisabledSafetyCheck.custom_call("ALL")


def export_native(
  fun_jit: Callable,
  args_avals: Sequence[Any],
  kwargs_avals: dict,
  *,
  fun_name: str,
  platforms: Sequence[str] | None,
  disabled_checks: Sequence[jax_export.DisabledSafetyCheck],
  target_tf_version: str | None,
  target: Target = TF_XLA,
) -> NativeModule:
  pipeline = target.native_pipeline
  if pipeline is None:
    raise ValueError(f"target {target.name} reads no native module")
  consumer = versions.consumer(target_tf_version)
  cc_version = versions.calling_convention_version(consumer)
  allowed_targets = {dc._impl.split(":", 1)[1] for dc in disabled_checks if dc.is_custom_call()}
  # jax.export's own custom-call check knows neither the primitive behind a
  # target nor the package's remedies, and it allows LAPACK/cuSOLVER targets
  # that TF cannot run anyway. It is switched off here; module_rewrite checks
  # every custom call instead, against what TensorFlow executes.
  export_checks = tuple(disabled_checks) + (_ALL_CUSTOM_CALLS,)
  try:
    with (
      jax_private.export_calling_convention_version(cc_version),
      call_tf_function_list.collecting() as called_tf_functions,
    ):
      exp = jax_export.export(
        fun_jit,  # type: ignore[arg-type]  # a jax.jit-wrapped function
        platforms=platforms,
        disabled_checks=export_checks,
        _override_lowering_rules=target_lowerings.lowering_rules(target),
      )(*args_avals, **kwargs_avals)
  except (ValueError, NotImplementedError) as e:
    # jax.export refuses host callbacks itself, with a message that does not
    # say what to do about them.
    if "host_callbacks" in str(e) or ("custom call" in str(e).lower() and _is_callback_error(e)):
      raise _effects_error(fun_name, ["host callback"]) from e
    raise
  effects = [
    e
    for e in list(exp.ordered_effects) + list(exp.unordered_effects)
    if not call_tf_function_list.is_call_tf_effect(e)
  ]
  if effects:
    raise _effects_error(fun_name, effects)
  return native_module_of(
    exp,
    fun_name=fun_name,
    consumer=consumer,
    allowed_targets=allowed_targets,
    disabled_checks=disabled_checks,
    # The target's pipeline of module rewrites.
    pipeline=pipeline,
    function_list=tuple(called_tf_functions),
  )


def native_module_of(
  exp: jax_export.Exported,
  *,
  fun_name: str,
  consumer: versions.ConsumerVersions,
  allowed_targets: set | frozenset = frozenset(),
  disabled_checks: Sequence[jax_export.DisabledSafetyCheck] = (),
  pipeline: str = "tf_xla",
  function_list: tuple = (),
) -> NativeModule:
  """The NativeModule of an Exported: its module rewritten by `pipeline`
  (module_rewrite.PIPELINES) and serialized at `consumer`'s StableHLO
  version, with what XlaCallModule needs to call it."""
  # Calling convention 10 is the first to carry the partitioner choice.
  use_shardy = (
    bool(getattr(jax.config, "jax_use_shardy_partitioner")) and exp.calling_convention_version >= 10
  )
  try:
    serialized = module_rewrite.rewrite_and_serialize(
      exp.mlir_module_serialized,
      consumer,
      allowed_custom_calls=allowed_targets,
      allow_all_custom_calls="ALL" in allowed_targets,
      # Shardy's ops as they are for XlaCallModule's Shardy import; the
      # TFLite converters read only the custom-call form.
      use_mixed_serialization=use_shardy and pipeline == "tf_xla",
      pipeline=pipeline,
    )
  except module_rewrite.UnsupportedCustomCallError as e:
    if any(_is_callback_target(t) for t in e.targets):
      raise _effects_error(fun_name, ["host callback"]) from e
    raise
  _warn_if_large(fun_name, len(serialized))
  return NativeModule(
    serialized=serialized,
    calling_convention_version=exp.calling_convention_version,
    in_avals=tuple(exp.in_avals),
    out_avals=tuple(exp.out_avals),
    in_tree=exp.in_tree,
    out_tree=exp.out_tree,
    kept_var_idx=tuple(sorted(exp.module_kept_var_idx)),
    platforms=tuple(exp.platforms),
    # The user's checks only: XlaCallModule records them, and the internal
    # "custom_call:ALL" above is not a promise about the consumer.
    disabled_checks=tuple(dc._impl for dc in disabled_checks),
    nr_devices=exp.nr_devices,
    stablehlo_version=consumer.stablehlo_version,
    use_shardy_partitioner=use_shardy,
    in_shardings=shardings.argument_shardings(exp),
    out_shardings=shardings.result_shardings(exp),
    in_jax_shardings=shardings.argument_jax_shardings(exp),
    out_jax_shardings=shardings.result_jax_shardings(exp),
    manual_partitioning=exp.nr_devices > 1 and _partitions_manually(exp),
    function_list=function_list,
  )


def _partitions_manually(exp: jax_export.Exported) -> bool:
  """Whether the module holds a shard_map (manual partitioning), in either
  partitioner's form."""
  text = exp.mlir_module()
  return "sdy.manual_computation" in text or "SPMDFullToShardShape" in text


def _warn_if_large(fun_name: str, nbytes: int):
  limit = int(os.environ.get(LARGE_MODULE_ENV_VAR, DEFAULT_LARGE_MODULE_BYTES))
  if nbytes > limit:
    warnings.warn(
      f"The converted module for {fun_name} is {nbytes / 2**20:.1f} MiB, above "
      f"{limit / 2**20:.1f} MiB: it embeds large constants (arrays the function "
      "closes over). They go into the TF graph, which a SavedModel limits to 2 GiB. "
      "Pass large arrays (model parameters) as arguments and give tf.Variables "
      "for them, so they are saved as variables instead.",
      UserWarning,
      stacklevel=4,
    )


def float0_free(fun: Callable) -> Callable:
  """Wraps `fun` so that float0 outputs become boolean zeros (False) of the
  same shape.

  TF has no float0; JAX's jax2tf gives such results (the gradient of an
  integer argument, `jax.grad(f, allow_int=True)`) as booleans, in either
  serialization, and code that converts them expects that dtype."""

  def wrapped(*args, **kwargs):
    res = fun(*args, **kwargs)
    return jax.tree_util.tree_map(
      lambda r: (
        jax.numpy.zeros(r.shape, np.bool_) if getattr(r, "dtype", None) == jax.dtypes.float0 else r
      ),
      res,
    )

  return wrapped
