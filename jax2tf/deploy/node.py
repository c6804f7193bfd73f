"""Node.js for the scripts that run converted models (TF.js in Node, headless
Chromium through puppeteer-core): finding `node` and the npm packages of
package.json, and `NodeProcess`, a long-lived Node child that answers
requests written to its stdin, one line each, with JSON lines on its
stdout."""

import contextlib
import json
import os
import pathlib
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any

# A node_modules folder holding the npm packages of package.json.
NODE_MODULES_ENV = "JAX2TF_NODE_MODULES"
INSTALL = (
  "run `make node_modules/.installed` (or `npm ci`) at the root of the jax2tf checkout, "
  f"or set {NODE_MODULES_ENV} to a node_modules folder holding the packages of its package.json"
)
_CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
# The most of a process's stderr that an error message quotes.
STDERR_TAIL = 4000


def node(purpose: str = "running jax2tf's Node.js scripts", install: str = INSTALL) -> str:
  """The `node` on PATH; where there is none, FileNotFoundError saying that
  `purpose` needs Node.js, then `install` (what to install next)."""
  found = shutil.which("node")
  if found is None:
    raise FileNotFoundError(
      f"{purpose} needs Node.js, and `node` is not on PATH; install it, then {install}"
    )
  return found


def node_modules(*packages: str, install: str = INSTALL, what: str = "") -> pathlib.Path:
  """The node_modules folder holding the npm `packages`: $JAX2TF_NODE_MODULES,
  else ./node_modules, else the node_modules of the checkout this package
  runs from (a folder not named node_modules stands for its node_modules).

  Where none holds them all, FileNotFoundError naming the packages and the
  folders, then `install`; `what` (e.g. "TF.js") leads the message, as "<what>
  is not installed"."""
  env = os.environ.get(NODE_MODULES_ENV)
  candidates = [pathlib.Path(env)] if env else [pathlib.Path.cwd(), _CHECKOUT]
  candidates = [c if c.name == "node_modules" else c / "node_modules" for c in candidates]
  for folder in candidates:
    if all((folder / name / "package.json").is_file() for name in packages):
      return folder
  where = " or ".join(map(str, candidates))
  if what:
    message = f"{what} is not installed: no {', '.join(packages)} under {where}"
  else:
    message = f"the npm packages {', '.join(packages)} are not installed under {where}"
  raise FileNotFoundError(f"{message}; {install}")


class NodeProcess:
  """A long-lived Node.js child that answers requests: each request is one
  line on its stdin, each reply one line on its stdout that starts with
  `reply_prefix`, then JSON (other lines are ignored). Its stderr goes to a
  temporary file, quoted when the process fails.

  The process starts at the first `ask`, from `command()`: (argv, the
  node_modules folder to put in NODE_PATH); a callable, so that a missing
  `node` or package is reported when the process is needed. A process that
  dies or does not answer raises `error` (the caller's exception type, its
  message naming `name`) and is closed; the next `ask` starts another one.
  Use it as a context manager, or call `close()`.
  """

  def __init__(
    self,
    command: Callable[[], tuple[Sequence[str], str | os.PathLike]],
    *,
    reply_prefix: str,
    name: str = "the Node process",
    error: type[Exception] = RuntimeError,
    error_marker: str | None = None,
    close_timeout: float = 10,
  ):
    """`error_marker`: what the script prints to stderr before its error; a
    failure then quotes what follows the last one (all of stderr where there
    is none). `close_timeout`: how long `close` waits for the process to end
    once its stdin is closed, before killing it."""
    self.name = name
    self.error = error
    self.reply_prefix = reply_prefix
    self.error_marker = error_marker
    self.close_timeout = close_timeout
    self._command = command
    self._proc: subprocess.Popen | None = None
    self._replies: queue.Queue = queue.Queue()
    self._stderr: IO[str] | None = None

  def __enter__(self) -> "NodeProcess":
    return self

  def __exit__(self, *exc) -> None:
    self.close()

  @property
  def process(self) -> subprocess.Popen | None:
    """The running process (None before the first `ask` and after `close`)."""
    return self._proc

  def close(self) -> None:
    """Closes the process's stdin, waits for it to end (kills it after
    `close_timeout` seconds), and drops its stderr."""
    proc, self._proc = self._proc, None
    if proc is not None:
      with contextlib.suppress(OSError):
        proc.stdin.close()  # type: ignore[union-attr]
      try:
        proc.wait(timeout=self.close_timeout)
      except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if self._stderr is not None:
      self._stderr.close()
      self._stderr = None

  def stderr(self) -> str:
    """What the process has written to stderr so far ("" when none runs)."""
    if self._stderr is None:
      return ""
    self._stderr.flush()
    self._stderr.seek(0)
    return self._stderr.read()

  def _start(self) -> subprocess.Popen:
    self.close()
    argv, modules = self._command()
    # Notices go to a file, read back only to explain a failure.
    self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    proc = subprocess.Popen(
      list(argv),
      stdin=subprocess.PIPE,
      stdout=subprocess.PIPE,
      stderr=self._stderr,
      env=dict(os.environ, NODE_PATH=os.fspath(modules)),
      text=True,
      encoding="utf-8",
      errors="replace",
    )
    replies: queue.Queue = queue.Queue()
    prefix = self.reply_prefix

    def read_replies():
      assert proc.stdout is not None
      for line in proc.stdout:
        if line.startswith(prefix):
          try:
            replies.put(json.loads(line[len(prefix) :]))
          except ValueError:
            replies.put(ValueError(f"a reply that is not JSON: {line.strip()[:200]!r}"))
      replies.put(None)  # the process ended

    threading.Thread(target=read_replies, daemon=True).start()
    self._proc, self._replies = proc, replies
    return proc

  def _log(self) -> str:
    log = self.stderr()
    if self.error_marker is not None:
      log = log.rpartition(self.error_marker)[2]
    return log.strip()[-STDERR_TAIL:]

  def fail(self, message: str) -> Exception:
    """Closes the process and returns `error(message)`, for the caller to
    raise (for a reply that says the process cannot go on)."""
    self.close()
    return self.error(message)

  def ask(self, request: Any, *, timeout: float, about: str = "") -> Any:
    """Writes `request` (a str as it is, else as JSON) as one line on the
    process's stdin, starting the process where none runs, and returns the
    next reply (parsed JSON). `about`, e.g. " on <url>", follows the name
    in errors. Raises `error` where the process ends before replying (with
    the end of its stderr) or no reply comes within `timeout` seconds."""
    line = request if isinstance(request, str) else json.dumps(request)
    if "\n" in line or "\r" in line:
      raise ValueError(f"a request to {self.name} is one line, got {line[:200]!r}")
    proc = self._proc if self._proc is not None and self._proc.poll() is None else self._start()
    assert proc.stdin is not None
    try:
      proc.stdin.write(line + "\n")
      proc.stdin.flush()
    except OSError:
      pass  # the process ended: its reply queue says so
    try:
      reply = self._replies.get(timeout=timeout)
    except queue.Empty:
      raise self.fail(f"{self.name} did not answer{about} within {timeout:g} s") from None
    if reply is None:
      log = self._log()
      raise self.fail(f"{self.name} ended unexpectedly{about}:\n{log or '(nothing on stderr)'}")
    if isinstance(reply, ValueError):
      raise self.fail(f"{self.name} sent{about} {reply}")
    return reply
