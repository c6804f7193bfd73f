"""The `jax2tf` command line: `export`, `verify` and `inspect`.

Each subcommand is a module with NAME, HELP, `add_arguments(parser)` and
`run(args) -> exit status`; adding one is adding it to COMMANDS.
"""

import argparse
import sys
from collections.abc import Sequence

from jax2tf.cli import export_cmd, inspect_cmd, verify_cmd
from jax2tf.cli.errors import CommandFailed, UsageError

PROG = "jax2tf"
COMMANDS = (export_cmd, verify_cmd, inspect_cmd)


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
    prog=PROG,
    description="Export JAX models to SavedModel or .tflite, verify and inspect the artifacts.",
  )
  subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
  for command in COMMANDS:
    sub = subcommands.add_parser(command.NAME, help=command.HELP, description=command.HELP)
    command.add_arguments(sub)
    sub.set_defaults(run=command.run)
  return parser


def main(argv: Sequence[str] | None = None) -> int:
  """Runs the command line `argv` (default: sys.argv[1:]); returns the exit
  status: 0 on success, 1 when the work fails (a conversion refusal, a
  mismatch), 2 for a usage error (both printed to stderr)."""
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
  except CommandFailed as e:
    print(f"{PROG} {args.command}: failed: {e}", file=sys.stderr)
    return 1
