"""The `jax2tf` command line: `export`, `verify` and `inspect`.

Each subcommand is a module with NAME, HELP, EXAMPLES, `add_arguments(parser)`
and `run(args) -> exit status`; adding one is adding it to COMMANDS.
"""

import argparse
import sys
from collections.abc import Sequence

from jax2tf.cli import errors, export_cmd, inspect_cmd, verify_cmd

PROG = "jax2tf"
COMMANDS = (export_cmd, verify_cmd, inspect_cmd)


class _Parser(argparse.ArgumentParser):
  def error(self, message):
    # One line, where argparse would print the whole usage first.
    self.exit(errors.USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
  parser = _Parser(
    prog=PROG,
    description="Export JAX models to SavedModel or .tflite, verify and inspect the artifacts.",
    epilog=_STATUSES,
    formatter_class=argparse.RawDescriptionHelpFormatter,
  )
  subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
  for command in COMMANDS:
    sub = subcommands.add_parser(
      command.NAME,
      help=command.HELP,
      description=command.HELP,
      epilog="example:\n" + command.EXAMPLES + "\n\n" + _STATUSES,
      formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_arguments(sub)
    sub.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub.set_defaults(run=command.run)
  return parser


_STATUSES = (
  f"exit status: {errors.OK} ok, {errors.MISMATCH} an output differs from JAX, "
  f"{errors.USAGE} usage error, {errors.REFUSED} conversion refused"
)


def main(argv: Sequence[str] | None = None) -> int:
  """Runs the command line `argv` (default: sys.argv[1:]); returns the exit
  status (see errors.py). Errors are one line on stderr, with the traceback
  only under --debug."""
  parser = _parser()
  try:
    args = parser.parse_args(argv)
  except SystemExit as e:  # --help (0), or a usage error argparse printed (2)
    return e.code if isinstance(e.code, int) else 2
  try:
    return args.run(args)
  except (errors.UsageError, errors.ConversionRefused) as e:
    if args.debug:
      raise
    what = "error" if isinstance(e, errors.UsageError) else "refused"
    print(f"{PROG} {args.command}: {what}: {e}", file=sys.stderr)
    return e.status
