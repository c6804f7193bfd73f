"""Runs one case in one column: converted with one serialization, executed in one TF mode.

In a column where the case is neither refused nor gapped, the converted
function must give what `jax.jit(case.fun)` gives on the same arguments
(tests.support.compare), and in the "graph" TF mode a graph serialization's
graph must hold no XlaCallModule, no Xla* op where the serialization allows
none, and every op the case names. Where the case is refused, conversion must
fail naming the primitive and a remedy; where it has a gap without tolerance,
the column must fail with the gap's error, so that a fix shows up.
"""

import atexit
import contextlib
import pathlib
import re
import subprocess
import sys

import jax
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from jax2tf import lite, tfjs
from tests import tf_modes
from tests.support import case as case_lib
from tests.support import compare, refusals

_ROOT = pathlib.Path(__file__).parents[2]


def x64(enabled: bool):
  return jax.enable_x64(True) if enabled else contextlib.nullcontext()


def convert(case, serialization: str):
  # A plain positional wrapper: tf.function reads the signature that
  # convert's functools.wraps exposes, and would pass the defaults of
  # keyword parameters (jnp.sum's axis, ...) as extra arguments.
  fun = case.fun
  wrapped = lambda *xs: fun(*xs)  # noqa: E731
  return jax2tf.convert(wrapped, polymorphic_shapes=case.polymorphic_shapes,
                        **case_lib.serialization(serialization).options)


# Per worker: arguments, JAX's result and the converted functions (whose
# lowerings are cached inside them), shared by the columns of a case.
_ARGS: dict = {}
_JAX: dict = {}
_CONVERTED: dict = {}

# A worker runs thousands of cases; the executables JAX and TF's XLA compile
# for them stay mapped in memory until their functions go, and an exhaustive
# run then exhausts the process's memory mappings (XLA aborts compiling).
# Every so many cases the caches are dropped; the columns of the case at hand
# recompute what they need.
_FLUSH_EVERY = 200
_seen: list = []


def _flush_now_and_then(case):
  if _seen and _seen[-1] == case.id:
    return
  _seen.append(case.id)
  if len(_seen) % _FLUSH_EVERY == 0:
    for cache in (_ARGS, _JAX, _CONVERTED):
      cache.clear()
    jax.clear_caches()


def _args(case):
  if case.id not in _ARGS:
    _ARGS[case.id] = case.make_args()
  return _ARGS[case.id]


def _jax_result(case):
  if case.id not in _JAX:
    out = jax.jit(case.fun)(*_args(case))
    _JAX[case.id] = jax.tree_util.tree_map(np.asarray, out)
  return _JAX[case.id]


def _converted(case, serialization):
  key = (case.id, serialization)
  if key not in _CONVERTED:
    _CONVERTED[key] = convert(case, serialization)
  return _CONVERTED[key]


def _in_mode(case, f_tf, mode, args):
  if mode == "eager":
    return f_tf
  # A polymorphic case is traced with unknown dimensions, so that its
  # dimension values are computed by TF ops at run time.
  signature = (None if case.polymorphic_shapes is None
               else tf_modes.tensor_specs(args, case.polymorphic_shapes))
  return tf.function(f_tf, autograph=False, input_signature=signature,
                     jit_compile=(mode == "compiled"))


def _jax_rejects(case, args):
  """JAX's own error when it cannot even trace the function, else None."""
  try:
    jax.eval_shape(case.fun, *args)
  except Exception as e:  # pylint: disable=broad-except
    return e
  return None


def _check_refusal(case, serialization, refusal, attempt, args):
  """`attempt()` (convert and run) must fail as `refusal` says."""
  jax_error = _jax_rejects(case, args)
  if jax_error is not None:
    # Some JAX versions refuse already when tracing; conversion must then
    # fail with JAX's own error.
    first_line = str(jax_error).splitlines()[0]
    with pytest.raises(type(jax_error), match=re.escape(first_line)):
      attempt()
    return
  with pytest.raises(NotImplementedError) as info:
    attempt()
  message = str(info.value)
  assert refusal.primitive in message, (
      f"{case.id}: the refusal under {serialization} names no '{refusal.primitive}': {message}")
  remedies = case_lib.serialization(serialization).remedies
  assert any(r in message for r in remedies), (
      f"{case.id}: the refusal under {serialization} proposes none of {remedies}: {message}")


