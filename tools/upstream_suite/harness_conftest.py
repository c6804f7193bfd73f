"""conftest.py of the folder the upstream suite runs in (copied there by
run.py, beside the folder of upstream's test files, which stay unchanged).

UPSTREAM_SUITE_CONFIG=upstream: `jax.experimental.jax2tf` is JAX's module.
UPSTREAM_SUITE_CONFIG=ours: it is this package, by `jax2tf.install()`.
UPSTREAM_SUITE_SAMPLE=N: of primitives_test.py, one test in N runs.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
TESTS_DIR = HERE / os.environ.get("UPSTREAM_SUITE_TESTS", "upstream_tests")
PACKAGE = "jax.experimental.jax2tf.tests"
CONFIG = os.environ.get("UPSTREAM_SUITE_CONFIG", "")
SAMPLE = int(os.environ.get("UPSTREAM_SUITE_SAMPLE", "1"))
SAMPLED_FILE = "primitives_test.py"
if CONFIG not in ("upstream", "ours"):
  raise RuntimeError("set UPSTREAM_SUITE_CONFIG to upstream or ours")


class _UpstreamTestsFinder(importlib.abc.MetaPathFinder):
  """The tests import their helpers as `jax.experimental.jax2tf.tests.X`,
  which JAX's wheel does not ship: X comes from TESTS_DIR, in both
  configurations, whatever `jax.experimental.jax2tf` is."""

  def find_spec(self, fullname, path=None, target=None):
    if fullname != PACKAGE and not fullname.startswith(PACKAGE + "."):
      return None
    rest = fullname[len(PACKAGE) :].lstrip(".")
    where = TESTS_DIR.joinpath(*rest.split(".")) if rest else TESTS_DIR
    if where.is_dir():
      init = where / "__init__.py"
      if init.exists():
        return importlib.util.spec_from_file_location(
          fullname, init, submodule_search_locations=[str(where)]
        )
      spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
      spec.submodule_search_locations = [str(where)]
      return spec
    if where.with_suffix(".py").exists():
      return importlib.util.spec_from_file_location(fullname, where.with_suffix(".py"))
    return None


if CONFIG == "ours":
  import jax2tf

  jax2tf.install()
# First in line, ahead of this package's own finder for `jax.experimental.jax2tf.*`.
sys.meta_path.insert(0, _UpstreamTestsFinder())

_checked = 0


def _modules(test_module=None) -> dict[str, str]:
  """Where `convert` comes from, seen from each place a test can reach it."""
  import jax.experimental

  found = {
    "sys.modules": sys.modules["jax.experimental.jax2tf"].convert.__module__,
    "jax.experimental.jax2tf": getattr(jax.experimental, "jax2tf").convert.__module__,
  }
  helpers = sys.modules.get(PACKAGE + ".tf_test_util")
  if helpers is not None:
    found["tf_test_util.jax2tf"] = helpers.jax2tf.convert.__module__
  convert = getattr(getattr(test_module, "jax2tf", None), "convert", None)
  if convert is not None:
    found["test module's jax2tf"] = convert.__module__
  return found


def _wrong(found: dict[str, str]) -> dict[str, str]:
  def ours(name: str) -> bool:
    return name == "jax2tf" or name.startswith("jax2tf.")

  return {where: name for where, name in found.items() if ours(name) != (CONFIG == "ours")}


@pytest.fixture(autouse=True)
def _check_which_jax2tf(request):
  """Every test fails unless it reaches the jax2tf of its configuration, so
  that neither run can pass by testing the other module."""
  global _checked
  wrong = _wrong(_modules(getattr(request, "module", None)))
  if wrong:
    pytest.fail(f"upstream suite: wrong jax2tf for {CONFIG}: {wrong}", pytrace=False)
  _checked += 1
  yield


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
  """Of the primitive harnesses, every SAMPLE-th test id in sorted order.
  Both runs collect the same tests, so they run the same sample (a test run
  by one only would show as missing in the comparison); tryfirst: taken
  before -k selects, so that a selection runs tests of the full run."""
  if SAMPLE <= 1:
    return
  sampled = sorted(
    item.nodeid for item in items if item.nodeid.split("::", 1)[0].endswith("/" + SAMPLED_FILE)
  )
  dropped = set(sampled) - set(sampled[::SAMPLE])
  if dropped:
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid in dropped])
    items[:] = [item for item in items if item.nodeid not in dropped]


def pytest_sessionfinish(session, exitstatus):
  """Leaves a record of what each process ran with, for run.py to check."""
  if "jax.experimental.jax2tf" not in sys.modules:  # an xdist controller runs no test
    return
  worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
  found = _modules()
  record = {
    "config": CONFIG,
    "worker": worker,
    "checked": _checked,
    "modules": found,
    "wrong": _wrong(found),
    "jax2tf_file": getattr(sys.modules.get("jax2tf"), "__file__", None),
  }
  (HERE / f"switch.{CONFIG}.{worker}.json").write_text(json.dumps(record))
