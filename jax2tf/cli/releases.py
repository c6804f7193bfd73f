"""Which known TensorFlow releases can run a natively serialized module.

A release runs an XlaCallModule op when it reads the op's calling convention
(its `calling_convention_max` is at least the op's `version`) and the StableHLO
version the module was written at (its `stablehlo_version` is at least the
module's). The numbers per release are `jax2tf.native.versions.KNOWN_RELEASES`.
"""

from collections.abc import Iterable

from jax2tf.native import versions


def _known() -> list[str]:
  return sorted(versions.KNOWN_RELEASES, key=versions.parse_version)


def readers(calling_convention: int, stablehlo_version: str | None) -> list[str]:
  """The known releases that run a module, oldest first. With no StableHLO
  version (not a portable artifact) only the calling convention decides."""
  found = []
  for release in _known():
    consumer = versions.KNOWN_RELEASES[release]
    if consumer.calling_convention_max < calling_convention:
      continue
    if stablehlo_version is not None and versions.parse_version(
      consumer.stablehlo_version
    ) < versions.parse_version(stablehlo_version):
      continue
    found.append(release)
  return found


def requirement(calling_convention: int, stablehlo_version: str | None) -> str:
  stablehlo = f" and StableHLO >= {stablehlo_version}" if stablehlo_version else ""
  return f"calling convention >= {calling_convention}{stablehlo}"


def summary(releases: Iterable[str], needs: str | None = None) -> dict:
  """{"releases", "oldest", "newest", "newest_known", "summary"} for the
  releases that run an artifact; "summary" is the sentence a reader needs.
  `needs` (see `requirement`) explains an empty range."""
  ordered = sorted(releases, key=versions.parse_version)
  newest_known = _known()[-1]
  oldest = ordered[0] if ordered else None
  newest = ordered[-1] if ordered else None
  if not ordered:
    text = f"no known TensorFlow release ({_known()[0]} to {newest_known}) can run it"
    if needs:
      text += f": it needs {needs}"
  elif ordered == [newest_known]:
    text = f"TensorFlow {newest_known} only (the newest release this package knows)"
  elif newest == newest_known:
    text = f"TensorFlow {oldest} to {newest} ({newest}: the newest release this package knows)"
  else:
    text = f"TensorFlow {oldest} to {newest}"
  return {
    "releases": ordered,
    "oldest": oldest,
    "newest": newest,
    "newest_known": newest_known,
    "summary": text,
  }
