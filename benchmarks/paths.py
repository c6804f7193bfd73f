"""The ways a JAX function can run in TensorFlow, and `jax.jit` to compare.

A path is a lowering (the `convert` options) plus whether the resulting
`tf.function` asks XLA to compile the whole graph (`jit_compile=True`).
Native serialization always runs through XLA (the XlaCallModule op compiles
its module), so for it `jit_compile` only decides whether TF's surrounding
graph is clustered too.
"""

import dataclasses

import jax
import numpy as np
import tensorflow as tf

import jax2tf
from benchmarks.timing import sync_jax, sync_tf


@dataclasses.dataclass(frozen=True)
class Lowering:
  name: str
  label: str
  options: dict


LOWERINGS = (
    Lowering("native", "native", dict(native_serialization=True)),
    Lowering("graph", "graph", dict(native_serialization=False)),
    Lowering("noxla", "graph, no XLA ops", dict(native_serialization=False,
                                                  enable_xla=False)),
)
LOWERING = {lw.name: lw for lw in LOWERINGS}


@dataclasses.dataclass(frozen=True)
class Path:
  name: str            # e.g. "graph+jit"
  label: str
  lowering: Lowering
  jit_compile: bool


PATHS = tuple(Path(f"{lw.name}+jit" if jit else lw.name,
                   f"{lw.label}, jit_compile" if jit else lw.label, lw, jit)
              for lw in LOWERINGS for jit in (True, False))
PATH = {p.name: p for p in PATHS}


def tf_variables(params):
  # As a served model holds them: variables, not constants folded into the graph.
  return tf.nest.map_structure(tf.Variable, params)


def tf_function(fn, params, lowering: Lowering, jit_compile: bool, input_signature=None,
                with_gradient: bool = True):
  """A tf.function computing fn(params, *inputs), params held as tf.Variables."""
  f_tf = jax2tf.convert(fn, with_gradient=with_gradient, **lowering.options)
  variables = tf_variables(params)
  f = tf.function(lambda *xs: f_tf(variables, *xs), autograph=False,
                  jit_compile=jit_compile, input_signature=input_signature)
  # A flat list for saving: tracking the nested dict itself would make TF
  # replace its inner dicts by wrappers that are no longer JAX pytrees.
  f.variables_ = tf.nest.flatten(variables)
  return f


def signature(inputs) -> list:
  return [tf.TensorSpec(np.shape(x), tf.as_dtype(np.asarray(x).dtype)) for x in inputs]


def build(path: Path, fn, params, inputs):
  """A blocking no-argument callable running `path`, and its first result."""
  f = tf_function(fn, params, path.lowering, path.jit_compile, signature(inputs))
  xs = [tf.constant(x) for x in inputs]
  call = lambda: sync_tf(f(*xs))  # noqa: E731
  return call, call()


# XLA's CPU compiler options under which `jax.jit` code runs its matrix
# products and convolutions on one thread. On a machine of few cores XLA's
# default, Eigen spread over every core, can be several times slower (a 2-core
# machine: a ViT 2-3x); which is faster varies from run to run.
ONE_THREAD = {"xla_cpu_multi_thread_eigen": False}


def build_jax(fn, params, inputs, compiler_options=None):
  """A blocking no-argument callable running `jax.jit(fn)`, compiled with
  XLA's `compiler_options` (None: JAX's defaults), and its first result."""
  p = jax.device_put(params)
  xs = [jax.device_put(x) for x in inputs]
  f = jax.jit(fn)
  if compiler_options:
    f = f.lower(p, *xs).compile(compiler_options=compiler_options)
  call = lambda: sync_jax(f(p, *xs))  # noqa: E731
  return call, call()


def error_text(e: BaseException, limit: int = 160) -> str:
  first = (str(e).strip().splitlines() or [""])[0]
  return f"{type(e).__name__}: {first}"[:limit]
