"""Every rule family, imported by name so that a broken module fails loudly.

Each family `<family>.py` has its test cases beside it in `<family>_cases.py`
(read by jax2tf.testing.collect, never imported by the rules).
"""

# The rule families, in the order their cases are collected.
FAMILIES = ("call_tf", "calls", "conv", "control_flow", "dot", "elementwise", "fft", "indexing",
            "linalg", "random", "reductions", "sharding", "sorting", "special", "structural",
            "windows")

from jax2tf.graph.rules import call_tf  # noqa: F401
from jax2tf.graph.rules import calls  # noqa: F401
from jax2tf.graph.rules import conv  # noqa: F401
from jax2tf.graph.rules import control_flow  # noqa: F401
from jax2tf.graph.rules import dot  # noqa: F401
from jax2tf.graph.rules import elementwise  # noqa: F401
from jax2tf.graph.rules import fft  # noqa: F401
from jax2tf.graph.rules import indexing  # noqa: F401
from jax2tf.graph.rules import linalg  # noqa: F401
from jax2tf.graph.rules import random  # noqa: F401
from jax2tf.graph.rules import reductions  # noqa: F401
from jax2tf.graph.rules import sharding  # noqa: F401
from jax2tf.graph.rules import sorting  # noqa: F401
from jax2tf.graph.rules import special  # noqa: F401
from jax2tf.graph.rules import structural  # noqa: F401
from jax2tf.graph.rules import windows  # noqa: F401
