"""Writing exported artifacts: whole or not at all.

Every file and directory the package and its command line export (a
SavedModel, a `.tflite` file, a TF.js model directory, the reports) is written
here. What another process reading `path` can observe while it is written:

* A file (`write_atomically`) is written beside `path` and renamed over it: a
  reader opening `path` gets the old file or the new one, whole, never a part;
  one that opened the old file keeps reading it.
* A new directory (`write_directory_atomically`) is written in full beside
  `path` and renamed into place: a plain directory, complete when it appears.
* A directory that replaces another is written in full into a version folder
  `.NAME.versions/v...` beside `path`; on POSIX, `path` is then a symbolic
  link to it, switched to each new version by one rename. So `path` always
  names one complete version: a reader never finds it missing or
  half-written. A loader that opens several files
  one by one through `path` (as `tf.saved_model.load` does: `saved_model.pb`,
  then `variables/`) can still read the first from one version and the rest
  from the next if a replacement lands in between, which silently combines
  one version's graph with another's weights; a reader that may race a writer
  resolves the link once (`os.path.realpath(path)`) and loads that folder.
  The version replaced last is kept until the next replacement, so such a
  reader has a whole write's time to finish; older versions are deleted (a
  load that outlasts two replacements fails with a "not found" error).
* Replacing a plain directory (one written by hand or by an earlier jax2tf)
  moves it into the version folder and puts the link in its place: only for
  this first switch, `path` is missing between two renames.
* Elsewhere than POSIX, or on a file system without symbolic links, the new
  directory is renamed in after the old one is moved aside (and then
  deleted), with the same short window where `path` is missing.
"""

import contextlib
import os
import shutil
import tempfile
import uuid

try:
  import fcntl
except ImportError:  # not POSIX
  fcntl = None  # type: ignore[assignment]


def write_atomically(path: str | os.PathLike, content: bytes) -> None:
  """Writes `content` to `path` through a temporary file in the same folder,
  renamed into place once complete, so that a failure leaves no partial file
  (and an existing file at `path` stays as it was)."""
  path = os.fspath(path)
  folder = os.path.dirname(os.path.abspath(path))
  if not os.path.isdir(folder):
    raise FileNotFoundError(f"path: the folder {folder!r} does not exist")
  fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=folder)
  try:
    with os.fdopen(fd, "wb") as f:
      f.write(content)
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise


def write_directory_atomically(path: str | os.PathLike, write, overwrite: bool = False) -> None:
  """Calls `write(folder)` on a new folder, then makes `path` name it (see the
  module docstring for what readers observe): a failure leaves `path` as it
  was and no partial directory. An existing `path` is replaced only with
  `overwrite`."""
  path = os.path.abspath(os.fspath(path))
  parent = os.path.dirname(path)
  if not os.path.isdir(parent):
    raise FileNotFoundError(f"path: the folder {parent!r} does not exist")
  if os.path.lexists(path) and not overwrite:
    raise FileExistsError(f"path: {path!r} exists; pass overwrite to replace it")
  links = fcntl is not None and _links_work(parent)
  if not os.path.lexists(path):
    # Only a replacement can race a reader of the previous version: a first
    # write stays a plain directory (what a user copying or serving it expects).
    _create_directory(path, write, overwrite, links)
  elif links:
    _publish_version(path, write)
  else:
    _replace_directory(path, write)


def _create_directory(path: str, write, overwrite: bool, links: bool) -> None:
  """`write` into a temporary sibling renamed to the absent `path`; if
  another writer created `path` meanwhile, this one replaces it."""
  tmp = tempfile.mkdtemp(prefix=".tmp-", suffix=os.path.basename(path), dir=os.path.dirname(path))
  try:
    write(tmp)
    with _locked(os.path.dirname(path)) if fcntl is not None else contextlib.nullcontext():
      try:
        os.rename(tmp, path)
        return
      except OSError:
        # Asked under the lock: another writer switching `path` to a link
        # leaves it missing for a moment, but only while it holds the lock.
        if not os.path.lexists(path):
          raise
    if not overwrite:
      raise FileExistsError(f"path: {path!r} exists; pass overwrite to replace it")

    def move(folder):
      os.rmdir(folder)
      os.replace(tmp, folder)

    (_publish_version if links else _replace_directory)(path, move)
  except BaseException:
    shutil.rmtree(tmp, ignore_errors=True)
    raise


