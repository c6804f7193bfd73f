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
