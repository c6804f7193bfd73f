"""Upstream's test files at a tag, obtained at run time: this repository holds
only what the project wrote. From a git clone of JAX when one is given, else
from the tag's source archive on GitHub (downloaded once into a cache)."""

import io
import os
import pathlib
import shutil
import subprocess
import tarfile
import urllib.error
import urllib.request

TESTS_PATH = "jax/experimental/jax2tf/tests"
ARCHIVE_URL = "https://github.com/jax-ml/jax/archive/refs/tags/{tag}.tar.gz"


class Unavailable(Exception):
  """The tests could not be had; the message says what to do."""


def default_tag() -> str:
  """The tag of the JAX installed here: the tests that match its module."""
  from importlib import metadata

  return f"jax-v{metadata.version('jax')}"


def cache_dir() -> pathlib.Path:
  root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
  return pathlib.Path(root) / "jax2tf-upstream-suite"


def _extract(archive: tarfile.TarFile, prefix: str, dest: pathlib.Path) -> int:
  """The members under prefix/, written below dest without the prefix."""
  count = 0
  for member in archive.getmembers():
    if not member.name.startswith(prefix + "/") or not (member.isfile() or member.isdir()):
      continue
    member.name = member.name[len(prefix) + 1 :]
    archive.extract(member, dest, filter="data")
    count += member.isfile()
  return count


def _from_checkout(checkout: str, tag: str) -> bytes:
  def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", checkout, *args], capture_output=True)

  if git("rev-parse", "--verify", "--quiet", f"{tag}^{{commit}}").returncode:
    raise Unavailable(f"{checkout} has no tag {tag} (git -C {checkout} fetch --tags)")
  done = git("archive", tag, TESTS_PATH)
  if done.returncode:
    raise Unavailable(f"git archive {tag} in {checkout} failed:\n{done.stderr.decode()}")
  return done.stdout


def _download(tag: str) -> pathlib.Path:
  path = cache_dir() / f"{tag}.tar.gz"
  if path.exists():
    return path
  url = ARCHIVE_URL.format(tag=tag)
  path.parent.mkdir(parents=True, exist_ok=True)
  partial = path.with_suffix(".part")
  try:
    with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as out:
      shutil.copyfileobj(response, out)
  except (urllib.error.URLError, OSError) as e:
    partial.unlink(missing_ok=True)
    raise Unavailable(
      f"cannot download {url} ({e}). Offline, pass a git clone of JAX that has the tag: "
      f"--jax-checkout DIR (git clone https://github.com/jax-ml/jax)"
    ) from None
  partial.rename(path)
  return path


def upstream_tests(dest: pathlib.Path, tag: str, checkout: str | None) -> str:
  """Writes the test folder of `tag` into dest; returns where it came from."""
  dest.mkdir(parents=True, exist_ok=True)
  if checkout:
    with tarfile.open(fileobj=io.BytesIO(_from_checkout(checkout, tag))) as archive:
      count = _extract(archive, TESTS_PATH, dest)
    source = f"git archive {tag} of {checkout}"
  else:
    path = _download(tag)
    # GitHub's archive has one top folder, jax-<tag without its "jax-">.
    with tarfile.open(path) as archive:
      top = archive.next()
      root = top.name.split("/", 1)[0] if top else ""
      count = _extract(archive, f"{root}/{TESTS_PATH}", dest)
    source = str(path)
  if not count:
    raise Unavailable(f"no files under {TESTS_PATH} in {source}")
  return source
