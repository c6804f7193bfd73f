"""Writing exported artifacts: whole or not at all."""

import os
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
