"""docs/compatibility.md from the json that run.py writes: the matrix as
measured. Also runs alone, to re-render without re-measuring:
  .venv/bin/python -m tools.compat.render docs/compatibility.json
"""

import collections
import json
import os
import re
import sys

from tools.compat.cases import CASES

# consumer key in the results -> (section title, what the row's second column is)
SECTIONS = {
  "savedmodel": ("SavedModels on TensorFlow", "serialization"),
  "tflite": ("`.tflite` files on LiteRT", "route"),
  "tfjs": ("TF.js graph models on TensorFlow.js in Node", "backend"),
}
FLAVOURS = {
  "graph-xla": "graph, enable_xla=True",
  "graph-no_xla": "graph, enable_xla=False",
  "tflite-graph": "graph",
  "tflite-native": "native",
}


def _release(version: str) -> tuple[int, ...]:
  return tuple(int(p) for p in version.split(".")[:2] if p.isdigit())


def _flavour(name: str) -> str:
  if name.startswith("native-"):
    return f"native, target_tf_version={name.split('-', 1)[1]}"
  return FLAVOURS.get(name, name)


def _expected_failure(flavour: str, consumer_version: str) -> bool:
  """A module exported for a newer release than the consumer: not claimed to load."""
  return flavour.startswith("native-") and _release(flavour.split("-", 1)[1]) > _release(
    consumer_version
  )


class Notes:
  """Numbered failure reasons, each with the rows, consumers and functions it
  explains."""

  def __init__(self):
    self.numbers: dict[str, int] = {}
    self.where: dict[str, dict[str, dict]] = {}

  def ref(self, reason: str, row: str, case: str, consumer: str | None = None) -> str:
    n = self.numbers.setdefault(reason, len(self.numbers) + 1)
    where = self.where.setdefault(reason, {"in": {}, "on": {}, "functions": {}})
    where["in"][row] = where["functions"][case] = None
    if consumer:
      where["on"][consumer] = None
    return f"[{n}]"

  def lines(self) -> list[str]:
    out = []
    for reason, n in self.numbers.items():
      parts = [f"{k}: {', '.join(v)}" for k, v in self.where[reason].items() if v]
      # Paths of the machine that measured say nothing to a reader.
      shown = re.sub(r"/\S*/(tools/compat/)", r"\1", reason).replace("|", "/")
      out += [f"{n}. {shown}  ", f"   ({'; '.join(parts)})"]
    return out


def _cell(results, exported, not_exported, flavour, column, notes, row_name):
  consumer_version = column.split()[-1]
  passed = [r for r in results if r["status"] == "pass"]
  failed = [r for r in results if r["status"] != "pass"]
  text = (
    f"pass {len(passed)}/{len(exported)}" if not failed else f"FAIL {len(passed)}/{len(exported)}"
  )
  errs = [r["max_err"] for r in passed if r["max_err"] is not None]
  if errs and not failed:
    text += f" (err ≤ {max(errs):.1g})"
  refs = []
  for r in failed:
    case = r["artifact"].rsplit("/", 1)[1]
    refs.append(notes.ref(r["reason"], row_name, case, column))
  for a in not_exported:
    refs.append(notes.ref("not exported: " + a["export_error"], row_name, a["case"]))
  if not_exported:
    text += f", {len(not_exported)} not exported"
  if failed and _expected_failure(flavour, consumer_version):
    text += " (newer target)"
  if refs:
    text += " " + " ".join(sorted(set(refs), key=lambda s: int(s[1:-1])))
  return text


def _columns(results, consumer):
  """The consumer versions measured, oldest first, with their Python."""
  seen = {r["version"]: r.get("python", "") for r in results if r["consumer"] == consumer}
  return sorted(seen.items(), key=lambda kv: tuple(int(p) for p in kv[0].split(".") if p.isdigit()))


