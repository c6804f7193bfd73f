"""Concurrency and shared state: converted functions and call_tf from many
threads, and SavedModels replaced while another process reads them."""

import collections
import json
import os
import subprocess
import sys
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from jax2tf import api
from jax2tf.deploy import artifacts

THREADS = 8
ROUNDS = 3
# A deadlock fails the test after this long instead of hanging it.
TIMEOUT_S = 120


def _run_threads(target, n=THREADS):
  """Runs target(i, barrier) in n daemon threads that start together; returns
  their results, re-raising the first error. A thread still alive after
  TIMEOUT_S fails the test (daemon threads do not keep a hung test alive)."""
  barrier = threading.Barrier(n, timeout=TIMEOUT_S)
  results: list = [None] * n
  errors: list = []

  def body(i):
    try:
      barrier.wait()
      results[i] = target(i)
    except BaseException as e:  # noqa: BLE001  (re-raised in the main thread)
      errors.append(e)

  threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(n)]
  for t in threads:
    t.start()
  for t in threads:
    t.join(TIMEOUT_S)
  alive = [t.name for t in threads if t.is_alive()]
  assert not alive, f"threads {alive} did not finish in {TIMEOUT_S} s: a deadlock?"
  if errors:
    raise errors[0]
  return results


def _assert_equal_to_jax(got, want):
  got, want = np.asarray(got), np.asarray(want)
  assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want)
  if np.issubdtype(want.dtype, np.inexact):
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
  else:
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- convert ---


def _fun(x):
  return x * x + jnp.cumsum(x, axis=0) - jnp.max(x)


_rng = np.random.default_rng(0)
# (polymorphic_shapes, arguments): each list of arguments has several shapes and
# dtypes; with "(b, 4)" the shapes of one dtype share one symbolic signature.
_SIGNATURES = {
  "static": (
    None,
    [
      _rng.normal(size=(3, 4)).astype(np.float32),
      _rng.normal(size=(5, 4)).astype(np.float32),
      _rng.integers(-9, 9, size=(3, 4)).astype(np.int32),
      _rng.normal(size=(2,)).astype(np.float32),
    ],
  ),
  "polymorphic": (
    "(b, 4)",
    [
      _rng.normal(size=(3, 4)).astype(np.float32),
      _rng.normal(size=(5, 4)).astype(np.float32),
      _rng.normal(size=(7, 4)).astype(np.float32),
      _rng.integers(-9, 9, size=(3, 4)).astype(np.int32),
      _rng.integers(-9, 9, size=(6, 4)).astype(np.int32),
    ],
  ),
}


def _expected_exports(poly, xs):
  if poly is None:
    return {(x.shape, x.dtype) for x in xs}
  return {x.dtype for x in xs}


@pytest.fixture
def export_log(monkeypatch):
  """Records every lowering of a converted function's primal computation."""
  log = []
  lock = threading.Lock()
  for backend in (api._NativeBackend, api._GraphBackend):
    original = backend.lower

    def counting(fun_jit, args_avals, kwargs_avals, *, name, options, _original=original):
      with lock:
        log.append((name, tuple((str(a.shape), a.dtype) for a in args_avals)))
      return _original(fun_jit, args_avals, kwargs_avals, name=name, options=options)

    monkeypatch.setattr(backend, "lower", staticmethod(counting))
  return log


