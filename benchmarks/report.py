"""Renders a run's results as text (stdout) and as a Markdown report."""

from benchmarks import targets
from benchmarks.paths import PATHS
from benchmarks.suites import keras_twins as twins_suite
from benchmarks.suites import tfjs as tfjs_suite
from benchmarks.suites import tflite as tflite_suite
from benchmarks.workloads import compute_bound


def note_small(res) -> str:
  o = res.get("overhead", {}).get("seconds", {})
  costs = (f" (in this run a bare `tf.function` call cost {t(o[targets.BARE])}, a bare "
           f"`jax.jit` call {t(o['jax.jit(jnp.sin)'])})" if o else "")
  return ("The model set's default sizes are tiny (microseconds to a millisecond "
          "of work in jax.jit), so their ratios say little: they measure the fixed "
          f"cost of a TF call{costs}, not the compiled code; only the rows marked "
          "*compute-bound* compare code generation.")


def t(s) -> str:
  if s is None:
    return "-"
  if s < 1e-3:
    return f"{s * 1e6:.1f} µs"
  if s < 1:
    return f"{s * 1e3:.2f} ms"
  return f"{s:.2f} s"


def b(n: int) -> str:
  return f"{n / 2**20:.2f} MiB" if n >= 2**20 else f"{n / 1024:.1f} KiB"


def _cell(text: str) -> str:
  return str(text).replace("|", "\\|").replace("\n", " ")


_ONE_THREAD = twins_suite.JAX_ONE_THREAD


def runtime_table(res):
  header = ["workload", "jax.jit", "jax.jit, one thread"] + [p.label for p in PATHS]
  rows = []
  for r in res.get("runtime", []):
    base = r["seconds"]["jax.jit"]
    label = r["label"] + (" *compute-bound*" if compute_bound(r["workload"]) else "")
    row = [label, t(base)]
    for name in (_ONE_THREAD, *(p.name for p in PATHS)):
      row.append(f"{r['seconds'][name] / base:.2f}x" if name in r["seconds"]
                 else f"error: {r['errors'][name]}" if name in r["errors"]
                 else "-" if name == _ONE_THREAD else "error: ?")
    rows.append(row)
  return header, rows


def runtime_abs_table(res):
  header = ["workload", "jax.jit", "jax.jit, one thread"] + [p.label for p in PATHS]
  rows = [[r["label"], t(r["seconds"]["jax.jit"])] +
          [t(r["seconds"].get(name)) for name in (_ONE_THREAD, *(p.name for p in PATHS))]
          for r in res.get("runtime", [])]
  return header, rows


def overhead_table(res):
  s = res["overhead"]["seconds"]
  return (["call (float32 scalar sin)", "time", "vs bare tf.function"],
          [[name, t(v), f"{targets.above_bare(res, name) * 1e6:+.0f} µs"]
           for name, v in s.items()])


def hlo_table(res):
  header = ["workload", "compiled by", "fusions", "instructions", "convolutions", "dots",
            "library calls"]
  rows = []
  for h in res.get("hlo", []):
    for who in ("jax.jit", "native+jit", "graph+jit"):
      v = h[who]
      if "error" in v:
        rows.append([h["label"], who, f"error: {v['error']}", "", "", "", ""])
      else:
        calls = ", ".join(f"{k} x{n}" for k, n in v["custom calls"].items()) or "none"
        rows.append([h["label"], who, v["fusions"], v["instructions"], v["convolutions"],
                     v["dots"], calls])
  return header, rows


def conversion_table(res):
  header = ["model", "jax.jit first call"]
  for lw in ("native", "graph"):
    header += [f"{lw}: convert", "ratio", "save", "load", "first call after load"]
  rows = []
  for r in res.get("conversion", []):
    base = r["jax.jit first call"]
    row = [r["workload"], t(base)]
    for lw in ("native", "graph"):
      p = r["paths"].get(lw)
      if p is None:
        row += [f"error: {r['errors'].get(lw, '?')}", "", "", "", ""]
      else:
        row += [t(p["convert"]), f"{p['convert'] / base:.2f}x", t(p["save"]), t(p["load"]),
                t(p["first call after load"])]
    rows.append(row)
  return header, rows


