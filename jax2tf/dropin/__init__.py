"""Make ``jax.experimental.jax2tf`` resolve to this package.

Most code meets jax2tf through a library that imports
``jax.experimental.jax2tf`` for it: Keras 3's SavedModel export on the JAX
backend (``model.export(path, format="tf_saved_model")`` and
``keras.export.ExportArchive``), Keras's ``JaxLayer`` and ``FlaxLayer`` on the
TensorFlow backend, orbax-export's ``JaxModule``, tensorflowjs's
``convert_jax``. None of them takes the converter as an argument, so the switch
acts where they look it up, the import system:

* ``install()`` puts this package in ``sys.modules`` under JAX's name and on
  ``jax.experimental``, and registers a finder that maps JAX's submodule names
  (``jax.experimental.jax2tf.call_tf``, ``jax.experimental.jax2tf.jax2tf``) to
  this package's modules, so each module exists once whichever name imports it.
* The environment variable ``JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL=1`` is honoured
  at ``import jax2tf``: the finder is registered and the first import of
  ``jax.experimental.jax2tf`` gives this package (nothing is imported before
  then).
* For processes that never import jax2tf themselves (a script that only uses
  Keras), ``python -m jax2tf.dropin --write-startup-file`` writes a ``.pth``
  file into the environment's site-packages whose one line, at interpreter
  start, reads the variable and, when it is set, imports this (light) package,
  which registers the finder. A ``.pth`` file is the interpreter's own hook for
  start-up code; the wheel does not carry one because setuptools adds files
  outside packages to a wheel only through a custom build command and leaves
  them out of editable installs, so one explicit command serves both kinds of
  install, and undoes itself with ``--remove-startup-file``.

A library that imported JAX's module before the switch keeps its reference:
``install()`` then warns, naming those modules.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import pathlib
import sys
import sysconfig
import types
import warnings

ENV_VAR = "JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL"
UPSTREAM = "jax.experimental.jax2tf"
STARTUP_FILE = "jax2tf-dropin.pth"

# Values of ENV_VAR that leave the switch off.
_OFF = ("", "0", "false", "no", "off")

# The names a module that imported JAX's jax2tf may hold (besides the module).
_PUBLIC_NAMES = (
  "convert",
  "call_tf",
  "PolyShape",
  "DisabledSafetyCheck",
  "dtype_of_val",
  "eval_polymorphic_shape",
  "split_to_logical_devices",
)


class UpstreamAlreadyImportedWarning(UserWarning):
  """JAX's ``jax.experimental.jax2tf`` was imported before the switch."""


# What install() replaced, for uninstall(): module name -> JAX's module, and
# JAX's module as the attribute of jax.experimental (None when there was none).
_replaced: dict[str, types.ModuleType] = {}
_replaced_attribute: list[types.ModuleType | None] = []


def requested() -> bool:
  """Whether ``JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL`` asks for the switch."""
  return os.environ.get(ENV_VAR, "").strip().lower() not in _OFF


def _package() -> types.ModuleType:
  return importlib.import_module("jax2tf")


def _is_ours(module: object) -> bool:
  name = getattr(module, "__name__", "")
  return isinstance(name, str) and (name == "jax2tf" or name.startswith("jax2tf."))


def install() -> None:
  """Make ``jax.experimental.jax2tf`` this package, in this process.

  Idempotent. ``import jax.experimental.jax2tf``, ``from jax.experimental
  import jax2tf`` and ``jax.experimental.jax2tf`` (the attribute) give this
  package from now on; ``jax.experimental.jax2tf.call_tf`` and
  ``jax.experimental.jax2tf.jax2tf`` give its modules. If JAX's own module was
  imported already, it is replaced all the same, and an
  ``UpstreamAlreadyImportedWarning`` names the modules that still hold it.
  """
  import jax.experimental

  package = _package()
  _register_finder()
  upstream = {
    name: module
    for name, module in list(sys.modules.items())
    if (name == UPSTREAM or name.startswith(UPSTREAM + ".")) and not _is_ours(module)
  }
  if upstream:
    _warn_upstream_imported(upstream)
    for name, module in upstream.items():
      _replaced.setdefault(name, module)
      # Submodules come back through the finder, as this package's modules.
      del sys.modules[name]
  sys.modules[UPSTREAM] = package
  attribute = jax.experimental.__dict__.get("jax2tf")
  if attribute is not package:
    if not _replaced_attribute:
      _replaced_attribute.append(attribute)
    jax.experimental.jax2tf = package  # type: ignore[attr-defined]
  if "tensorflow" in sys.modules:
    # What importing JAX's module does; without TensorFlow imported it waits
    # for the first name that needs it (jax2tf/trackable_pytrees.py).
    importlib.import_module("jax2tf.trackable_pytrees").register()


def uninstall() -> None:
  """Undo ``install()`` (and the environment variable) in this process.

  JAX's module comes back if it had been imported before; otherwise the next
  ``import jax.experimental.jax2tf`` imports it. Modules that imported this
  package under JAX's name keep it.
  """
  sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AliasFinder)]
  for name, module in list(sys.modules.items()):
    if (name == UPSTREAM or name.startswith(UPSTREAM + ".")) and _is_ours(module):
      del sys.modules[name]
  sys.modules.update(_replaced)
  _replaced.clear()
  package = sys.modules.get("jax2tf")
  # `import jax.experimental.jax2tf.jax2tf` binds the package on itself.
  if package is not None and package.__dict__.get("jax2tf") is package:
    del package.__dict__["jax2tf"]
  experimental = sys.modules.get("jax.experimental")
  if experimental is not None and _is_ours(experimental.__dict__.get("jax2tf")):
    previous = _replaced_attribute[0] if _replaced_attribute else None
    if previous is None:
      del experimental.__dict__["jax2tf"]
    else:
      experimental.__dict__["jax2tf"] = previous
  _replaced_attribute.clear()