def _table(matrix, kind, consumers, notes) -> list[str]:
  artifacts = [a for a in matrix["artifacts"] if a["kind"] == kind]
  rows = list(dict.fromkeys((a["lane"], a["flavour"]) for a in artifacts))
  # one column per (consumer, version)
  columns = [(c, v, py) for c in consumers for v, py in _columns(matrix["results"], c)]
  if not rows or not columns:
    return ["Not measured in this run.", ""]
  label = {"tensorflow": "TF", "litert": "LiteRT", "tfjs-cpu": "cpu", "tfjs-wasm": "wasm"}
  names = [f"{label.get(c, c)} {v}" for c, v, _ in columns]
  head = ["exported with", SECTIONS[kind][1]] + names
  lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
  by_cell = collections.defaultdict(list)
  for r in matrix["results"]:
    by_cell[(r["consumer"], r["version"], r["artifact"].rsplit("/", 1)[0])].append(r)
  for lane, flavour in rows:
    mine = [a for a in artifacts if a["lane"] == lane and a["flavour"] == flavour]
    exported = [a for a in mine if "export_error" not in a]
    missing = [a for a in mine if "export_error" in a]
    producer = matrix["producers"][lane]
    row_name = f"{lane} {flavour}"
    cells = [
      _cell(by_cell[(c, v, f"{lane}/{flavour}")], exported, missing, flavour, name, notes, row_name)
      for (c, v, _), name in zip(columns, names)
    ]
    who = f"Python {producer['python']}, jax {producer['jax']}"
    lines.append("| " + " | ".join([who, _flavour(flavour)] + cells) + " |")
  pythons = sorted({py for _, _, py in columns if py})
  lines += ["", f"Consumers ran on Python {', '.join(pythons)}." if pythons else ""]
  return lines + [""]


def page(matrix: dict, upstream: dict | None = None) -> str:
  """The page; upstream: docs/upstream_suite.json, read from docs/ when not
  given (run.py renders the page too, and keeps the section)."""
  upstream = upstream if upstream is not None else upstream_results("docs")
  notes = Notes()
  out = [
    "# Compatibility matrix",
    "",
    "<!-- Generated by `make compat` (tools/compat/run.py, rendered by tools/compat/render.py",
    "     from docs/compatibility.json). Do not edit by hand. -->",
    "",
    f"Measured on {matrix['date']} by `make compat`: each producer below exports the same",
    f"{len(CASES)} functions ({', '.join(f'`{c.name}`' for c in CASES)}; see",
    "`tools/compat/cases.py`: dense layers, a convolution with pooling and a polymorphic",
    "batch, two symbolic dimensions, ops JAX writes as StableHLO composites and a",
    "LAPACK custom call (these two as SavedModels only), a gradient, a scatter-add with integer outputs, a",
    "while loop with a data-dependent trip count), writes their inputs and JAX's outputs",
    "beside each artifact, and every consumer release, installed fresh in an environment",
    "of its own, loads each artifact, runs it and compares: integers exactly, floats",
    "within rtol 1e-4, atol 1e-5. Polymorphic artifacts run at several shapes.",
    "",
    "A cell reads `pass k/n` (with the largest absolute error seen) when all n functions",
    "load and match, else `FAIL k/n` with the numbered reasons below; `m not exported`",
    "counts functions whose export itself stopped (reason below). `(newer target)`",
    "marks a module exported for a newer TensorFlow than the one running it: such a",
    "module is not meant to load there (`docs/native_serialization.md` says what",
    "`target_tf_version` changes in the module).",
    "",
    "`make compat` measures it again (several GB of downloads, about 25 minutes on",
    "two cores; each environment is deleted after use) and rewrites this page and",
    "`docs/compatibility.json`; `.venv/bin/python -m tools.compat.run --tf 2.17",
    "--litert --tfjs` measures a subset, and `.venv/bin/python -m tools.compat.render`",
    "re-renders the page from the json. The TensorFlow and LiteRT consumers run on",
    "Python 3.11, which every release here has wheels for (TensorFlow 2.17-2.19",
    "have none for Python 3.13); TF.js runs in Node through `jax2tf.tfjs` with each release",
    "installed by npm in a folder of its own.",
    "",
    "## Producers",
    "",
    "| lane | Python | jax | jaxlib | TensorFlow |",
    "| --- | --- | --- | --- | --- |",
  ]
  for lane, v in matrix["producers"].items():
    out.append(f"| {lane} | {v['python']} | {v['jax']} | {v['jaxlib']} | {v['tensorflow']} |")
  out.append("")
  consumers = {
    "savedmodel": ["tensorflow"],
    "tflite": ["litert"],
    "tfjs": ["tfjs-cpu", "tfjs-wasm"],
  }
  for kind, names in consumers.items():
    out += [f"## {SECTIONS[kind][0]}", ""] + _table(matrix, kind, names, notes)
  out += ["## Failure reasons", ""]
  if not notes.numbers:
    out.append("None: every cell passed.")
  out += notes.lines()
  if upstream:
    out += [""] + upstream_section(upstream)
  return "\n".join(out).rstrip() + "\n"


