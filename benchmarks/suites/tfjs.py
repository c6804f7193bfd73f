"""TF.js latency in Node and Chromium, and model size: jax2tf.to_tfjs against
jax.jit, TF, and the Keras twin converted by TF's own TF.js converter.

Each model of the model set (default sizes, static shapes) is written by
`jax2tf.to_tfjs` and run by TF.js 4.22 in Node on its cpu backend (plain
JavaScript) and its wasm backend (WebAssembly with SIMD), and in headless
Chromium on the wasm backend. Node and the page time the calls themselves
(jax2tf/deploy/steady_time.js: after a first call and 0.3 s of uncounted
ones, the median over a few samples, each a loop of calls lasting 20 ms or
one call, of a call's mean time; outputs read back each time), so neither
Python nor the pipe to Node is counted. Beside them, in this
process, `jax.jit` and the same no-XLA graph in TF (`tf.function`, parameters
as variables), timed round-robin; and the model's size on disk (model.json
and weight shards).

A model with a Keras twin (benchmarks/keras_reference.py) is also measured
against it as a web developer would write it: the Keras model exported as a
SavedModel and converted by `tensorflowjs_converter` (benchmarks/tfjs_twin.py;
its batch is dynamic, as Keras exports it). Both run on the same backends,
taking turns (`ROUNDS` rounds, more up to `MAX_ROUNDS` while a model's median
is uncertain, the order alternating), each checked against `jax.jit` before
it is timed.

The other web runtime takes its turn in Chromium too: the same function
written by `jax2tf.to_tflite` (the default route, static shapes) and run by
LiteRT.js on wasm (XNNPack in WebAssembly, `jax2tf.lite.browser`), timed by
its page the same way.
"""

import collections
import math
import os
import statistics
import tempfile

import numpy as np

from benchmarks import models, tfjs_twin, timing

BACKENDS = ("cpu", "wasm")
# Timed samples per backend (jax2tf/deploy/steady_time.js: each a loop of
# calls lasting 20 ms or one call): ResNet-50 takes a fifth of a second per
# call in plain JavaScript.
CALLS = {"cpu": 5, "wasm": 10, "chromium_wasm": 20}
# Turns of to_tfjs's model and the twin's on each backend (one in a quick
# run), the order reversed every other turn; each model's time is the median
# over its turns. At least four, as two turns' median, their mean, kept a
# first turn's slow start (the MLP on Node's wasm backend: 1.79x the twin,
# from a first turn 2x slower than the others).
ROUNDS = 4
# More turns, up to MAX_ROUNDS, while some model's median is not yet known to
# within SETTLED (its relative standard error, from the spread of its turns):
# ResNet-50's turns on Node's cpu backend spread by about 10% (the same
# model, 390 to 510 ms a call, minutes apart), so four turns of it could not
# tell a 15% difference from none, where eight turns of each model, in one
# process, gave 0.97x. The rule reads the spread only, never the ratio.
MAX_ROUNDS = 12
SETTLED = 0.03
WHO = ("ours", "twin", "litertjs")
# LiteRT.js runs only in a browser.
RUNS_ON = {"litertjs": ("chromium_wasm",)}
# Where the models run (the keys of the rows' seconds, less "tfjs_"), as the report names them.
WHERE = {"cpu": "Node, cpu", "wasm": "Node, wasm", "chromium_wasm": "Chromium, wasm"}


def _ratio(row: dict, who: str, over: str, key: str) -> float | None:
  """`who`'s median on `key` (a key of WHERE) over `over`'s, where both were
  measured; "ours" is to_tfjs's model, whose seconds are the row's own."""

  def seconds(w):
    return (row if w == "ours" else row.get(w, {})).get("seconds", {}).get(f"tfjs_{key}")

  a, b = seconds(who), seconds(over)
  return None if a is None or b is None else a / b


def litertjs_ratio(row: dict) -> float | None:
  """LiteRT.js's time over to_tfjs's, both on wasm in Chromium."""
  return _ratio(row, "litertjs", "ours", "chromium_wasm")


def twin_ratio(row: dict, key: str) -> float | None:
  """to_tfjs's time over the twin's on `key`."""
  return _ratio(row, "ours", "twin", key)


def more_ops(row: dict, top: int = 5) -> str:
  """The ops to_tfjs's graph holds more of than the twin's (Const and
  Placeholder left out), most first: "Reshape +3, AddV2 +3"."""
  ours, theirs = row.get("ops", {}), row.get("twin", {}).get("ops", {})
  extra = sorted(((n - theirs.get(op, 0), op) for op, n in ours.items() if n > theirs.get(op, 0)),
                 key=lambda e: (-e[0], e[1]))
  return ", ".join(f"{op} +{n}" for n, op in extra[:top])