def _check_graph(case, ser, f_graph, tf_args):
  concrete = (f_graph.get_concrete_function() if case.polymorphic_shapes is not None
              else f_graph.get_concrete_function(*tf_args))
  ops = tf_modes.graph_op_types(concrete)
  expected = set(case.graph_ops_in(ser.name))
  # Only a case that names it (Exported.call: StableHLO to run) may have it.
  assert "XlaCallModule" not in ops - expected, (
      f"{case.id}: {ser.name} serialization emitted XlaCallModule")
  missing = expected - ops
  assert not missing, f"{case.id}: the graph lacks {sorted(missing)}; it has {sorted(ops)}"
  if not ser.xla_ops:
    xla_ops = sorted(op for op in ops if op.startswith("Xla"))
    assert not xla_ops, f"{case.id}: {ser.name} emitted {xla_ops}"


def _run_and_compare(case, ser, mode, f_mode, tf_args, args, tol, exact):
  actual = tf_modes.to_numpy(f_mode(*tf_args))
  expected = _jax_result(case)
  where = f"{case.id} [{ser.name}, {mode}]"
  if case.compare is not None:
    case.compare(args, expected, actual, tol or (1e-5, 1e-5))
  else:
    compare.assert_same(expected, actual, tol=tol, exact=exact, where=where)
  if mode == "graph" and ser.graph:
    _check_graph(case, ser, f_mode, tf_args)


def _tflite_model(case, ser, args):
  key = (case.id, ser.name)
  if key not in _CONVERTED:
    fun = case.fun
    _CONVERTED[key] = jax2tf.to_tflite(lambda *xs: fun(*xs), *args,
                                       polymorphic_shapes=case.polymorphic_shapes,
                                       verify=False, **ser.options)
  return _CONVERTED[key]


def _tfjs_model(case, args):
  key = (case.id, "tfjs")
  if key not in _CONVERTED:
    fun = case.fun
    _CONVERTED[key] = jax2tf.to_tfjs(lambda *xs: fun(*xs), *args,
                                     polymorphic_shapes=case.polymorphic_shapes)
  return _CONVERTED[key]


_TFJS_RUNNER = None


def tfjs_runner():
  """One Node process per worker runs every case's model (TF.js takes
  seconds to start)."""
  global _TFJS_RUNNER
  if _TFJS_RUNNER is None:
    _TFJS_RUNNER = tfjs.Runner("cpu")
    atexit.register(_TFJS_RUNNER.close)
  return _TFJS_RUNNER


def _run_deployed(case, ser, mode, args):
  """The case through its deployment converter, run on that runtime."""
  def attempt():
    if mode == "node":
      outputs = tfjs_runner().run(_tfjs_model(case, args), *args)
    else:
      outputs = lite.run(_tflite_model(case, ser, args), *args)
    # In the structure of JAX's result, as the TF columns return it.
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(_jax_result(case)), outputs)

  refusal = case.refusal(ser.name)
  if refusal is not None:
    _check_refusal(case, ser.name, refusal, attempt, args)
    return
  where = f"{case.id} [{ser.name}]"
  gap = case.gap(ser.name, mode)

  def check(tol, exact):
    try:
      actual = attempt()
    except NotImplementedError as e:
      if gap is not None:
        raise  # a gapped case runs; its gap says how it fails
      _check_derived_refusal(case, ser, e)
      return
    expected = _jax_result(case)
    if case.compare is not None:
      case.compare(args, expected, actual, tol or (1e-5, 1e-5))
    else:
      compare.assert_same(expected, actual, tol=tol, exact=exact, where=where)

  if gap is not None and gap.error == case_lib.CRASHES:
    _assert_crashes_in_child(case, ser)
  elif gap is not None and gap.elsewhere is not None:
    # One of the CPU-dependent outcomes the gap names, and no other.
    try:
      check(case.tol, case.exact)
    except Exception as e:  # pylint: disable=broad-except
      known = [p for p in (gap.error, gap.elsewhere) if p]
      assert any(re.search(p, str(e)) for p in known), (
        f"{case.id} [{ser.name}]: fails otherwise than its gap says ({known}): {e}")
    else:
      assert gap.elsewhere == "", (
        f"{case.id} [{ser.name}]: matches JAX, where its gap says it fails ({gap.why}); "
        "take it out of the column's gaps")
  elif gap is not None and gap.tol is None:
    with pytest.raises(Exception, match=gap.error):
      check(case.tol, case.exact)
  elif gap is not None:
    check(gap.tol, False)
  else:
    check(case.tol, case.exact)


