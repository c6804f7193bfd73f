"""Python in a fresh process on this checkout, for tests that need a process
of their own (a device count fixed when the CPU backend starts, a clean
import state)."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# XLA reads the CPU device count once, when its backend starts.
EIGHT_CPU_DEVICES = {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"}


def run_python(*argv, env=None, extra_env=None, timeout: int = 300) -> str:
  """The stdout of `python argv` run from the repository root, with it first
  on PYTHONPATH; `env` replaces the environment, `extra_env` adds to it.
  Asserts that the process succeeds, showing the end of its stderr."""
  env = dict(os.environ if env is None else env)
  env.update(extra_env or {})
  env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  proc = subprocess.run(
    [sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
  )
  assert proc.returncode == 0, proc.stderr[-4000:]
  return proc.stdout


def last_json(stdout: str):
  """The JSON value a child printed on its last line."""
  return json.loads(stdout.strip().splitlines()[-1])