_CONVERT_CASES = [
  (serialization, shapes, mode)
  for serialization in ("native", "graph")
  for shapes, mode in [
    ("static", "eager"),
    ("static", "tf.function"),
    ("polymorphic", "eager"),
    ("polymorphic", "tf.function"),
  ]
] + [
  # Under XLA compilation, native serialization also lowers a module of
  # shape checks per signature (api._Lowered._checked), once too.
  ("native", "polymorphic", "jit_compile"),
  pytest.param("graph", "polymorphic", "jit_compile", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("serialization, shapes, mode", _CONVERT_CASES)
def test_convert_from_threads_matches_jit_and_exports_once(serialization, mode, shapes, export_log):
  poly, xs = _SIGNATURES[shapes]
  want = [jax.jit(_fun)(x) for x in xs]
  for _ in range(ROUNDS):
    # A fresh converted function per round: its caches start empty, so the
    # threads race for the first export of every signature.
    f_tf = jax2tf.convert(
      _fun, polymorphic_shapes=poly, native_serialization=serialization == "native"
    )
    if mode != "eager":
      # With jit_compile, reduce_retracing: TF soon traces with an unknown
      # batch size, so the shape checks have to run at run time.
      compiled = mode == "jit_compile"
      f_tf = tf.function(f_tf, autograph=False, jit_compile=compiled, reduce_retracing=compiled)
    del export_log[:]

    def calls(i):
      # Each thread walks the signatures from a different start, so that
      # different signatures are first exported by different threads.
      order = [(i + k) % len(xs) for k in range(len(xs))]
      return {j: f_tf(tf.constant(xs[j])).numpy() for j in order for _ in range(2)}

    for got in _run_threads(calls):
      for j in range(len(xs)):
        _assert_equal_to_jax(got[j], want[j])
    lowered = collections.Counter(export_log)
    twice = {key: n for key, n in lowered.items() if n > 1}
    assert not twice, f"signatures lowered more than once: {twice}"
    primal = [sig for name, sig in lowered if name == "_fun"]
    assert len(primal) == len(_expected_exports(poly, xs)), export_log


@pytest.mark.parametrize("serialization", ["native", "graph"])
def test_gradient_from_threads_lowers_the_vjp_once(serialization, export_log):
  x = _rng.normal(size=(4, 4)).astype(np.float32)
  want = jax.grad(lambda x: jnp.sum(_fun(x)))(x)
  f_tf = jax2tf.convert(_fun, native_serialization=serialization == "native")

  def grad(i):
    del i
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
      tape.watch(xt)
      y = tf.reduce_sum(f_tf(xt))
    return tape.gradient(y, xt).numpy()

  for got in _run_threads(grad):
    _assert_equal_to_jax(got, want)
  names = collections.Counter(name.split(" of ")[0] for name, _ in export_log)
  assert names == {"_fun": 1, "vjp": 1}, export_log


# ---------------------------------------------------------------- call_tf ---


def _tf_fun(x):
  return tf.math.sin(x) * 2.0 + tf.reduce_sum(x, axis=0)


@pytest.mark.parametrize("mode", ["eager", "jit", "both"])
@pytest.mark.parametrize("shared", [True, False], ids=["one_call_tf", "call_tf_per_call"])
def test_call_tf_from_threads_matches_tf(mode, shared):
  xs = [_rng.normal(size=s).astype(np.float32) for s in [(3, 2), (5, 2), (4,)]]
  want = [_tf_fun(tf.constant(x)).numpy() + np.float32(1.0) for x in xs]
  for _ in range(ROUNDS):
    # Fresh functions per round, so the threads race for the first trace
    # (jit) and the first TF call (eager) of each shape.
    called = jax2tf.call_tf(_tf_fun)

    def jax_fun(x, called=called):
      return (called if shared else jax2tf.call_tf(_tf_fun))(x) + 1.0

    jitted = jax.jit(jax_fun)

    def calls(i, jitted=jitted, jax_fun=jax_fun):
      # "both": half the threads run eagerly while the others trace and run jit.
      f = jitted if mode == "jit" or (mode == "both" and i % 2) else jax_fun
      order = [(i + k) % len(xs) for k in range(len(xs))]
      return {j: np.asarray(f(xs[j])) for j in order for _ in range(2)}

    for got in _run_threads(calls):
      for j in range(len(xs)):
        _assert_equal_to_jax(got[j], want[j])


# ------------------------------------------------- SavedModel replacement ---

# Loads the SavedModel at PATH in a loop until STOP exists, classifying each
# load-and-call: which version's output it gave, or what went wrong; writes
# the number of loads done to COUNT after each.
_READER = r"""
import json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf

path, folder = sys.argv[1], sys.argv[2]
expected = dict(np.load(os.path.join(folder, "expected.npz")))
x = np.load(os.path.join(folder, "x.npy"))
stop = os.path.join(folder, "stop")
outcomes = []
def one():
  # Resolving the link once makes every file of the load come from one version.
  where = os.path.realpath(path)
  try:
    model = tf.saved_model.load(where)
    y = model.f(x).numpy()
  except Exception as e:
    if not os.path.exists(where):
      return "version deleted while loading"
    return f"error {type(e).__name__}: {e}"[:300]
  for name, want in expected.items():
    if y.shape == want.shape and np.allclose(y, want, rtol=1e-6, atol=0):
      return name
  return "mixed " + repr(y)
while not os.path.exists(stop):
  outcomes.append(one())
  with open(os.path.join(folder, "count.tmp"), "w") as f:
    f.write(str(len(outcomes)))
  os.replace(os.path.join(folder, "count.tmp"), os.path.join(folder, "count"))
outcomes.append("final " + one())
json.dump(outcomes, open(os.path.join(folder, "outcomes.json"), "w"))
"""


def _module(f_tf, w, shape):
  m = tf.Module()
  m.w = w
  m.f = tf.function(
    lambda x: f_tf(m.w, x), input_signature=[tf.TensorSpec(shape, tf.float32)], autograph=False
  )
  return m


def _versioned_modules(x):
  """Two SavedModel-able modules whose outputs on x differ, each through a
  variable (in variables/) and a constant (in saved_model.pb), so that a load
  that combined the files of both would match neither; and their outputs from
  jax.jit."""
  modules, expected = {}, {}
  for k in (1, 2):
    w = np.full(x.shape, k, np.float32)
    c = np.float32(10 * k)

    def fun(w, x, c=c):
      return x * w + c

    modules[f"v{k}"] = _module(jax2tf.convert(fun), tf.Variable(w), x.shape)
    expected[f"v{k}"] = np.asarray(jax.jit(fun)(w, x))
  return modules, expected


def _wait_for(predicate, what, proc):
  deadline = time.monotonic() + TIMEOUT_S
  while not predicate():
    if proc.poll() is not None:
      raise AssertionError(f"the reader exited ({proc.returncode}) before {what}: "
                           f"{proc.stderr.read()}")
    assert time.monotonic() < deadline, f"timed out waiting for {what}"
    time.sleep(0.05)


@pytest.mark.subprocess
def test_saved_model_replaced_while_another_process_loads_it(tmp_path):
  """The guarantee of jax2tf/deploy/artifacts.py: a reader that resolves the path
  once loads one whole version, the old or the new, never an error."""
  x = np.arange(4, dtype=np.float32)
  modules, expected = _versioned_modules(x)
  np.savez(tmp_path / "expected.npz", **expected)
  np.save(tmp_path / "x.npy", x)
  path = tmp_path / "model"

  def write(version):
    artifacts.write_directory_atomically(
      path, lambda d: tf.saved_model.save(modules[version], d), overwrite=True
    )

  def loads():
    count = tmp_path / "count"
    return int(count.read_text()) if count.exists() else 0

  # A first write is a plain directory, and its first replacement moves it
  # aside (the one window docs/cli.md states); the reader starts after that.
  write("v1")
  write("v1")
  proc = subprocess.Popen(
    [sys.executable, "-c", _READER, str(path), str(tmp_path)],
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
  )
  try:
    versions = ["v2", "v1"] * 3
    for version in versions:
      # The reader loads in a loop, during the writes too; waiting for two
      # more loads makes sure it also loads each version at least once.
      done = loads()
      _wait_for(lambda done=done: loads() >= done + 2, "two more loads", proc)
      write(version)
    (tmp_path / "stop").touch()
    proc.wait(TIMEOUT_S)
  finally:
    proc.kill()
  assert proc.returncode == 0, proc.stderr.read()
  outcomes = json.loads((tmp_path / "outcomes.json").read_text())
  # A load that outlasts two replacements finds its version deleted (the
  # documented limit); it must never see a missing path, a half-written
  # directory, or the graph of one version with the weights of the other.
  allowed = ("v1", "v2", "version deleted while loading")
  unexpected = [o for o in outcomes[:-1] if o not in allowed]
  assert not unexpected, unexpected
  assert {"v1", "v2"} <= set(outcomes), collections.Counter(outcomes)
  assert outcomes[-1] == "final " + versions[-1], outcomes[-1]


def test_directory_written_by_threads_at_once_ends_whole(tmp_path):
  path = tmp_path / "model"
  names = ("a", "b", "c")

  def write(i):
    def files(folder):
      for name in names:
        with open(os.path.join(folder, name), "w") as f:
          f.write(str(i))

    for _ in range(ROUNDS):
      artifacts.write_directory_atomically(path, files, overwrite=True)

  _run_threads(write)
  # Whichever writer switched the link last, it names that writer's whole output.
  seen = set()
  for name in names:
    with open(os.path.join(path, name)) as f:
      seen.add(f.read())
  assert len(seen) == 1, seen
  left = os.listdir(artifacts.versions_folder(path))
  assert len(left) == 2 and not [e for e in left if e.startswith(".tmp-")], left
  assert os.path.basename(os.path.realpath(path)) in left
