"""Which serialization versions the consuming TensorFlow reads.

Two numbers matter: the XlaCallModule calling-convention version and the
StableHLO (VHLO) version of the serialized bytecode. By default we target the
installed TensorFlow; `target_tf_version` (or the environment variable
JAX2TF_TARGET_TF_VERSION) targets an older serving fleet instead.
"""

import dataclasses
import functools
import os

import jax
from jax import export as jax_export

from jax2tf.internals import tf_private

TARGET_ENV_VAR = "JAX2TF_TARGET_TF_VERSION"


@dataclasses.dataclass(frozen=True)
class ConsumerVersions:
  """What one TensorFlow release can read."""

  description: str
  calling_convention_max: int
  stablehlo_version: str  # the newest StableHLO version it deserializes


# Measured from each release's own
# `tfxla.call_module_maximum_supported_version()` and
# `tensorflow.compiler.mlir.stablehlo.stablehlo.get_current_version()`.
KNOWN_RELEASES: dict[str, ConsumerVersions] = {
  "2.15": ConsumerVersions("TensorFlow 2.15", 8, "0.14.24"),
  "2.16": ConsumerVersions("TensorFlow 2.16", 9, "0.17.7"),
  "2.17": ConsumerVersions("TensorFlow 2.17", 9, "1.1.1"),
  "2.18": ConsumerVersions("TensorFlow 2.18", 9, "1.7.3"),
  "2.19": ConsumerVersions("TensorFlow 2.19", 9, "1.9.1"),
  "2.20": ConsumerVersions("TensorFlow 2.20", 10, "1.12.1"),
  "2.21": ConsumerVersions("TensorFlow 2.21", 10, "1.13.7"),
}


@functools.cache
def installed_tensorflow() -> ConsumerVersions:
  import tensorflow as tf

  return ConsumerVersions(
    f"the installed TensorFlow {tf.__version__}",
    int(tf_private.call_module_maximum_supported_version()),
    str(tf_private.stablehlo_current_version()),
  )


def consumer(target_tf_version: str | None) -> ConsumerVersions:
  """The consumer to serialize for: a named release, or the installed TF."""
  target = target_tf_version or os.environ.get(TARGET_ENV_VAR) or None
  if target is None:
    return installed_tensorflow()
  return KNOWN_RELEASES[known_release(target)]


def known_release(target) -> str:
  """The release ("2.17") that `target` ("2.17", "2.17.1") names, or a
  ValueError saying why it names none this package can target."""
  known = sorted(KNOWN_RELEASES, key=_release_key)
  parts = str(target).split(".")
  release = ".".join(parts[:2])
  if release in KNOWN_RELEASES:
    return release
  remedy = "Leave it unset to target the installed TensorFlow."
  try:
    key = _release_key(release)
  except ValueError:
    why = "is not a TensorFlow version (expected a release such as '2.17')"
  else:
    if key < _release_key(known[0]):
      why = f"is older than the oldest release this package can target ({known[0]})"
    elif key > _release_key(known[-1]):
      why = f"is newer than the newest TensorFlow release this package knows ({known[-1]})"
    else:
      why = "is not a TensorFlow release this package knows"
  raise ValueError(f"target_tf_version={target!r} {why}; known releases: {known}. {remedy}")


def _release_key(r: str):
  return tuple(int(p) for p in r.split("."))


def parse_version(v: str) -> tuple[int, ...]:
  return tuple(int(p) for p in str(v).split("."))


def calling_convention_version(target: ConsumerVersions) -> int:
  """JAX's configured calling convention, lowered to what the consumer reads."""
  wanted = int(getattr(jax.config, "jax_export_calling_convention_version"))
  chosen = min(wanted, target.calling_convention_max)
  lowest = jax_export.minimum_supported_calling_convention_version
  if chosen < lowest:
    readable = sorted(
      (r for r, c in KNOWN_RELEASES.items() if c.calling_convention_max >= lowest), key=_release_key
    )
    newer = f" (target_tf_version={readable[0]!r} or newer)" if readable else ""
    raise ValueError(
      f"{target.description} reads XlaCallModule calling conventions up to "
      f"version {target.calling_convention_max}, but the installed JAX exports "
      f"versions {lowest}..{jax_export.maximum_supported_calling_convention_version} "
      f"only. Use a newer TensorFlow consumer{newer} or an older JAX."
    )
  return chosen
