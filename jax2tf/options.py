"""The options of one `convert` call, validated once and passed around explicitly."""

import dataclasses
import os
import re
from collections.abc import Sequence
from typing import Any

from jax import export as jax_export

from jax2tf import targets
from jax2tf.native import versions

DEFAULT_NATIVE_SERIALIZATION_ENV = "JAX2TF_DEFAULT_NATIVE_SERIALIZATION"
KNOWN_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


class DisabledSafetyCheck(jax_export.DisabledSafetyCheck):
  """A safety check to skip: `platform()`, `custom_call(target)`, `shape_assertions()`."""

  @classmethod
  def shape_assertions(cls) -> "DisabledSafetyCheck":
    """Skip checking, at call time, that argument shapes match the polymorphic specs."""
    return cls("shape_assertions")


class _DefaultNativeSerialization:
  def __repr__(self):
    return "DEFAULT_NATIVE_SERIALIZATION"


DEFAULT_NATIVE_SERIALIZATION: Any = _DefaultNativeSerialization()


def default_native_serialization() -> bool:
  raw = os.environ.get(DEFAULT_NATIVE_SERIALIZATION_ENV, "true").strip().lower()
  if raw in ("", "1", "true", "yes", "on"):
    return True
  if raw in ("0", "false", "no", "off"):
    return False
  raise ValueError(
    f"Environment variable {DEFAULT_NATIVE_SERIALIZATION_ENV}={raw!r}: expected true or false"
  )


@dataclasses.dataclass(frozen=True)
class ConvertOptions:
  polymorphic_shapes: Any
  polymorphic_constraints: tuple[str, ...]
  with_gradient: bool
  enable_xla: bool
  native_serialization: bool
  platforms: tuple[str, ...] | None
  disabled_checks: tuple[jax_export.DisabledSafetyCheck, ...]
  target_tf_version: str | None
  # Who runs the result (jax2tf/targets/): what a graph's rules may emit,
  # and which rewrites a native module gets. `convert` picks TensorFlow with
  # or without XLA ops by enable_xla; to_tflite and to_tfjs name theirs.
  target: targets.Target = targets.TF_XLA


def require_bool(name: str, value):
  """Rejects a non-bool flag: a string such as "no" would otherwise count as true."""
  if not isinstance(value, bool):
    raise TypeError(f"{name} must be a bool, got {value!r}")


def make_options(
  *,
  polymorphic_shapes,
  polymorphic_constraints,
  with_gradient,
  enable_xla,
  native_serialization,
  native_serialization_platforms,
  native_serialization_disabled_checks,
  target_tf_version,
  target: targets.Target | None = None,
) -> ConvertOptions:
  if native_serialization is DEFAULT_NATIVE_SERIALIZATION:
    native_serialization = default_native_serialization()
  require_bool("native_serialization", native_serialization)
  require_bool("with_gradient", with_gradient)
  require_bool("enable_xla", enable_xla)
  if native_serialization and not enable_xla:
    raise ValueError(
      "enable_xla=False needs graph serialization: pass native_serialization=False "
      "as well (native serialization always runs through XLA)."
    )
  if isinstance(polymorphic_constraints, str):
    raise TypeError(
      "polymorphic_constraints must be a sequence of strings, got the string "
      f"{polymorphic_constraints!r}; write ({polymorphic_constraints!r},)"
    )
  return ConvertOptions(
    polymorphic_shapes=polymorphic_shapes,
    polymorphic_constraints=tuple(polymorphic_constraints),
    with_gradient=with_gradient,
    enable_xla=enable_xla,
    native_serialization=native_serialization,
    platforms=_check_platforms(native_serialization_platforms),
    disabled_checks=_check_disabled(native_serialization_disabled_checks),
    target_tf_version=_check_target_tf_version(target_tf_version),
    target=_check_target(target, enable_xla, native_serialization),
  )


def _check_target_tf_version(target) -> str | None:
  # Checked here, for both serializations, so that a bad value fails at
  # convert() rather than at the first call.
  if target is None:
    return None
  versions.known_release(target)
  return str(target)


def _check_target(target, enable_xla: bool, native_serialization: bool) -> targets.Target:
  if target is None:
    return targets.for_convert(enable_xla)
  if not isinstance(target, targets.Target):
    raise TypeError(f"target: expected a jax2tf.targets.Target, got {target!r}")
  if native_serialization and target.native_pipeline is None:
    raise ValueError(f"target {target.name!r} reads no native module: use graph serialization")
  if not native_serialization and target.xla_ops and not enable_xla:
    raise ValueError(f"target {target.name!r} runs XLA ops, which enable_xla=False forbids")
  return target


def _check_platforms(platforms: Sequence[str] | None) -> tuple[str, ...] | None:
  if platforms is None:
    return None
  if isinstance(platforms, str):
    raise TypeError(
      "native_serialization_platforms must be a sequence of platform names, got "
      f"the string {platforms!r}; write ({platforms!r},)"
    )
  result = []
  for p in platforms:
    if not isinstance(p, str) or p.lower() not in KNOWN_PLATFORMS:
      raise ValueError(
        f"native_serialization_platforms: unknown platform {p!r}; expected some of "
        f"{KNOWN_PLATFORMS}"
      )
    result.append(p.lower())
  if not result:
    raise ValueError("native_serialization_platforms must not be empty")
  return tuple(result)


TF_XLA_FLAGS_ENV = "TF_XLA_FLAGS"
_TF_DISABLED_CHECKS_FLAG = re.compile(r"--tf_xla_call_module_disabled_checks[= ]([^\s]*)")


def checks_disabled_by_tf_flags() -> frozenset[str]:
  """The XlaCallModule checks that TF_XLA_FLAGS disables for the whole process.

  XlaCallModule reads `--tf_xla_call_module_disabled_checks=a,b` itself; the
  converter reads it too, so that its own argument checks in front of the
  op obey the same switch.
  """
  flags = os.environ.get(TF_XLA_FLAGS_ENV, "")
  return frozenset(
    c.strip() for m in _TF_DISABLED_CHECKS_FLAG.findall(flags) for c in m.split(",") if c.strip()
  )


def _check_disabled(checks) -> tuple:
  checks = tuple(checks or ())
  for c in checks:
    if not isinstance(c, jax_export.DisabledSafetyCheck):
      raise TypeError(
        "native_serialization_disabled_checks: expected jax2tf.DisabledSafetyCheck "
        f"values (e.g. DisabledSafetyCheck.platform()), got {c!r}"
      )
  return checks
