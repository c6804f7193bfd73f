"""`jax2tf export --signature NAME=MODEL ... --target tflite --out PATH`: one
`.tflite` with a signature per model (`jax2tf.to_tflite_signatures`).

Each MODEL is a `package.module:NAME` as for `jax2tf export MODEL` (see
`model_ref`); the models' `params` are the weights every signature shares,
so they must be equal (the same pytree of the same values). Each signature
is then checked as `export` checks one model: on LiteRT, on its example
inputs and, where polymorphic, on random inputs at two other sizes, against
`jax.jit`; the report's input sets are named `signature: set`.
"""

import argparse
import os
import re
import time

import numpy as np

from jax2tf.cli import export_cmd, export_report, input_sets, inspect_cmd, model_ref, verification
from jax2tf.cli.errors import ConversionRefused, UsageError
from jax2tf.cli.progress import Progress

_SIGNATURE = re.compile(r"([A-Za-z][A-Za-z0-9_]*)=(.+)")
FORM = "NAME=package.module:FACTORY"


def parse(values) -> dict[str, str]:
  """{signature name: model reference} of the --signature values."""
  found: dict[str, str] = {}
  for value in values:
    match = _SIGNATURE.fullmatch(value)
    if match is None:
      raise UsageError(
        f"--signature: expected {FORM} (NAME a letter followed by letters, digits and "
        f"underscores), got {value!r}"
      )
    name, ref = match.groups()
    if name in found:
      raise UsageError(f"--signature: {name!r} is given twice")
    found[name] = ref
  return found


def _check_arguments(args) -> None:
  if not args.signature:
    raise UsageError("expected MODEL (package.module:NAME), or --signature NAME=MODEL")
  if args.model is not None:
    raise UsageError(
      f"MODEL ({args.model}) and --signature: with several signatures, give each model as "
      "--signature NAME=MODEL"
    )
  if args.target != "tflite":
    raise UsageError(
      f"--signature: several signatures in one model are written for --target tflite only, "
      f"not {args.target}"
    )
  route = getattr(args, "route", None)
  if route not in (None, "auto", "litert"):
    raise UsageError(
      f"--route {route}: only the litert route writes several signatures in one model"
    )
  for flag, value in (
    ("--serialization", args.serialization),
    ("--polymorphic-shapes", args.polymorphic_shapes),
    ("--platforms", args.platforms),
    ("--target-tf-version", args.target_tf_version),
  ):
    if value:
      raise UsageError(
        f"{flag}: not used with --signature (the litert route; each model gives its own "
        "polymorphic_shapes)"
      )


def _shared_params(models: dict[str, model_ref.Model]):
  """The params of the models, which must be one set of weights."""
  import jax  # pylint: disable=import-outside-toplevel

  (first_name, first), *others = models.items()
  leaves, tree = jax.tree_util.tree_flatten(first.params)
  tree_text = str(tree)
  for name, model in others:
    other_leaves, other_tree = jax.tree_util.tree_flatten(model.params)
    same = str(other_tree) == tree_text and all(
      np.shape(a) == np.shape(b) and np.array_equal(np.asarray(a), np.asarray(b))
      for a, b in zip(leaves, other_leaves)
    )
    if not same:
      raise UsageError(
        f"--signature {name}={model.ref}: its params differ from those of {first_name} "
        f"({first.ref}); the signatures of one model share one set of weights"
      )
  return first.params


def export(args: argparse.Namespace, progress: Progress) -> int:
  from jax2tf.deploy import signature  # pylint: disable=import-outside-toplevel
  from jax2tf.lite.signatures import to_tflite_signatures  # pylint: disable=import-outside-toplevel

  _check_arguments(args)
  refs = parse(args.signature)
  described = ", ".join(f"{name}={ref}" for name, ref in refs.items())
  progress(f"loading {described}")
  models = {name: model_ref.load(ref, args.checkpoint) for name, ref in refs.items()}
  params = _shared_params(models)
  poly = {name: export_cmd.polymorphic_shapes(args, m) for name, m in models.items()}
  export_cmd.prepare_out(args)
  progress(f"converting to tflite ({len(models)} signatures) and writing {args.out}")
  t0 = time.perf_counter()
  try:
    to_tflite_signatures(
      {name: (m.fn, *m.inputs) for name, m in models.items()},
      params=params,
      polymorphic_shapes={name: p for name, p in poly.items() if p is not None},
      verify=False,  # the check below runs every signature, at several sizes
      path=args.out,
    )
  except (FileExistsError, FileNotFoundError) as e:
    raise UsageError(f"--out: {e}") from e
  except NotImplementedError as e:  # a refusal: names the signature, primitive and remedy
    raise ConversionRefused(f"{described} do not convert to tflite: {e}") from e
  convert_s = time.perf_counter() - t0
  default_rtol, default_atol = export_cmd.DEFAULT_TOLERANCE["tflite"]
  rtol = default_rtol if args.rtol is None else args.rtol
  atol = default_atol if args.atol is None else args.atol
  checked: dict = {"sets": {}, "notes": [], "rtol": rtol, "atol": atol, "load_s": None}
  for name, m in models.items():
    progress(f"checking signature {name} on LiteRT against jax.jit")
    sets, notes = input_sets.input_sets(m.inputs, poly[name])
    reference = verification.jax_reference(m.jax_fun(), sets)
    names = signature.input_names(m.fn, len(m.inputs), m.params is not None)
    ran = verification.run_tflite(args.out, sets, signature=name, input_names=names)
    result = verification.check(ran, reference, rtol, atol)
    checked["sets"].update({f"{name}: {k}": v for k, v in result["sets"].items()})
    checked["notes"] += [f"{name}: {n}" for n in notes]
    checked["load_s"] = checked["load_s"] or result["load_s"]
  checked["ok"] = all(e["ok"] for e in checked["sets"].values())
  progress("inspecting the artifact")
  report = {
    "model": described,
    "target": "tflite",
    "path": os.path.abspath(args.out),
    "serialization": f"route 'litert', signatures {', '.join(models)}",
    "polymorphic_shapes": {k: list(v) for k, v in poly.items() if v} or None,
    "times": {"convert_s": convert_s, "write_s": 0.0},
    "verification": checked,
    "artifact": inspect_cmd.inspect(args.out),
    "versions": export_cmd.versions(),
  }
  progress(f"writing {args.out}.report.md and .report.json")
  export_report.write(report, args.out)
  return export_report.show(report, args.json)
