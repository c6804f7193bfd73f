"""Where a converted function may be called: not while JAX traces.

A converted function takes TF values and returns TF values; called under a
JAX transformation (jit, grad, vmap, ..., or inside another converted
function, which JAX traces) it would get JAX tracers, or run TF ops that the
trace cannot see. `convert` refuses that, as `jax.experimental.jax2tf` does,
with a ValueError. The exception is TF code that call_tf runs for JAX: a TF
function may itself call converted functions, and JAX is tracing then.
"""

import contextlib
import threading

from jax2tf.internals import jax_private

_state = threading.local()


@contextlib.contextmanager
def running_tf_code_for_jax():
  """Marks TF code that call_tf runs (traced by TF while JAX traces)."""
  depth = getattr(_state, "depth", 0)
  _state.depth = depth + 1
  try:
    yield
  finally:
    _state.depth = depth


def check_outside_jax_transformations(name: str) -> None:
  if getattr(_state, "depth", 0) or jax_private.trace_state_clean():
    return
  raise ValueError(
    f"convert must be used outside all JAX transformations: the converted function {name} "
    "was called while JAX traces (under jit, grad, vmap, ..., or inside a function that "
    "is being converted). Call the JAX function itself there; to run TF code inside JAX, "
    "use jax2tf.call_tf."
  )
