"""What a deployment converter's refusal says is missing, read back.

`to_tflite` and `to_tfjs` refuse at conversion with one line per thing the
runtime lacks:

    TF op Minimum on uint8, emitted for the JAX primitive min (at f.py:3)
    dtype uint8 (TF.js has no uint8 tensors), in ops emitted for the JAX primitive ...
    input 'x' is uint8; a TF.js model's signature takes and returns ...

and the litert route (StableHLO through litert-converter) with one line per
MLIR op the converter cannot convert:

    vhlo.fft_v1 on complex64, emitted for the JAX primitive fft (at f.py:3): no LiteRT operator

The fuzzer counts refusals by these lines and the case-table recorder files
them; both read them here.
"""

import dataclasses
import re

KERNEL = "kernel"  # a TF op the runtime has no kernel for (on these dtypes)
TENSORS = "tensors"  # a dtype the runtime has no tensors of
SIGNATURE = "signature"  # a dtype a model's inputs and outputs cannot carry
OPERATOR = "operator"  # an MLIR op the converter cannot convert (the litert route)

# What the litert route's refusal says where it cannot tell the primitive.
_UNKNOWN = "unknown"

_PRIMITIVE = r"(?:.*?the JAX primitives? ([\w-]+))?"
_LINES = (
  (KERNEL, re.compile(rf"^TF op (\w+)(?: on ([\w, ]+))?, emitted for{_PRIMITIVE}")),
  (
    TENSORS,
    re.compile(rf"^dtype (\w+) \(TF.js has no \w+ tensors\), in ops emitted for{_PRIMITIVE}"),
  ),
  (SIGNATURE, re.compile(r"^(?:input|output) '\w+' is (\w+); a TF.js model's signature")),
  (
    OPERATOR,
    re.compile(
      r"^([\w.?]+)(?: on ([\w, ]+))?, emitted for the JAX primitive (\S+?)(?: \(at [^)]*\))?(?::|$)"
    ),
  ),
)


@dataclasses.dataclass(frozen=True)
class Missing:
  """One thing a refusal names: `name` is the TF op, the MLIR op or the
  dtype; `on`, the dtypes a TF op was refused on ("uint8"; "" where not
  said); `primitive`, the JAX primitive the refusal blames, None where it
  names none (a signature's dtype, ops outside any primitive, or an MLIR op
  whose primitive the converter's refusal could not tell)."""

  kind: str
  name: str
  on: str = ""
  primitive: str | None = None

  def reason(self) -> str:
    """A short phrase to count refusals by."""
    if self.kind == KERNEL:
      return f"no kernel for TF op {self.name}" + (f" on {self.on}" if self.on else "")
    if self.kind == TENSORS:
      return f"no {self.name} tensors"
    if self.kind == OPERATOR:
      return f"cannot convert {self.name}" + (f" on {self.on}" if self.on else "")
    return f"{self.name} in the signature"


def missing(message: str) -> list[Missing]:
  """Every line of a refusal that names what is missing, in its order."""
  found = []
  for line in message.splitlines():
    for kind, pattern in _LINES:
      matched = pattern.match(line.strip())
      if matched and kind == KERNEL:
        found.append(Missing(kind, matched[1], matched[2] or "", matched[3]))
      elif matched and kind == OPERATOR:
        primitive = None if matched[3] == _UNKNOWN else matched[3]
        found.append(Missing(kind, matched[1], matched[2] or "", primitive))
      elif matched:
        found.append(Missing(kind, matched[1], primitive=matched[2] if kind == TENSORS else None))
  return found


def dtypes(on: str) -> list[str]:
  """The dtypes of a line's `on` ("int32, uint8"), sorted."""
  return sorted(d.strip() for d in on.split(",") if d.strip())


def explained(target: str, m: Missing) -> bool:
  """Whether the kernel lists of `target` (a Serialization's target:
  "tflite", "litert", "tfjs") predict the refusal line `m`: LiteRT's
  converters refuse the op on those dtypes (jax2tf/targets/kernel_lists/),
  or TF.js runs no such op, no op of complex64, no tensors or no signature
  of the dtype (jax2tf/tfjs/ops.py). A line that blames no primitive is
  never predicted, but a signature's dtype."""
  if m.primitive is None and m.kind != SIGNATURE:
    return False
  if target == "tfjs":
    from jax2tf.tfjs import ops  # pylint: disable=import-outside-toplevel

    if m.kind == KERNEL:
      if m.name not in ops.RUNS:
        return not m.on
      return m.on == "complex64" and m.name not in ops.COMPLEX64_OPS
    if m.kind == TENSORS:
      return m.name not in ops.DTYPES
    return m.kind == SIGNATURE and m.name not in ops.SIGNATURE_DTYPES
  from jax2tf import targets  # pylint: disable=import-outside-toplevel

  return m.kind in (KERNEL, OPERATOR) and targets.TARGETS[target].refuses(m.name, dtypes(m.on))


def unexplained(target: str, message: str) -> list[Missing] | None:
  """The lines of the refusal `message` that the kernel lists of `target`
  do not predict; None where it names nothing missing at all (a converter
  failure, not a refusal for want of a kernel)."""
  found = missing(message)
  if not found:
    return None
  return [m for m in found if not explained(target, m)]
