"""The `jax2tf` command line: `jax2tf inspect PATH` (more subcommands to come).

Each subcommand is a module with NAME, HELP, `add_arguments(parser)` and
`run(args) -> exit status`; adding one (`export`, `verify`) is adding it to
COMMANDS.
"""

import argparse
import sys
from collections.abc import Sequence

from jax2tf.cli import inspect_cmd
from jax2tf.cli.errors import UsageError

PROG = "jax2tf"
COMMANDS = (inspect_cmd,)


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
    prog=PROG, description="Inspect artifacts exported by jax2tf (SavedModel, .tflite)."
  )
  subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
  for command in COMMANDS:
    sub = subcommands.add_parser(command.NAME, help=command.HELP, description=command.HELP)
    command.add_arguments(sub)
    sub.set_defaults(run=command.run)
  return parser


def main(argv: Sequence[str] | None = None) -> int:
  """Runs the command line `argv` (default: sys.argv[1:]); returns the exit
  status: 0 on success, 2 for a usage error (printed to stderr)."""
  parser = _parser()
  try:
    args = parser.parse_args(argv)
  except SystemExit as e:  # --help (0), or a usage error argparse printed (2)
    return e.code if isinstance(e.code, int) else 2
  try:
    return args.run(args)
  except UsageError as e:
    print(f"{PROG} {args.command}: error: {e}", file=sys.stderr)
    return 2
