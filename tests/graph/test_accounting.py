"""Every JAX primitive is accounted for: it has a graph rule or a listed reason.

JAX's primitives are enumerated in a fresh interpreter that imports the modules
defining them (lax, NumPy, SciPy, random, sparse, Pallas, shard_map, ...), so
the answer does not depend on what other tests imported first.
"""

import json
import subprocess
import sys

import pytest

from jax2tf.graph import (
  registry,
  rules,  # noqa: F401  (registers every rule)
  unsupported,
)

# Modules whose import defines primitives; those a JAX version lacks are skipped.
_DEFINING_MODULES = [
    "jax", "jax.numpy", "jax.nn", "jax.random", "jax.lax.linalg", "jax.scipy.special",
    "jax.scipy.linalg", "jax.scipy.signal", "jax.experimental.sparse",
    "jax.experimental.pallas", "jax.experimental.pallas.tpu",
    "jax.experimental.pallas.triton", "jax.experimental.pallas.mosaic_gpu",
    "jax.experimental.shard_map", "jax.experimental.custom_partitioning",
    "jax.experimental.checkify", "jax.experimental.compute_on", "jax.experimental.rnn",
    "jax.experimental.multihost_utils", "jax.experimental.layout",
    "jax.experimental.xla_metadata",
]

_ENUMERATE = """
import gc, importlib, json, sys
for name in sys.argv[1:]:
  try:
    importlib.import_module(name)
  except ImportError:
    pass
from jax.extend import core
print(json.dumps(sorted({o.name for o in gc.get_objects() if isinstance(o, core.Primitive)})))
"""


@pytest.fixture(scope="module")
def jax_primitives() -> set:
  out = subprocess.run([sys.executable, "-c", _ENUMERATE, *_DEFINING_MODULES],
                       capture_output=True, text=True, check=True)
  return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _ruled() -> set:
  return {str(p) for p in registry.registered_primitives()}


def test_enumeration_finds_the_primitives_we_rule(jax_primitives):
  # Guards the enumeration itself: a broken import list would find too few.
  assert len(jax_primitives) > 300
  assert {"sin", "dot_general", "scan", "pallas_call", "bcoo_dot_general", "psum"} <= \
      jax_primitives


def test_every_primitive_has_a_rule_or_a_reason(jax_primitives):
  unaccounted = sorted(jax_primitives - _ruled() - set().union(
      *(f.primitives for f in unsupported.FAMILIES.values())))
  assert not unaccounted, (
      f"JAX primitives with neither a graph rule nor a reason in "
      f"jax2tf/graph/unsupported.py: {unaccounted}")


def test_no_listed_primitive_has_a_rule():
  listed = set().union(*(f.primitives for f in unsupported.FAMILIES.values()))
  stale = sorted(listed & _ruled())
  assert not stale, f"listed as unsupported but ruled, remove them: {stale}"


def test_families_do_not_overlap():
  seen = {}
  for key, family in unsupported.FAMILIES.items():
    for name in family.primitives:
      assert name not in seen, f"{name} is in both {seen[name]} and {key}"
      seen[name] = key


def test_missing_rule_error_gives_the_family_reason():
  import numpy as np

  # A sparse matrix product: the error names the primitive and why.
  from jax.experimental import sparse

  import jax2tf

  def f(x):
    return (sparse.BCOO.fromdense(x, nse=3) @ x).sum()

  with pytest.raises(NotImplementedError) as e:
    jax2tf.convert(f, native_serialization=False)(np.eye(3, dtype=np.float32))
  msg = str(e.value)
  assert "'bcoo_fromdense'" in msg and "jax.experimental.sparse" in msg, msg
  assert "native_serialization=True" in msg, msg
