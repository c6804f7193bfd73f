"""`jax2tf export MODEL --target T --out PATH`: a JAX model to a checked artifact.

Converts the model (see `model_ref` for what MODEL names), writes the
artifact atomically, runs it in its own runtime (TensorFlow in a process
without JAX for a SavedModel, LiteRT for a `.tflite`, TF.js in Node for a
TF.js model) on the example inputs
and, for a polymorphic model, on random inputs at two other sizes of each
dimension variable, compares every output with `jax.jit`, and writes a report
beside the artifact (`PATH.report.md` and `PATH.report.json`). Exit status:
0 when every output matches, 1 when one does not, 2 for a usage error, 3
when the converter refuses the model.
"""

import argparse
import os
import time
from typing import Any

from jax2tf import extras
from jax2tf.cli import export_report, input_sets, inspect_cmd, model_ref, verification
from jax2tf.cli.errors import ConversionRefused, UsageError
from jax2tf.cli.progress import Progress

# --serialization (arguments.SERIALIZATIONS) -> jax2tf.convert options (SavedModel).
SERIALIZATIONS = {
  "native": {"native_serialization": True},
  "graph": {"native_serialization": False, "enable_xla": True},
  "no-xla": {"native_serialization": False, "enable_xla": False},
}
# --serialization (for --target tflite) -> the route of jax2tf.to_tflite.
TFLITE_ROUTES = {"native": "native", "no-xla": "graph"}
DEFAULT_TOLERANCE = {"saved_model": (1e-5, 1e-6), "tflite": (1e-4, 1e-4), "tfjs": (1e-4, 1e-4)}


def polymorphic_shapes(args, model: model_ref.Model):
  """The --polymorphic-shapes given, or the model's own, checked against the
  example inputs."""
  from jax import export  # pylint: disable=import-outside-toplevel

  where = "--polymorphic-shapes"
  if args.polymorphic_shapes is None:
    specs, where = model.polymorphic_shapes, f"model {model.ref}: polymorphic_shapes"
    if specs is None:
      return None
  else:
    specs = tuple(None if s == "_" else s for s in args.polymorphic_shapes)
  if len(specs) != len(model.inputs):
    raise UsageError(
      f"{where}: expected one spec per input ({len(model.inputs)}), got {len(specs)}"
    )
  try:
    export.symbolic_args_specs(list(model.inputs), list(specs))
  except Exception as e:  # pylint: disable=broad-except
    shapes = ", ".join(str(list(x.shape)) for x in model.inputs)
    first = str(e).splitlines()[0]
    raise UsageError(
      f"{where}: {list(specs)} do not describe the example inputs ({shapes}): {first}"
    ) from e
  return specs


def tflite_route(args) -> str:
  """The route of `to_tflite`: --route, else the one --serialization names,
  else "auto" where TensorFlow is installed and "litert" (the only route
  without it) where not."""
  if args.route is not None and args.serialization is not None:
    raise UsageError(
      f"--route {args.route} and --serialization {args.serialization}: both choose the route "
      "of --target tflite; give --route only"
    )
  if args.route is not None:
    return args.route
  if args.serialization is not None:
    return TFLITE_ROUTES[args.serialization]
  return "auto" if extras.has_tensorflow() else "litert"


def _write_saved_model(args, model, poly) -> dict:
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  from jax2tf.deploy import artifacts, signature  # pylint: disable=import-outside-toplevel

  options: dict[str, Any] = dict(SERIALIZATIONS[args.serialization or "native"])
  if args.platforms:
    options["native_serialization_platforms"] = tuple(args.platforms)
  if args.target_tf_version:
    options["target_tf_version"] = args.target_tf_version
  t0 = time.perf_counter()
  traced = signature.trace(
    model.fn, model.inputs, params=model.params, polymorphic_shapes=poly, convert_options=options
  )
  convert_s = time.perf_counter() - t0
  concrete = traced.function.get_concrete_function()

  def save(folder):
    tf.saved_model.save(traced.module, folder, signatures={verification.SIGNATURE: concrete})

  t0 = time.perf_counter()
  artifacts.write_directory_atomically(args.out, save, overwrite=args.overwrite)
  return {
    "convert_s": convert_s,
    "write_s": time.perf_counter() - t0,
    "input_names": [i.name for i in traced.inputs],
    "serialization": args.serialization or "native",
  }


def _write_tflite(args, model, poly) -> dict:
  import jax2tf  # pylint: disable=import-outside-toplevel

  if args.serialization == "graph":
    raise UsageError(
      "--serialization graph: TFLite takes no XLA ops; for --target tflite use no-xla or native"
    )
  t0 = time.perf_counter()
  lite_model = jax2tf.to_tflite(
    model.fn,
    *model.inputs,
    params=model.params,
    polymorphic_shapes=poly,
    route=tflite_route(args),
    path=args.out,
  )
  return {
    "convert_s": time.perf_counter() - t0,
    "write_s": 0.0,
    "input_names": list(lite_model.input_names),
    "serialization": f"route {lite_model.route!r}",
  }


