"""What LiteRT's kernels take, which both routes to TFLite work around.

The graph route (a rule, for `graph_consumer="tflite"`) and the native route
(a rewrite of the StableHLO module) shape their ops by these; neither
imports the other.
"""

from collections.abc import Iterable


def reverse_runs(axes: Iterable[int]) -> list[list[int]]:
  """`axes` of one reverse as runs of adjacent axes, in increasing order:
  LiteRT's REVERSE_V2 fails at run time on axes that are not adjacent
  ("Non-contiguous `axes` not supported"), so each run is one reverse."""
  runs: list[list[int]] = []
  for axis in sorted(axes):
    if runs and runs[-1][-1] == axis - 1:
      runs[-1].append(axis)
    else:
      runs.append([axis])
  return runs
