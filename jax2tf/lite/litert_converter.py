"""StableHLO to a `.tflite` flatbuffer with the standalone LiteRT converter.

`litert-converter` (pip; no TensorFlow) parses a StableHLO module in its own
MLIR, legalizes it into TFLite operators (leaving some StableHLO ops as
LiteRT's builtin `STABLEHLO_*` operators) and writes the flatbuffer with one
signature. Its refusals come as the text of MLIR diagnostics located in the
user's source; the module's own locations name the JAX primitive each op
was lowered from (`"jit(f)/mul"`), so a refusal here names the op, the
primitive and the line of code.

Nothing here imports TensorFlow.
"""

import dataclasses
import os
import re
from collections.abc import Sequence
from typing import NamedTuple

from jax2tf.deploy import provenance
from jax2tf.lite import litert_loops, mlir_types
from jax2tf.lite.errors import TFLiteConversionError
from jax2tf.native.module_rewrite import primitive_of

SIGNATURE = "serving_default"
INSTALL = 'pip install "jax2tf[litert]" (the litert-converter package)'


class LiteRTConversionError(TFLiteConversionError):
  """litert-converter refused the module: `problems` lists each op it
  could not convert, with the JAX primitive that emitted it."""

  def __init__(self, message: str, problems: Sequence["Problem"] = ()):
    super().__init__(message)
    self.problems = tuple(problems)

  @property
  def primitives(self) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.primitive for p in self.problems))


@dataclasses.dataclass(frozen=True)
class Problem:
  """One op the converter could not convert."""

  op: str
  primitive: str  # the JAX primitive, or "unknown"
  where: str | None  # "file.py:12", the user's line that applied it
  detail: str = ""
  # The dtypes of its operands ("uint8"): LiteRT has most operators for
  # some dtypes only.
  on: tuple[str, ...] = ()

  def describe(self) -> str:
    on = f" on {', '.join(self.on)}" if self.on else ""
    at = f" (at {self.where})" if self.where else ""
    detail = f": {self.detail}" if self.detail else ""
    return f"{self.op}{on}, emitted for the JAX primitive {self.primitive}{at}{detail}"


def _api():
  try:
    from litert_converter import converter_api_ext  # pylint: disable=import-outside-toplevel
    from litert_converter.mlir import ir, passmanager  # pylint: disable=import-outside-toplevel
  except ModuleNotFoundError as e:
    raise ImportError(f'to_tflite(route="litert") needs the LiteRT converter: {INSTALL}') from e
  return converter_api_ext, ir, passmanager


def is_installed() -> bool:
  try:
    _api()
  except ImportError:
    return False
  return True


def _config(api):
  config = api.ConvertToTFLConfig()
  # JAX's infinities stay infinite: by default the converter writes +-inf
  # constants as the largest finite floats (the max of an empty slice would
  # be -3.4e38, x * inf finite).
  config.canonicalizing_inf_as_min_max_float = False
  return config


@dataclasses.dataclass(frozen=True)
class SignatureModule:
  """One signature of a model: a StableHLO module whose `main` takes the
  inputs and returns the outputs, in order, and their names."""

  name: str
  module_text: str
  input_names: tuple[str, ...]
  output_names: tuple[str, ...]


def convert(
  module_text: str,
  *,
  input_names: Sequence[str],
  output_names: Sequence[str],
  signature: str = SIGNATURE,
) -> bytes:
  """The flatbuffer of the StableHLO module `module_text` (whose `main`
  takes the inputs and returns the outputs, in order), with one signature
  `signature` naming them `input_names` and `output_names`.

  Raises:
    LiteRTConversionError: the converter refused the module; the message
      names each op it could not convert and the JAX primitive behind it.
    ImportError: litert-converter is not installed.
  """
  return convert_signatures(
    [SignatureModule(signature, module_text, tuple(input_names), tuple(output_names))]
  )


def convert_signatures(signatures: Sequence[SignatureModule]) -> bytes:
  """The flatbuffer of several modules merged into one model, a signature
  each (`convert` for one). Each module's `main` is renamed after its
  signature, so that the converter can merge them; the flatbuffer then
  holds constants of equal content once."""
  api, ir, passmanager = _api()
  context = ir.Context()
  api.prepare_mlir_context(context)
  with context, ir.Location.unknown():
    modules = [_parse(ir, s.module_text) for s in signatures]
    for s, module in zip(signatures, modules):
      _check_arity(ir, module, s.input_names, s.output_names)
    if len(modules) == 1:
      module, (s,) = modules[0], signatures
      api.set_signature(module.operation, s.name, list(s.input_names), list(s.output_names))
    else:
      module = _merged(api, ir, signatures, modules)
    try:
      api.run_convert_to_tfl_passes(module, passmanager.PassManager(), _config(api))
    except Exception as e:  # the binding raises a plain ValueError
      raise _refusal("cannot legalize", str(e), module) from e
    _refuse_what_no_runtime_runs(module)
    # The exporter writes a loop only with its regions outlined.
    litert_loops.outline_loops(ir, module)
    try:
      return api.export_flatbuffer_to_bytes(module.operation)
    except Exception as e:  # the binding raises a plain ValueError
      raise _refusal("cannot write", str(e), module) from e


