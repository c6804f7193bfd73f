"""The commands' names, help, examples and arguments: all that `jax2tf --help`
and `jax2tf COMMAND --help` need.

This module imports neither TensorFlow nor JAX (nor numpy or rich), and
neither does the parser built from it: importing those takes seconds and
makes TensorFlow log, so a command's own module (`Command.module`), which
does, is imported only to run it.
"""

import argparse
import dataclasses
from collections.abc import Callable

TARGETS = ("saved_model", "tflite", "tfjs")
# --serialization; export_cmd.SERIALIZATIONS maps each to its options.
SERIALIZATIONS = ("native", "graph", "no-xla")
# --route: the routes of jax2tf.to_tflite, for --target tflite.
TFLITE_ROUTES = ("auto", "graph", "native", "litert")


@dataclasses.dataclass(frozen=True)
class Command:
  name: str
  help: str
  examples: str
  add_arguments: Callable[[argparse.ArgumentParser], None]
  module: str  # the module whose `run(args) -> exit status` runs the command


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
  """The options of the check, shared by export and verify."""
  parser.add_argument(
    "--polymorphic-shapes",
    nargs="+",
    metavar="SPEC",
    help="one spec per input, e.g. '(b, 28, 28, 1)'; '_' for a static input "
    "(default: what the model gives)",
  )
  parser.add_argument(
    "--checkpoint", help="parameters written by flax.serialization.to_bytes, replacing the model's"
  )
  parser.add_argument("--rtol", type=float, help="relative tolerance of the check")
  parser.add_argument("--atol", type=float, help="absolute tolerance of the check")
  parser.add_argument("--json", action="store_true", help="print the report as JSON")
  parser.add_argument("--quiet", action="store_true", help="no progress display")


def _export_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument(
    "model",
    nargs="?",
    help="package.module:NAME (see docs/cli.md for what NAME returns); omitted with --signature",
  )
  parser.add_argument("--target", choices=TARGETS, default="saved_model")
  parser.add_argument(
    "--signature",
    action="append",
    metavar="NAME=MODEL",
    help="with --target tflite, instead of MODEL: one signature NAME of one .tflite computing "
    "MODEL (package.module:NAME); repeat for each, e.g. --signature prefill=lm:prefill "
    "--signature decode=lm:decode; the models' params are one set of weights, stored once",
  )
  parser.add_argument(
    "--out", required=True, help="the SavedModel directory, .tflite file or TF.js model directory"
  )
  parser.add_argument(
    "--serialization",
    choices=SERIALIZATIONS,
    help="native (default for saved_model), graph, or no-xla (graph with enable_xla=False); "
    "for tflite: the route (native or no-xla; default: the first that converts and verifies); "
    "tfjs takes no-xla only",
  )
  parser.add_argument(
    "--route",
    choices=TFLITE_ROUTES,
    help="for tflite: the route of jax2tf.to_tflite (litert: JAX's StableHLO through the "
    "standalone LiteRT converter, without TensorFlow; auto: the first of graph, native and "
    "litert that converts and verifies); default: auto where TensorFlow is installed, "
    "else litert",
  )
  parser.add_argument("--platforms", nargs="+", help="native serialization platforms (cpu, cuda)")
  parser.add_argument("--target-tf-version", help="the oldest TensorFlow that must run it")
  parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
  add_check_arguments(parser)


def _verify_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument("path", help="a SavedModel directory, a .tflite file or a TF.js model")
  parser.add_argument("--against", required=True, metavar="MODEL", help="package.module:NAME")
  add_check_arguments(parser)


def _inspect_arguments(parser: argparse.ArgumentParser) -> None:
  parser.add_argument("path", help="a SavedModel directory, a .tflite file or a TF.js model")
  parser.add_argument("--json", action="store_true", help="print the report as JSON")


EXPORT = Command(
  name="export",
  help="convert a JAX model to a SavedModel, .tflite or TF.js model, verify it, report",
  examples="""\
  jax2tf export mypkg.models:classifier --out /srv/models/classifier
  jax2tf export mypkg.models:classifier --target tflite --out classifier.tflite
  jax2tf export mypkg.models:classifier --target tfjs --out web/classifier
  jax2tf export --signature prefill=mypkg.lm:prefill --signature decode=mypkg.lm:decode \\
      --target tflite --out lm.tflite""",
  add_arguments=_export_arguments,
  module="jax2tf.cli.export_cmd",
)
VERIFY = Command(
  name="verify",
  help="run an exported SavedModel, .tflite or TF.js model against jax.jit of its model",
  examples="  jax2tf verify /srv/models/classifier --against mypkg.models:classifier",
  add_arguments=_verify_arguments,
  module="jax2tf.cli.verify_cmd",
)
INSPECT = Command(
  name="inspect",
  help="show what a SavedModel, a .tflite file or a TF.js model needs to run",
  examples="  jax2tf inspect /srv/models/classifier --json",
  add_arguments=_inspect_arguments,
  module="jax2tf.cli.inspect_cmd",
)
COMMANDS = (EXPORT, VERIFY, INSPECT)
