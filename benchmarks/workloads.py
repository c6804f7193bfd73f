"""What the suites run: the shared model set, larger sizes of the models whose
default inputs are too small to keep a CPU busy, and the small functions of
`models/cases.py`.

A workload is `fn(params, *inputs)` with its parameters and one set of inputs,
the same shape as a `models.Model`, so every suite treats them alike.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

from benchmarks import models


@dataclasses.dataclass
class Workload:
  name: str
  label: str
  fn: Callable
  params: Any
  inputs: tuple
  kind: str              # "model", "large" (compute-bound size) or "function"
  rtol: float = 1e-4
  atol: float = 1e-4


# Sizes at which jax.jit spends milliseconds per call in compiled code, so the
# ratios measure the code XLA and TF generate rather than per-call overhead.
# The models' defaults (used by the tests) stay as they are.
LARGE = {
    "resnet50": dict(batch=4, size=64),
    "transformer_lm": dict(batch=128, seq=32),   # 32 is its position table's length
    "gpt_rotary": dict(batch=32, seq=64),
}

QUICK_MODELS = ("mlp", "cnn", "transformer_lm")


def compute_bound(workload_name: str) -> bool:
  """The rows whose ratios compare compiled code: the large sizes, and
  ResNet-50, whose default input already takes tens of milliseconds."""
  return workload_name.endswith("@large") or workload_name == "resnet50"


def _dims_text(dims: dict) -> str:
  return ", ".join(f"{k} {v}" for k, v in dims.items())


def from_model(name: str, large: bool = False) -> Workload:
  m = models.get(name)
  dims = {**m.default_dims, **(LARGE[name] if large else {})}
  return Workload(f"{name}@large" if large else name, f"{name} ({_dims_text(dims)})",
                  m.fn, m.params, m.make_inputs(**dims), "large" if large else "model",
                  rtol=max(m.rtol, 1e-4), atol=max(m.atol, 1e-4))


def from_case(case) -> Workload:
  return Workload(f"case:{case.name}", case.description, case.fn, case.params, (case.x,),
                  "function")


def select(names=None, quick: bool = False, large: bool = True, functions: bool = True):
  """The workloads of a run: `names` filters the model set (None: all)."""
  chosen = [n for n in models.REGISTRY
            if (names is None and (not quick or n in QUICK_MODELS))
            or (names is not None and n in names)]
  out = [from_model(n) for n in chosen]
  if large and not quick:
    out += [from_model(n, large=True) for n in LARGE if n in chosen]
  if functions and names is None:
    cases = [models.small_mlp_case()] if quick else models.all_cases()
    out += [from_case(c) for c in cases]
  return out
