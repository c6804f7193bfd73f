"""JAX <-> TensorFlow interoperation: a drop-in for ``jax.experimental.jax2tf``."""

try:
  import tensorflow as _tf  # noqa: F401
except ModuleNotFoundError as _e:
  # TensorFlow comes with an extra (tensorflow-cpu and tensorflow cannot be
  # installed together), so a plain install of the package lacks it.
  if _e.name != "tensorflow":
    raise
  raise ImportError(
    "jax2tf needs TensorFlow, which is not installed; it comes with an extra of "
    'this package: pip install "jax2tf[cpu]" (tensorflow-cpu) or '
    'pip install "jax2tf[gpu]" (tensorflow, for GPUs).'
  ) from _e
del _tf

from jax2tf.api import convert
from jax2tf.call_tf import call_tf
from jax2tf.dtypes import dtype_of_val
from jax2tf.lite import to_tflite
from jax2tf.options import DisabledSafetyCheck
from jax2tf.shapes import PolyShape, eval_polymorphic_shape
from jax2tf.sharding import split_to_logical_devices
from jax2tf.tfjs import to_tfjs

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
]

__version__ = "0.1.0"