def sizes_table(res):
  header = ["model", "path", "saved_model.pb", "variables", "TF ops", "functions",
            "most frequent ops"]
  rows = []
  for r in res.get("conversion", []):
    for lw, p in r["paths"].items():
      top = ", ".join(f"{op} {n}" for op, n in p["ops"]["top"][:4])
      rows.append([r["workload"], lw, b(p["sizes"]["saved_model.pb"]),
                   b(p["sizes"]["variables"]), p["ops"]["total"], p["ops"]["functions"], top])
  return header, rows


def memory_table(res):
  m = res["memory"]
  rows = []
  for what, label in (("jax", "jax.jit first call"), ("native", "native: convert + save"),
                      ("graph", "graph: convert + save")):
    v = m.get(what, {})
    rows.append([label, f"error: {v['error']}"] if "error" in v else
                [label, f"{v['delta_mib']:.0f} MiB",
                 f"{v['before_mib']:.0f} -> {v['after_mib']:.0f} MiB"])
  return ["work on " + m["model"], "peak RSS increase", "RSS before -> peak during"], rows


def prng_table(res):
  p = res["prng"]
  rows = []
  for impl, v in p["impls"].items():
    ops = v.get("ops", {})
    s = v.get("seconds", {})
    base = s.get("jax.jit")
    rows.append([impl, ops.get("total", "-"),
                 ", ".join(f"{op} {n}" for op, n in ops.get("top", [])[:4]) or "-",
                 t(base)] +
                [(f"{t(s[k])} ({s[k] / base:.2f}x)" if k in s else
                  f"error: {v['errors'].get(k, '?')}") for k in ("graph", "graph+jit")])
  return ["impl", "TF ops (graph)", "most frequent", "jax.jit", "graph", "graph, jit_compile"], rows


def call_tf_table(res):
  c = res["call_tf"]
  if "not_measured" in c:
    return None
  return (["what", "jax2tf", "baseline", "ratio", "note"],
          [[r["what"], t(r.get("jax2tf_s")), t(r.get("baseline_s")),
            "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x", r.get("note", "")]
           for r in c["rows"]])


def tflite_table(res):
  header = ["model", "batch, threads", "jax2tf", "Keras", "ratio"]
  rows = []
  for r in res["tflite"]:
    for where, t_ in r["latency"].items():
      rows.append([tflite_suite.label(r), where, t(t_["jax2tf"]), t(t_["keras"]),
                   f"{t_['jax2tf'] / t_['keras']:.2f}x"])
    size = r["bytes"]
    rows.append([tflite_suite.label(r), "flatbuffer size", b(size["jax2tf"]), b(size["keras"]),
                 f"{size['jax2tf'] / size['keras']:.2f}x"])
  return header, rows


def tfjs_table(res):
  header = ["model", "jax.jit", "TF (no-XLA graph)", "TF.js cpu", "TF.js wasm", "Chromium wasm",
            "cpu / jax.jit", "wasm / jax.jit", "Chromium / jax.jit", "model.json + shards"]
  rows = []
  for r in res["tfjs"]:
    s = r["seconds"]
    if "to_tfjs" in r["errors"]:
      rows.append([r["model"], t(s.get("jax.jit")), "-", "refused", "refused", "refused", "-", "-",
                   "-", r["errors"]["to_tfjs"]])
      continue
    keys = ("tfjs_cpu", "tfjs_wasm", "tfjs_chromium_wasm")
    ratios = [f"{s[k] / s['jax.jit']:.0f}x" if k in s else _tfjs_error(r["errors"], k[5:])
              for k in keys]
    size = r["bytes"]
    rows.append([r["model"], t(s["jax.jit"]), t(s["tf_noxla"]), *(t(s.get(k)) for k in keys),
                 *ratios, f"{b(size['model_json'])} + {b(size['shards'])}"])
  return header, rows


def _tfjs_error(errors: dict, key: str) -> str:
  return f"error: {errors[key]}" if key in errors else "-"


def _tfjs_time(seconds: dict, errors: dict, key: str) -> str:
  return t(seconds[f"tfjs_{key}"]) if f"tfjs_{key}" in seconds else _tfjs_error(errors, key)


def _times(ratio: float) -> str:
  return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x"


