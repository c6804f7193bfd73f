"""Errors a command reports in one line, without a traceback: a usage error
(exit status 2) or a failure of the work itself (exit status 1)."""


class UsageError(Exception):
  """What the command was given cannot be worked on (a missing path, a file of
  the wrong kind); the message names it and says what was expected."""


class CommandFailed(Exception):
  """The command could not do its work on valid input (a converter refusal);
  the message says why and what to try."""
