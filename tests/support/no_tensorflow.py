"""Python in a child process where TensorFlow cannot be imported, as in an
install without it (`pip install "jax2tf[litert]"`); the rest of the
environment (JAX, Flax, LiteRT) is the parent's."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Refuses to find TensorFlow, as an environment without it would.
_HIDE_TENSORFLOW = """
import sys

class _NoTensorFlow:
  def find_spec(self, name, path=None, target=None):
    if name == "tensorflow" or name.startswith("tensorflow."):
      raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return None

sys.meta_path.insert(0, _NoTensorFlow())
"""


def run(code: str, *args: str, timeout: int) -> subprocess.CompletedProcess:
  """`python -c code *args` from the repository root, TensorFlow hidden."""
  paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
  return subprocess.run(
    [sys.executable, "-c", _HIDE_TENSORFLOW + code, *args],
    cwd=ROOT,
    env=dict(os.environ, PYTHONPATH=os.pathsep.join(paths)),
    capture_output=True,
    text=True,
    timeout=timeout,
  )
