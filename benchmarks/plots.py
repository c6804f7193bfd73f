"""PNG figures of a run, for the Markdown report (matplotlib, Agg backend)."""

import os

import matplotlib

matplotlib.use("Agg")  # files only; no display on CI or servers
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.paths import PATHS  # noqa: E402
from benchmarks.suites import tflite as tflite_suite  # noqa: E402


def _bars(ax, labels, series: dict, log: bool = False):
  """Grouped bars: one group per label, one bar per series (NaN: no bar)."""
  x = np.arange(len(labels))
  width = 0.8 / max(len(series), 1)
  for i, (name, values) in enumerate(series.items()):
    ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=name)
  ax.set_xticks(x, labels, rotation=35, ha="right", fontsize=8)
  if log:
    ax.set_yscale("log")
  ax.legend(fontsize=7, ncol=2)
  ax.grid(axis="y", alpha=0.3)


def runtime(res, path):
  rows = res["runtime"]
  labels = [r["workload"] for r in rows]
  series = {p.label: [r["seconds"][p.name] / r["seconds"]["jax.jit"]
                      if p.name in r["seconds"] else np.nan for r in rows] for p in PATHS}
  fig, ax = plt.subplots(figsize=(12, 5))
  _bars(ax, labels, series, log=True)
  ax.axhline(1.0, color="black", linewidth=1)
  ax.set_ylabel("time / jax.jit time (log; 1.0 = parity)")
  ax.set_title("Runtime per call against jax.jit (missing bar: the path failed)")
  fig.tight_layout()
  fig.savefig(path, dpi=90)
  plt.close(fig)


def conversion(res, path):
  rows = res["conversion"]
  labels = [r["workload"] for r in rows]
  series = {"jax.jit first call": [r["jax.jit first call"] for r in rows]}
  for lw in ("native", "graph"):
    series[f"{lw}: convert"] = [r["paths"][lw]["convert"] if lw in r["paths"] else np.nan
                                for r in rows]
    series[f"{lw}: first call after load"] = [
        r["paths"][lw]["first call after load"] if lw in r["paths"] else np.nan for r in rows]
  fig, ax = plt.subplots(figsize=(12, 5))
  _bars(ax, labels, series, log=True)
  ax.set_ylabel("seconds (log)")
  ax.set_title("Conversion cost per model")
  fig.tight_layout()
  fig.savefig(path, dpi=90)
  plt.close(fig)


def sizes(res, path):
  rows = res["conversion"]
  labels = [r["workload"] for r in rows]
  fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
  _bars(a1, labels, {lw: [r["paths"][lw]["ops"]["total"] if lw in r["paths"] else np.nan
                          for r in rows] for lw in ("native", "graph")}, log=True)
  a1.set_title("TF graph ops (nested functions included)")
  _bars(a2, labels, {lw: [r["paths"][lw]["sizes"]["saved_model.pb"] / 1024
                          if lw in r["paths"] else np.nan for r in rows]
                     for lw in ("native", "graph")}, log=True)
  a2.set_title("saved_model.pb, KiB")
  fig.tight_layout()
  fig.savefig(path, dpi=90)
  plt.close(fig)


def prng(res, path):
  impls = res["prng"]["impls"]
  names = list(impls)
  fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
  a1.bar(names, [impls[n].get("ops", {}).get("total", np.nan) for n in names],
         color=["tab:blue", "tab:orange"])
  a1.set_title("TF ops, graph serialization")
  kinds = ("jax.jit", "graph", "graph+jit")
  _bars(a2, list(kinds), {n: [impls[n]["seconds"].get(k, np.nan) * 1e3 for k in kinds]
                          for n in names})
  a2.set_title("runtime per call, ms")
  fig.tight_layout()
  fig.savefig(path, dpi=90)
  plt.close(fig)


def tflite(res, path):
  rows = res["tflite"]
  labels = [f"{tflite_suite.label(r)}: {where}" for r in rows for where in r["latency"]]
  ratios = [r["latency"][w]["jax2tf"] / r["latency"][w]["keras"] for r in rows
            for w in r["latency"]]
  fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 1]})
  _bars(a1, labels, {"jax2tf.to_tflite / Keras -> TFLite": ratios})
  a1.axhline(1.0, color="black", linewidth=1)
  a1.axhline(1.1, color="tab:red", linewidth=1, linestyle="--")
  a1.set_title("LiteRT latency ratio (1.1 = goal)")
  _bars(a2, [tflite_suite.label(r) for r in rows],
        {who: [r["bytes"][who] / 1024 for r in rows] for who in ("jax2tf", "keras")})
  a2.set_title("flatbuffer, KiB")
  fig.tight_layout()
  fig.savefig(path, dpi=90)
  plt.close(fig)


FIGURES = {"runtime": runtime, "conversion": conversion, "sizes": sizes, "prng": prng,
           "tflite": tflite}
NEEDS = {"runtime": "runtime", "conversion": "conversion", "sizes": "conversion",
         "prng": "prng", "tflite": "tflite"}


def write_all(res, directory: str) -> dict:
  os.makedirs(directory, exist_ok=True)
  out = {}
  for name, draw in FIGURES.items():
    if res.get(NEEDS[name]):
      out[name] = os.path.join(directory, f"{name}.png")
      draw(res, out[name])
  return out