def upstream_results(docs: str) -> dict | None:
  path = os.path.join(docs, "upstream_suite.json")
  if not os.path.exists(path):
    return None
  with open(path) as f:
    return json.load(f)


def _md(text: str) -> str:
  """Text for a table cell, read literally (error messages hold `*`, `_`, `<`)."""
  return re.sub(r"([\\`*_<>\[\]|])", r"\\\1", text.replace("\n", " "))


def upstream_section(run: dict) -> list[str]:
  """Upstream's own test suite run with JAX's module and with this package
  (tools/upstream_suite, `make upstream-suite`)."""
  files = ", ".join(f"`{f}`" for f in run["files"])
  commit = (
    f" (this package at commit {run['commit'][:12]}{run['commit'][40:]})" if run["commit"] else ""
  )
  n = run["sample"]
  sampling = (
    f"of `primitives_test.py`, one test in {n} runs (every {n}th of the sorted test ids: "
    "the same tests in both runs)"
    if n > 1
    else "all of `primitives_test.py`"
  )
  out = [
    "## Upstream's own test suite",
    "",
    "<!-- Rendered from docs/upstream_suite.json, which `make upstream-suite` writes",
    "     (tools/upstream_suite). Do not edit by hand. -->",
    "",
    f"JAX's own tests of jax2tf, `jax/experimental/jax2tf/tests/` at tag `{run['tag']}`,",
    "run unchanged twice: with JAX's module, and with this package in its place",
    "(`jax2tf.install()`); every test checks that it reaches the module of its run.",
    f"The files: {files}.",
    f"On CPU with 8 virtual devices, without 64-bit types; {sampling}.",
    f"Measured on {run['date']} with Python {run['python']}, jax {run['jax']}, TensorFlow",
    f"{run['tensorflow']}{commit}.",
    "",
    "| `jax.experimental.jax2tf` | collected | passed | failed | errored | skipped |",
    "| --- | --- | --- | --- | --- | --- |",
  ]
  names = {"upstream": "JAX's module", "ours": "this package"}
  for config, c in run["counts"].items():
    cells = [str(c[k]) for k in ("collected", "passed", "failed", "errored", "skipped")]
    out.append("| " + " | ".join([names.get(config, config)] + cells) + " |")
  out += [
    "",
    f"{len(run['exceptions'])} tests pass with JAX's module and fail with this package as",
    "known exceptions, each with its reason (`tools/upstream_suite/exceptions.py`): either",
    "the test looks at how upstream does something that this package does another way, or",
    "it matches the wording of upstream's error where this package raises an exception of",
    "the same class that says more.",
    "",
    "| test | category | reason |",
    "| --- | --- | --- |",
  ]
  for e in run["exceptions"]:
    out.append(f"| `{e['test']}` | {e['category']} | {e['reason'].replace('|', '/')} |")
  out.append("")
  if run["regressions"]:
    out += [
      f"**Regressions: {len(run['regressions'])}** tests pass with JAX's module and fail with",
      "this package, and are no known exception:",
      "",
      "| test | with this package |",
      "| --- | --- |",
    ]
    out += [f"| `{r['test']}` | {r['outcome']}: {_md(r['message'])} |" for r in run["regressions"]]
  else:
    out.append("Regressions (any other test that passes with JAX's module only): none.")
  if run["only_ours"]:
    tests = ", ".join(f"`{t['test']}` ({t['outcome']})" for t in run["only_ours"])
    out += [
      "",
      f"{len(run['only_ours'])} tests pass with this package and not with JAX's module (its",
      f"outcome in brackets): {tests}.",
    ]
  out += [
    "",
    f"{len(run['fail_both'])} tests fail in both runs.",
    "",
    "`make upstream-suite` runs the suite again (about 15 minutes on two cores), rewrites",
    "docs/upstream_suite.json and this section, and fails on a regression. It downloads the",
    "tag's sources from GitHub, or takes them from a clone of JAX:",
    '`make upstream-suite UPSTREAM_SUITE_ARGS="--jax-checkout DIR"`;',
    "`.venv/bin/python -m tools.upstream_suite -k EXPR` runs a selection without writing.",
  ]
  return out


def main(argv=None):
  argv = sys.argv[1:] if argv is None else argv
  path = argv[0] if argv else os.path.join("docs", "compatibility.json")
  with open(path) as f:
    matrix = json.load(f)
  docs = os.path.dirname(path)
  with open(os.path.join(docs, "compatibility.md"), "w") as f:
    f.write(page(matrix, upstream_results(docs)))


if __name__ == "__main__":
  main()
