"""The report of `jax2tf export` / `jax2tf verify` as Markdown, and its files
beside the artifact (`PATH.report.md`, `PATH.report.json`)."""

import json
import sys

from jax2tf.cli import render
from jax2tf.deploy import artifacts


def _seconds(s) -> str:
  if s is None:
    return "-"
  return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def _error(e) -> str:
  return "-" if e is None else f"{e:.3g}"


def verification_lines(checked: dict) -> list[str]:
  lines = [
    f"Verdict: **{'PASS' if checked['ok'] else 'FAIL'}** (tolerance: |got - JAX| <= "
    f"{checked['atol']:g} + {checked['rtol']:g} x max|JAX|; NaN and infinities where JAX has "
    "them; integers exactly)",
    "",
    "| input set | output | shape | max abs error | max rel error | ok |",
    "|---|---|---|---|---|---|",
  ]
  for name, entry in checked["sets"].items():
    if "skipped" in entry:
      lines.append(f"| {name} | - | - | - | - | skipped: {entry['skipped']} |")
      continue
    if "outputs" not in entry:
      lines.append(f"| {name} | - | - | - | - | **{entry['problem']}** |")
      continue
    for i, o in enumerate(entry["outputs"]):
      verdict = "yes" if o["ok"] else f"**no: {o.get('problem', '')}**"
      lines.append(
        f"| {name} | output_{i} | {o['dtype']}{o['shape']} | {_error(o['max_abs_error'])} | "
        f"{_error(o['max_rel_error'])} | {verdict} |"
      )
  lines += ["", *[f"- {n}" for n in checked["notes"]]]
  lines += [
    "",
    f"Load: {_seconds(checked['load_s'])}.",
    "",
    "| input set | first call | per call (median) | jax.jit per call | ratio |",
    "|---|---|---|---|---|",
  ]
  for name, entry in checked["sets"].items():
    if "steady_s" not in entry:
      continue
    ratio = entry["steady_s"] / entry["jax_steady_s"] if entry["jax_steady_s"] else float("nan")
    lines.append(
      f"| {name} | {_seconds(entry['first_call_s'])} | {_seconds(entry['steady_s'])} | "
      f"{_seconds(entry['jax_steady_s'])} | {ratio:.2f}x |"
    )
  return lines


def markdown(report: dict) -> str:
  lines = [f"# jax2tf {report.get('command', 'export')}: {report['model']}", ""]
  lines += [
    f"- artifact: `{report['path']}` ({report['target']}, {report['serialization']})",
    f"- polymorphic shapes: {report['polymorphic_shapes'] or 'none'}",
  ]
  if "times" in report:
    t = report["times"]
    lines.append(f"- conversion: {_seconds(t['convert_s'])}, writing: {_seconds(t['write_s'])}")
  lines.append("- versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()))
  lines += ["", "## Verification against jax.jit", ""]
  lines += verification_lines(report["verification"])
  lines += ["", "## The artifact (`jax2tf inspect`)", "", "```text"]
  lines += render.text(report["artifact"]).rstrip("\n").splitlines()
  lines += ["```", ""]
  return "\n".join(lines)


def write(report: dict, path: str) -> None:
  artifacts.write_atomically(f"{path}.report.md", markdown(report).encode())
  artifacts.write_atomically(
    f"{path}.report.json", json.dumps(report, indent=2, default=str).encode()
  )


def show(report: dict, as_json: bool) -> int:
  """Prints `report` (JSON or Markdown) and returns the command's exit
  status: 0 where every output matched, else 1."""
  if as_json:
    sys.stdout.write(json.dumps(report, indent=2, default=str) + "\n")
  else:
    sys.stdout.write(markdown(report))
  return 0 if report["verification"]["ok"] else 1