def litertjs_table(res):
  header = ["model", "jax.jit", "TF.js wasm (to_tfjs)", "LiteRT.js wasm (to_tflite)",
            "LiteRT.js / TF.js", "first run, TF.js", "first run, LiteRT.js", "TF.js / jax.jit",
            "LiteRT.js / jax.jit"]
  rows = []
  for r in res["tfjs"]:
    lite = r.get("litertjs")
    if lite is None:
      continue
    s = r["seconds"]
    key = "chromium_wasm"
    if "error" in lite:
      rows.append([r["model"], t(s.get("jax.jit")), _tfjs_time(s, r["errors"], key),
                   f"refused: {lite['error']}", *["-"] * 5])
      continue
    ratio = tfjs_suite.litertjs_ratio(r)
    ls = lite["seconds"]
    per_jit = [_times(x[f"tfjs_{key}"] / s["jax.jit"]) if f"tfjs_{key}" in x and "jax.jit" in s
               else "-" for x in (s, ls)]
    rows.append([r["model"], t(s.get("jax.jit")), _tfjs_time(s, r["errors"], key),
                 _tfjs_time(ls, lite["errors"], key),
                 "-" if ratio is None else f"{ratio:.2f}x",
                 t(s.get(f"tfjs_{key}_first")), t(ls.get(f"tfjs_{key}_first")), *per_jit])
  return header, rows


def install_table(res):
  inst = res["install"]
  header = ["install", "distributions", "size on disk", "largest"]
  rows = [["`pip install jax2tf` (JAX)", inst["base"]["packages"], b(inst["base"]["bytes"]), "-"]]
  for extra, what in (("cpu", "TensorFlow (CPU)"), ("litert", "LiteRT without TensorFlow")):
    e = inst["extras"].get(extra)
    if e is not None:
      largest = ", ".join(f"{n} {b(size)}" for n, size in e["largest"].items())
      rows.append([f"`[{extra}]` adds: {what}", e["packages"], b(e["bytes"]), largest])
  return header, rows


def tfjs_twin_table(res):
  header = ["model", "where", "jax2tf.to_tfjs", "Keras -> tensorflowjs_converter", "ratio"]
  rows = []
  for r in res["tfjs"]:
    twin = r.get("twin")
    if twin is None or "to_tfjs" in r["errors"]:
      continue
    if "error" in twin:
      rows.append([r["model"], "-", "-", f"error: {twin['error']}", "-"])
      continue
    for key, where in tfjs_suite.WHERE.items():
      ratio = tfjs_suite.twin_ratio(r, key)
      taken = r.get("turns", {}).get(key)
      if taken:
        where = f"{where}, {taken} turn{'' if taken == 1 else 's'}"
      rows.append([r["model"], where, _tfjs_time(r["seconds"], r["errors"], key),
                   _tfjs_time(twin["seconds"], twin["errors"], key),
                   "-" if ratio is None else f"{ratio:.2f}x"])
    size, twin_size = r["bytes"], twin["bytes"]
    ours_bytes = size["model_json"] + size["shards"]
    twin_bytes = twin_size["model_json"] + twin_size["shards"]
    rows.append([r["model"], "model.json + shards", b(ours_bytes), b(twin_bytes),
                 f"{ours_bytes / twin_bytes:.2f}x"])
    ours_ops, twin_ops = sum(r["ops"].values()), sum(twin["ops"].values())
    more = tfjs_suite.more_ops(r)
    rows.append([r["model"], "graph ops" + (f" (more: {more})" if more else ""), ours_ops,
                 twin_ops, f"{ours_ops / max(twin_ops, 1):.2f}x"])
  return header, rows


def upstream_table(res):
  u = res["upstream"]
  header = ["workload"]
  for what in ("graph ops", "export", "load", "first call"):
    header += [f"{what} (ours)", f"{what} (upstream)", "ratio"]
  header.append("first call, ours without the pools' NaN handling")
  rows = []
  for workload, r in u["results"].items():
    row = [workload]
    for key in ("ops", "export_s", "load_s", "first_call_s"):
      fmt = (lambda v: f"{v:.0f}") if key == "ops" else t  # noqa: E731
      row += [fmt(r["ours"][key]), fmt(r["upstream"][key]), f"{r['ratio'][key]:.2f}x"]
    without = r.get("ours_without_pool_nan")
    row.append(f"{t(without['first_call_s'])} "
               f"({r['ratio_ours_without_pool_nan']['first_call_s']:.2f}x)" if without else "")
    rows.append(row)
  return header, rows


