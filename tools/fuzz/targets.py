"""Running a program in one column of the case table and judging the result.

A column is a serialization of tests.support.case (its convert options) run
in one TF mode (tests.tf_modes), or a deployment runtime (LiteRT, by TF's
converter or by the standalone litert-converter; TF.js in Node) behind a
flag. The reference is `jax.jit` of the program; the comparison is
tests.support.compare, exact where the program is exact and within a
dtype-aware tolerance elsewhere.
"""

import dataclasses
import os
import re

import jax
import numpy as np

from jax2tf.deploy.signature import output_name
from tests import tf_modes
from tests.support import case as case_lib
from tests.support import compare, refusals
from tools.fuzz import program as program_lib

PASS, REFUSED, MISMATCH = "pass", "refused", "mismatch"

TF_COLUMNS = tuple(
  (s, m) for s in ("native", "graph", "graph_no_xla") for m in case_lib.modes_of(s)
)
# The deployment columns, by flag: to_tflite by TF's converter (route
# "graph") and by litert-converter (route "litert", no TensorFlow), both
# run on LiteRT; to_tfjs run by TF.js in Node.
DEPLOYED = {
  "tflite": ("tflite", "litert"),
  "litert": ("tflite_litert", "litert"),
  "tfjs": ("tfjs", "node"),
}


@dataclasses.dataclass(frozen=True)
class Outcome:
  """A program's outcome in a column. A mismatch of the results carries the
  comparison's record (`mismatch`, on argument set `args`); one that is an
  error (the column raised, or refused without naming a primitive) has only
  its message, `detail`."""

  status: str
  detail: str = ""
  mismatch: compare.Mismatch | None = None
  args: int = 0

  def error_matches(self, pattern: str) -> bool:
    """Whether this is an error whose message matches `pattern` (a case
    gap's error: what a converter or runtime raises). A comparison's
    mismatch matches no pattern: its kind and elements say what differs."""
    return self.mismatch is None and re.search(pattern, self.detail) is not None


def mismatched(found: compare.Mismatch, args: int = 0) -> Outcome:
  """The outcome of a comparison that found `found` on argument set `args`."""
  return Outcome(MISMATCH, found.message.splitlines()[0][:300], found, args)


def columns(tflite: bool = False, tfjs: bool = False, litert: bool = False) -> tuple:
  """The TF columns, then the deployment columns asked for."""
  asked = {"tflite": tflite, "litert": litert, "tfjs": tfjs}
  return TF_COLUMNS + tuple(column for flag, column in DEPLOYED.items() if asked[flag])


def check_runtimes(tflite: bool, tfjs: bool, litert: bool = False):
  """Raises at once, before any program, where a requested runtime or
  converter is missing (each program would otherwise mismatch with the same
  error)."""
  if tflite or litert:
    from jax2tf.lite import runtime

    runtime.check_installed()
  if litert:
    from jax2tf.lite import litert_converter

    if not litert_converter.is_installed():
      raise ImportError(
        f"--litert converts with the standalone LiteRT converter: {litert_converter.INSTALL}"
      )
  if tfjs:
    from jax2tf.tfjs import runtime as tfjs_runtime

    tfjs_runtime.node_modules()
    tfjs_runtime.node()


def column_name(column) -> str:
  return f"{column[0]}-{column[1]}"


# Programs, by name, whose `jax.jit` aborted a fuzzing process (an XLA
# defect, not ours): their reference is JAX op by op, each primitive compiled
# alone. The name survives the minimizer's shrinking.
OP_BY_OP: set[str] = set()

# For tests of the crash handling: "<step>:<op>,..." aborts the process at a
# step ("reference", "shrunk" or a column's name) of any program with an
# equation of generator operation <op> (see isolation).
ABORT = "JAX2TF_FUZZ_ABORT"


def abort_if_asked(step: str, program: program_lib.Program):
  for entry in filter(None, os.environ.get(ABORT, "").split(",")):
    at, op = entry.split(":")
    if at == step and any(e.op == op for e in program.eqs):
      os.abort()


def expected(program: program_lib.Program) -> list:
  """JAX's results, one per argument set."""
  if program.name in OP_BY_OP:
    return expected_op_by_op(program)
  return _results_of(jax.jit(program.fun()), program)


def expected_op_by_op(program: program_lib.Program) -> list:
  """JAX's results with each primitive compiled alone, as JAX dispatches
  outside `jax.jit`: the reference where jit's own compilation is in doubt."""
  with jax.disable_jit():
    return _results_of(program.fun(), program)


def _results_of(fun, program) -> list:
  return [jax.tree_util.tree_map(np.asarray, fun(*args)) for args in program.args]


def tolerance(program: program_lib.Program, results) -> tuple | None:
  """(rtol, atol) for the inexact parts of a program; None where it is exact.

  Sums, dots and transcendentals round differently in XLA and TF kernels;
  their error is relative to the magnitude of what was summed, so atol scales
  with the largest finite result.
  """
  if program.exact:
    return None
  leaves = [np.asarray(x) for r in results for x in jax.tree_util.tree_leaves(r)]
  # A float32 result computed from 16-bit intermediates carries their rounding.
  dtypes = {x.dtype for x in leaves} | program_lib.value_dtypes(program)
  rtol = max(
    (case_lib.default_tol(d)[0] for d in dtypes if compare.is_inexact(d)),
    default=2e-5,
  )
  scale = 1.0
  for x in leaves:
    if compare.is_inexact(x.dtype) and x.size:
      wide = np.abs(x.astype(np.complex64 if x.dtype.kind == "c" else np.float32))
      finite = wide[np.isfinite(wide)]
      if finite.size:
        scale = max(scale, float(finite.max()))
  return (8 * rtol, 8 * rtol * scale)


