"""Concurrency and shared state: converted functions and call_tf from many
threads, and SavedModels replaced while another process reads them."""

import collections
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from jax2tf import api

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


@pytest.mark.parametrize("serialization", ["native", "graph"])
@pytest.mark.parametrize("mode", ["eager", "tf.function"])
@pytest.mark.parametrize("shapes", sorted(_SIGNATURES))
def test_convert_from_threads_matches_jit_and_exports_once(serialization, mode, shapes, export_log):
  poly, xs = _SIGNATURES[shapes]
  want = [jax.jit(_fun)(x) for x in xs]
  for _ in range(ROUNDS):
    # A fresh converted function per round: its caches start empty, so the
    # threads race for the first export of every signature.
    f_tf = jax2tf.convert(
      _fun, polymorphic_shapes=poly, native_serialization=serialization == "native"
    )
    if mode == "tf.function":
      f_tf = tf.function(f_tf, autograph=False)
    del export_log[:]

    def calls(i):
      # Each thread walks the signatures from a different start, so that
      # different signatures are first exported by different threads.
      order = [(i + k) % len(xs) for k in range(len(xs))]
      return {j: f_tf(tf.constant(xs[j])).numpy() for j in order for _ in range(2)}

    for got in _run_threads(calls):
      for j in range(len(xs)):
        _assert_equal_to_jax(got[j], want[j])
    names = collections.Counter(sig for _, sig in export_log)
    twice = {sig: n for sig, n in names.items() if n > 1}
    assert not twice, f"signatures exported more than once: {twice}"
    assert len(names) == len(_expected_exports(poly, xs)), export_log


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


def _jax_calling_tf(x):
  return jax2tf.call_tf(_tf_fun)(x) + 1.0


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_call_tf_from_threads_matches_tf(mode):
  xs = [_rng.normal(size=s).astype(np.float32) for s in [(3, 2), (5, 2), (4,)]]
  want = [_tf_fun(tf.constant(x)).numpy() + np.float32(1.0) for x in xs]
  for _ in range(ROUNDS):
    f = jax.jit(_jax_calling_tf) if mode == "jit" else _jax_calling_tf

    def calls(i):
      order = [(i + k) % len(xs) for k in range(len(xs))]
      return {j: np.asarray(f(xs[j])) for j in order for _ in range(2)}

    for got in _run_threads(calls):
      for j in range(len(xs)):
        _assert_equal_to_jax(got[j], want[j])
