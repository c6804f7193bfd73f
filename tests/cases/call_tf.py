"""Cases of the call_tf family (call_tf.py): none here.

A case calls a JAX function; call_tf needs a TF function inside it and runs
differently in each direction, so it is tested by tests/call_tf/.
"""

from tests.support.case import Cases

CASES = Cases()
