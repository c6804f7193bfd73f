"""Cases of the sharding family (sharding.py): placement is an identity, or an annotation.

That the constraint becomes an XlaSharding annotation only with enable_xla=True
is checked by tests/graph/test_structural.py.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import layout
from jax.experimental.xla_metadata import set_xla_metadata

from tests.support import recorded
from tests.support.case import Cases, case, rand, refused


def _single():
  return jax.sharding.SingleDeviceSharding(jax.devices()[0])


CASES = Cases([
    case("device_put", lambda x: jax.device_put(x) * 2, rand((2, 3)), exact=True),
    case("device_put_many", lambda x, y: jax.device_put((x, y)), rand((2, 3)), rand((3,)),
         exact=True),
    case("sharding_constraint", lambda x: lax.with_sharding_constraint(x, _single()) * 2,
         rand((2, 3)), exact=True),
    case("xla_metadata", lambda x: set_xla_metadata(x * 2, note="kept out of TF") + 1,
         rand((2, 3)), exact=True),
    case("sharding_constraint_poly", lambda x: lax.with_sharding_constraint(x, _single()),
         rand((4, 3)), exact=True, polymorphic_shapes=["(b, _)"]),
])

if hasattr(layout, "explicit_layout"):  # jax 0.12 on: relayout to and from a given layout
  CASES.append(case(
      "relayout",
      lambda x: layout.explicit_layout(in_layouts=layout.Layout((1, 0)))(jnp.sin)(x) * 2,
      rand((2, 3)),
      refuse=refused("relayout", "JAX lowers it to a LayoutConstraint custom call, which "
                     "TensorFlow has no handler for", "native")))

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/sharding.json.
CASES[:] = recorded.apply(CASES, "tflite_litert", "sharding")
CASES[:] = recorded.apply(CASES, "tfjs", "sharding")
