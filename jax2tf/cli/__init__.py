"""The `jax2tf` command line: `export`, `verify` and `inspect`.

Each subcommand is a `Command` of `arguments` (name, help, example, its
arguments) and a module with `run(args) -> exit status`; adding one is
adding it to `arguments.COMMANDS`. Parsing imports neither TensorFlow nor
JAX (`--help` answers at once, without TensorFlow's log lines); the
command's module, which imports them, is imported to run it.
"""

import argparse
import importlib
import sys
from collections.abc import Sequence

from jax2tf import extras
from jax2tf.cli import arguments, errors, logs

PROG = "jax2tf"
COMMANDS = arguments.COMMANDS
VERBOSE_HELP = "show TensorFlow's and XLA's own log lines (hidden by default)"


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
  parser.add_argument("--verbose", action="store_true", help=VERBOSE_HELP)
  subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
  for command in COMMANDS:
    sub = subcommands.add_parser(
      command.name,
      help=command.help,
      description=command.help,
      epilog="example:\n" + command.examples + "\n\n" + _STATUSES,
      formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_arguments(sub)
    sub.add_argument("--debug", action="store_true", help="show the traceback of an error")
    # Also after the command's name; SUPPRESS keeps a `jax2tf --verbose
    # COMMAND` given before it (argparse copies the subcommand's defaults
    # over the global ones).
    sub.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP)
    sub.set_defaults(command_module=command.module)
  return parser


_STATUSES = (
  f"exit status: {errors.OK} ok, {errors.MISMATCH} an output differs from JAX, "
  f"{errors.USAGE} usage error, {errors.REFUSED} conversion refused"
)


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
  """The arguments of the command line `argv` (default: sys.argv[1:]);
  SystemExit for --help and usage errors, as argparse."""
  return _parser().parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
  """Runs the command line `argv` (default: sys.argv[1:]); returns the exit
  status (see errors.py). Errors are one line on stderr, with the traceback
  only under --debug."""
  try:
    args = parse(argv)
  except SystemExit as e:  # --help (0), or a usage error argparse printed (2)
    return e.code if isinstance(e.code, int) else 2
  try:
    with logs.quiet_unless(args.verbose):
      return importlib.import_module(args.command_module).run(args)
  except (errors.UsageError, errors.ConversionRefused, extras.TensorFlowMissingError) as e:
    if args.debug:
      raise
    what = "refused" if isinstance(e, errors.ConversionRefused) else "error"
    print(f"{PROG} {args.command}: {what}: {e}", file=sys.stderr)
    return errors.USAGE if isinstance(e, extras.TensorFlowMissingError) else e.status