def native_speed_table(res):
  u = res["native_speed"]
  header = ["workload", "tf.function"]
  for what in ("per call", "CPU per call", "first call"):
    header += [f"{what} (ours)", f"{what} (upstream)", "ratio"]
  rows = []
  for workload, modes in u["results"].items():
    dims = ", ".join(f"{k} {v}" for k, v in u["sizes"][workload].items())
    for mode, r in modes.items():
      row = [f"{workload} ({dims})", "jit_compile=True" if mode == "jit" else "plain"]
      for key in ("call_s", "cpu_per_call_s", "first_call_s"):
        row += [t(r["ours"][key]), t(r["upstream"][key]), f"{r['ratio'][key]:.2f}x"]
      rows.append(row)
  return header, rows


def keras_twins_table(res):
  paths = twins_suite.ALTERNATIVES
  header = ["model", *(twins_suite.LABELS[p] for p in paths),
            f"graph / Keras twin (goal {targets.GRAPH_OVER_KERAS_TWIN}x)",
            f"graph / faster jax.jit (goal {targets.GRAPH_OVER_JAX_TRANSFORMERS}x, "
            "Transformers)",
            "TF ops: graph / Keras twin"]
  rows = []
  for r in res["keras_twins"]["results"]:
    s, errors, ops = r["seconds"], r["errors"], r["ops"]
    cells = [t(s[p]) if p in s else f"error: {errors.get(p, errors.get('child', '?'))}"
             for p in paths]
    ratios = [f"{s[twins_suite.GRAPH] / s[base]:.2f}x"
              if twins_suite.GRAPH in s and base in s else "-"
              for base in (twins_suite.KERAS, twins_suite.jax_anchor(s))]
    count = [str(ops[p]["total"]) if p in ops else "-"
             for p in (twins_suite.GRAPH, twins_suite.KERAS)]
    rows.append([twins_suite.label(r), *cells, *ratios, " / ".join(count)])
  return header, rows


def target_rows(res):
  rows = []
  for group, checks in targets.evaluate(res).items():
    for c in checks:
      verdict = "-" if c.passed is None else ("PASS" if c.passed else "MISS")
      rows.append([group, c.goal, c.subject, c.value, verdict, c.by, c.why])
  return ["group", "goal", "subject", "measured", "result", "by", "why (evidence)"], rows


