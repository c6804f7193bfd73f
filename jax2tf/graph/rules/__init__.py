"""Every rule family, imported by name so that a broken module fails loudly.

Each family `<family>.py` has its case table in `tests/cases/<family>.py`
(read by tests/support/collect.py, never imported by the rules).
"""

import importlib

# The rule families, in the order their cases are collected: the one list of
# them. Each is imported below by its name, and an import that fails stops the
# import of the package (no rule family goes missing quietly).
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

for _family in FAMILIES:
  importlib.import_module(f"{__name__}.{_family}")
