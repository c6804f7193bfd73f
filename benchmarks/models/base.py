"""What every model of the set provides, and small helpers to build them.

A `Model` is a pure JAX function `fn(params, *inputs)` with fixed parameters,
a way to build inputs of any size, a tolerance, and the shape-polymorphic
variants the architecture admits. Variants that the architecture rules out
are listed in `impossible` with the reason, so that the docs can say why.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import numpy as np


@dataclasses.dataclass(frozen=True)
class Variant:
  """One shape-polymorphic signature: a spec per input, and sizes to try."""
  name: str
  specs: tuple          # one polymorphic spec per input (None: fully static)
  sizes: tuple          # values of the dimension variable(s), two of them
  dims: Callable[[int], dict]   # size -> keyword arguments of Model.make_inputs
  constraints: tuple = ()       # polymorphic_constraints of convert, e.g. "b >= 4"


@dataclasses.dataclass
class Model:
  name: str
  description: str
  fn: Callable                      # fn(params, *inputs)
  params: Any
  make_inputs: Callable[..., tuple]  # make_inputs(**dims) -> tuple of numpy arrays
  default_dims: dict
  variants: list
  rtol: float = 1e-5
  atol: float = 1e-5
  tolerance_why: str = ""
  impossible: dict = dataclasses.field(default_factory=dict)   # variant -> why

  @property
  def inputs(self) -> tuple:
    return self.make_inputs(**self.default_dims)

  def inputs_for(self, variant: Variant, size) -> tuple:
    return self.make_inputs(**{**self.default_dims, **variant.dims(size)})

  def variant(self, name: str) -> Variant:
    for v in self.variants:
      if v.name == name:
        return v
    raise KeyError(f"model {self.name} has no variant {name!r}; "
                   f"it has {[v.name for v in self.variants]}")

  @property
  def param_count(self) -> int:
    return count_params(self.params)

  def polymorphic_shapes(self, variant: Variant) -> list:
    """The `polymorphic_shapes` argument for `convert(fn)`: params static."""
    return [None, *variant.specs]


def count_params(params) -> int:
  return sum(int(np.size(x)) for x in jax.tree_util.tree_leaves(params))


def to_numpy(tree):
  # Parameters are kept as numpy so that building a model leaves no device
  # buffers behind and TF and JAX start from the very same bytes.
  return jax.tree_util.tree_map(np.asarray, tree)


def normal(shape, seed: int, scale: float = 1.0) -> np.ndarray:
  return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


def tokens(shape, vocab: int, seed: int) -> np.ndarray:
  return np.random.default_rng(seed).integers(0, vocab, size=shape, dtype=np.int32)


def batch_variant(nspecs_rest: tuple, sizes=(1, 3), name="batch", dim="batch") -> Variant:
  """`(b, ...)` on the first axis of every input."""
  return Variant(name, nspecs_rest, sizes, lambda b: {dim: b})


def image_variants(arbitrary_size: bool = True, multiple: int = 4,
                   small_sizes=(12, 20), multiple_sizes=(2, 3),
                   spatial_constraints: tuple = ()) -> list:
  """batch, `(_, b, b, _)` and `(_, m*b, m*b, _)` variants of an NHWC input."""
  out = [Variant("batch", ("(b, _, _, _)",), (1, 3), lambda b: {"batch": b})]
  if arbitrary_size:
    out.append(Variant("spatial", ("(_, b, b, _)",), small_sizes,
                       lambda b: {"size": b}, spatial_constraints))
  out.append(Variant(f"spatial{multiple}", (f"(_, {multiple}*b, {multiple}*b, _)",),
                     multiple_sizes, lambda b, m=multiple: {"size": m * b}))
  return out


def sequence_variants(n_inputs: int = 1, batch_sizes=(1, 3), seq_sizes=(5, 9)) -> list:
  """`(b, _)` and `(_, b)` variants of token inputs of shape (batch, time)."""
  return [
      Variant("batch", ("(b, _)",) * n_inputs, batch_sizes, lambda b: {"batch": b}),
      Variant("seq", ("(_, b)",) * n_inputs, seq_sizes, lambda b: {"seq": b}),
  ]
