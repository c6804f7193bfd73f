"""Errors a command reports without a traceback (unless --debug), each with
its exit status."""

# Exit statuses, as docs/cli.md lists them.
OK, MISMATCH, USAGE, REFUSED = 0, 1, 2, 3


class UsageError(Exception):
  """What the command was given cannot be worked on (a missing path, a file of
  the wrong kind); the message names it and says what was expected."""

  status = USAGE


class ConversionRefused(Exception):
  """A converter refuses the model; the message names the JAX primitive, the
  TF op and what to try."""

  status = REFUSED