def _names_what_is_refused(message: str, program: program_lib.Program) -> bool:
  """Whether a refusal names a primitive of the program, or one of its inputs
  or outputs (a deployment runtime refuses a signature dtype by the name of
  the argument or result: 'x0', 'output_0')."""
  prims = program_lib.primitives(program)
  names = [*program.inputs, *(output_name(i) for i in range(len(program.outputs)))]
  return any(re.search(rf"\b{re.escape(p)}\b", message) for p in prims) or any(
    f"'{name}'" in message for name in names
  )


def refusal_reasons(message: str) -> list[str]:
  """What a refusal says is missing, one short reason per kind named (for
  counting refusals by reason), else its first line."""
  reasons = list(dict.fromkeys(m.reason() for m in refusals.missing(message)))
  if reasons:
    return reasons
  first = message.strip().splitlines()[0] if message.strip() else "refused"
  return [re.sub(r"^to_\w+( \(route '\w+'\))?: ", "", first)[:120]]


def _refused(e: NotImplementedError, program: program_lib.Program, column) -> Outcome:
  """The outcome of a refusal at conversion: no mismatch if it names a
  primitive of the program. In a deployment column, a refusal for want of a
  kernel must also be one the kernel lists of its target predict, line by
  line (tests.support.refusals): one they do not predict is a mismatch,
  naming the lines they do not hold. (A deployment refusal that names
  nothing missing, such as a converter's crash refused before it happens,
  is judged as in a TF column.)"""
  message = str(e)
  target = case_lib.serialization(column[0]).target
  left = refusals.unexplained(target, message) if target is not None else None
  if left:
    unlisted = "; ".join(dict.fromkeys(m.reason() for m in left))
    return Outcome(MISMATCH, f"refused, not in the {target} kernel lists: {unlisted}")
  if left == [] or _names_what_is_refused(message, program):
    return Outcome(REFUSED, "; ".join(refusal_reasons(message)))
  return Outcome(MISMATCH, f"refused without naming a primitive: {_first_line(e)}")


class Runner:
  """Runs programs in columns; the deployment runtimes start on first use."""

  def __init__(self):
    self._tfjs = None

  def close(self):
    if self._tfjs is not None:
      self._tfjs.close()
      self._tfjs = None

  def run(self, program: program_lib.Program, column, want=None) -> Outcome:
    """The outcome of `program` in `column`; `want` is JAX's result, if known."""
    want = expected(program) if want is None else want
    tol = tolerance(program, want)
    try:
      got = self.results(program, column)
    except NotImplementedError as e:
      return _refused(e, program, column)
    except Exception as e:  # pylint: disable=broad-except
      return Outcome(MISMATCH, f"{type(e).__name__}: {_first_line(e)}")
    where = f"{program.name} [{column_name(column)}]"
    for i, (w, g) in enumerate(zip(want, got)):
      found = compare.mismatch(w, g, tol=tol, exact=tol is None, where=f"{where} args#{i}")
      if found is not None:
        return mismatched(found, i)
    return Outcome(PASS)

  def results(self, program, column) -> list:
    """The program's results in `column`, one per argument set (no comparison)."""
    serialization, mode = column
    ser = case_lib.serialization(serialization)
    fun = program.fun()
    # A positional wrapper, as in the case runner: tf.function reads the signature.
    plain = lambda *xs: fun(*xs)  # noqa: E731
    if mode == "litert":
      from jax2tf import lite  # the LiteRT runtime loads only behind its flag

      return [
        lite.run(_to_tflite(plain, args, program.polymorphic_shapes, ser.options), *args)
        for args in program.args
      ]
    if mode == "node":
      import jax2tf

      runner = self._tfjs_runner()
      model = jax2tf.to_tfjs(plain, *program.args[0], polymorphic_shapes=program.polymorphic_shapes)
      return [runner.run(model, *args) for args in program.args]
    import tensorflow as tf

    import jax2tf

    f_tf = jax2tf.convert(plain, polymorphic_shapes=program.polymorphic_shapes, **ser.options)
    if mode != "eager":
      signature = (
        None
        if program.polymorphic_shapes is None
        else tf_modes.tensor_specs(program.args[0], program.polymorphic_shapes)
      )
      f_tf = tf.function(
        f_tf, autograph=False, input_signature=signature, jit_compile=(mode == "compiled")
      )
    return [tf_modes.to_numpy(f_tf(*[tf.constant(a) for a in args])) for args in program.args]

  def _tfjs_runner(self):
    if self._tfjs is None:
      from jax2tf import tfjs

      self._tfjs = tfjs.Runner("cpu")
    return self._tfjs


def _to_tflite(fun, args, polymorphic_shapes, options):
  import jax2tf

  return jax2tf.to_tflite(
    fun, *args, polymorphic_shapes=polymorphic_shapes, verify=False, **options
  )


def _first_line(e) -> str:
  text = str(e).strip()
  return text.splitlines()[0][:300] if text else type(e).__name__