def _first_line(error: BaseException) -> str:
  lines = [line.strip() for line in str(error).splitlines() if line.strip()]
  if isinstance(error, AssertionError):
    # NumPy's message: the tolerance, the mismatched count, then the largest differences.
    worst = [line for line in lines if line.startswith(("Mismatched", "Max absolute"))]
    return "outputs differ from jax.jit: " + "; ".join(worst or lines[:1])[:160]
  # A TFJSRuntimeError's first line names the model's folder, the second what failed.
  if isinstance(error, RuntimeError) and len(lines) > 1 and lines[0].endswith(":"):
    return lines[1][:120]
  return (lines[0] if lines else type(error).__name__)[:120]


def _check(outputs, want, m, what: str) -> None:
  if len(outputs) != len(want):
    raise AssertionError(f"{what}: {len(outputs)} outputs, jax.jit gives {len(want)}")
  for g, w in zip(outputs, want):
    np.testing.assert_allclose(g, w, rtol=10 * m.rtol, atol=10 * m.atol, err_msg=what)


class _Turns:
  """The web models of one model-set entry (ours, the twin where it has one,
  and the LiteRT.js flatbuffer) timed in turns on each backend that runs
  them: steady and first-call seconds per backend, or the error that stopped
  one."""

  def __init__(self, m, want, folders: dict):
    self.m, self.want, self.folders = m, want, folders
    self.steady = {who: collections.defaultdict(list) for who in folders}
    self.first: dict = {who: {} for who in folders}
    self.errors: dict = {who: {} for who in folders}
    self.turns: dict = {}  # timed turns per backend

  def round(self, key: str, rep: int, measure, timed: bool = True) -> None:
    """`measure(who, model)`: the outputs, steady and first-call seconds.
    A round not `timed` keeps only the first calls and the errors."""
    order = [w for w in WHO if w in self.folders and key in RUNS_ON.get(w, (key,))]
    for who in order if rep % 2 == 0 else order[::-1]:
      if key in self.errors[who]:
        continue
      turn = f"round {rep + 1}" if timed else "warm-up"
      timing.progress(f"tfjs {self.m.name} ({who}) on {key}, {turn}")
      try:
        outputs, steady, first = measure(who, self.folders[who])
        _check(outputs, self.want, self.m, f"{self.m.name} ({who}) on {key}")
      except (RuntimeError, AssertionError, OSError, ValueError, TypeError) as e:
        self.errors[who][key] = _first_line(e)
        continue
      if timed:
        self.steady[who][key].append(steady)
      self.first[who].setdefault(key, first)

  def fail(self, key: str, why: str) -> None:
    for who in self.folders:
      if key in RUNS_ON.get(who, (key,)):
        self.errors[who][key] = why

  def settled(self, key: str) -> bool:
    """Whether every model timed on `key` has a median known to within
    SETTLED (relative standard error of the median, from the turns' median
    absolute deviation: one slow turn does not keep the turns going)."""
    for who, steady in self.steady.items():
      samples = steady.get(key, [])
      if key in self.errors[who] or not samples:
        continue
      if len(samples) < 2:
        return False
      median = statistics.median(samples)
      spread = 1.4826 * statistics.median(abs(s - median) for s in samples)
      if 1.2533 * spread / (median * math.sqrt(len(samples))) > SETTLED:
        return False
    return True

  def take(self, key: str, rounds: int, measure) -> int:
    """`rounds` timed turns on `key`, more (up to MAX_ROUNDS) while not
    `settled`, where `rounds` allows more than one; how many were taken."""
    rep = 0
    while rep < rounds or (rounds > 1 and rep < MAX_ROUNDS and not self.settled(key)):
      self.round(key, rep, measure)
      rep += 1
    self.turns[key] = rep
    return rep

  def seconds(self, who: str) -> dict:
    out = {}
    for key, samples in self.steady[who].items():
      out[f"tfjs_{key}"] = statistics.median(samples)
      out[f"tfjs_{key}_first"] = self.first[who][key]
    return out


def _time_all(turns: _Turns, inputs, rounds: int) -> None:
  from jax2tf import tfjs  # pylint: disable=import-outside-toplevel
  from jax2tf.tfjs import browser  # pylint: disable=import-outside-toplevel

  for backend in BACKENDS:
    try:
      with tfjs.Runner(backend) as runner:
        def in_node(_, folder):
          return tfjs_twin.time_node(runner, folder, inputs, CALLS[backend])

        # The first model a new Node process runs also pays for compiling
        # TF.js's own code (the MLP's first turn on wasm: 110 us a call, then
        # 46-73 us): a turn of every model first, left out of the medians.
        turns.round(backend, 0, in_node, timed=False)
        turns.take(backend, rounds, in_node)
    except (tfjs.TFJSRuntimeError, FileNotFoundError) as e:  # Node or TF.js missing
      turns.fail(backend, _first_line(e))
  try:
    browser.chromium()
  except FileNotFoundError as e:
    turns.fail("chromium_wasm", f"no Chromium: {_first_line(e)}")
    return
  def in_chromium(who: str, model):
    if who == "litertjs":
      return _time_litertjs(model, inputs, CALLS["chromium_wasm"])
    return tfjs_twin.time_chromium(model, inputs, CALLS["chromium_wasm"])

  turns.take("chromium_wasm", rounds, in_chromium)