def _parse(ir, text: str):
  try:
    return ir.Module.parse(text)
  except Exception as e:  # the binding raises a plain MLIRError/ValueError
    raise LiteRTConversionError(
      f"litert-converter cannot read the module (its MLIR is older or newer than JAX's): "
      f"{_first_errors(str(e))}. Remedy: install the litert-converter version this "
      f"package pins ({INSTALL})."
    ) from e


def _merged(api, ir, signatures, modules):
  """`modules` merged into one, each `main` renamed after its signature
  (unless a function of some module has that name already), with each
  signature set on its function."""
  taken = {name for module in modules for name in _symbols(ir, module)}
  functions = []
  for i, (s, module) in enumerate(zip(signatures, modules)):
    function = s.name if s.name not in taken else f"{s.name}_signature_{i}"
    _main(ir, module).attributes["sym_name"] = ir.StringAttr.get(function)
    functions.append(function)
  try:
    merged = api.merge_modules(modules)
  except Exception as e:  # the binding raises a plain ValueError
    raise LiteRTConversionError(
      f"litert-converter cannot merge the modules of the signatures: {e}"
    ) from e
  by_name = {
    ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
    for op in merged.body.operations
    if op.operation.name == "func.func"
  }
  for s, function in zip(signatures, functions):
    api.set_signature(by_name[function], s.name, list(s.input_names), list(s.output_names))
  return merged


def _symbols(ir, module) -> set[str]:
  return {
    ir.StringAttr(op.operation.attributes["sym_name"]).value
    for op in module.body.operations
    if "sym_name" in op.operation.attributes
  }


def _main(ir, module):
  for op in module.body.operations:
    op = op.operation
    if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
      return op
  raise ValueError("the module has no function `main` to convert")


def _check_arity(ir, module, input_names, output_names) -> None:
  # The converter reads past the end of a shorter list of names (it fails
  # with a request for billions of elements).
  main = _main(ir, module)
  function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
  for what, names, count in (
    ("inputs", input_names, len(function_type.inputs)),
    ("outputs", output_names, len(function_type.results)),
  ):
    if len(names) != count:
      raise ValueError(
        f"{len(names)} {what} named ({', '.join(names)}), but the module's main has {count}"
      )


# "file.py:3:7: error: failed to legalize operation 'tfl.mul' that was ...".
# The first follows the binding's own words ("Failed to run converter passes: ").
_ERROR = re.compile(r"(?m)(?:^|\s)(?:(\S+?):(\d+):(\d+): )?error: (.*)$")
# The op a diagnostic is about: "failed to legalize operation 'tfl.mul'", or
# "'mhlo.gather' op Dynamic shaped operand is not supported".
_NAMED_OP = re.compile(r"operation '([\w.]+)'|^'([\w.]+)' op\b")
# The converter's list of TF ops LiteRT has builtin kernels for only through
# the Flex delegate: "tf.Complex(tensor<4x5xf32>, ...) -> ...".
_TF_OP = re.compile(r"(?m)^\s*(tf\.\w+)\(")
# A file location in MLIR's spelling: "file.py":3:7.
_FILE_LOCATION = re.compile(r'"([^"]+)":(\d+):(\d+)')


# Ops the flatbuffer holds as LiteRT operators (STABLEHLO_CUSTOM_CALL) that
# no LiteRT runtime runs: a custom call names a handler of XLA's (its Eigh,
# an SVD) that LiteRT has none of. Written, they would fail when the model
# is loaded ("Didn't find op for builtin opcode").
_NO_RUNTIME_KERNEL = frozenset({"stablehlo.custom_call"})


def _refuse_what_no_runtime_runs(module) -> None:
  # Every conversion passes here: the op names alone first, the locations
  # (long strings on a deep model) only for a refusal.
  if not _holds_any(module.operation, _NO_RUNTIME_KERNEL):
    return
  problems = [
    Problem(o.name, o.primitive, o.where, f"no LiteRT kernel runs its {_operator(o.name)}", o.on)
    for o in _ops(module)
    if o.name in _NO_RUNTIME_KERNEL
  ]
  if problems:
    raise _error("leaves ops that LiteRT cannot run in", list(dict.fromkeys(problems)), "")


def _holds_any(op, names: frozenset[str]) -> bool:
  """Whether an op nested in `op` is named one of `names`."""
  for region in op.regions:
    for block in region:
      for inner in block.operations:
        if inner.operation.name in names or _holds_any(inner.operation, names):
          return True
  return False


def _operator(name: str) -> str:
  """The LiteRT operator a StableHLO op is written as (STABLEHLO_CUSTOM_CALL)."""
  return "STABLEHLO_" + name.split(".", 1)[1].upper()


