"""The model set's rows and the one check each runtime's model tests share.

A row is a model of benchmarks/models at its default sizes (STATIC) or in one
of its shape-polymorphic variants, which run at the variant's two sizes.
"""

from collections.abc import Callable, Iterator, Sequence

import jax
import numpy as np

from benchmarks import models

STATIC = "static"


def variants(name: str) -> Iterator[str]:
  """STATIC, then the name of every polymorphic variant of model `name`."""
  yield STATIC
  yield from (v.name for v in models.variants_of(name))


def export_inputs(m: models.Model, variant: str) -> tuple[Sequence, list | None]:
  """The example inputs and polymorphic_shapes to export row (m, variant) with."""
  if variant == STATIC:
    return m.inputs, None
  v = m.variant(variant)
  return m.inputs_for(v, v.sizes[0]), list(v.specs)


def assert_runs_like_jax(m: models.Model, variant: str, run: Callable[..., Sequence],
                         where: str = "") -> None:
  """run(*inputs) returns what jax.jit(m.fn) does, at every size of the row.

  Shapes and dtypes must match exactly, values within the model's tolerance.
  """
  if variant == STATIC:
    sized = [("default", m.inputs)]
  else:
    v = m.variant(variant)
    sized = [(size, m.inputs_for(v, size)) for size in v.sizes]
  for size, inputs in sized:
    expected = jax.tree_util.tree_leaves(jax.jit(m.fn)(m.params, *inputs))
    got = run(*inputs)
    assert len(got) == len(expected), (m.name, variant, len(got), len(expected))
    for i, (g, e) in enumerate(zip(got, expected)):
      e = np.asarray(e)
      at = f"{m.name}[{variant}={size}] output {i}{where}"
      assert g.shape == e.shape and g.dtype == e.dtype, (at, g.shape, e.shape, g.dtype)
      np.testing.assert_allclose(g, e, rtol=m.rtol, atol=m.atol, err_msg=at)