def _time_litertjs(model, inputs, calls: int) -> tuple[list, float, float]:
  """A .tflite run by LiteRT.js on wasm in headless Chromium: its outputs,
  and the page's median and first-run seconds (the first after compiling)."""
  from jax2tf.lite import browser  # pylint: disable=import-outside-toplevel

  run = browser.run(model, *inputs, accelerator="wasm", repeats=calls)
  return run.outputs, run.details["steady_ms"] / 1e3, run.details["ms"] / 1e3


def _litertjs_model(name: str, m, row: dict):
  """The model's flatbuffer for LiteRT.js (a LiteModel, which names its
  inputs in the function's order), or None (its row saying why)."""
  import jax2tf  # pylint: disable=import-outside-toplevel

  timing.progress(f"tfjs {name}: jax2tf.to_tflite for LiteRT.js")
  try:
    model = jax2tf.to_tflite(m.fn, *m.inputs, params=m.params)
  except (ValueError, TypeError, NotImplementedError, RuntimeError) as e:
    row["litertjs"] = {"error": _first_line(e)}
    return None
  row["litertjs"] = {"seconds": {}, "errors": {}, "bytes": len(model)}
  return model


def _twin(name: str, m, want, folder: str, row: dict) -> str | None:
  """The twin's TF.js model, or None (its row saying why)."""
  if not tfjs_twin.has_twin(name):
    return None
  why = tfjs_twin.missing()
  if why is None:
    timing.progress(f"tfjs {name}: the Keras twin through tensorflowjs_converter")
    try:
      twin = tfjs_twin.build(name, folder)
      tfjs_twin.check_signature(twin, len(m.inputs), len(want))
    except tfjs_twin.TwinError as e:
      why = _first_line(e)
  if why is not None:
    row["twin"] = {"error": why}
    return None
  row["twin"] = {"seconds": {}, "errors": {}, "bytes": tfjs_twin.directory_bytes(twin),
                 "ops": dict(tfjs_twin.graph_ops(twin))}
  return twin


def measure_model(name: str, cfg: timing.Settings) -> dict:
  import jax  # pylint: disable=import-outside-toplevel

  import jax2tf  # pylint: disable=import-outside-toplevel
  from benchmarks import paths  # pylint: disable=import-outside-toplevel
  from jax2tf import tfjs  # pylint: disable=import-outside-toplevel

  m = models.get(name)
  inputs = tuple(m.inputs)
  want = [np.asarray(x) for x in jax.tree_util.tree_leaves(m.fn(m.params, *inputs))]
  row = {"model": name, "seconds": {}, "errors": {}}
  with tempfile.TemporaryDirectory(prefix="bench-tfjs-") as folder:
    try:
      model = jax2tf.to_tfjs(m.fn, *inputs, params=m.params, path=os.path.join(folder, "m"))
    except tfjs.TFJSConversionError as e:
      row["errors"]["to_tfjs"] = str(e).splitlines()[1].strip()
      return row
    ours = str(model.path)
    row["bytes"] = tfjs_twin.directory_bytes(ours)
    row["ops"] = dict(tfjs_twin.graph_ops(ours))
    folders = {"ours": ours}
    twin = _twin(name, m, want, folder, row)
    if twin is not None:
      folders["twin"] = twin
    flatbuffer = _litertjs_model(name, m, row)
    if flatbuffer is not None:
      folders["litertjs"] = flatbuffer
    turns = _Turns(m, want, folders)
    _time_all(turns, inputs, 1 if cfg == timing.QUICK else ROUNDS)
    row["seconds"].update(turns.seconds("ours"))
    row["turns"] = turns.turns
    row["errors"].update(turns.errors["ours"])
    for who in ("twin", "litertjs"):
      if who in folders:
        row[who]["seconds"] = turns.seconds(who)
        row[who]["errors"] = turns.errors[who]
  tf_call, _ = paths.build(paths.PATH["noxla"], m.fn, m.params, inputs)
  jax_call, _ = paths.build_jax(m.fn, m.params, inputs)
  timing.progress(f"tfjs {name}: jax.jit and TF beside it")
  row["seconds"].update(timing.round_robin({"jax.jit": jax_call, "tf_noxla": tf_call}, cfg))
  return row


def measure(names, cfg: timing.Settings) -> list:
  return [measure_model(n, cfg) for n in models.REGISTRY if names is None or n in names]

