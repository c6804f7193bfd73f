"""Errors a command reports in one line, with exit status 2, and no traceback."""


class UsageError(Exception):
  """What the command was given cannot be worked on (a missing path, a file of
  the wrong kind); the message names it and says what was expected."""
