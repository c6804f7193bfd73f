"""The progress display of the long commands (`export`, `verify`).

Each stage of a command is a line on stderr once it is done, with the time
it took, under a live line (spinner, stage count, elapsed time) for the stage
under way: rich's display, which TensorFlow's Keras brings along. Nothing is
shown when stderr is not a terminal (logs, pipes, tests) or with --quiet, so
stdout carries only the report.
"""

import sys
import time

from rich.console import Console
from rich.progress import BarColumn, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import Progress as _Display
from rich.text import Text


class Progress:
  """`with Progress(total, quiet) as progress: progress("stage"); ...`.

  Calling it starts the next of `total` stages; leaving the block ends the
  last one and the display (also when the command fails, so that the error
  line is not drawn over).
  """

  def __init__(self, total: int, quiet: bool, console: Console | None = None):
    self.total, self.done = total, 0
    self.console = console if console is not None else Console(file=sys.stderr)
    self.shown = not quiet and self.console.is_terminal
    self._stage: str | None = None
    self._started = 0.0
    self._display: _Display | None = None
    self._task: TaskID | None = None

  def __enter__(self) -> "Progress":
    if self.shown:
      self._display = _Display(
        SpinnerColumn(),
        TextColumn("[{task.fields[count]}]"),
        TextColumn("{task.description}", markup=False),
        BarColumn(bar_width=20),
        TimeElapsedColumn(),
        console=self.console,
        transient=True,
        # stdout is the report's (and may be a pipe to a script): leave it alone
        redirect_stdout=False,
        redirect_stderr=False,
      )
      self._display.start()
      self._task = self._display.add_task("", total=self.total, count="")
    return self

  def __call__(self, stage: str) -> None:
    self._finish_stage()
    self.done += 1
    self._stage, self._started = stage, time.perf_counter()
    if self._display is not None and self._task is not None:
      self._display.update(
        self._task, description=stage, completed=self.done - 1, count=self._count()
      )

  def __exit__(self, error_type, error, traceback) -> None:
    if error_type is None:
      self._finish_stage()
    if self._display is not None:
      self._display.stop()
      self._display = None

  def _count(self) -> str:
    return f"{self.done}/{self.total}"

  def _finish_stage(self) -> None:
    if self._stage is None or self._display is None:
      return
    seconds = time.perf_counter() - self._started
    line = Text.assemble(("done ", "green"), f"[{self._count()}] {self._stage} ({seconds:.1f} s)")
    self._display.console.print(line)
    self._stage = None
