"""What a `.tflite` flatbuffer holds: its operators, read with LiteRT's schema."""

import collections


def _schema():
  try:
    from ai_edge_litert import schema_py_generated  # pylint: disable=import-outside-toplevel
  except ModuleNotFoundError as e:
    raise ImportError('reading a .tflite model needs LiteRT: pip install "jax2tf[tflite]"') from e
  return schema_py_generated


def op_counts(model: bytes) -> collections.Counter:
  """{operator name: count} over every subgraph: builtin operators by their
  TFLite name (FULLY_CONNECTED, CONV_2D, ...), custom and Flex operators by
  their custom code (FlexErfinv, ...)."""
  schema = _schema()
  names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
  root = schema.Model.GetRootAs(bytes(model), 0)
  codes = []
  for i in range(root.OperatorCodesLength()):
    code = root.OperatorCodes(i)
    # Codes above 127 live in BuiltinCode; the deprecated byte field caps at 127.
    builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
    if builtin == schema.BuiltinOperator.CUSTOM:
      codes.append(code.CustomCode().decode())
    else:
      codes.append(names.get(builtin, f"BUILTIN_{builtin}"))
  counts: collections.Counter = collections.Counter()
  for s in range(root.SubgraphsLength()):
    subgraph = root.Subgraphs(s)
    for j in range(subgraph.OperatorsLength()):
      counts[codes[subgraph.Operators(j).OpcodeIndex()]] += 1
  return counts


def flex_ops(model: bytes) -> list[str]:
  """The TF ops the model runs through the Flex delegate."""
  return sorted(op[len("Flex") :] for op in op_counts(model) if op.startswith("Flex"))