def versions_folder(path: str | os.PathLike) -> str:
  """The folder beside `path` that holds the versions `path` links to."""
  path = os.path.abspath(os.fspath(path))
  return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.versions")


def _publish_version(path: str, write) -> None:
  store = versions_folder(path)
  new_store = not os.path.isdir(store)
  os.makedirs(store, exist_ok=True)
  tmp = tempfile.mkdtemp(prefix=".tmp-", dir=store)
  try:
    write(tmp)
    with _locked(os.path.dirname(path)):
      version = "v" + os.path.basename(tmp)[len(".tmp-") :]
      os.replace(tmp, os.path.join(store, version))
      try:
        previous = _switch_link(path, os.path.join(os.path.basename(store), version))
      except BaseException:
        os.replace(os.path.join(store, version), tmp)  # for the cleanup below
        raise
      # Versions are only created, linked and deleted under the lock, so no
      # other writer holds one that is complete but not linked yet.
      for entry in os.listdir(store):
        if not entry.startswith(".tmp-") and entry not in (version, previous):
          shutil.rmtree(os.path.join(store, entry), ignore_errors=True)
  except BaseException:
    shutil.rmtree(tmp, ignore_errors=True)
    if new_store:
      with contextlib.suppress(OSError):
        os.rmdir(store)  # only if empty: a concurrent writer may be using it
    raise


def _switch_link(path: str, target: str) -> str | None:
  """Points `path` at `target` (relative to its folder) with one rename;
  returns the version it pointed at before (None if none of ours)."""
  store = os.path.dirname(target)
  unique = uuid.uuid4().hex
  link = os.path.join(os.path.dirname(path), f".tmp-{unique}.link")
  os.symlink(target, link)
  try:
    if os.path.isdir(path) and not os.path.islink(path):
      # A plain directory: a link cannot be renamed over it, so it moves
      # into the versions (kept as the previous one) and the link takes
      # its place; `path` is missing between the two renames.
      previous = f"v-plain-{unique}"
      aside = os.path.join(os.path.dirname(path), store, previous)
      os.replace(path, aside)
      try:
        os.replace(link, path)
      except BaseException:
        os.replace(aside, path)
        raise
      return previous
    before = os.readlink(path) if os.path.islink(path) else None
    os.replace(link, path)
  finally:
    if os.path.lexists(link):
      os.remove(link)
  if before is not None and os.path.dirname(before) == store:
    return os.path.basename(before)
  return None


def _links_work(folder: str) -> bool:
  # Some file systems (FAT, some network mounts) refuse symbolic links.
  probe = os.path.join(folder, f".tmp-{uuid.uuid4().hex}.probe")
  try:
    os.symlink(".", probe)
  except OSError:
    return False
  os.remove(probe)
  return True


@contextlib.contextmanager
def _locked(folder: str):
  """An exclusive advisory lock on `folder` (the parent of the path written):
  writers creating, linking or replacing a path there take turns, so none
  finds the path missing while another swaps a plain directory for a link."""
  assert fcntl is not None
  fd = os.open(folder, os.O_RDONLY)
  try:
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield
  finally:
    os.close(fd)


def _replace_directory(path: str, write) -> None:
  """Where links are not available: `write` into a temporary sibling, move
  the existing `path` aside, rename the new one in, delete the old one."""
  parent = os.path.dirname(path)
  tmp = tempfile.mkdtemp(prefix=".tmp-", suffix=os.path.basename(path), dir=parent)
  old = None
  try:
    write(tmp)
    if os.path.exists(path):
      old = tempfile.mkdtemp(prefix=".old-", suffix=os.path.basename(path), dir=parent)
      os.rmdir(old)
      os.replace(path, old)
    os.replace(tmp, path)
  except BaseException:
    shutil.rmtree(tmp, ignore_errors=True)
    if old is not None and not os.path.exists(path):
      os.replace(old, path)
      old = None
    raise
  finally:
    if old is not None:
      shutil.rmtree(old, ignore_errors=True)
