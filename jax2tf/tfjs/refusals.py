"""What TF.js cannot run, found in the frozen graph before anything is
written, and said in JAX's terms: the primitive, the user's line, the TF op,
and what to do instead. A browser would otherwise refuse the model when it
loads it, far from the code that made it.
"""

import collections

from jax2tf.deploy import provenance
from jax2tf.tfjs import ops
from jax2tf.tfjs.freeze import Frozen


class TFJSConversionError(NotImplementedError):
  """The function converts to a TF graph that TF.js cannot run (see the
  message for the JAX primitive, the TF op and the remedies)."""


def _emitted_for(origins: list, applied) -> str:
  primitives = [o for o in origins if o is not None]
  parts = []
  if primitives:
    plural = "s" if len(primitives) > 1 else ""
    parts.append(f"the JAX primitive{plural} {provenance.describe(primitives, applied)}")
  if None in origins:
    parts.append("the function's frame (no JAX primitive)")
  return " and ".join(parts)


def _signature_problems(frozen: Frozen) -> list[str]:
  problems = []
  for kind, tensors in (("input", frozen.inputs), ("output", frozen.outputs)):
    for name, tensor in tensors.items():
      if tensor.dtype.name not in ops.SIGNATURE_DTYPES:
        problems.append(
          f"{kind} {name!r} is {tensor.dtype.name}; a TF.js model's signature takes and "
          f"returns {', '.join(ops.SIGNATURE_DTYPES)} (cast in the JAX function)"
        )
  return problems


def _findings(graph_def, applied) -> tuple[dict, dict]:
  """({TF op TF.js lacks, or "<op> on complex64": origins}, {dtype TF.js
  lacks: origins})."""
  missing: dict[str, list] = collections.defaultdict(list)
  narrowed: dict[str, list] = collections.defaultdict(list)

  def add(found, key, origin):
    if origin not in found[key]:
      found[key].append(origin)

  for node in provenance.node_defs(graph_def):
    origin = provenance.primitive_of_node(node, set(applied))
    if node.op not in ops.RUNS:
      add(missing, node.op, origin)
      continue
    if origin is None:
      continue  # the inputs and outputs, checked at the signature
    dtypes = provenance.node_dtypes(node)
    for dtype in dtypes - ops.DTYPES:
      add(narrowed, dtype, origin)
    if "complex64" in dtypes and node.op not in ops.COMPLEX64_OPS:
      add(missing, f"{node.op} on complex64", origin)
  return missing, narrowed


def _remedies(origins: set, narrowed: bool) -> list[str]:
  remedies = []
  if narrowed:
    remedies.append("cast to float32 or int32 in the JAX function")
  if origins:
    remedies.append(
      "compute without the primitive (docs/tfjs.md says what TF.js runs), or deploy with "
      "jax2tf.to_tflite or a SavedModel from jax2tf.convert, whose runtimes have these kernels"
    )
  return remedies


def check(frozen: Frozen, jaxpr) -> None:
  """Raises TFJSConversionError naming every op and dtype of the graph that
  TF.js has no kernel for, and every input or output it cannot take; `jaxpr`
  (the function's closed jaxpr, or None) says which JAX primitive emitted each."""
  applied = provenance.primitive_lines(jaxpr)
  missing, narrowed = _findings(frozen.graph_def, applied)
  lines = [
    f"TF op {op}, emitted for {_emitted_for(origins, applied)}"
    for op, origins in sorted(missing.items())
  ]
  lines += [
    f"dtype {dtype} (TF.js has no {dtype} tensors), in ops emitted for "
    + _emitted_for(origins, applied)
    for dtype, origins in sorted(narrowed.items())
  ]
  lines += _signature_problems(frozen)
  if not lines:
    return
  origins = {o for found in (*missing.values(), *narrowed.values()) for o in found}
  raise TFJSConversionError(
    f"to_tfjs: TF.js {ops.TFJS_VERSION} cannot run the converted function:\n  "
    + "\n  ".join(lines)
    + "\nRemedies: "
    + "; ".join(_remedies(origins, bool(narrowed)) or ["cast in the JAX function"])
    + "."
  )
