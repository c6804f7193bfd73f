"""JAX <-> TensorFlow interoperation: a drop-in for ``jax.experimental.jax2tf``.

The public names are imported on first use (PEP 562), not by ``import
jax2tf``: importing TensorFlow and JAX takes seconds, and the command line
(``jax2tf.cli``, a subpackage, so this module runs first) answers ``--help``
without either. TensorFlow is optional (``pip install "jax2tf[litert]"``
installs none, see ``jax2tf.extras``): without it, the names that need it
stand for functions that raise an ImportError naming the extra to install.
"""

import importlib
import sys
import types
from typing import TYPE_CHECKING

from jax2tf import extras as _extras

# Public name -> the module that defines it.
_PUBLIC = {
  "convert": "jax2tf.api",
  "call_tf": "jax2tf.call_tf",
  "dtype_of_val": "jax2tf.dtypes",
  "to_tflite": "jax2tf.lite",
  "to_tflite_signatures": "jax2tf.lite.signatures",
  "DisabledSafetyCheck": "jax2tf.options",
  "PolyShape": "jax2tf.shapes",
  "eval_polymorphic_shape": "jax2tf.shapes",
  "split_to_logical_devices": "jax2tf.sharding",
  "to_tfjs": "jax2tf.tfjs",
  "install": "jax2tf.dropin",
  "uninstall": "jax2tf.dropin",
}
# The public names whose modules import TensorFlow.
_NEED_TENSORFLOW = frozenset(
  {"convert", "call_tf", "dtype_of_val", "split_to_logical_devices", "to_tfjs"}
)

__all__ = [
  "convert",
  "call_tf",
  "PolyShape",
  "DisabledSafetyCheck",
  "dtype_of_val",
  "eval_polymorphic_shape",
  "split_to_logical_devices",
  "to_tflite",
  "to_tfjs",
  "install",
  "uninstall",
]

__version__ = "0.1.0"

if TYPE_CHECKING:
  from jax2tf.api import convert
  from jax2tf.call_tf import call_tf
  from jax2tf.dropin import install, uninstall
  from jax2tf.dtypes import dtype_of_val
  from jax2tf.lite import to_tflite
  from jax2tf.options import DisabledSafetyCheck
  from jax2tf.shapes import PolyShape, eval_polymorphic_shape
  from jax2tf.sharding import split_to_logical_devices
  from jax2tf.tfjs import to_tfjs
else:
  # Hidden from type checkers, which would otherwise read every unknown
  # attribute of the package as this function's result.

  def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is not None:
      if name in _NEED_TENSORFLOW and not _extras.has_tensorflow():
        return _extras.stand_in(f"jax2tf.{name}")
      value = getattr(importlib.import_module(module), name)
      if name in _NEED_TENSORFLOW:
        # What importing JAX's jax2tf does (jax2tf/trackable_pytrees.py).
        importlib.import_module("jax2tf.trackable_pytrees").register()
      globals()[name] = value  # later lookups skip this function
      return value
    if not name.startswith("__"):
      # `import jax2tf` used to import the subpackages (api, lite, shapes,
      # ...) as a side effect: `jax2tf.shapes.specs` after a bare `import
      # jax2tf` keeps working.
      try:
        return importlib.import_module(f"{__name__}.{name}")
      except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
          raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

  def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))


class _Package(types.ModuleType):
  def __setattr__(self, name: str, value) -> None:
    # Importing the subpackage jax2tf.call_tf (which graph serialization does
    # on its own) binds it here under the name of the public function
    # call_tf; the package's call_tf stays the function, found by
    # __getattr__.
    if name in _PUBLIC and isinstance(value, types.ModuleType):
      return
    super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

# JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL=1 makes `jax.experimental.jax2tf` this
# package (jax2tf/dropin/, which imports nothing heavy).
from jax2tf import dropin as _dropin

_dropin.install_if_requested()

# JAX's jax2tf registers TF's trackable containers as pytrees when imported;
# this package does when it first needs TensorFlow, or now if JAX and
# TensorFlow are imported already (which costs no import).
if "tensorflow" in sys.modules and "jax" in sys.modules:
  importlib.import_module("jax2tf.trackable_pytrees").register()
