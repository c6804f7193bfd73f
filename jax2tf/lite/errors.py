"""The errors of `to_tflite`, importable without TensorFlow."""


class TFLiteConversionError(NotImplementedError):
  """TF's TFLite converter refused the function (see the message for the
  JAX primitive, the TF op and the remedies)."""
