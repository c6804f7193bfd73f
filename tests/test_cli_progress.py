"""The progress display of `jax2tf export` / `verify`: on a terminal only."""

import io
import os
import pty
import subprocess
import sys
import threading

import pytest
from rich.console import Console

from jax2tf.cli.progress import Progress

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _terminal() -> tuple[Console, io.StringIO]:
  out = io.StringIO()
  return Console(file=out, force_terminal=True, width=120), out


def test_each_stage_ends_as_a_line_with_its_time():
  console, out = _terminal()
  with Progress(3, quiet=False, console=console) as progress:
    for stage in ("loading [m]", "converting", "checking"):
      progress(stage)
  lines = [line for line in out.getvalue().splitlines() if "done " in line]
  assert len(lines) == 3, out.getvalue()
  for line, expected in zip(lines, ("[1/3] loading [m] (", "[2/3] converting (", "[3/3] checking (")):
    assert expected in line and line.endswith(" s)"), line


def test_a_failed_stage_is_not_reported_done():
  console, out = _terminal()
  with pytest.raises(ValueError, match="bad model"):
    with Progress(2, quiet=False, console=console) as progress:
      progress("loading")
      progress("converting")
      raise ValueError("bad model")
  assert "[1/2] loading" in out.getvalue()
  assert "[2/2] converting (" not in out.getvalue()


@pytest.mark.parametrize("quiet,terminal", [(True, True), (False, False)])
def test_nothing_shown_quiet_or_off_a_terminal(quiet, terminal):
  out = io.StringIO()
  console = Console(file=out, force_terminal=terminal)
  with Progress(2, quiet=quiet, console=console) as progress:
    progress("loading")
    progress("converting")
  assert out.getvalue() == ""


def test_export_on_a_terminal_shows_its_stages_on_stderr(tmp_path):
  """The installed command with stderr on a pseudo-terminal: the stage lines
  go there, and stdout (a pipe) carries the report alone."""
  leader, follower = pty.openpty()
  env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": ROOT, "COLUMNS": "120"}
  proc = subprocess.Popen(
    [sys.executable, "-m", "jax2tf", "export", "tests.cli_models:mlp", "--out",
     str(tmp_path / "mlp")], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=follower,
    text=True)
  os.close(follower)
  shown = bytearray()

  def drain():  # the display redraws often: keep the terminal's buffer from filling
    while True:
      try:
        chunk = os.read(leader, 4096)
      except OSError:  # the command has exited and closed its end
        return
      if not chunk:
        return
      shown.extend(chunk)

  reader = threading.Thread(target=drain)
  reader.start()
  report, _ = proc.communicate(timeout=300)
  reader.join(timeout=10)
  os.close(leader)
  assert proc.returncode == 0, shown.decode(errors="replace")[-2000:]
  text = shown.decode(errors="replace")
  for n, stage in enumerate(("loading tests.cli_models:mlp", "converting to saved_model",
                             "running jax.jit", "running the SavedModel", "inspecting",
                             "writing"), start=1):
    assert f"[{n}/6] {stage}" in text, text[-2000:]
  assert report.startswith("#") and "[1/6]" not in report, report[:300]
