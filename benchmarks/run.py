"""Times jax2tf-converted functions against jax.jit.

    python -m benchmarks.run [--quick] [--models a,b] [--suites runtime,...]

Suites (benchmarks/suites/): runtime of every path and the fixed cost of a
call, optimized-HLO evidence for the compute-bound models, conversion cost
and sizes, peak memory of conversion, threefry against rbg, call_tf
overheads, LiteRT against Keras -> TFLite, TF.js in Node and Chromium (with
LiteRT.js beside it), SavedModels against JAX's own jax2tf (upstream), the
native module's time per call against it
(native_speed), the graph paths against the models' Keras twins in TF
(keras_twins) and what each extra adds to an install (install). The numbers
are reported, never asserted.

A full run over everything writes benchmarks/results/latest.json,
docs/benchmarks.md and docs/benchmarks/*.png. A quick run (CI's smoke test)
or a filtered one writes benchmarks/results/{quick,partial}.{json,md} and
plots beside them, so the committed report only changes on purpose.
"""

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import resource
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmarks import models, plots, report, timing, workloads  # noqa: E402
from benchmarks.suites import (  # noqa: E402
  call_tf,
  conversion,
  hlo,
  install,
  keras_twins,
  memory,
  native_speed,
  prng,
  runtime,
  tfjs,
  tflite,
  upstream,
)
from benchmarks.workloads import compute_bound  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
SUITES = (
  "runtime",
  "hlo",
  "conversion",
  "memory",
  "prng",
  "call_tf",
  "tflite",
  "tfjs",
  "upstream",
  "native_speed",
  "keras_twins",
  "install",
)


def environment() -> dict:
  return {
      "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
      "platform": platform.platform(),
      "machine": platform.machine(),
      "processor": platform.processor() or "unknown",
      "cpu_count": os.cpu_count(),
      "python": platform.python_version(),
      "jax": jax.__version__,
      "jaxlib": importlib.metadata.version("jaxlib"),
      "tensorflow": tf.__version__,
      "jax_backend": jax.default_backend(),
  }


def _machine_cpu_seconds() -> float | None:
  """CPU seconds that every process on the machine has used since boot
  (Linux's /proc/stat; None elsewhere)."""
  try:
    with open("/proc/stat") as f:
      fields = [int(v) for v in f.readline().split()[1:]]
  except (OSError, ValueError):
    return None
  user, nice, system, _idle, _iowait, irq, softirq = fields[:7]
  return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
  """CPU seconds of this process and of the children it has waited for
  (the suites' processes, Node and Chromium among them)."""
  total = 0.0
  for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
    usage = resource.getrusage(who)
    total += usage.ru_utime + usage.ru_stime
  return total


class OtherLoad:
  """The CPU time that processes outside the run used while it ran: what
  says whether its absolute times come from a quiet machine."""

  def __init__(self):
    self.machine, self.own = _machine_cpu_seconds(), _own_cpu_seconds()

  def seconds(self) -> float | None:
    machine = _machine_cpu_seconds()
    if machine is None or self.machine is None:
      return None
    return max(0.0, (machine - self.machine) - (_own_cpu_seconds() - self.own))


def run(suites, chosen, quick: bool, cfg) -> dict:
  res = {"mode": "quick" if quick else "full", "settings": vars(cfg),
         "environment": environment(), "suites": list(suites)}
  if "runtime" in suites:
    res["runtime"] = [runtime.measure_workload(w, cfg) for w in chosen]
    res["overhead"] = runtime.measure_overhead(cfg)
  if "hlo" in suites:
    res["hlo"] = [hlo.measure_workload(w) for w in chosen if compute_bound(w.name)]
  if "conversion" in suites:
    conversion.warm_up()
    res["conversion"] = [conversion.measure_workload(w, cfg) for w in chosen
                         if w.kind == "model"]
  if "memory" in suites:
    names = [w.name for w in chosen if w.kind == "model"]
    # The largest model of the run: ResNet-50 in a full run.
    res["memory"] = memory.measure(names[-1]) if names else {}
  if "prng" in suites:
    res["prng"] = prng.measure(cfg)
  if "call_tf" in suites:
    res["call_tf"] = call_tf.measure(quick)
  if "tflite" in suites:
    res["tflite"] = tflite.measure({w.name for w in chosen}, cfg)
  if "tfjs" in suites:
    res["tfjs"] = tfjs.measure({w.name for w in chosen}, cfg)
  if "upstream" in suites:
    res["upstream"] = upstream.run(quick)
  if "native_speed" in suites:
    res["native_speed"] = native_speed.run(quick)
  if "keras_twins" in suites:
    res["keras_twins"] = keras_twins.measure({w.name.split("@")[0] for w in chosen}, quick)
  if "install" in suites:
    res["install"] = install.measure()
  return res


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description="jax2tf benchmarks")
  parser.add_argument("--quick", action="store_true",
                      help="a smoke test: three models, few samples, every path and suite")
  parser.add_argument("--models", help="comma-separated names from benchmarks/models")
  parser.add_argument("--suites", help=f"comma-separated subset of {','.join(SUITES)}")
  parser.add_argument("--no-write", action="store_true", help="print only")
  parser.add_argument("--render", metavar="JSON",
                      help="measure nothing; redraw the report and plots of a saved run")
  args = parser.parse_args(argv)
  if args.render:
    with open(args.render) as f:
      res = json.load(f)
    complete = os.path.basename(args.render) == "latest.json"
    write(res, "latest" if complete else os.path.basename(args.render)[:-5], complete)
    return 0
  names = args.models.split(",") if args.models else None
  suites = args.suites.split(",") if args.suites else list(SUITES)
  unknown = [s for s in suites if s not in SUITES]
  if unknown:
    parser.error(f"unknown suites {unknown}; choose from {SUITES}")
  unknown = [n for n in names or () if n not in models.REGISTRY]
  if unknown:
    parser.error(f"unknown models {unknown}; the model set is {','.join(models.REGISTRY)}")
  cfg = timing.QUICK if args.quick else timing.FULL
  chosen = workloads.select(names, quick=args.quick)

  t0, others = time.perf_counter(), OtherLoad()
  res = run(suites, chosen, args.quick, cfg)
  res["total_seconds"] = time.perf_counter() - t0
  res["other_cpu_seconds"] = others.seconds()

  complete = not args.quick and names is None and set(suites) == set(SUITES)
  print(report.text(res))
  if not args.no_write:
    write(res, "latest" if complete else ("quick" if args.quick else "partial"), complete)
  print(f"total {res['total_seconds']:.0f} s")
  return 0


def write(res, stem: str, complete: bool) -> None:
  json_path = os.path.join(RESULTS, f"{stem}.json")
  md_path = os.path.join(ROOT, "docs", "benchmarks.md") if complete else \
      os.path.join(RESULTS, f"{stem}.md")
  png_dir = os.path.join(ROOT, "docs", "benchmarks") if complete else \
      os.path.join(RESULTS, stem)
  os.makedirs(RESULTS, exist_ok=True)
  with open(json_path, "w") as f:
    json.dump(res, f, indent=1)
  figures = plots.write_all(res, png_dir)
  with open(md_path, "w") as f:
    f.write(report.markdown(res, json_path=os.path.relpath(json_path, ROOT),
                            figures={k: os.path.relpath(v, os.path.dirname(md_path))
                                     for k, v in figures.items()}))
  print(f"wrote {os.path.relpath(json_path, ROOT)}, {os.path.relpath(md_path, ROOT)} "
        f"and {len(figures)} plots in {os.path.relpath(png_dir, ROOT)}")


if __name__ == "__main__":
  sys.exit(main())
