"""The version matrix: export with both JAX lanes, then run every artifact on
each TensorFlow, LiteRT and TF.js release in a throwaway environment.

  .venv/bin/python -m tools.compat.run [--tf 2.17 ...] [--litert 2.3.0 ...] [--tfjs 4.22.0 ...]

Downloads wheels and npm packages; each environment is deleted after use.
Writes docs/compatibility.json and regenerates docs/compatibility.md from it
(tools/compat/render.py). Prints one line per cell as it goes.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tools.compat import render

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tools", "compat")
TF_RELEASES = ("2.17", "2.18", "2.19", "2.20", "2.21")
# The last patch of each minor release of the past year (`pip index versions ai-edge-litert`).
LITERT_RELEASES = ("1.4.0", "2.0.3", "2.1.6", "2.2.0", "2.3.0")
# The latest minors of TF.js 4 that projects pin (package.json pins 4.22.0).
TFJS_RELEASES = ("4.17.0", "4.20.0", "4.22.0")
# Every TF release above has wheels for Python 3.11 (2.17-2.19 stop at 3.12).
CONSUMER_PYTHON = os.environ.get("COMPAT_CONSUMER_PYTHON", "python3.11")
LANES = {
  # lane: (producer interpreter, also export .tflite and TF.js models)
  "py311": (os.path.join(ROOT, ".venv", "bin", "python"), True),
  "py312": (os.path.join(ROOT, ".venv312", "bin", "python"), False),
}
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)


def stream(cmd, on_line, cwd=ROOT, env=ENV) -> tuple[int, list[str]]:
  """Run cmd, handing each stdout line to on_line; (exit status, the last
  lines of output, to explain a crash)."""
  tail: list[str] = []
  proc = subprocess.Popen(
    cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
  )
  assert proc.stdout is not None
  for line in proc.stdout:
    on_line(line.rstrip("\n"))
    tail = (tail + [line.rstrip("\n")])[-15:]
  return proc.wait(), tail


def produce(work, lanes) -> dict:
  """Exports with each lane; {lane: manifest}."""
  manifests = {}
  for lane, (python, deploy) in lanes.items():
    if not os.path.exists(python):
      sys.exit(f"no producer for lane {lane}: {python} is missing (make install / make test-py312)")
    cmd = [python, "-m", "tools.compat.produce", work, lane] + (["--deploy"] if deploy else [])
    shown = ("producer", "  exported", "  NOT EXPORTED")
    rc, tail = stream(cmd, lambda line: line.startswith(shown) and print(line, flush=True))
    if rc:
      sys.exit(f"producer {lane} failed:\n" + "\n".join(tail))
    with open(os.path.join(work, lane, "manifest.json")) as f:
      manifests[lane] = json.load(f)
  return manifests


class Collector:
  """The RESULT lines of the consumers, printed one short line per cell."""

  def __init__(self):
    self.results: list[dict] = []
    self.consumers: list[dict] = []

  def line(self, line: str) -> None:
    if line.startswith("RESULT "):
      r = json.loads(line[len("RESULT ") :])
      self.results.append(r)
      err = "" if r["status"] != "pass" else f" (max err {r['max_err']:.2g})"
      why = f": {r['reason']}" if r["reason"] else ""
      print(
        f"  {r['consumer']} {r['version']}  {r['artifact']}  {r['status']}{err}{why}", flush=True
      )
    elif line.startswith("consumer "):
      print(line, flush=True)

  def fail_rest(self, consumer: dict, artifact_ids, reason: str, since: int) -> None:
    """A failing cell for each artifact that a consumer which never ran, or
    crashed, reported nothing on (after results[since])."""
    seen = {r["artifact"] for r in self.results[since:] if r["consumer"] == consumer["consumer"]}
    for a in artifact_ids:
      if a not in seen:
        record = {**consumer, "artifact": a, "status": "fail", "reason": reason, "max_err": None}
        self.line("RESULT " + json.dumps(record))


def artifact_ids(manifests, kind):
  return [
    a["id"] for m in manifests.values() for a in m["artifacts"] if a["kind"] == kind and "io" in a
  ]


def python_venv(work, name, requirements, collector, consumer, ids) -> str | None:
  venv = os.path.join(work, name)
  print(f"installing {' '.join(requirements)} into {venv}", flush=True)
  made = subprocess.run([CONSUMER_PYTHON, "-m", "venv", venv], capture_output=True, text=True)
  pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", *requirements]
  installed = made.returncode == 0 and subprocess.run(pip, capture_output=True, text=True)
  if not installed or installed.returncode:
    why = (installed.stderr if installed else made.stderr).strip().splitlines()[-1:]
    collector.fail_rest(consumer, ids, "install failed: " + " ".join(why), len(collector.results))
    shutil.rmtree(venv, ignore_errors=True)
    return None
  return venv


# consumer: (artifact kind, the pip requirement for a release, the script)
PYTHON_CONSUMERS = {
  "tensorflow": ("savedmodel", "tensorflow-cpu=={}.*", "consume_tf.py"),
  "litert": ("tflite", "ai-edge-litert=={}", "consume_litert.py"),
}


def consume_python(work, collector, manifests, name, release):
  kind, requirement, script = PYTHON_CONSUMERS[name]
  consumer = {"consumer": name, "version": release}
  ids = artifact_ids(manifests, kind)
  venv = python_venv(
    work, f"venv-{name}{release}", [requirement.format(release)], collector, consumer, ids
  )
  if venv is None:
    return
  since = len(collector.results)
  try:
    cmd = [os.path.join(venv, "bin", "python"), os.path.join(HERE, script), work]
    env = dict(ENV, PYTHONPATH=HERE)  # compare.py only, never this checkout's jax2tf
    rc, tail = stream(cmd, collector.line, cwd=work, env=env)
    if rc:
      why = f"consumer exited with {rc}: " + " | ".join(tail[-3:])
      collector.fail_rest(consumer, ids, why, since)
  finally:
    shutil.rmtree(venv, ignore_errors=True)


def consume_tfjs(work, collector, manifests, version):
  ids = artifact_ids(manifests, "tfjs")
  folder = os.path.join(work, f"tfjs-{version}")
  os.makedirs(folder)
  with open(os.path.join(folder, "package.json"), "w") as f:
    json.dump({"private": True}, f)
  packages = [f"@tensorflow/tfjs@{version}", f"@tensorflow/tfjs-backend-wasm@{version}"]
  print(f"installing {' '.join(packages)} into {folder}", flush=True)
  since = len(collector.results)

  def fail_rest(reason):
    for backend in ("cpu", "wasm"):
      consumer = {"consumer": f"tfjs-{backend}", "version": version}
      collector.fail_rest(consumer, ids, reason, since)

  try:
    npm = subprocess.run(
      ["npm", "install", "--no-audit", "--no-fund", "--silent", *packages],
      cwd=folder,
      capture_output=True,
      text=True,
    )
    if npm.returncode:
      fail_rest("npm install failed: " + npm.stderr.strip()[-200:])
      return
    python = LANES["py311"][0]
    cmd = [python, "-m", "tools.compat.consume_tfjs", work, folder]
    rc, tail = stream(cmd, collector.line)
    if rc:
      fail_rest(f"consumer exited with {rc}: " + " | ".join(tail[-3:]))
  finally:
    shutil.rmtree(folder, ignore_errors=True)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--tf", nargs="*", default=TF_RELEASES)
  parser.add_argument("--litert", nargs="*", default=LITERT_RELEASES)
  parser.add_argument("--tfjs", nargs="*", default=TFJS_RELEASES)
  parser.add_argument("--out", default=os.path.join(ROOT, "docs", "compatibility.json"))
  args = parser.parse_args()
  work = tempfile.mkdtemp(prefix="jax2tf-compat-")
  print(f"working in {work}", flush=True)
  collector = Collector()
  try:
    manifests = produce(work, LANES)
    for name, releases in (("tensorflow", args.tf), ("litert", args.litert)):
      for release in releases:
        consume_python(work, collector, manifests, name, release)
    for release in args.tfjs:
      consume_tfjs(work, collector, manifests, release)
  finally:
    shutil.rmtree(work, ignore_errors=True)
  matrix = {
    "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    "producers": {lane: m["versions"] for lane, m in manifests.items()},
    "artifacts": [
      {k: v for k, v in a.items() if k not in ("path", "io", "input_names")}
      for m in manifests.values()
      for a in m["artifacts"]
    ],
    "results": collector.results,
  }
  os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
  with open(args.out, "w") as f:
    json.dump(matrix, f, indent=1)
    f.write("\n")
  page = os.path.join(os.path.dirname(args.out), "compatibility.md")
  with open(page, "w") as f:
    f.write(render.page(matrix))
  print(f"wrote {args.out} and {page}")


if __name__ == "__main__":
  main()
