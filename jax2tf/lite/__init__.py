"""JAX functions to TFLite / LiteRT flatbuffers: `to_tflite`, and `run` on LiteRT."""

from jax2tf.lite.api import LiteModel, VerificationError, to_tflite
from jax2tf.lite.errors import TFLiteConversionError
from jax2tf.lite.runtime import run

__all__ = ["LiteModel", "TFLiteConversionError", "run", "to_tflite", "VerificationError"]
