"""call_tf in graph serialization: the TF function runs on the TF values.

It runs at the real argument shapes, so symbolic shapes and TF code that XLA
cannot compile work here (the latter when the converted function is not
itself jit-compiled). `call_tf_graph` chooses how it enters the converted
graph:
  False: the TF callable is traced in place, so a Python function's ops
    become ops of the converted graph (TF optimises them with their
    neighbours); a `tf.function` or restored function is still called as one.
  True: the callable is called as a TF graph function (its ConcreteFunction at
    the argument signature) through a PartitionedCall or
    StatefulPartitionedCall op, so it stays one function in the converted
    graph and in a SavedModel's function library.
The derivative and vmap forms of a call are TF functions too
(jax2tf/call_tf/functions.py). `ordered=True` needs nothing more: the ops are
created in program order, and inside a tf.function TF's automatic control
dependencies run stateful ops (and calls of stateful functions) in that order.

Cases: tests/cases/call_tf.py
"""

from jax2tf.call_tf.primitive import call_tf_p
from jax2tf.graph.registry import register


# The TF function takes its arguments in their own dtypes.
@register(call_tf_p, narrow_ints_in_int32=False)
def _call_tf(ctx, *args, fn, has_side_effects, ordered, call_tf_graph):
  del ctx, has_side_effects, ordered
  if call_tf_graph:
    return fn.call(list(args))
  return fn.call_in_place(list(args))
