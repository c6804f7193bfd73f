"""Headless Chromium, driven by puppeteer-core (`headless.js`), opening pages
served from 127.0.0.1.

A `Session` starts Chromium once and opens page after page in it (each start
costs seconds); `drive` opens one page in a browser of its own. A page
reports by setting `window.jax2tfDone` (and `window.jax2tfResult`, or
`window.jax2tfError`).

Needs Chromium (Debian's `chromium` package; `make install` installs it with
apt where it can, or set JAX2TF_CHROMIUM to the browser's path), Node.js, and
the npm packages of package.json (`make node_modules/.installed`, or `npm ci`
at the root of the checkout).
"""

import contextlib
import functools
import http.server
import os
import pathlib
import shutil
import subprocess
import threading
from collections.abc import Iterator, Sequence

from jax2tf.deploy import node as node_process

CHROMIUM_ENV = "JAX2TF_CHROMIUM"
# A node_modules folder holding the npm packages of package.json.
NODE_MODULES_ENV = node_process.NODE_MODULES_ENV
DRIVER = pathlib.Path(__file__).with_name("headless.js")
# Loaded by every page (and by Node's TF.js runner): how steady calls are timed.
STEADY_TIME = pathlib.Path(__file__).with_name("steady_time.js")
# What headless.js prints before an error, and before each reply.
ERROR_MARKER = "--- jax2tf browser: error ---"
_REPLY_PREFIX = "jax2tf browser reply: "
_BROWSERS = ("chromium", "chromium-browser", "google-chrome")


class BrowserError(RuntimeError):
  """Chromium, or the driver that runs it, failed (the message holds why)."""


def chromium() -> str:
  """The Chromium to drive: $JAX2TF_CHROMIUM, else one on PATH."""
  env = os.environ.get(CHROMIUM_ENV)
  if env:
    if not os.access(env, os.X_OK):
      raise FileNotFoundError(f"{CHROMIUM_ENV}={env} is not an executable")
    return env
  for name in _BROWSERS:
    found = shutil.which(name)
    if found:
      return found
  raise FileNotFoundError(
    "running a model in a browser needs Chromium, and none of "
    f"{', '.join(_BROWSERS)} is on PATH: install it (`apt-get install chromium`; "
    f"`make install` does where it can) or set {CHROMIUM_ENV} to its path"
  )


def node() -> str:
  """The `node` on PATH."""
  return node_process.node("driving a browser")


def node_modules(*packages: str) -> pathlib.Path:
  """The node_modules folder holding `packages` (npm names, puppeteer-core
  always): $JAX2TF_NODE_MODULES, else ./node_modules, else the node_modules
  of the checkout this package runs from."""
  return node_process.node_modules("puppeteer-core", *packages)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
  extensions_map = {
    **http.server.SimpleHTTPRequestHandler.extensions_map,
    ".wasm": "application/wasm",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
  }

  def log_message(self, format, *args):  # noqa: A002  (the base class's name)
    del format, args


def copy_page(
  page: str | os.PathLike, root: str | os.PathLike, scripts: Sequence[pathlib.Path] = ()
) -> None:
  """Puts `page` into the served folder `root` as its index.html, with the
  scripts every page loads and the page's own `scripts` beside it."""
  shutil.copy(page, os.path.join(root, "index.html"))
  for script in (STEADY_TIME, *scripts):
    shutil.copy(script, os.path.join(root, script.name))


@contextlib.contextmanager
def serve(root: str | os.PathLike) -> Iterator[str]:
  """Serves the folder `root` on 127.0.0.1 (a free port) while the context
  lasts; yields its base URL, ending in '/'."""
  handler = functools.partial(_QuietHandler, directory=os.fspath(root))
  server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
  thread = threading.Thread(target=server.serve_forever, daemon=True)
  thread.start()
  try:
    yield f"http://127.0.0.1:{server.server_address[1]}/"
  finally:
    server.shutdown()
    server.server_close()


class Session:
  """One headless Chromium that opens pages one after another.

  Chromium takes seconds to start; a Session pays it once, at the first
  `open`. Use it as a context manager, or call `close()`. `flags`: Chromium
  command-line switches added to headless.js's own. A page that fails
  comes back with its error (`open` returns it); a browser that fails
  raises `error` (BrowserError unless told) and is started afresh by the
  next `open`.
  """

  def __init__(
    self,
    *,
    modules: str | os.PathLike | None = None,
    timeout: float = 300,
    error: type[Exception] = BrowserError,
    flags: Sequence[str] = (),
  ):
    self.timeout = timeout
    self._modules = modules
    self._flags = list(flags)
    self._driver = node_process.NodeProcess(
      self._command,
      reply_prefix=_REPLY_PREFIX,
      name="headless Chromium",
      error=error,
      error_marker=ERROR_MARKER,
      close_timeout=30,
    )

  def __enter__(self) -> "Session":
    return self

  def __exit__(self, *exc) -> None:
    self.close()

  @property
  def _proc(self) -> subprocess.Popen | None:
    """The driver's Node process (None before the first `open` and after `close`)."""
    return self._driver.process

  def close(self) -> None:
    """Closes Chromium (a later `open` starts it again)."""
    self._driver.close()

  def _command(self) -> tuple[list[str], str | os.PathLike]:
    browser = chromium()
    modules = self._modules if self._modules is not None else node_modules()
    return [node(), str(DRIVER), browser, *self._flags], modules

  def open(
    self,
    url: str,
    *,
    actions: Sequence[dict] = (),
    screenshot: str | os.PathLike | None = None,
    timeout: float | None = None,
  ) -> dict:
    """Opens `url` in a new tab, performs `actions` (see headless.js), waits
    for the page to set window.jax2tfDone, closes the tab, and returns
    {"result", "error", "console"}; saves a screenshot when asked."""
    timeout = self.timeout if timeout is None else timeout
    request = {
      "url": url,
      "screenshot": os.fspath(screenshot) if screenshot is not None else None,
      "timeout_ms": int(timeout * 1000),
      "actions": list(actions),
    }
    # headless.js answers once the page is done or its own timeout passed.
    reply = self._driver.ask(request, timeout=timeout + 60, about=f" on {url}")
    if "failure" in reply:
      why = reply["failure"][-node_process.STDERR_TAIL :]
      raise self._driver.fail(f"headless Chromium failed on {url}:\n{why}")
    return reply


def drive(
  url: str,
  *,
  actions: Sequence[dict] = (),
  screenshot: str | os.PathLike | None = None,
  timeout: float = 300,
  modules: str | os.PathLike | None = None,
  error: type[Exception] = BrowserError,
) -> dict:
  """Opens `url` in a headless Chromium of its own (see `Session.open`)."""
  with Session(modules=modules, timeout=timeout, error=error) as session:
    return session.open(url, actions=actions, screenshot=screenshot)
