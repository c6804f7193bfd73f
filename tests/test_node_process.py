"""`jax2tf.deploy.node`: finding Node.js and the npm packages, and
`NodeProcess`, on a small Node script that answers JSON lines."""

import shutil
import time

import pytest

from jax2tf.deploy import headless
from jax2tf.deploy import node as node_process
from jax2tf.tfjs import runtime

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="no `node` on PATH")

PREFIX = "test reply: "
MARKER = "--- test: error ---"
# Answers each line of stdin: "die" ends the process with an error on
# stderr, "hang" answers nothing, anything else comes back in a reply
# (after a line without the prefix, which is not a reply).
SCRIPT = f"""
const lines = require('readline').createInterface({{input: process.stdin}});
process.stderr.write('a notice before any request\\n');
lines.on('line', line => {{
  if (line === 'die') {{
    process.stderr.write('{MARKER}\\nError: told to die\\n');
    process.exit(3);
  }}
  if (line === 'hang') return;
  process.stdout.write('not a reply\\n');
  process.stdout.write('{PREFIX}' + JSON.stringify({{echo: line, pid: process.pid}}) + '\\n');
}});
"""


class ScriptError(RuntimeError):
  pass


@pytest.fixture
def script(tmp_path):
  path = tmp_path / "echo.js"
  path.write_text(SCRIPT)
  return path


def _process(script, **kwargs) -> node_process.NodeProcess:
  return node_process.NodeProcess(
    lambda: ([node_process.node(), str(script)], script.parent),
    reply_prefix=PREFIX,
    name="the echo script",
    error=ScriptError,
    **kwargs,
  )


@needs_node
def test_answers_requests_in_one_process(script):
  with _process(script) as proc:
    assert proc.process is None  # started by the first request
    first = proc.ask("hello", timeout=30)
    assert first["echo"] == "hello"
    second = proc.ask({"a": [1, 2]}, timeout=30)
    assert second == {"echo": '{"a": [1, 2]}', "pid": first["pid"]}
    assert "a notice" in proc.stderr()
    with pytest.raises(ValueError, match="one line"):
      proc.ask("two\nlines", timeout=30)
    running = proc.process
  assert proc.process is None
  assert running is not None and running.poll() is not None


@needs_node
def test_a_process_that_dies_raises_the_callers_error_with_its_stderr(script):
  with _process(script) as proc:
    pid = proc.ask("first", timeout=30)["pid"]
    with pytest.raises(
      ScriptError, match=r"(?s)the echo script ended unexpectedly:\n.*told to die"
    ):
      proc.ask("die", timeout=30)
    assert proc.process is None
    assert proc.ask("again", timeout=30)["pid"] != pid  # started afresh
  with _process(script, error_marker=MARKER) as proc:
    with pytest.raises(ScriptError) as raised:
      proc.ask("die", timeout=30, about=" on request 1")
  message = str(raised.value)
  assert message.startswith("the echo script ended unexpectedly on request 1:\n")
  assert "told to die" in message and "a notice" not in message  # what follows the marker


@needs_node
def test_a_process_that_does_not_answer_times_out(script):
  with _process(script, close_timeout=5) as proc:
    started = time.monotonic()
    with pytest.raises(ScriptError, match="the echo script did not answer within 0.5 s"):
      proc.ask("hang", timeout=0.5)
    assert time.monotonic() - started < 20
    assert proc.process is None
    assert proc.ask("after", timeout=30)["echo"] == "after"


@needs_node
def test_fail_closes_the_process(script):
  proc = _process(script)
  proc.ask("x", timeout=30)
  error = proc.fail("the reply says no")
  assert isinstance(error, ScriptError) and str(error) == "the reply says no"
  assert proc.process is None and proc.stderr() == ""


def test_node_modules_looks_where_the_environment_says(tmp_path, monkeypatch):
  modules = tmp_path / "node_modules"
  (modules / "@scope" / "pkg").mkdir(parents=True)
  (modules / "@scope" / "pkg" / "package.json").write_text("{}")
  monkeypatch.setenv(node_process.NODE_MODULES_ENV, str(tmp_path))
  assert node_process.node_modules("@scope/pkg") == modules
  monkeypatch.setenv(node_process.NODE_MODULES_ENV, str(modules))
  assert node_process.node_modules("@scope/pkg") == modules
  with pytest.raises(FileNotFoundError, match=r"npm packages @scope/pkg, other are not installed"):
    node_process.node_modules("@scope/pkg", "other")
  with pytest.raises(FileNotFoundError, match=r"^Thing is not installed: no other under .*; do X$"):
    node_process.node_modules("other", install="do X", what="Thing")
  # What each caller needs, and says to install.
  with pytest.raises(FileNotFoundError, match=r"TF.js is not installed: .*make install"):
    runtime.node_modules()
  with pytest.raises(FileNotFoundError, match=r"puppeteer-core.*make node_modules/.installed"):
    headless.node_modules()


def test_node_says_what_needs_it(monkeypatch):
  monkeypatch.setenv("PATH", "")
  with pytest.raises(
    FileNotFoundError, match=r"^running a TF.js model needs Node.js.*make install"
  ):
    runtime.node()
  with pytest.raises(FileNotFoundError, match=r"^driving a browser needs Node.js.*npm ci"):
    headless.node()


# Times a call that spins for 2 ms over 5 samples, and counts the calls.
_STEADY = """
const timing = require(process.argv[1]);
let calls = 0;
async function spin() {
  calls += 1;
  const until = performance.now() + 2;
  while (performance.now() < until) {}
}
const started = performance.now();
timing.steadyMs(spin, 5).then(ms => {
  console.log(JSON.stringify({ms, calls, elapsed: performance.now() - started}));
});
"""


@needs_node
def test_steady_time_warms_up_then_times_loops_of_calls():
  import json
  import subprocess

  done = subprocess.run(
    [node_process.node(), "-e", _STEADY, str(headless.STEADY_TIME)],
    capture_output=True, text=True, check=True, timeout=60,
  )
  got = json.loads(done.stdout)
  # A call's mean time: at least its spin, and not a whole sample's (a loop
  # of calls lasting 20 ms or more; a 2 ms spin would need ten times as long).
  assert 2.0 <= got["ms"] < 20
  # 0.3 s of uncounted calls, then 5 samples of loops lasting 20 ms or more.
  assert got["elapsed"] >= 300 + 5 * 20
  assert got["calls"] >= 1 + 5
