"""The log lines of TensorFlow (and of XLA, which shares its C++ logging)
while a command runs: hidden unless `--verbose`.

Loading TensorFlow prints oneDNN notices and advice about CPU instructions,
and saving a model adds warnings about untraced functions and the like; none
of it is about the user's model, and it buries the report.

- TensorFlow's C++ logging reads TF_CPP_MIN_LOG_LEVEL, so the level is set
  before the command imports TensorFlow; it also reaches the processes the
  command starts (the SavedModel check). A level the user set is kept.
- The oneDNN notice ignores that level (TensorFlow 2.21 logs it through
  absl while loading its libraries, before its own logging is set up), so
  TensorFlow is imported here with the C++ stderr (file descriptor 2) read
  into a file, and what it wrote is passed on without the log lines under
  the level. oneDNN itself stays on (TF_ENABLE_ONEDNN_OPTS changes
  numerics): only its notice goes.
- TensorFlow's Python side warns through the `absl` and `tensorflow`
  loggers, set to errors only.
"""

import contextlib
import logging
import os
import re
import sys
import tempfile
from collections.abc import Iterator

from jax2tf import extras

LEVEL_VARIABLE = "TF_CPP_MIN_LOG_LEVEL"
# 3 hides INFO, WARNING and ERROR lines; a failure still reaches the user, as
# the command's one-line error (or, with --debug, the traceback).
QUIET_LEVEL = "3"
PYTHON_LOGGERS = ("absl", "tensorflow")
# absl's line header: severity, MMDD and time (0000 00:00:<seconds since
# 1970> before absl is set up), thread, file:line.
_LOG_LINE = re.compile(rb"^([IWEF])\d{4} +\d+:\d+:\d+\.\d+ +\d+ +[^ ]+:\d+\] ")
_SEVERITIES = b"IWEF"  # the values of TF_CPP_MIN_LOG_LEVEL, in order
# What absl prints once, before the first line logged before it is set up.
_ABSL_PREAMBLE = b"WARNING: All log messages before absl::InitializeLog() is called are written"


@contextlib.contextmanager
def quiet_unless(verbose: bool) -> Iterator[None]:
  """Hides TensorFlow's log lines inside the block unless `verbose`; imports
  TensorFlow, where installed (most commands need it), without the lines it
  prints while loading. Afterwards the environment and the loggers are as
  they were, for a caller that runs `jax2tf.cli.main` in its own process."""
  if verbose:
    yield
    return
  set_level = LEVEL_VARIABLE not in os.environ
  if set_level:
    os.environ[LEVEL_VARIABLE] = QUIET_LEVEL
  loggers: list[logging.Logger] = []
  levels: list[int] = []
  try:
    if "tensorflow" not in sys.modules and extras.has_tensorflow():
      with _filtered_stderr(_min_level()):
        import tensorflow  # noqa: F401  # pylint: disable=import-outside-toplevel,unused-import
    # After TensorFlow, which imports absl.logging: that installs its own
    # Logger class for "absl", and asking `logging` for the logger earlier
    # would make a plain one that absl then uses without its methods.
    loggers = [logging.getLogger(name) for name in _python_loggers()]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
      logger.setLevel(logging.ERROR)
    yield
  finally:
    if set_level:
      os.environ.pop(LEVEL_VARIABLE, None)
    for logger, level in zip(loggers, levels, strict=True):
      logger.setLevel(level)


def _min_level() -> int:
  try:
    return int(os.environ.get(LEVEL_VARIABLE, "0"))
  except ValueError:  # TensorFlow reads an unparsable level as 0
    return 0


def kept(written: bytes, min_level: int) -> bytes:
  """`written` without absl's log lines of a severity under `min_level`
  (0 INFO, 1 WARNING, 2 ERROR, 3 FATAL) and, when one goes, the preamble
  absl prints before them."""
  lines = written.splitlines(keepends=True)
  dropped = [
    (m := _LOG_LINE.match(line)) is not None and _SEVERITIES.index(m.group(1)) < min_level
    for line in lines
  ]
  if any(dropped):
    dropped = [d or line.startswith(_ABSL_PREAMBLE) for d, line in zip(dropped, lines, strict=True)]
  return b"".join(line for line, d in zip(lines, dropped, strict=True) if not d)


@contextlib.contextmanager
def _filtered_stderr(min_level: int) -> Iterator[None]:
  # A file rather than a pipe: nothing reads a pipe while a library loads.
  sys.stderr.flush()
  real = os.dup(2)
  try:
    with tempfile.TemporaryFile() as capture:
      os.dup2(capture.fileno(), 2)
      try:
        yield
      finally:
        sys.stderr.flush()
        os.dup2(real, 2)
        capture.seek(0)
        with open(real, "wb", closefd=False) as stderr:
          stderr.write(kept(capture.read(), min_level))
  finally:
    os.close(real)


def _python_loggers() -> tuple[str, ...]:
  return tuple(n for n in PYTHON_LOGGERS if n != "absl" or "absl.logging" in sys.modules)
