"""What LiteRT can plan ahead in a model with a dynamic batch."""


def operators_left_unsized(model, batch: int) -> list[str]:
  """The operators whose results LiteRT cannot size when it plans a batch:
  dynamic tensors, sized again at every call (and kept off XNNPack), as is
  everything the interpreter runs after the first of them."""
  from ai_edge_litert import interpreter  # pylint: disable=import-outside-toplevel

  runner = interpreter.Interpreter(
    model_content=bytes(model),
    experimental_op_resolver_type=interpreter.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
  )
  for detail in runner.get_input_details():
    runner.resize_tensor_input(detail["index"], [batch, *detail["shape"][1:]])
  runner.allocate_tensors()
  tensors = {t["index"]: t for t in runner.get_tensor_details()}
  unsized = []
  for op in runner._get_ops_details():  # pylint: disable=protected-access
    for i in op["outputs"]:
      t = tensors[i]
      if any(s == -1 and d != batch and d % batch for s, d in zip(t["shape_signature"], t["shape"])):
        unsized.append(f"{op['op_name']} -> {t['name']}")
  return unsized
