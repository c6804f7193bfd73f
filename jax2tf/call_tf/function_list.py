"""TF functions that a native module calls by index (XlaCallModule `function_list`).

`jax2tf.convert` (native serialization) opens a `collecting()` scope around
`jax.export`; a call_tf lowered inside it may, instead of inlining the TF
function's XLA code, emit a `stablehlo.custom_call @tf.call_tf_function`
whose `tf.backend_config` names an index into this list. XlaCallModule then
calls the TF function at the real argument shapes. Outside such a scope there
is nobody to hand the function to, and call_tf inlines.

No TensorFlow or JAX import here: the native layer imports this module.
"""

import contextlib
import threading

_state = threading.local()


@contextlib.contextmanager
def collecting():
  """Collects the TF functions called from modules lowered in this scope."""
  saved = getattr(_state, "functions", None)
  functions: list = []
  _state.functions = functions
  try:
    yield functions
  finally:
    _state.functions = saved


def active() -> bool:
  return getattr(_state, "functions", None) is not None


def add(concrete_function) -> int:
  """The index of `concrete_function` in the list being collected."""
  functions = _state.functions
  for i, f in enumerate(functions):
    if f is concrete_function:
      return i
  functions.append(concrete_function)
  return len(functions) - 1


def is_call_tf_effect(effect) -> bool:
  """Whether `effect` is call_tf's own (allowed in native modules: XlaCallModule
  runs the TF function; it is not a host callback)."""
  return type(effect).__name__ in ("CallTfEffect", "CallTfOrderedEffect") and type(
    effect
  ).__module__.startswith("jax2tf.call_tf")
