"""Special inputs that LiteRT's kernels get wrong, and JAX's answers for them.

Where a float32 kernel's answer for an input is wrong but the input itself is
JAX's answer, the kernel's result is passed through a SELECT_V2 that picks
the input where a comparison finds it special: two builtin ops after the
kernel, in every subgraph but StableHLO reducer regions (which LiteRT runs
only as one kernel), on both routes. Rules that emitted TF ops for this
instead would give each such primitive several ops in TF too.

- SIN gives +0.0 for -0.0 (XLA keeps -0.0, as sin is odd): the select picks
  x where x == 0.
- EXP gives 0 for NaN (XLA gives NaN): the select picks x where x != x.
"""

import numpy as np

from jax2tf.lite.flatbuffer import Graph
from jax2tf.lite.litert_schema import schema

Op = schema.BuiltinOperator
Options = schema.BuiltinOptions


def _compare(g: Graph, code: int, options_type: int, options, inputs: list[int], like: int):
  """A comparison op of `inputs`, and its bool result shaped like `like`."""
  mask = g.add_tensor_like(like)
  g.tensor(mask).type, g.tensor(mask).quantization = schema.TensorType.BOOL, None
  op = schema.OperatorT()
  op.opcodeIndex, op.inputs, op.outputs = g.opcode_index(code), inputs, [mask]
  op.builtinOptionsType, op.builtinOptions = options_type, options
  return op, mask


def _select_input_where(g: Graph, kernel, mask_of) -> None:
  """Follows `kernel` with SELECT_V2(mask, x, kernel(x)), where `mask_of(x)`
  gives the comparison op and its result."""
  x, result = kernel.inputs[0], kernel.outputs[0]
  compare, mask = mask_of(x)
  kernel.outputs = [g.add_tensor_like(result)]
  select = schema.OperatorT()
  select.opcodeIndex = g.opcode_index(Op.SELECT_V2)
  select.inputs, select.outputs = [mask, x, kernel.outputs[0]], [result]
  select.builtinOptionsType = Options.SelectV2Options
  select.builtinOptions = schema.SelectV2OptionsT()
  at = g.ops.index(kernel) + 1
  g.ops[at:at] = [compare, select]
  g.changed = True


def _float32_kernels(g: Graph, code: int) -> list:
  if g.region:
    return []
  return [
    op
    for op in g.ops
    if g.code(op) == code and g.tensor(op.inputs[0]).type == schema.TensorType.FLOAT32
  ]


def sin_keeps_zero_sign(g: Graph) -> None:
  """SIN(x) becomes SELECT_V2(EQUAL(x, 0), x, SIN(x))."""
  for sin in _float32_kernels(g, Op.SIN):
    name = g.tensor(sin.outputs[0]).name or b"sin"

    def is_zero(x, name=name):
      zero = g.add_constant(np.zeros((), np.float32), name + b"/zero")
      return _compare(g, Op.EQUAL, Options.EqualOptions, schema.EqualOptionsT(), [x, zero], x)

    _select_input_where(g, sin, is_zero)


def exp_keeps_nan(g: Graph) -> None:
  """EXP(x) becomes SELECT_V2(NOT_EQUAL(x, x), x, EXP(x))."""
  for exp in _float32_kernels(g, Op.EXP):
    _select_input_where(
      g,
      exp,
      lambda x: _compare(
        g, Op.NOT_EQUAL, Options.NotEqualOptions, schema.NotEqualOptionsT(), [x, x], x
      ),
    )
