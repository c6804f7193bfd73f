"""The models the benchmarks time: the demo CNN and two MLPs.

Each `Case` holds a JAX function `fn(params, x)`, its parameters and one input
batch. The small MLP is dominated by per-call overhead; the wide MLP does
about 2 GFLOP per call, so its ratios reflect the compiled code itself.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from benchmarks.models.mlp import make_mlp
from jax2tf import demo_model


@dataclasses.dataclass
class Case:
  name: str
  description: str
  fn: Callable
  params: Any
  x: np.ndarray


def _input(shape, seed: int) -> np.ndarray:
  return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def cnn_case(batch: int = 32) -> Case:
  model, params = demo_model.init_cnn(seed=0)
  return Case("cnn", f"demo CNN, batch {batch}", model.apply, params,
              _input((batch,) + demo_model.IMAGE_SHAPE, 1))


def small_mlp_case(batch: int = 8) -> Case:
  model = make_mlp((128, 128, 10))
  x = _input((batch, 64), 2)
  params = model.init(jax.random.key(0), x)
  return Case("mlp_small", f"MLP 64-128-128-10, batch {batch}", model.apply, params, x)


def wide_mlp_case(batch: int = 256, width: int = 1024, layers: int = 4) -> Case:
  model = make_mlp((width,) * layers)
  x = _input((batch, width), 3)
  params = model.init(jax.random.key(0), x)
  return Case("mlp_wide", f"MLP {layers}x{width}, batch {batch}", model.apply, params, x)


def all_cases() -> list[Case]:
  return [cnn_case(), small_mlp_case(), wide_mlp_case()]
