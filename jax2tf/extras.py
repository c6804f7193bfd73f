"""TensorFlow, an optional dependency: whether it is installed, and the error
that names the extra to install.

TensorFlow comes with an extra of the package (`cpu`: tensorflow-cpu, `gpu`:
tensorflow; the two cannot be installed together), so an install without it
is ordinary: `pip install "jax2tf[litert]"` brings the standalone LiteRT
converter and interpreter, with which `import jax2tf`, `jax2tf.to_tflite`
(route "litert"), `jax2tf.lite` and `jax2tf export --target tflite` work.
Whatever needs TensorFlow asks `require_tensorflow` first, so that its error
says what to install; this module imports nothing heavy.
"""

import importlib.util
from collections.abc import Callable

INSTALL = (
  'pip install "jax2tf[cpu]" (tensorflow-cpu) or pip install "jax2tf[gpu]" (tensorflow, for GPUs)'
)
WITHOUT = (
  'Without TensorFlow ("jax2tf[litert]"), jax2tf.to_tflite converts with '
  "route='litert' and jax2tf.lite runs the models."
)


class TensorFlowMissingError(ImportError):
  """A feature that needs TensorFlow was asked for where it is not
  installed; the message names the feature and the extra to install."""


def has_tensorflow() -> bool:
  """Whether TensorFlow can be imported (found, not imported: that takes
  seconds)."""
  try:
    return importlib.util.find_spec("tensorflow") is not None
  except ModuleNotFoundError as e:  # an import hook that refuses it
    if e.name != "tensorflow":
      raise
    return False


def missing(feature: str) -> TensorFlowMissingError:
  """The error for `feature` (a name the user wrote: `jax2tf.convert`,
  `to_tflite(route='graph')`, ...) without TensorFlow."""
  return TensorFlowMissingError(
    f"{feature} needs TensorFlow, which is not installed; it comes with an extra of this "
    f"package: {INSTALL}. {WITHOUT}",
    name="tensorflow",
  )


def require_tensorflow(feature: str) -> None:
  """Raises `TensorFlowMissingError` naming `feature` and the extras where
  TensorFlow is not installed."""
  if not has_tensorflow():
    raise missing(feature)


def stand_in(feature: str) -> Callable:
  """A function for the public name `feature` where TensorFlow is missing:
  `import jax2tf` and `from jax2tf import convert` work, calling it raises
  the error that says what to install."""

  def needs_tensorflow(*args, **kwargs):
    raise missing(feature)

  needs_tensorflow.__name__ = needs_tensorflow.__qualname__ = feature.rsplit(".", 1)[-1]
  needs_tensorflow.__doc__ = f"{feature}: needs TensorFlow ({INSTALL})."
  return needs_tensorflow