def sections(res):
  """(title, intro, (header, rows) or None, figure key or None) in report order."""
  out = []
  out.append(("Targets", "Stated goals, checked against this run (never asserted in "
              "tests). " + note_small(res), target_rows(res), None))
  if "runtime" in res:
    out.append(("Runtime ratio against jax.jit",
                "Median per-call time of each path divided by jax.jit's (lower is "
                "better; below 1.0 the TF path is faster). Parameters are "
                "`tf.Variable`s. At the compute-bound sizes `jax.jit` also runs with its "
                "matrix products on one thread (`xla_cpu_multi_thread_eigen=False`), "
                "which on this 2-core machine may win by 2x or more: the goal of the "
                "path without XLA (graph) divides by the faster of the two, as the "
                "Keras-twin table does; the XLA paths divide by XLA's defaults, which "
                "TF's XLA compiles with too. " + note_small(res), runtime_table(res),
                "runtime"))
    out.append(("Runtime per call (absolute)", "", runtime_abs_table(res), None))
    out.append(("Fixed cost of a call", "A float32 scalar `sin` each way, timed in many "
                "short rounds, each way once per round; time is the median per call, and "
                "the last column the cost above a bare `tf.function` of the same "
                "signature: the median of the differences round by round, which cancel "
                "the drift of the machine's speed (tens of microseconds here between "
                "runs) that a difference of two medians would keep.",
                overhead_table(res), None))
  if res.get("hlo"):
    out.append(("Optimized HLO of the compute-bound models",
                "What each XLA made of the same model after optimization "
                "(TF's from `experimental_get_compiler_ir(stage='optimized_hlo')`, "
                "JAX's from `jax.jit(...).lower(...).compile().as_text()`).",
                hlo_table(res), None))
  if "conversion" in res:
    out.append(("Conversion cost",
                "convert = `jax2tf.convert` + `get_concrete_function` (JAX trace, "
                "lowering, serialization, TF tracing); then `tf.saved_model.save`, "
                "`tf.saved_model.load` and the loaded function's first call (for "
                "native, XLA compiles the module there). Ratio = convert / jax.jit's "
                "first call (trace + lower + compile + run).", conversion_table(res),
                "conversion"))
    out.append(("SavedModel sizes and graph op counts",
                "Ops are the nodes of the concrete function's graph plus those of "
                "every function in its library (control flow bodies, gradients).",
                sizes_table(res), "sizes"))
  if res.get("memory"):
    out.append(("Peak memory of conversion",
                "Each in a fresh child process: the RSS after building the model and "
                "its inputs, then the peak RSS during the work (see Method).",
                memory_table(res), None))
  if "prng" in res:
    p = res["prng"]
    out.append(("PRNG: threefry against rbg in graph serialization",
                f"{p['draws']} draws of shape {tuple(p['shape'])} (normal, uniform, "
                "truncated normal, bernoulli) from split and folded keys, no loops; "
                "ratios against jax.jit with the same implementation.",
                prng_table(res), "prng"))
  if res.get("tflite"):
    out.append(("TFLite: LiteRT latency and size against Keras -> TFLite",
                "`jax2tf.to_tflite` (graph, native and litert routes, dynamic batch, "
                "builtin ops) against the same network written in Keras 3 with the Flax "
                "weights copied (`benchmarks/keras_reference.py`; outputs checked equal) "
                "and converted by TF's TFLite converter; both on the LiteRT interpreter "
                "with its default XNNPack delegate.", tflite_table(res), "tflite"))
  if res.get("tfjs"):
    out.append(("TF.js in Node and Chromium: latency and size",
                "`jax2tf.to_tfjs` (static shapes, default sizes) run by TF.js 4.22 in Node on "
                "the cpu backend (plain JavaScript) and the wasm backend (WebAssembly, SIMD), "
                "and in headless Chromium on the wasm backend; per-call time measured by Node "
                "or the page (outputs read back): after 0.3 s of calls left uncounted, the "
                "median over samples of a call's mean time, each sample a loop of calls "
                "lasting 20 ms (Chromium's clock counts in steps of 0.1 ms) or one call "
                "(`jax2tf/deploy/steady_time.js`), beside `jax.jit` and the same no-XLA "
                "graph in TF (`tf.function`). "
                "TF.js is built for browsers: its Node cpu backend runs every kernel in "
                "JavaScript, so ratios of tens to hundreds are expected; in a browser the "
                "WebGL backend runs on the GPU.", tfjs_table(res), None))
    if any("twin" in r for r in res["tfjs"]):
      out.append(("TF.js against Keras -> tensorflowjs_converter",
                  "The same model written in Keras 3 with the Flax weights copied "
                  "(`benchmarks/keras_reference.py`), exported as a SavedModel (dynamic batch) "
                  "and converted by TF's own `tensorflowjs_converter` 4.22 "
                  "(`benchmarks/tfjs_twin.py`), run on the same backends, the two models "
                  "taking turns, the order reversed each turn, each model's time the "
                  f"median of its turns: at least {tfjs_suite.ROUNDS}, more (up to "
                  f"{tfjs_suite.MAX_ROUNDS}, the count beside the backend) while some "
                  f"model's median is uncertain by more than {tfjs_suite.SETTLED:.0%} "
                  "(its relative standard error, from the spread of its turns; "
                  "ResNet-50's spread by 10% on Node's cpu backend). In Node a turn of "
                  "each is left out first: the first "
                  "model a Node process runs also compiles TF.js's own code. Both are "
                  "checked against `jax.jit` first. Ratio = to_tfjs / twin "
                  "(lower is better). Graph ops leave out Const and Placeholder.",
                  tfjs_twin_table(res), None))
    if any("litertjs" in r for r in res["tfjs"]):
      out.append(("LiteRT.js against TF.js in Chromium",
                  "The same function written by `jax2tf.to_tflite` (default route, static "
                  "shapes) and run by LiteRT.js 2.5 on wasm (XNNPack in WebAssembly; "
                  "`jax2tf.lite.browser`) in the same headless Chromium as TF.js's wasm "
                  "backend, the two taking turns, each checked against `jax.jit` first; "
                  "median per-call time measured by the page, outputs read back. First run "
                  "is the first call after loading (LiteRT.js compiles the model for "
                  "XNNPack before it). Ratio = LiteRT.js / TF.js (lower is better).",
                  litertjs_table(res), None))
  if res.get("upstream"):
    u = res["upstream"]
    out.append(("SavedModels against JAX's own jax2tf",
                "The same function saved with a dynamic batch by this package and by "
                "`jax.experimental.jax2tf` (JAX's module, native serialization), each "
                "export in its own process after the converter has converted a trivial "
                "function and the model is built (imports and the initialisation of "
                "weights are not export time), each SavedModel loaded and "
                "called once "
                f"(batch {u['batch']}) in a fresh process as a server does "
                "(`benchmarks/suites/upstream.py`); medians of "
                f"{u['reps']} alternating repetitions. Keras rows are "
                "`model.export(format=\"tf_saved_model\")` on the JAX backend, which "
                "calls `jax.experimental.jax2tf` itself (this package through "
                "`jax2tf.install()`); the others are models of the set, parameters as "
                "variables. First call includes TF's XLA compiling the module. For a "
                "model with a max pool, a third export leaves out the pools' NaN "
                "handling, which upstream's module does not have; its first call is "
                "the last column.",
                upstream_table(res), None))
  if res.get("native_speed"):
    u = res["native_speed"]
    out.append(("The native module against JAX's own jax2tf",
                "The same model converted with native serialization by this package "
                "and by `jax.experimental.jax2tf` (static shapes, parameters as "
                "variables), both converters in one process, their functions timed "
                "round-robin (`benchmarks/suites/native_speed.py`): the median time "
                "per call after a warm-up (wall clock, and CPU time of all the "
                "process's threads, the steadier of the two on a shared machine), and "
                "the first call, which includes TF's XLA compiling the module; medians "
                f"of {u['reps']} repetitions, each a process of its own, the converters "
                "taking turns to compile first. This package's module computes JAX's "
                "NaN through max/min, their reductions and pools, which JAX's own "
                "drops under TF's XLA on CPU.",
                native_speed_table(res), None))
  if res.get("keras_twins"):
    out.append(("Graph serialization against the Keras twins",
                "Where TF runs the converted graph op by op (`native_serialization=False`, "
                "a plain `tf.function`), the same network written in Keras 3 with the Flax "
                "weights copied (`benchmarks/keras_reference.py`; outputs checked equal) and "
                "run by TF the same way (TensorFlow backend, `tf.function` without XLA) is "
                "what TF's kernels can do; `jax.jit` and the graph with `jit_compile=True` "
                "beside them. `jax.jit` runs twice, with XLA's defaults and with its matrix "
                "products on one thread (`xla_cpu_multi_thread_eigen=False`): on this 2-core "
                "machine either may win by 2x or more from run to run, so the ratio to "
                "`jax.jit` divides by the faster. Median per-call time, the five timed "
                "round-robin in one process "
                "per model, each TF result checked against `jax.jit` first "
                "(`benchmarks/suites/keras_twins.py`). Sizes are the runtime suite's "
                "compute-bound ones (larger ones for the ViT and the BiLSTM). TF ops "
                "count the traced graphs' nodes, function bodies included, before Grappler.",
                keras_twins_table(res), None))
  if res.get("install"):
    out.append(("Install size",
                "What each deployment extra adds to `pip install jax2tf`, read from the "
                "files (RECORD) of the distributions installed where the benchmarks ran, "
                "pinned by `constraints/` (`benchmarks/suites/install.py`): the "
                "TensorFlow extra for SavedModels, `convert`, TF.js and the TF-converter "
                "TFLite routes; the `litert` extra for `to_tflite(route=\"litert\")`, "
                "`jax2tf.lite.run` and quantization without TensorFlow.",
                install_table(res), None))
  if "call_tf" in res:
    c = res["call_tf"]
    out.append(("call_tf overheads",
                f"call_tf: not measured ({c['not_measured']})" if "not_measured" in c
                else "From `benchmarks/call_tf_overhead.py`.", call_tf_table(res), None))
  return out


