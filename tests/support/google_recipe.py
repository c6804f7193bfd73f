"""Google's documented JAX -> LiteRT recipe, for tests: `jax2tf.convert`'s
own module in a concrete function, TF's TFLite converter with builtin
operators only, run on LiteRT."""

import jax2tf
from jax2tf.lite import runtime


def run_by_recipe(fun, *args):
  """The one output of `fun` at `args` by the recipe."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  tf_fun = tf.function(jax2tf.convert(fun), autograph=False)
  concrete = tf_fun.get_concrete_function(*[tf.TensorSpec(a.shape, a.dtype) for a in args])
  converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], tf_fun)
  converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
  interpreter = runtime.interpreter(converter.convert())
  interpreter.allocate_tensors()
  for detail, a in zip(interpreter.get_input_details(), args, strict=True):
    interpreter.set_tensor(detail["index"], a)
  interpreter.invoke()
  (out,) = interpreter.get_output_details()
  return interpreter.get_tensor(out["index"])
