"""JAX and TF internals stay behind jax2tf/internals/, and still import.

Every symbol registered in jax_private and tf_private is imported here on the
installed JAX and TensorFlow, so a release that moves one fails by name; a scan
of the package's imports keeps new private imports from appearing elsewhere.
"""

import ast
import pathlib

import pytest

from jax2tf import internals
from jax2tf.internals import jax_private, tf_private

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jax2tf"
INTERNALS = PACKAGE / "internals"

PRIVATE_PREFIXES = ("jax._src", "jaxlib", "tensorflow.python", "tensorflow.compiler")


_REGISTRIES = {"jax_private": jax_private, "tf_private": tf_private}
_ENTRIES = [(module_name, name) for module_name, module in _REGISTRIES.items()
            for name in module.REGISTRY]


@pytest.mark.parametrize("module_name,name", _ENTRIES,
                         ids=[f"{m}.{n}" for m, n in _ENTRIES])
def test_registered_symbol_imports(module_name, name):
  module = _REGISTRIES[module_name]
  paths = module.REGISTRY[name]
  paths = (paths,) if isinstance(paths, str) else paths
  errors = []
  for path in paths:
    try:
      expected = internals.import_path(path)
      break
    except (ImportError, AttributeError) as e:
      errors.append(f"{path}: {type(e).__name__}: {e}")
  else:
    if name in getattr(module, "OPTIONAL", ()):
      # A symbol only some supported releases have: None on this one.
      assert getattr(module, name) is None
      return
    pytest.fail(f"{module_name}.{name} no longer imports from {' nor '.join(errors)}; "
                f"find its new location and update jax2tf/internals/{module_name}.py")
  assert getattr(module, name) is expected, (
      f"{module_name}.{name} resolves to another object than {paths}")


def test_registries_name_private_paths_only():
  # A public path needs no door: import it where it is used.
  for module_name, name in _ENTRIES:
    paths = _REGISTRIES[module_name].REGISTRY[name]
    for path in (paths,) if isinstance(paths, str) else paths:
      assert path.partition(":")[0].startswith(PRIVATE_PREFIXES), (
          f"{module_name}.{name} -> {path} is not a private path")


def test_moved_symbol_error_names_symbol_and_path():
  registry = {"gone_p": ("jax._src.no_such_module:gone_p", "jax._src.core:no_such_gone_p")}
  with pytest.raises(internals.InternalMovedError) as e:
    internals.resolve(registry, "gone_p", "jax 9.9")
  message = str(e.value)
  assert "'gone_p'" in message and "jax 9.9" in message
  assert "jax._src.no_such_module:gone_p" in message
  assert "jax._src.core:no_such_gone_p" in message


def test_unregistered_name_is_an_attribute_error():
  with pytest.raises(AttributeError, match="registered symbols"):
    jax_private.not_a_registered_symbol  # noqa: B018
  assert not hasattr(tf_private, "not_a_registered_symbol")


def test_first_importable_path_wins():
  registry = {"sin_p": ("jax._src.no_such_module:sin_p", "jax._src.lax.lax:sin_p")}
  import jax
  assert internals.resolve(registry, "sin_p", "jax") is jax.lax.sin_p


def _private_imports(path: pathlib.Path) -> list[str]:
  found = []
  for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
    if isinstance(node, ast.Import):
      names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      names = [node.module]
    elif (isinstance(node, ast.Call) and node.args
          and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
          and getattr(node.func, "attr", getattr(node.func, "id", None))
          in ("import_module", "__import__")):
      names = [node.args[0].value]
    else:
      continue
    found += [(node.lineno, n) for n in names
              if any(n == p or n.startswith(p + ".") for p in PRIVATE_PREFIXES)]
  return [f"line {line}: {name}" for line, name in sorted(found)]


def test_no_private_imports_outside_internals():
  offenders = {}
  for path in sorted(PACKAGE.rglob("*.py")):
    rel = path.relative_to(ROOT).as_posix()
    if path.is_relative_to(INTERNALS):
      continue
    if found := _private_imports(path):
      offenders[rel] = found
  assert not offenders, (
      "Private JAX/TF modules imported outside jax2tf/internals/ (register the symbol "
      f"in jax_private.py or tf_private.py and use it from there): {offenders}")


def test_scan_sees_each_kind_of_private_import(tmp_path):
  source = tmp_path / "m.py"
  source.write_text(
      "import jaxlib\n"
      "from jax._src import core\n"
      "import tensorflow.python.ops as ops\n"
      "def f():\n"
      "  from tensorflow.compiler.tf2xla.python import xla\n"
      "  return importlib.import_module('jax._src.lax.lax')\n"
      "from jax.extend import core as public_core\n"
      "from . import sibling\n")
  assert [f.split(": ")[1] for f in _private_imports(source)] == [
      "jaxlib", "jax._src", "tensorflow.python.ops", "tensorflow.compiler.tf2xla.python",
      "jax._src.lax.lax"]
