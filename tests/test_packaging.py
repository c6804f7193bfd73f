"""What pyproject.toml promises: declared dependencies, the TF extras, and a wheel
that holds the package and none of the test machinery."""

import ast
import importlib.metadata
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile

import pytest

from tests.support import no_tensorflow

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONSTRAINTS = ("constraints/py311.txt", "constraints/py312.txt", "constraints/litert.txt")


def _normalized(name: str) -> str:
  return re.sub(r"[-_.]+", "-", name).lower()


def _split_requirement(requirement: str) -> tuple[str, str]:
  """("name", "version specifier") of a PEP 508 requirement without markers."""
  match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*)", requirement)
  return _normalized(match.group(1)), match.group(3).strip()


def _declared() -> dict[str, str]:
  """Every declared distribution (dependencies and extras) -> its specifier."""
  project = PYPROJECT["project"]
  requirements = list(project["dependencies"])
  for extra in project.get("optional-dependencies", {}).values():
    requirements += extra
  return dict(_split_requirement(r) for r in requirements)


def _top_level_imports() -> dict[str, str]:
  """Top-level module imported by jax2tf/ -> one file importing it."""
  found = {}
  for path in sorted((ROOT / "jax2tf").rglob("*.py")):
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
      if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
      elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [node.module]
      else:
        continue
      for name in names:
        found.setdefault(name.split(".")[0], path.relative_to(ROOT).as_posix())
  return found


def test_third_party_imports_are_declared():
  declared = _declared()
  providers = importlib.metadata.packages_distributions()
  third_party = {m: f for m, f in _top_level_imports().items()
                 if m not in sys.stdlib_module_names and m != "jax2tf"}
  assert {"jax", "numpy", "tensorflow", "ml_dtypes"} <= set(third_party)
  undeclared = {}
  for module, where in sorted(third_party.items()):
    distributions = {_normalized(d) for d in providers.get(module, ())}
    if not distributions & set(declared):
      undeclared[module] = (where, sorted(distributions))
  assert not undeclared, (
      "Modules imported by jax2tf/ whose distribution is neither in [project] "
      "dependencies nor in an extra of pyproject.toml (module: (importing file, "
      f"installed distributions)): {undeclared}. Declare them with a version range.")


def test_declared_dependencies_have_version_ranges():
  unbounded = [name for name, specifier in _declared().items()
               if not re.search(r"[<>=~]", specifier)]
  assert not unbounded, f"dependencies of pyproject.toml without a version range: {unbounded}"


@pytest.mark.parametrize("constraints", CONSTRAINTS)
def test_dependencies_pinned_in_constraints(constraints):
  pinned = {_normalized(line.split("==")[0]) for line in
            (ROOT / constraints).read_text().splitlines() if "==" in line}
  required = [_split_requirement(r)[0] for r in PYPROJECT["project"]["dependencies"]]
  missing = [name for name in required if name not in pinned]
  assert not missing, f"{constraints} pins no version of {missing}"


_IMPORT_WITHOUT_TF = """
import json
import jax2tf
from jax2tf import convert  # the name resolves; calling it needs TensorFlow
try:
  convert(abs)
except ImportError as e:
  print(json.dumps({"type": type(e).__name__, "message": str(e)}))
else:
  print(json.dumps({"type": None, "message": "jax2tf.convert succeeded"}))
"""


@pytest.mark.subprocess
def test_import_without_tensorflow_works_and_convert_names_the_extras():
  proc = no_tensorflow.run(_IMPORT_WITHOUT_TF, timeout=300)
  assert proc.returncode == 0, proc.stderr[-2000:]
  result = json.loads(proc.stdout.strip().splitlines()[-1])
  assert result["type"] == "TensorFlowMissingError", result
  assert 'pip install "jax2tf[cpu]"' in result["message"], result
  assert 'pip install "jax2tf[gpu]"' in result["message"], result
  assert "TensorFlow" in result["message"], result


# What a clone holds besides the sources; a build copies the rest.
_NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv*", "node_modules", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
    "fuzz_out", "demo_output", "results")
# The test machinery, which lives in tests/ and tools/: the case tables, the
# case vocabulary, the bad-input catalogue, the fuzzer, the doc generators.
_TEST_MACHINERY = re.compile(
    r"(^|/)(tests|tools|testing|fuzz|cases)(/|$)|_cases\.py$|(coverage|errors)_doc\.py$"
    r"|(^|/)bad_inputs\.py$")


@pytest.mark.subprocess
def test_wheel_holds_the_package_and_no_test_machinery(tmp_path):
  # setuptools (>= 70.1, the test extra) builds the wheel offline on both lanes.
  # Built from a copy, so that the build's folders (build/, *.egg-info) stay
  # out of the working tree; offline, with the setuptools of this environment.
  source = tmp_path / "source"
  shutil.copytree(ROOT, source, ignore=_NOT_SOURCES)
  proc = subprocess.run(
      [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
       "--quiet", "-w", str(tmp_path / "wheel"), str(source)],
      cwd=tmp_path, capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
  [wheel] = (tmp_path / "wheel").glob("jax2tf-*.whl")
  with zipfile.ZipFile(wheel) as archive:
    names = archive.namelist()
  top = {name.split("/")[0] for name in names}
  assert top == {"jax2tf", wheel.name.split("-py")[0] + ".dist-info"}, sorted(top)
  machinery = sorted(n for n in names if _TEST_MACHINERY.search(n))
  assert not machinery, f"test machinery in the wheel: {machinery}"
  # Every module and data file of the package is there: the scripts and pages
  # that run models in Node and Chromium, the targets' kernel lists.
  sources = {
    p.relative_to(source).as_posix()
    for p in (source / "jax2tf").rglob("*")
    if p.suffix in (".py", ".js", ".html", ".json")
  }
  assert sources <= set(names), sorted(sources - set(names))
  assert {"jax2tf/tfjs/run_model.js", "jax2tf/targets/kernel_lists/tflite.json"} <= set(names)


def test_litert_extra_and_its_lane_bring_no_tensorflow():
  # `pip install "jax2tf[litert]"` and `make test-litert` run without TensorFlow.
  tensorflow = re.compile(r"^(tensorflow|tf-keras|keras)\b", re.IGNORECASE)
  extra = PYPROJECT["project"]["optional-dependencies"]["litert"]
  assert not [r for r in extra if tensorflow.match(r)], extra
  pinned = (ROOT / "constraints/litert.txt").read_text().splitlines()
  assert not [line for line in pinned if tensorflow.match(line)], pinned
