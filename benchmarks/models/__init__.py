"""The shared model set: the benchmark cases and a zoo of Flax models.

    from benchmarks import models
    models.cnn_case()                 # a benchmark Case (fn, params, x)
    m = models.get("resnet50")        # a Model: fn(params, *inputs), params,
    m.fn(m.params, *m.inputs)         #   inputs, tolerance, polymorphic variants

`REGISTRY` lists the zoo in a fixed order, smallest first; models are built
(parameters initialised) on first use and cached, so importing this package
is cheap.
"""

import functools
import importlib

from benchmarks.models.base import Model, Variant, count_params  # noqa: F401
from benchmarks.models.cases import Case, all_cases, cnn_case, small_mlp_case, wide_mlp_case  # noqa: F401

# Module names under benchmarks/models/; each has build() -> Model.
REGISTRY = [
    "mlp",
    "actor_critic",
    "cnn",
    "gnn",
    "nnx_cnn",
    "vae",
    "bilstm",
    "seq2seq",
    "transformer_lm",
    "gpt_rotary",
    "vit",
    "resnet50",
]


@functools.cache
def get(name: str) -> Model:
  if name not in REGISTRY:
    raise KeyError(f"unknown model {name!r}; the model set is {REGISTRY}")
  model = importlib.import_module(f"benchmarks.models.{name}").build()
  assert model.name == name, (model.name, name)
  return model


def all_models() -> list[Model]:
  return [get(n) for n in REGISTRY]


def variants_of(name: str) -> list[Variant]:
  """The polymorphic variants of a model, without building it."""
  return list(importlib.import_module(f"benchmarks.models.{name}").VARIANTS)
