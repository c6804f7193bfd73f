"""Calling a NativeModule from TensorFlow through the XlaCallModule op."""

from collections.abc import Sequence

import numpy as np
import tensorflow as tf
from jax import export as jax_export

from jax2tf import sharding
from jax2tf.internals import tf_private
from jax2tf.native.exporting import NativeModule

_TF_PLATFORM_NAMES = {"cpu": "CPU", "cuda": "CUDA", "rocm": "ROCM", "tpu": "TPU"}


def _static_or_none(shape) -> list[int | None]:
  return [int(d) if isinstance(d, (int, np.integer)) else None for d in shape]


def tf_out_shape(aval) -> tf.TensorShape:
  return tf.TensorShape(_static_or_none(aval.shape))


def call_native_module(module: NativeModule, args_flat: Sequence[tf.Tensor]) -> list[tf.Tensor]:
  """Runs `module` on the flat TF arguments (already cast to the module's dtypes)."""
  if (
    module.manual_partitioning
    and tf.executing_eagerly()
    and not tf.config.list_logical_devices("TPU")
  ):
    raise NotImplementedError(_manual_partitioning_message(module))
  if tf.executing_eagerly() and "platform" not in module.disabled_checks:
    _check_eager_platform(module.platforms)
  annotate = module.nr_devices > 1 and not tf.executing_eagerly()
  kept = [args_flat[i] for i in module.kept_var_idx]
  if annotate and module.in_shardings:
    kept = sharding.annotate_each(kept, [module.in_shardings[i] for i in module.kept_var_idx])
  out_avals = module.out_avals
  res = tf_private.call_module(
    kept,
    version=module.calling_convention_version,
    module=module.serialized,
    Tout=[tf.as_dtype(a.dtype) for a in out_avals],
    Sout=[tf_out_shape(a) for a in out_avals],
    platforms=[_TF_PLATFORM_NAMES.get(p, p.upper()) for p in module.platforms],
    function_list=tuple(module.function_list),  # call_tf's TF functions
    has_token_input_output=False,
    disabled_checks=list(module.disabled_checks),
    use_shardy_partitioner=module.use_shardy_partitioner,
  )
  res = list(res)
  if annotate:
    res = sharding.annotate_each(res, module.out_shardings)
  return res


def _eager_platforms() -> set[str]:
  found = {"cpu"}
  if tf.config.list_logical_devices("GPU"):
    found |= {"cuda", "rocm"}
  if tf.config.list_logical_devices("TPU"):
    found.add("tpu")
  return found


def _check_eager_platform(platforms: Sequence[str]):
  # An eager call runs here and now, so a module lowered for none of this
  # TensorFlow's platforms is refused before TF's own run-time error. Under
  # tf.function it may be meant for another machine (saved for a TPU).
  available = _eager_platforms()
  if not available.intersection(platforms):
    here = "CUDA" if "cuda" in available else "CPU"
    wanted = ", ".join(_TF_PLATFORM_NAMES.get(p, p.upper()) for p in platforms)
    # The type and first sentence of the error TF itself would raise.
    raise tf.errors.NotFoundError(
      None,
      None,
      f"The current platform {here} is not among the platforms required by the module: "
      f"[{wanted}]. It was converted with native_serialization_platforms="
      f"{tuple(platforms)}; add {', '.join(repr(p) for p in sorted(available))} to run it "
      "here, or call it inside a tf.function to save it for a machine that has one of "
      "those platforms.",
    )


def _manual_partitioning_message(module: NativeModule) -> str:
  # Without this check TF fails deep inside XLA with an unregistered Shardy
  # custom call, which says neither "shard_map" nor what to do.
  return (
    f"This converted function uses shard_map (manual partitioning) over "
    f"{module.nr_devices} devices. TensorFlow partitions XlaCallModule programs "
    "across devices only on TPU; on CPU and GPU it runs them on one device and "
    "cannot execute the per-device part. Serve this function on TPU, or convert a "
    "version without shard_map (e.g. jax.jit with in_shardings/out_shardings, "
    "whose shardings TF on CPU/GPU simply ignores)."
  )


def is_symbolic(aval) -> bool:
  return any(jax_export.is_symbolic_dim(d) for d in aval.shape)