def _check_derived_refusal(case, ser, error):
  """A refusal no case table records: it must name only ops and dtypes
  that the target's kernel lists say it lacks (tests/support/refusals.py),
  each for a JAX primitive of the case, with a remedy. Anything else (a
  converter failure, an op the lists do not hold) fails the case."""
  message = str(error)
  unexplained = refusals.unexplained(ser.target, message)
  if unexplained is None:
    raise error  # not a refusal for want of a kernel
  assert not unexplained, (
      f"{case.id} [{ser.name}]: refused for what the {ser.target} kernel lists do not hold: "
      + "; ".join(m.reason() for m in unexplained)
      + " (where the converter lacks it, tools/record_column.py adds it to the lists; "
      f"else a rule emits what it should not):\n{message}")
  assert any(r in message for r in ser.remedies), (
      f"{case.id} [{ser.name}]: the refusal proposes none of {ser.remedies}: {message}")


def _assert_crashes_in_child(case, ser):
  """A known crash of the runtime, pinned: a child process that runs the
  case must die of it (a fix makes this fail, and the gap gets removed)."""
  code = (
    "import sys; from tests.support import collect; from tests.primitives import runner; "
    f"case = {{c.id: c for c in collect.all_cases()}}[{case.id!r}]; "
    f"runner.run_once_in_child(case, {ser.name!r}); sys.exit(0)"
  )
  proc = subprocess.run([sys.executable, "-c", code], cwd=_ROOT, capture_output=True, text=True,
                        timeout=600)
  assert proc.returncode < 0, (
    f"{case.id} [{ser.name}]: pinned as crashing the runtime, but the child exited with "
    f"{proc.returncode}: {proc.stderr[-2000:]}")


def run_once_in_child(case, serialization: str):
  ser = case_lib.serialization(serialization)
  with x64(case.x64):
    args = _args(case)
    try:
      lite.run(_tflite_model(case, ser, args), *args)
    except Exception:  # pylint: disable=broad-except
      pass  # an error is no crash: the parent sees exit status 0


def run(case, serialization: str, mode: str):
  _flush_now_and_then(case)
  ser = case_lib.serialization(serialization)
  if mode in ("litert", "node"):
    with x64(case.x64):
      _run_deployed(case, ser, mode, _args(case))
    return
  with x64(case.x64):
    args = _args(case)
    f_mode = _in_mode(case, _converted(case, serialization), mode, args)
    # TF tensors, as a TF caller would pass them (also the only way to pass
    # bfloat16, which NumPy does not know natively).
    tf_args = [tf.constant(a) for a in args]
    refusal = case.refusal(serialization)
    if refusal is not None:
      _check_refusal(case, serialization, refusal, lambda: f_mode(*tf_args), args)
      return
    gap = case.gap(serialization, mode)
    if gap is not None and gap.tol is None:
      # A known failure: pinned, so that a fix makes this test fail and the
      # case gets updated.
      with pytest.raises(Exception, match=gap.error):
        _run_and_compare(case, ser, mode, f_mode, tf_args, args, case.tol, case.exact)
      return
    if gap is not None:
      _run_and_compare(case, ser, mode, f_mode, tf_args, args, gap.tol, False)
    else:
      _run_and_compare(case, ser, mode, f_mode, tf_args, args, case.tol, case.exact)
