"""Runtime per call of every path against jax.jit, and the fixed cost of a call."""

import statistics

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf

import jax2tf
from benchmarks import paths, timing
from benchmarks.suites.keras_twins import JAX, JAX_ONE_THREAD
from benchmarks.timing import progress, round_robin, sync_jax, sync_tf
from benchmarks.workloads import compute_bound

# The call every other way of calling is measured against.
BARE = "tf.function(tf.math.sin)"
# The same call converted by JAX's own jax2tf (native serialization), where
# `jax.experimental.jax2tf` is JAX's module in this process: the floor that
# XlaCallModule's launch sets for any converter.
UPSTREAM = "JAX's jax2tf, native: tf.function(converted)"
# The same sin compiled by TF's own XLA inside a plain tf.function (a call of
# a jit_compile one): the launch any XLA computation in a graph pays, with no
# converter involved.
XLA_LAUNCH = "tf.function calling tf.function(tf.math.sin, jit_compile=True)"
# The fixed cost of a call: many short rounds, so that the differences taken
# round by round (timing.paired_excess) have many samples.
OVERHEAD = timing.Settings(samples=61, sample_s=0.04, warmup=20, conversions=1)
OVERHEAD_QUICK = timing.Settings(samples=9, sample_s=0.02, warmup=2, conversions=1)


def _close(ref, out, w) -> str | None:
  for a, b in zip(jax.tree_util.tree_leaves(ref), tf.nest.flatten(out)):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not np.allclose(a, b, rtol=10 * w.rtol, atol=10 * w.atol):
      err = np.max(np.abs(a.astype(np.float64) - b)) if a.shape == b.shape else "shape"
      return f"wrong result (max abs error {err:.3g})"
  return None


def measure_workload(w, cfg) -> dict:
  progress(f"runtime: {w.label}: building and compiling {len(paths.PATHS) + 1} paths")
  calls, errors = {}, {}
  calls[JAX], ref = paths.build_jax(w.fn, w.params, w.inputs)
  if compute_bound(w.name):
    # The anchor of the path without XLA is the faster of jax.jit's two
    # threadings, as in the Keras-twin suite (keras_twins.jax_anchor); the
    # XLA paths compare with XLA's defaults, which TF's XLA compiles with.
    calls[JAX_ONE_THREAD], one_thread = paths.build_jax(w.fn, w.params, w.inputs,
                                                        paths.ONE_THREAD)
    wrong = _close(ref, one_thread, w)
    if wrong:
      errors[JAX_ONE_THREAD] = wrong
      del calls[JAX_ONE_THREAD]
  for p in paths.PATHS:
    try:
      call, out = paths.build(p, w.fn, w.params, w.inputs)
    except Exception as e:  # noqa: BLE001 -- a failing path is a result, not a crash
      errors[p.name] = paths.error_text(e)
      continue
    wrong = _close(ref, out, w)
    if wrong:  # timing a wrong answer would say nothing
      errors[p.name] = wrong
    else:
      calls[p.name] = call
  progress(f"runtime: {w.label}: timing {len(calls)} alternatives round-robin")
  seconds = round_robin(calls, cfg)
  return {"workload": w.name, "label": w.label, "kind": w.kind,
          "seconds": seconds, "errors": errors}


def _jax_own_jax2tf():
  """JAX's own `jax.experimental.jax2tf`, or None where it is missing or this
  package stands in its place (jax2tf.install())."""
  try:
    from jax.experimental import jax2tf as module  # pylint: disable=import-outside-toplevel
  except ImportError:
    return None
  return None if module is jax2tf else module


def measure_overhead(cfg) -> dict:
  """A scalar jnp.sin: what each way of calling costs beyond the op itself:
  the median seconds per call of each way, and, round by round, its excess
  over a bare tf.function of the same signature."""
  progress("runtime: per-call overhead on a scalar")
  x = tf.constant(0.5, tf.float32)
  spec = [tf.TensorSpec((), tf.float32)]
  # A lambda, as the converted function is: tf.math.sin's own signature (with
  # `name=`) and dispatch decorators make a tf.function of it slower to call.
  bare = tf.function(lambda x: tf.math.sin(x), autograph=False, input_signature=spec)
  compiled = tf.function(lambda x: tf.math.sin(x), autograph=False, jit_compile=True)
  launching = tf.function(lambda x: compiled(x), autograph=False, input_signature=spec)
  alts = {
      "tf.math.sin, eager op": lambda: sync_tf(tf.math.sin(x)),
      BARE: lambda: sync_tf(bare(x)),
      XLA_LAUNCH: lambda: sync_tf(launching(x)),
  }
  for lw in paths.LOWERINGS[:2]:
    conv = jax2tf.convert(jnp.sin, **lw.options)
    wrapped = tf.function(conv, autograph=False, input_signature=spec)
    alts[f"{lw.name}: tf.function(converted)"] = lambda f=wrapped: sync_tf(f(x))
    alts[f"{lw.name}: converted, eager"] = lambda f=conv: sync_tf(f(x))
  upstream = _jax_own_jax2tf()
  if upstream is not None:
    wrapped = tf.function(upstream.convert(jnp.sin), autograph=False, input_signature=spec)
    alts[UPSTREAM] = lambda f=wrapped: sync_tf(f(x))
  sin_jit, xj = jax.jit(jnp.sin), jnp.float32(0.5)
  alts["jax.jit(jnp.sin)"] = lambda: sync_jax(sin_jit(xj))
  samples = timing.round_robin_samples(alts, OVERHEAD_QUICK if cfg == timing.QUICK else OVERHEAD)
  return {
    "seconds": {n: statistics.median(s) for n, s in samples.items()},
    "above_bare": timing.paired_excess(samples, BARE),
  }
