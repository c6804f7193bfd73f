"""JAX functions to TensorFlow.js graph models: `to_tfjs`, and `run` on Node."""

from jax2tf.tfjs.api import TFJSModel, to_tfjs
from jax2tf.tfjs.refusals import TFJSConversionError
from jax2tf.tfjs.runtime import Runner, TFJSRuntimeError, run, run_many

__all__ = [
  "Runner",
  "TFJSConversionError",
  "TFJSModel",
  "TFJSRuntimeError",
  "run",
  "run_many",
  "to_tfjs",
]