def _refusal(what: str, message: str, module) -> LiteRTConversionError:
  ops = _ops(module)
  problems: list[Problem] = []
  for file, line, column, text in _ERROR.findall(message):
    named = _NAMED_OP.search(text)
    op_name = (named.group(1) or named.group(2)) if named else None
    # The diagnostic quotes the whole op after a colon; its first words say why.
    detail = text.split(": %", 1)[0].strip()
    at = (file, line, column) if file else None
    matching = [
      o for o in ops if (op_name is None or o.name == op_name) and (at is None or at in o.files)
    ]
    if not matching and op_name is not None:
      matching = [o for o in ops if o.name == op_name]
    if not matching and op_name is not None and at is not None:
      # An op the legalization made and did not keep: the ops at its
      # location say which primitive (where they agree) and which line.
      located = [o for o in ops if at in o.files]
      primitives = {o.primitive for o in located}
      if located:
        primitive = primitives.pop() if len(primitives) == 1 else "unknown"
        matching = [_Op(op_name, primitive, {at}, located[0].where, ())]
    unknown = _Op(op_name or "?", "unknown", set(), None, ())
    for o in matching[:1] or [unknown]:
      problems.append(Problem(o.name, o.primitive, o.where, detail, o.on))
  for tf_op in dict.fromkeys(_TF_OP.findall(message)):
    o = next((o for o in ops if o.name == tf_op), _Op(tf_op, "unknown", set(), None, ()))
    problems.append(
      Problem(
        tf_op, o.primitive, o.where, "a TF op that LiteRT runs only through the Flex delegate", o.on
      )
    )
  if not problems:
    # The exporter fails without a word on an op it has no operator for.
    builtin = _stablehlo_operators()
    problems = [
      Problem(o.name, o.primitive, o.where, "no LiteRT operator", o.on)
      for o in ops
      if not _exportable(o.name, builtin)
    ]
  return _error(what, list(dict.fromkeys(problems)), message)


def _error(what: str, problems: list[Problem], message: str) -> LiteRTConversionError:
  if problems:
    listed = "\n  ".join(p.describe() for p in problems)
  else:
    listed = _first_errors(message) or "(the converter gives no reason)"
  return LiteRTConversionError(
    f"to_tflite (route 'litert'): litert-converter {what} the module:\n  {listed}\n"
    "Remedies: route='graph' or route='native' (TF's converter, with TensorFlow installed); "
    "compute the primitive differently (outside the converted function, or with other "
    "JAX operations).",
    problems,
  )


class _Op(NamedTuple):
  name: str
  primitive: str  # the JAX primitive, or "unknown"
  files: set  # its file locations, ("file.py", line, column)
  where: str | None  # "file.py:12", the user's line that applied it
  on: tuple[str, ...]  # the dtypes of its operands


def _ops(module) -> list[_Op]:
  """Every op of the module, outermost first."""
  found = []

  def visit(op):
    for region in op.regions:
      for block in region:
        for inner in block.operations:
          inner = inner.operation
          location = str(inner.location)
          located = _FILE_LOCATION.findall(location)
          files = set(located)
          # The innermost frame of the user's code: a function of a library
          # passed as it is (jnp.linalg.pinv) is located in this package's
          # wrapper first.
          user = [(f, line) for f, line, _ in located if provenance.is_user_file(f)]
          where = f"{os.path.basename(user[0][0])}:{user[0][1]}" if user else None
          on = mlir_types.tensor_dtypes(" ".join(str(v.type) for v in inner.operands))
          found.append(_Op(inner.name, primitive_of(location), files, where, tuple(on)))
          visit(inner)

  visit(module.operation)
  return found


def _stablehlo_operators() -> frozenset[str]:
  """The StableHLO ops LiteRT's flatbuffer holds as builtin operators, by
  the names in the converter's own schema (STABLEHLO_DOT_GENERAL is
  stablehlo.dot_general)."""
  try:
    from litert_converter import schema_py_generated  # pylint: disable=import-outside-toplevel
  except ImportError:
    return frozenset()
  return frozenset(
    "stablehlo." + k[len("STABLEHLO_") :].lower()
    for k in vars(schema_py_generated.BuiltinOperator)
    if k.startswith("STABLEHLO_")
  )


def _exportable(name: str, builtin: frozenset[str]) -> bool:
  dialect = name.split(".", 1)[0]
  if dialect in ("tfl", "arith", "func", "quantfork", "quant", "builtin"):
    return True
  return name in builtin or name == "stablehlo.return"


def _first_errors(text: str, limit: int = 3, width: int = 300) -> str:
  errors = [m[3].split(": %", 1)[0] for m in _ERROR.findall(text)][:limit]
  if not errors:
    errors = [text.strip().splitlines()[0]] if text.strip() else []
  return "; ".join(e if len(e) <= width else e[:width] + "..." for e in errors)
