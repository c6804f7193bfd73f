"""`jax2tf inspect PATH`: what an exported artifact needs to run.

For a SavedModel: its signatures, each XlaCallModule op (calling convention,
StableHLO version, platforms, ...) with the TensorFlow releases that can run
it, and the ops a TFLite or TF.js converter would meet. For a .tflite file:
operators, Flex and custom ops, signatures and weights. For a TF.js graph
model: its signature, ops (and any TF.js lacks), weights and shape checks.
One dict holds the report; the text form and `--json` both print it.
"""

import argparse
import json
import os
import sys

from jax2tf.cli import render, saved_model_info, tfjs_info, tflite_info
from jax2tf.cli.errors import UsageError

EXPECTED = (
  "a SavedModel directory (with saved_model.pb), a .tflite file or a TF.js model directory "
  "(with model.json)"
)


def inspect(path: str) -> dict:
  """The report on the artifact at `path`, as plain data (see docs/cli.md)."""
  if not os.path.exists(path):
    raise UsageError(f"{path}: no such file or directory; expected {EXPECTED}")
  if os.path.basename(path) == saved_model_info.SAVED_MODEL_PB and os.path.isfile(path):
    path = os.path.dirname(path) or "."  # the proto named instead of its directory
  if saved_model_info.is_saved_model(path):
    return saved_model_info.read(path)
  if tflite_info.is_tflite(path):
    return tflite_info.read(path)
  if tfjs_info.is_tfjs(path):
    return tfjs_info.read(path)
  if os.path.isdir(path):
    got = f"a directory without {saved_model_info.SAVED_MODEL_PB} or model.json"
  else:
    got = "a file that is not a TFLite flatbuffer"
  raise UsageError(f"{path}: expected {EXPECTED}, got {got}")


def run(args: argparse.Namespace) -> int:
  report = inspect(args.path)
  if args.json:
    sys.stdout.write(json.dumps(report, indent=2) + "\n")
  else:
    sys.stdout.write(render.text(report))
  return 0
