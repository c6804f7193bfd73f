"""Writing exported artifacts: whole or not at all."""

import os
import shutil
import tempfile


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
  """Calls `write(folder)` on a temporary folder beside `path`, then renames
  it to `path`: a failure leaves no partial directory. An existing `path` is
  replaced only with `overwrite` (and kept if the rename fails)."""
  path = os.path.abspath(os.fspath(path))
  parent = os.path.dirname(path)
  if not os.path.isdir(parent):
    raise FileNotFoundError(f"path: the folder {parent!r} does not exist")
  if os.path.exists(path) and not overwrite:
    raise FileExistsError(f"path: {path!r} exists; pass overwrite to replace it")
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
