"""Compute-once caches for work keyed by a signature, safe across threads."""

import threading
from collections.abc import Callable, Hashable
from typing import Any


class OnceCache(dict):
  """A dict whose values `get_or_make` computes at most once per key, however
  many threads ask at the same time.

  Threads asking for one key wait for the first to finish (exporting the same
  signature twice would waste seconds and could hand two threads different
  modules); threads asking for different keys do not wait for each other. A
  `make` that raises stores nothing: the next caller tries again, and sees the
  error itself. The per-key locks are reentrant, so a `make` that comes back
  to the same key in its own thread recurses instead of deadlocking.
  """

  def __init__(self):
    super().__init__()
    self._locks: dict = {}
    self._guard = threading.Lock()

  def get_or_make(self, key: Hashable, make: Callable[[], Any]) -> Any:
    value = self.get(key)
    if value is not None:
      return value
    with self._guard:
      lock = self._locks.setdefault(key, threading.RLock())
    with lock:
      value = self.get(key)
      if value is None:
        value = make()
        self[key] = value
      return value
