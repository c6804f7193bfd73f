"""Placement annotations dropped for consumers that run on one device.

`with_sharding_constraint`, `jit`'s shardings and `compute_on` annotate
values with where they live: Shardy's `sdy` ops and attributes, GSPMD's
`Sharding` custom call, the `annotate_device_placement` custom call. XLA
reads them to partition a program over devices. A TFLite model runs on one
device, where each annotation is the identity on its operand, and the
converters refuse them: litert-converter cannot parse the `sdy` dialect at
all, and TF's TFLite converter has no lowering for the custom calls. The
`tf_xla` pipeline keeps them, for TF's XLA partitions with them.
"""

from jax.extend.mlir import ir

from jax2tf.native import module_patterns
from jax2tf.native import stablehlo_values as values

# Custom calls whose one result is their one operand, placed.
_IDENTITY_CUSTOM_CALLS = frozenset({"Sharding", "annotate_device_placement"})
# Shardy's argument and result attributes (a sharding, a sharding rule).
_SDY_ATTRIBUTE_PREFIX = "sdy."


def _is_identity_annotation(op) -> bool:
  if len(op.operands) != 1 or len(op.results) != 1:
    return False
  if op.operands[0].type != op.results[0].type:
    return False
  if op.name == "sdy.sharding_constraint":
    return True
  target = ir.StringAttr(op.attributes["call_target_name"]).value
  return target in _IDENTITY_CUSTOM_CALLS


def _drop_annotation(op):
  if _is_identity_annotation(op):
    module_patterns.replace(op, op.operands[0])


def _without_sdy(attrs: ir.ArrayAttr) -> ir.ArrayAttr:
  kept = []
  for entry in attrs:
    entry = ir.DictAttr(entry)
    named = [entry[i] for i in range(len(entry))]
    kept.append(
      ir.DictAttr.get(
        {n.name: n.attr for n in named if not n.name.startswith(_SDY_ATTRIBUTE_PREFIX)}
      )
    )
  return ir.ArrayAttr.get(kept)


def _drop_function_shardings(op):
  for key in ("arg_attrs", "res_attrs"):
    if key in op.attributes:
      op.attributes[key] = _without_sdy(ir.ArrayAttr(op.attributes[key]))


def _strip_sdy_attributes(op):
  # Iterating an op's attributes gives their names.
  for name in [n for n in op.attributes if n.startswith(_SDY_ATTRIBUTE_PREFIX)]:
    del op.attributes[name]


def _drop_unread_mesh(op):
  # A mesh is a symbol the annotations name. With every annotation gone but
  # Shardy's attributes on other ops (results of calls, say), those go and
  # the mesh with them; an op of Shardy's still partitioning (a
  # `manual_computation`) keeps them all, and the converter names it.
  module = values.enclosing(op, "builtin.module")
  found = []
  values.walk(module, found.append)
  if any(o.name.startswith(_SDY_ATTRIBUTE_PREFIX) and o.name != "sdy.mesh" for o in found):
    return
  for o in found:
    _strip_sdy_attributes(o)
  op.erase()


DROP_PLACEMENT_ANNOTATIONS = (
  module_patterns.Pattern(
    "drop_placement_annotations",
    ("sdy.sharding_constraint", "stablehlo.custom_call"),
    _drop_annotation,
  ),
  module_patterns.Pattern("drop_function_shardings", ("func.func",), _drop_function_shardings),
  module_patterns.Pattern("drop_unread_meshes", ("sdy.mesh",), _drop_unread_mesh),
)
