"""One run of upstream's suite in one configuration, in a folder outside the
repository: upstream's test files (unchanged), harness_conftest.py as its
conftest.py, a pytest.ini; pytest in a subprocess, its JUnit XML beside."""

import dataclasses
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

from tools.upstream_suite import fetch

CONFIGS = ("upstream", "ours")
TESTS_DIRNAME = "upstream_tests"
# The test files of upstream's folder that test jax2tf. Not run:
# jax_primitives_coverage_test.py tests JAX's harnesses without jax2tf;
# multiprocess/ needs processes launched together; models_test_main.py and
# cross_compilation_check.py are scripts.
FILES = (
  "jax2tf_test.py",
  "call_tf_test.py",
  "shape_poly_test.py",
  "savedmodel_test.py",
  "sharding_test.py",
  "control_flow_ops_test.py",
  "back_compat_tf_test.py",
  "primitives_test.py",
)
# The sharding tests need several devices; upstream's CI gives the CPU 8.
DEVICES = 8
PYTEST_INI = """\
[pytest]
# Marks this folder as pytest's rootdir, so that no configuration of an
# enclosing folder applies. Upstream's own settings (filterwarnings = error,
# with the exceptions JAX's CI needs) are left out: warnings are not what the
# tests check. importlib: the test modules import without their folder on
# sys.path.
addopts = --import-mode=importlib -p no:cacheprovider
"""


def prepare(work: pathlib.Path, tag: str, checkout: str | None) -> str:
  """Fills work with the tests and the harness; returns where the tests came from."""
  source = fetch.upstream_tests(work / TESTS_DIRNAME, tag, checkout)
  shutil.copy(pathlib.Path(__file__).with_name("harness_conftest.py"), work / "conftest.py")
  (work / "pytest.ini").write_text(PYTEST_INI)
  return source


@dataclasses.dataclass
class Run:
  config: str
  returncode: int
  junit: pathlib.Path
  log: pathlib.Path
  switch: list[dict]

  def summary(self) -> str:
    lines = [line for line in self.log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def _environment(config: str, sample: int) -> dict[str, str]:
  env = dict(os.environ)
  # With it set, `import jax2tf` would switch the upstream run to this package.
  env.pop("JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL", None)
  flags = re.sub(r"--xla_force_host_platform_device_count=\S+", "", env.get("XLA_FLAGS", ""))
  env.update(
    JAX_PLATFORMS="cpu",
    CUDA_VISIBLE_DEVICES="",
    TF_CPP_MIN_LOG_LEVEL="3",
    XLA_FLAGS=f"{flags} --xla_force_host_platform_device_count={DEVICES}".strip(),
    UPSTREAM_SUITE_CONFIG=config,
    UPSTREAM_SUITE_SAMPLE=str(sample),
    UPSTREAM_SUITE_TESTS=TESTS_DIRNAME,
  )
  return env


def run(
  work: pathlib.Path,
  config: str,
  *,
  files: tuple[str, ...] = FILES,
  sample: int = 10,
  workers: int = 2,
  select: str | None = None,
  timeout: int = 600,
) -> Run:
  junit, log = work / f"{config}.xml", work / f"{config}.log"
  for old in work.glob(f"switch.{config}.*.json"):
    old.unlink()
  cmd = [sys.executable, "-m", "pytest", "-q", "-rfE", f"--junitxml={junit}"]
  cmd += ["-o", "junit_family=xunit1"]
  if workers:
    cmd += ["-n", str(workers)]
  # A hung test would stop the run; pytest-timeout is optional, not a dependency.
  if timeout and importlib.util.find_spec("pytest_timeout"):
    cmd += [f"--timeout={timeout}"]
  if select:
    cmd += ["-k", select]
  cmd += [f"{TESTS_DIRNAME}/{name}" for name in files]
  with open(log, "w") as out:
    returncode = subprocess.run(
      cmd, cwd=work, env=_environment(config, sample), stdout=out, stderr=subprocess.STDOUT
    ).returncode
  switch = [json.loads(p.read_text()) for p in sorted(work.glob(f"switch.{config}.*.json"))]
  return Run(config, returncode, junit, log, switch)


def check_switch(result: Run, root: pathlib.Path) -> list[str]:
  """Problems with which jax2tf the run tested (none: the switch held)."""
  problems = [f"{r['worker']}: {r['wrong']}" for r in result.switch if r["wrong"]]
  if not any(r["checked"] for r in result.switch) and result.returncode in (0, 1):
    problems.append("no process recorded which jax2tf its tests used")
  if result.config == "ours":
    for r in result.switch:
      where = r["jax2tf_file"] or ""
      if not pathlib.Path(where).resolve().is_relative_to(root):
        problems.append(f"{r['worker']}: tested jax2tf from {where}, not from {root}")
  return problems
