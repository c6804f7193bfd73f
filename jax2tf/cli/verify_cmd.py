"""`jax2tf verify PATH --against MODEL`: the check of `jax2tf export`, again,
on an existing SavedModel, `.tflite` or TF.js model (after a TensorFlow,
LiteRT or TF.js upgrade, say). Prints the report; exit status 1 when an output does not match."""

import argparse
import os

from jax2tf.cli import export_cmd, export_report, inspect_cmd, model_ref
from jax2tf.cli.errors import UsageError
from jax2tf.cli.progress import Progress
from jax2tf.deploy import signature


def run(args: argparse.Namespace) -> int:
  with Progress(4, args.quiet) as progress:
    return _verify(args, progress)


def _verify(args: argparse.Namespace, progress: Progress) -> int:
  progress(f"inspecting {args.path}")
  artifact = inspect_cmd.inspect(args.path)
  kind = artifact["kind"]
  progress(f"loading {args.against}")
  model = model_ref.load(args.against, args.checkpoint)
  poly = export_cmd.polymorphic_shapes(args, model)
  default_rtol, default_atol = export_cmd.DEFAULT_TOLERANCE[kind]
  rtol = default_rtol if args.rtol is None else args.rtol
  atol = default_atol if args.atol is None else args.atol
  n_inputs = sum(len(s["inputs"]) for s in artifact["signatures"].values())
  if n_inputs != len(model.inputs):
    raise UsageError(
      f"{args.path}: its signature takes {n_inputs} inputs, {args.against} gives "
      f"{len(model.inputs)}"
    )
  # The names the converters give the inputs: a flatbuffer's signature
  # lists them by name, not in the function's order.
  names = [
    i.name for i in signature.input_specs(model.fn, model.inputs, poly, model.params is not None)
  ]
  checked = export_cmd.verify_artifact(
    args.path, kind, model, poly, rtol, atol, progress, input_names=names
  )
  report = {
    "command": "verify",
    "model": args.against,
    "target": kind,
    "path": os.path.abspath(args.path),
    "serialization": "as written",
    "polymorphic_shapes": list(poly) if poly else None,
    "verification": checked,
    "artifact": artifact,
    "versions": export_cmd.versions(),
  }
  return export_report.show(report, args.json)