def install_if_requested() -> None:
  """What ``import jax2tf`` does about ``JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL``.

  Registers the finder, so the first import of ``jax.experimental.jax2tf``
  gives this package without importing JAX now; if JAX's module is imported
  already, installs at once (with the warning), since no import would reach
  the finder.
  """
  if not requested():
    return
  if (
    any(name == UPSTREAM or name.startswith(UPSTREAM + ".") for name in list(sys.modules))
    or "jax.experimental" in sys.modules
  ):
    install()
  else:
    _register_finder()


def _register_finder() -> None:
  if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    # First, ahead of the path finder, which would otherwise load JAX's module
    # (or a second copy of one of ours under JAX's name).
    sys.meta_path.insert(0, _AliasFinder())


class _AliasLoader(importlib.abc.Loader):
  """Loads a name as an existing module of this package, not a copy."""

  def __init__(self, target: str):
    self._target = target
    self._spec: importlib.machinery.ModuleSpec | None = None

  def create_module(self, spec):
    module = importlib.import_module(self._target)
    self._spec = module.__spec__
    return module

  def exec_module(self, module):
    # The import system has just set the alias's spec on the module; its own
    # spec is what reload(), pickling by reference and tools read.
    module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
  """Maps ``jax.experimental.jax2tf[.X]`` to ``jax2tf[.X]``."""

  def find_spec(self, fullname, path=None, target=None):
    if fullname == UPSTREAM:
      # Reached only while the switch waits for the first import (the
      # environment variable): install() puts the package in sys.modules, and
      # the import system, which puts it there itself, must find the name free
      # or it would load the package again from its spec.
      install()
      del sys.modules[UPSTREAM]
      return importlib.util.spec_from_loader(fullname, _AliasLoader("jax2tf"))
    if not fullname.startswith(UPSTREAM + "."):
      return None
    rest = fullname[len(UPSTREAM) + 1 :]
    # JAX's implementation module: the same public names as the package.
    ours = "jax2tf" if rest == "jax2tf" else f"jax2tf.{rest}"
    if importlib.util.find_spec(ours) is None:
      raise ModuleNotFoundError(
        f"No module named {fullname!r}: {UPSTREAM} is the jax2tf package here "
        f"({ENV_VAR} or jax2tf.install()), which has no module {ours!r}; "
        "jax2tf.uninstall() gives JAX's module back.",
        name=fullname,
      )
    return importlib.util.spec_from_loader(fullname, _AliasLoader(ours))


def _warn_upstream_imported(upstream: dict[str, types.ModuleType]) -> None:
  held = {id(m) for m in upstream.values()}
  top = upstream.get(UPSTREAM)
  if top is not None:
    # Only what JAX's module defines: some of its names (PolyShape, ...) are
    # jax.export's, which other modules hold for their own reasons.
    held |= {
      id(v)
      for v in (getattr(top, n, None) for n in _PUBLIC_NAMES)
      if str(getattr(v, "__module__", "")).startswith(UPSTREAM)
    }
  holders, seen = [], set()
  for name, module in list(sys.modules.items()):
    if name in upstream or _is_ours(module) or name == "jax.experimental":
      continue
    if id(module) in seen:  # one module under two names (__mp_main__)
      continue
    seen.add(id(module))
    namespace = getattr(module, "__dict__", None)
    if isinstance(namespace, dict) and any(id(v) in held for v in list(namespace.values())):
      holders.append(name)
  if holders:
    shown = ", ".join(sorted(holders)[:8]) + (", ..." if len(holders) > 8 else "")
    kept = f"these modules imported it and keep it: {shown}"
  else:
    kept = "no loaded module holds it, but objects created through it keep using it"
  warnings.warn(
    f"{UPSTREAM} (JAX's own module) was imported before jax2tf.install(): from now "
    f"on the name gives the jax2tf package, but {kept}. Call jax2tf.install() (or "
    f"set {ENV_VAR}=1) before importing them.",
    UpstreamAlreadyImportedWarning,
    stacklevel=3,
  )


def startup_line() -> str:
  """The one line of the startup file (``python -m jax2tf.dropin``)."""
  # Reads the variable first, so that with the switch off nothing is
  # imported; checks that the package is still installed, so that a file left
  # behind by an uninstall stays silent.
  return (
    f"import os; os.environ.get({ENV_VAR!r}, '').strip().lower() not in {_OFF!r} "
    "and __import__('importlib.util').util.find_spec('jax2tf') is not None "
    "and __import__('jax2tf')\n"
  )


def _site_dir(site_dir: str | os.PathLike | None) -> pathlib.Path:
  return pathlib.Path(site_dir if site_dir is not None else sysconfig.get_path("purelib"))


def write_startup_file(site_dir: str | os.PathLike | None = None) -> pathlib.Path:
  """Writes ``jax2tf-dropin.pth`` (default: this environment's site-packages)."""
  path = _site_dir(site_dir) / STARTUP_FILE
  path.write_text(startup_line())
  return path


def remove_startup_file(site_dir: str | os.PathLike | None = None) -> pathlib.Path | None:
  """Removes the startup file; returns its path, or None if there was none."""
  path = _site_dir(site_dir) / STARTUP_FILE
  if not path.exists():
    return None
  path.unlink()
  return path