def _write_tfjs(args, model, poly) -> dict:
  import jax2tf  # pylint: disable=import-outside-toplevel

  if args.serialization not in (None, "no-xla"):
    raise UsageError(
      f"--serialization {args.serialization}: TF.js runs graphs of ordinary TF ops only; "
      "for --target tfjs use no-xla (the default)"
    )
  for flag, value in (
    ("--platforms", args.platforms),
    ("--target-tf-version", args.target_tf_version),
  ):
    if value:
      raise UsageError(f"{flag}: applies to native serialization, which --target tfjs does not use")
  t0 = time.perf_counter()
  tfjs_model = jax2tf.to_tfjs(
    model.fn,
    *model.inputs,
    params=model.params,
    polymorphic_shapes=poly,
    path=args.out,
    overwrite=args.overwrite,
  )
  return {
    "convert_s": time.perf_counter() - t0,
    "write_s": 0.0,
    "input_names": list(tfjs_model.input_names),
    "serialization": "no-xla (graph serialization, enable_xla=False)",
  }


def versions() -> dict:
  import importlib.metadata  # pylint: disable=import-outside-toplevel
  import platform  # pylint: disable=import-outside-toplevel

  found = {"python": platform.python_version()}
  dists = ("jax2tf", "jax", "jaxlib", "tensorflow", "tensorflow-cpu", "ai-edge-litert")
  for dist in (*dists, "litert-converter"):
    try:
      found[dist] = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
      pass
  if extras.has_tensorflow():  # jax2tf.tfjs needs it: no TF.js model is made without
    from jax2tf.tfjs import ops  # pylint: disable=import-outside-toplevel

    found["@tensorflow/tfjs (checked against)"] = ops.TFJS_VERSION
  return found


def verify_artifact(
  path: str, kind: str, model, poly, rtol, atol, progress, input_names=None
) -> dict:
  """The check of `export`, on the artifact at `path` (see verification).
  `input_names`: the model's inputs in the function's order, where its
  signature lists them otherwise (a flatbuffer's, by name)."""
  sets, notes = input_sets.input_sets(model.inputs, poly)
  progress(f"running jax.jit on {len(sets)} input set(s)")
  reference = verification.jax_reference(model.jax_fun(), sets)
  if kind == "saved_model":
    progress("running the SavedModel in TensorFlow, in a process without JAX")
    names = [t["name"] for t in _serving_inputs(path)]
    ran = verification.run_saved_model(path, names, sets)
  elif kind == "tfjs":
    progress("running the model on TF.js in Node")
    ran = verification.run_tfjs(path, sets)
  else:
    progress("running the flatbuffer on LiteRT")
    ran = verification.run_tflite(path, sets, input_names=input_names)
  result = verification.check(ran, reference, rtol, atol)
  result.update(notes=notes, rtol=rtol, atol=atol, jax_loaded_by_runtime=ran.get("jax_loaded"))
  if ran.get("jax_loaded"):
    result["ok"] = False
    notes.append(f"the TensorFlow process loaded JAX modules: {ran['jax_loaded']}")
  return result


def _serving_inputs(path: str) -> list[dict]:
  report = inspect_cmd.inspect(path)
  signature = report["signatures"].get(verification.SIGNATURE)
  if signature is None:
    raise UsageError(f"{path}: no {verification.SIGNATURE!r} signature to verify")
  return signature["inputs"]


def prepare_out(args) -> None:
  """Refuses an existing --out without --overwrite; creates its folder."""
  if os.path.exists(args.out) and not args.overwrite:
    raise UsageError(f"--out: {args.out} exists; pass --overwrite to replace it")
  parent = os.path.dirname(os.path.abspath(args.out))
  try:
    os.makedirs(parent, exist_ok=True)
  except OSError as e:
    raise UsageError(f"--out: cannot create the folder {parent} ({e.strerror})") from e


def run(args: argparse.Namespace) -> int:
  with Progress(6, args.quiet) as progress:
    return _export(args, progress)


def _export(args: argparse.Namespace, progress: Progress) -> int:
  if args.signature or args.model is None:
    from jax2tf.cli import export_signatures  # pylint: disable=import-outside-toplevel

    return export_signatures.export(args, progress)
  if args.route is not None and args.target != "tflite":
    raise UsageError(f"--route: chooses the route of --target tflite, not of {args.target}")
  if args.target != "tflite":
    extras.require_tensorflow(f"jax2tf export --target {args.target}")
  progress(f"loading {args.model}")
  model = model_ref.load(args.model, args.checkpoint)
  poly = polymorphic_shapes(args, model)
  prepare_out(args)
  progress(f"converting to {args.target} and writing {args.out}")
  try:
    writer = {"saved_model": _write_saved_model, "tflite": _write_tflite, "tfjs": _write_tfjs}
    written = writer[args.target](args, model, poly)
  except (FileExistsError, FileNotFoundError) as e:
    raise UsageError(f"--out: {e}") from e
  except NotImplementedError as e:  # a refusal: names the primitive and a remedy
    raise ConversionRefused(f"{args.model} does not convert to {args.target}: {e}") from e
  default_rtol, default_atol = DEFAULT_TOLERANCE[args.target]
  rtol = default_rtol if args.rtol is None else args.rtol
  atol = default_atol if args.atol is None else args.atol
  checked = verify_artifact(
    args.out, args.target, model, poly, rtol, atol, progress, written["input_names"]
  )
  progress("inspecting the artifact")
  report = {
    "model": args.model,
    "target": args.target,
    "path": os.path.abspath(args.out),
    "serialization": written["serialization"],
    "polymorphic_shapes": list(poly) if poly else None,
    "times": {"convert_s": written["convert_s"], "write_s": written["write_s"]},
    "verification": checked,
    "artifact": inspect_cmd.inspect(args.out),
    "versions": versions(),
  }
  progress(f"writing {args.out}.report.md and .report.json")
  export_report.write(report, args.out)
  return export_report.show(report, args.json)
