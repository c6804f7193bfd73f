"""End-to-end demo: a Flax CNN exported by `jax2tf export` to every target, each
artifact checked in its own runtime against jax.jit.

    python -m jax2tf.demo [--out DIR]

Runs the command line's export of the demo model (`jax2tf.demo_model:cnn`, a
small Flax CNN with fixed-seed parameters and a polymorphic batch) four
times: a SavedModel with native serialization (StableHLO in one
XlaCallModule op) and one with graph serialization (ordinary TF ops), both
run in a TensorFlow process where `import jax` fails; a `.tflite` on the
LiteRT interpreter; a TF.js graph model on TF.js in Node (skipped, saying
why, where Node.js or the npm packages are missing). Each export verifies on
the example batch and on random batches of two more sizes, writes its report
beside the artifact (`*.report.md`, `*.report.json`), and the demo prints a
summary. Exits non-zero if any result differs from JAX.
"""

import argparse
import contextlib
import io
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_OUT = os.path.join("demo_output", "cnn")
MODEL = "jax2tf.demo_model:cnn"
# (name, --target, --serialization, path under --out)
EXPORTS = (
  ("native", "saved_model", "native", "native"),
  ("graph", "saved_model", "graph", "graph"),
  ("tflite", "tflite", None, "cnn.tflite"),
  ("tfjs", "tfjs", None, "tfjs"),
)


def step(i: int, total: int, text: str) -> None:
  print(f"[{i}/{total}] {text}", flush=True)


def tfjs_missing() -> str | None:
  """Why TF.js cannot run here, or None."""
  from jax2tf.tfjs import runtime  # pylint: disable=import-outside-toplevel

  try:
    runtime.node()
    runtime.node_modules()
  except FileNotFoundError as e:
    return str(e)
  return None


def export(target: str, serialization: str | None, path: str) -> tuple[int, dict | None, str]:
  """`jax2tf export MODEL ...` in this process: (exit status, report, stderr)."""
  from jax2tf import cli  # pylint: disable=import-outside-toplevel

  argv = ["export", MODEL, "--target", target, "--out", path, "--overwrite", "--json", "--quiet"]
  if serialization:
    argv += ["--serialization", serialization]
  stdout, stderr = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
    status = cli.main(argv)
  report = json.loads(stdout.getvalue()) if stdout.getvalue().strip() else None
  return status, report, stderr.getvalue().strip()


def describe_artifact(name: str, artifact: dict) -> str:
  if artifact["kind"] == "saved_model":
    modules = artifact["xla_call_modules"]
    if modules:
      m = modules[0]
      return (
        f"{len(modules)} XlaCallModule op; platforms {', '.join(m['platforms'])}, "
        f"calling convention {m['version']}, StableHLO {m['stablehlo_version']}; "
        f"runs on {artifact['tf_releases']['summary']}"
      )
    ops = artifact["ops"]["histogram"]
    top = ", ".join(f"{op} {n}" for op, n in list(ops.items())[:4])
    return f"{sum(ops.values())} TF ops, 0 XlaCallModule, no Xla* op: {top}, ..."
  if artifact["kind"] == "tflite":
    needs = "; ".join(artifact["needs"]) or "builtin operators only"
    return f"{artifact['file_bytes']:,} bytes, {sum(artifact['ops'].values())} operators, {needs}"
  return (
    f"model.json + {len(artifact['shards'])} shard(s), {sum(artifact['ops'].values())} ops, "
    f"{len(artifact['shape_checks'])} shape check(s) in the model"
  )


def print_summary(results: dict, out: str, total_s: float, ok: bool) -> None:
  print()
  print("=== jax2tf demo report ===")
  print(f"Model: {MODEL} (Flax linen CNN, 28x28x1 -> 10 classes), polymorphic batch b")
  for name, r in results.items():
    print(f"--- {name}: {r['path']}")
    if "skipped" in r:
      print(f"  skipped: {r['skipped']}")
      continue
    report = r["report"]
    if report is None:
      print(f"  FAILED (exit {r['status']}): {r['stderr']}")
      continue
    checked = report["verification"]
    print(f"  artifact   : {describe_artifact(name, report['artifact'])}")
    print(f"  runtime    : {_runtime(report)}")
    for set_name, entry in checked["sets"].items():
      (o,) = entry["outputs"]
      ratio = entry["steady_s"] / entry["jax_steady_s"]
      print(
        f"  {set_name:<10} : max abs error {o['max_abs_error']:.2e} (tolerance "
        f"{o['tolerance']:.1e})  per call {entry['steady_s'] * 1e3:.3f} ms = {ratio:.1f}x jax.jit"
        f"  {'ok' if o['ok'] else 'TOO LARGE'}"
      )
    print(f"  report     : {r['path']}.report.md")
  print(f"Artifacts and reports under {out}; total {total_s:.1f} s")
  print("PASS" if ok else "FAIL")


def _runtime(report: dict) -> str:
  kind = report["artifact"]["kind"]
  if kind == "saved_model":
    loaded = report["verification"].get("jax_loaded_by_runtime")
    return (
      "TensorFlow in a process where import jax fails; "
      f"jax modules loaded: {', '.join(loaded) if loaded else 'none'}"
    )
  if kind == "tflite":
    return f"LiteRT interpreter ({report['serialization']})"
  return "TF.js (cpu backend) in Node"


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument(
    "--out", default=DEFAULT_OUT, help=f"folder for the artifacts ({DEFAULT_OUT})"
  )
  args = parser.parse_args(argv)
  total = len(EXPORTS) + 2
  t_start = time.perf_counter()
  step(1, total, f"Loading {MODEL}: a Flax CNN with seed-0 parameters, example batch of 8")
  from jax2tf import demo_model  # pylint: disable=import-outside-toplevel

  demo_model.import_flax_linen()  # says how to install Flax, if it is missing
  results: dict[str, dict] = {}
  ok = True
  for i, (name, target, serialization, sub) in enumerate(EXPORTS, start=2):
    path = os.path.join(args.out, sub)
    flags = f" --serialization {serialization}" if serialization else ""
    step(i, total, f"jax2tf export {MODEL} --target {target}{flags} --out {path}")
    if target == "tfjs" and (missing := tfjs_missing()):
      results[name] = {"path": path, "skipped": missing}
      continue
    status, report, stderr = export(target, serialization, path)
    results[name] = {"path": path, "status": status, "report": report, "stderr": stderr}
    ok = ok and status == 0
  graph = results["graph"].get("report")
  # Graph serialization must not fall back to a StableHLO module.
  ok = ok and graph is not None and not graph["artifact"]["xla_call_modules"]
  step(total, total, "Summary (each export's full report is beside its artifact)")
  print_summary(results, args.out, time.perf_counter() - t_start, ok)
  return 0 if ok else 1


if __name__ == "__main__":
  sys.exit(main())
