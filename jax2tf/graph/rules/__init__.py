"""Every rule family, imported by name so that a broken module fails loudly.

Each family `<family>.py` has its test cases beside it in `<family>_cases.py`
(read by jax2tf.testing.collect, never imported by the rules).
"""

from jax2tf.graph.rules import (  # noqa: F401
  call_tf,
  calls,
  control_flow,
  conv,
  dot,
  elementwise,
  fft,
  indexing,
  linalg,
  random,
  reductions,
  sharding,
  sorting,
  special,
  structural,
  windows,
)

# The rule families, in the order their cases are collected.
FAMILIES = (
  "call_tf",
  "calls",
  "conv",
  "control_flow",
  "dot",
  "elementwise",
  "fft",
  "indexing",
  "linalg",
  "random",
  "reductions",
  "sharding",
  "sorting",
  "special",
  "structural",
  "windows",
)
