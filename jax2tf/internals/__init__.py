"""The one door to JAX's and TensorFlow's private modules.

Everything else in the package uses public names. What no public API serves
is imported here, one module per dependency: `jax_private` (``jax._src``)
and `tf_private` (``tensorflow.python``, ``tensorflow.compiler``). Each keeps
a registry, symbol name -> dotted path, and resolves a symbol on first use,
so that the XLA helpers of TF, say, are imported only by the paths that need
them, and tests/test_internals.py can import every registered symbol on each
supported version: a release that moves one fails there, by name.

A registry path is "module:attribute", or "module:" for a module imported
for its side effects. A tuple of paths lists where the symbol lives in
different releases, newest first; the first one that imports wins.
"""

import importlib
from collections.abc import Callable, Mapping
from typing import Any


class InternalMovedError(ImportError):
  """A private symbol is no longer where the registry says."""


def import_path(path: str) -> Any:
  """The object at "module:attribute" (the module itself for "module:")."""
  module_name, _, attribute = path.partition(":")
  module = importlib.import_module(module_name)
  return getattr(module, attribute) if attribute else module


def resolve(registry: Mapping[str, str | tuple[str, ...]], name: str, owner: str) -> Any:
  """The symbol `name` of `registry`, from the first of its paths that imports.

  `owner` names the installed dependency (e.g. "jax 0.12.0") for the error.
  """
  paths = registry[name]
  paths = (paths,) if isinstance(paths, str) else paths
  failures = []
  for path in paths:
    try:
      return import_path(path)
    except (ImportError, AttributeError) as e:
      failures.append(f"{path} ({type(e).__name__}: {e})")
  raise InternalMovedError(
    f"jax2tf needs the private symbol {name!r}, which {owner} does not have at "
    f"{' nor '.join(failures)}. This release moved or removed it: install a "
    "version listed in jax2tf's pyproject.toml, or add its new location to "
    "the registry in jax2tf/internals/."
  )


def lazy_getattr(
  namespace: dict,
  registry: Mapping,
  name: str,
  owner: Callable[[], str],
  optional: frozenset = frozenset(),
) -> Any:
  """Module `__getattr__` body: resolves a registered symbol once, then caches it.

  A name in `optional` exists only in some supported releases: it is None
  where no path imports (a rule registered on None is skipped).
  """
  if name not in registry:
    raise AttributeError(
      f"module {namespace['__name__']!r} has no attribute {name!r}; "
      f"registered symbols: {sorted(registry)}"
    )
  try:
    value = resolve(registry, name, owner())
  except InternalMovedError:
    if name not in optional:
      raise
    value = None
  namespace[name] = value
  return value