def _text_table(header, rows) -> str:
  rows = [[str(c) for c in r] for r in rows]
  widths = [min(max(len(c) for c in col), 60) for col in zip(header, *rows)]
  line = lambda cells: "  ".join(c[:w].ljust(w) for c, w in zip(cells, widths))  # noqa: E731
  return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def text(res) -> str:
  parts = []
  for title, intro, table, _ in sections(res):
    parts.append(f"== {title}")
    if table is None:
      parts.append(intro)
    else:
      parts.append(_text_table(*table))
  return "\n\n".join(parts)


def _md_table(header, rows) -> str:
  lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
  lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
  return "\n".join(lines)


METHOD = """\
- Every figure of a table is measured in one process, with the alternatives
  timed round-robin (the order rotating each round) so that noise from other
  jobs hits them alike. Each sample is a loop of calls lasting at least
  {sample_s} s, each call waiting for its result; after {warmup} warm-up calls
  we take {samples} samples per alternative and report the median per call.
- Paths: *native* is `jax2tf.convert` with native serialization (StableHLO in
  an XlaCallModule op, always compiled by TF's XLA); *graph* is
  `native_serialization=False` (one TF op per JAX primitive, Xla* ops allowed);
  *graph, no XLA ops* adds `enable_xla=False`. Each runs in a `tf.function`
  with and without `jit_compile=True`. A path whose conversion fails, or whose
  result differs from `jax.jit`'s beyond ten times the model's tolerance,
  shows the error instead of a time.
- Workloads: the twelve models of `benchmarks/models` at their default
  (test) sizes, ResNet-50 and the two Transformers also at a compute-bound
  size (`benchmarks/workloads.py`, `LARGE`), and the small functions of
  `benchmarks/models/cases.py`.
- Conversion: each of {conversions} repetitions converts a fresh function
  that adds a repetition-dependent zero to its outputs, so that neither JAX's
  trace cache nor TF's XLA cache serves it; `jax.jit`'s first call gets the
  same treatment and is interleaved with the TF side.
- Memory: each measurement in its own child process
  (`python -m benchmarks.suites.memory`). The peak of `getrusage` cannot be
  reset and building the model can raise it above what the work needs, so
  the kernel's high-water mark is reset before the work (`clear_refs`) and
  read back after it (`VmHWM`); the getrusage figures are in the JSON.
- A quick run (`make bench-quick`, CI's smoke test) uses three models and
  few samples and writes `benchmarks/results/quick.{{json,md}}`, never this
  page. Timings are reported, never asserted."""


