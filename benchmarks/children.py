"""Measurements in a fresh process of their own: what a process holds once
(which converter `jax.experimental.jax2tf` is, a peak of resident memory, a
compilation cache) cannot leak from one measurement into the next.

A child is a module run as `python -m MODULE ARGS...` from the repository
root that prints its result as JSON on its last line of output.
"""

import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ChildFailed(RuntimeError):
  """A child process exited with an error; `stderr` holds its tail."""

  def __init__(self, args, returncode: int, stderr: str):
    super().__init__(f"{' '.join(args)} exited {returncode}:\n{stderr[-3000:]}")
    self.returncode = returncode
    self.stderr = stderr


def run(module: str, *args: str) -> dict:
  """The JSON result of `python -m module args...`, run in a fresh process."""
  done = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                        cwd=ROOT, check=False)
  if done.returncode != 0:
    raise ChildFailed(args, done.returncode, done.stderr)
  return json.loads(done.stdout.strip().splitlines()[-1])


def alternating(alternatives, reps: int, measure_one) -> dict:
  """{alternative: {key: median}} of `measure_one(alternative, rep)` (a dict
  of numbers), the alternatives taking turns to go first in successive
  repetitions so that noise on a shared machine hits them alike."""
  samples: dict = {a: [] for a in alternatives}
  for rep in range(reps):
    for a in alternatives if rep % 2 == 0 else alternatives[::-1]:
      samples[a].append(measure_one(a, rep))
  return {a: {k: statistics.median(s[k] for s in samples[a]) for k in samples[a][0]}
          for a in alternatives}
