"""The consumers of converted functions, as data (see target.py)."""

from jax2tf.targets.target import (
  BIT_OPS,
  LEGALIZATIONS,
  LITERT,
  TARGETS,
  TF_NO_XLA,
  TF_XLA,
  TFJS,
  TFLITE,
  TFLITE_INT8,
  Target,
  for_convert,
)

__all__ = [
  "BIT_OPS",
  "LEGALIZATIONS",
  "LITERT",
  "TARGETS",
  "TF_NO_XLA",
  "TF_XLA",
  "TFJS",
  "TFLITE",
  "TFLITE_INT8",
  "Target",
  "for_convert",
]