# Measured apart (`make bench-scale`: minutes and gigabytes of its own).
SCALE = """\
A decoder-only Transformer up to 3.3 GB of float32 parameters, exported with
each serialization and served back in a process without JAX: conversion
time, peak resident memory and SavedModel size against the parameter bytes,
on [its own page](benchmarks/scale.md) (`make bench-scale`).

![Export time and peak memory against parameter bytes](benchmarks/scale.png)"""


def _other_load(res) -> str:
  """What else ran on the machine during the run, from the CPU time that
  processes outside it used (runs saved before it was measured say nothing)."""
  other = res.get("other_cpu_seconds")
  if other is None:
    return "Whether other jobs shared the machine was not measured."
  share = other / (res["total_seconds"] * res["environment"]["cpu_count"])
  return (f"Processes outside the run used {other:.0f} CPU-seconds while it ran, "
          f"{share:.1%} of the machine's CPU time.")


def markdown(res, json_path: str, figures: dict) -> str:
  env, cfg = res["environment"], res["settings"]
  parts = [
      "# jax2tf benchmarks", "",
      "Generated by `make bench` (`python -m benchmarks.run"
      f"{' --quick' if res['mode'] == 'quick' else ''}`); do not edit by hand. "
      f"Raw numbers: `{json_path}` (not committed).", "",
      "## Machine and versions", "",
      f"- {env['date']}; {env['platform']} ({env['machine']}), {env['cpu_count']} CPUs; "
      f"JAX backend {env['jax_backend']}",
      f"- Python {env['python']}, jax {env['jax']}, jaxlib {env['jaxlib']}, "
      f"tensorflow {env['tensorflow']}",
      f"- {res['mode']} run, {res['total_seconds'] / 60:.1f} minutes; absolute times "
      f"below are from this machine only. {_other_load(res)}", "",
  ]
  for title, intro, table, fig in sections(res):
    parts += [f"## {title}", ""]
    if intro:
      parts += [intro, ""]
    if fig and fig in figures:
      parts += [f"![{title}]({figures[fig]})", ""]
    if table is not None:
      parts += [_md_table(*table), ""]
  parts += ["## Scale", "", SCALE, ""]
  parts += ["## Method", "", METHOD.format(**cfg), ""]
  return "\n".join(parts)
