"""Install size: what each of the package's extras adds to a plain install.

Read from the distributions installed in this environment (each one's RECORD
lists its files with their sizes), not by installing anything: the closure of
the package's own requirements, then, for each extra, the distributions its
requirements bring that the plain install does not. Measured where `make
bench` runs, with the pinned set of constraints/.
"""

import importlib.metadata
import os
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The extras a user chooses between to deploy: TensorFlow (CPU), and LiteRT without it.
EXTRAS = ("cpu", "litert")


def _project() -> dict:
  with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
    return tomllib.load(f)["project"]


def _closure(requirements, env: dict) -> dict[str, importlib.metadata.Distribution]:
  """The installed distributions that `requirements` need, by normalized name;
  requirements of this platform only (markers evaluated), without their extras'."""
  found: dict = {}
  todo = list(requirements)
  while todo:
    req = Requirement(todo.pop())
    if req.marker is not None and not req.marker.evaluate({**env, "extra": ""}):
      continue
    name = canonicalize_name(req.name)
    if name in found:
      continue
    try:
      dist = importlib.metadata.distribution(req.name)
    except importlib.metadata.PackageNotFoundError:
      continue
    found[name] = dist
    todo.extend(dist.requires or ())
  return found


def _bytes(dist) -> int:
  return sum(f.size or 0 for f in dist.files or ())


def measure() -> dict:
  from packaging.markers import default_environment  # pylint: disable=import-outside-toplevel

  project = _project()
  env = default_environment()
  base = _closure(project["dependencies"], env)
  out = {"base": {"packages": len(base), "bytes": sum(_bytes(d) for d in base.values())},
         "extras": {}}
  for extra in EXTRAS:
    added = {n: d for n, d in _closure(project["optional-dependencies"][extra], env).items()
             if n not in base}
    largest = sorted(added, key=lambda n: -_bytes(added[n]))[:3]
    out["extras"][extra] = {
      "packages": len(added),
      "bytes": sum(_bytes(d) for d in added.values()),
      "largest": {n: _bytes(added[n]) for n in largest},
    }
  return out
