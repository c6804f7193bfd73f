"""What a serialized StableHLO module (the `module` attr of XlaCallModule) says
about itself: the StableHLO version it was written at, and its entry signature.

The version comes from the MLIR bytecode header, which a StableHLO portable
artifact fills with "StableHLO_v<version>" (the target version it was
serialized for). Reading the header needs no MLIR at all, so it works for
modules newer than the installed JAX could deserialize.
"""

from typing import Any

MAGIC = b"ML\xefR"
PRODUCER_PREFIX = "StableHLO_v"


class NotBytecodeError(ValueError):
  """The bytes are not MLIR bytecode."""


def _prefix_varint(data: bytes, pos: int) -> tuple[int, int]:
  """(value, next position) of MLIR bytecode's prefix varint at `pos`.

  The trailing zero bits of the first byte count the bytes that follow; a
  zero first byte means eight more bytes hold the value in full.
  """
  if pos >= len(data):
    raise NotBytecodeError("the bytecode header ends inside its version number")
  first = data[pos]
  if first == 0:
    if pos + 9 > len(data):
      raise NotBytecodeError("the bytecode header ends inside its version number")
    return int.from_bytes(data[pos + 1 : pos + 9], "little"), pos + 9
  extra = (first & -first).bit_length() - 1
  end = pos + 1 + extra
  if end > len(data):
    raise NotBytecodeError("the bytecode header ends inside its version number")
  return int.from_bytes(data[pos:end], "little") >> (extra + 1), end


def header(module: bytes) -> tuple[int, str]:
  """(MLIR bytecode version, producer string) of serialized MLIR bytecode."""
  if not module.startswith(MAGIC):
    raise NotBytecodeError(
      f"expected MLIR bytecode (starting with {MAGIC!r}), got {bytes(module[:4])!r}"
    )
  bytecode_version, pos = _prefix_varint(module, len(MAGIC))
  end = module.find(b"\x00", pos)
  if end < 0:
    raise NotBytecodeError("the bytecode header has no end to its producer string")
  return bytecode_version, module[pos:end].decode("utf-8", errors="replace")


def stablehlo_version(module: bytes) -> str | None:
  """The StableHLO version of a portable artifact; None when the producer is
  not StableHLO (plain MLIR bytecode, as very old exports wrote)."""
  _, producer = header(module)
  if not producer.startswith(PRODUCER_PREFIX):
    return None
  return producer[len(PRODUCER_PREFIX) :]


def _type_info(t: Any) -> dict:
  from jax.interpreters import mlir  # pylint: disable=import-outside-toplevel

  info: dict[str, Any] = {"type": str(t), "dtype": None, "shape": None}
  try:
    shaped = mlir.ir.ShapedType(t)
  except ValueError:  # a token, or another type without a shape
    return info
  info["dtype"] = str(shaped.element_type)
  if shaped.has_rank:
    dynamic = mlir.ir.ShapedType.get_dynamic_size()
    info["shape"] = [None if d == dynamic else int(d) for d in shaped.shape]
  return info


def entry_signature(module: bytes, entry: str = "main") -> dict:
  """{"inputs": [...], "outputs": [...]} of the module's entry function, each
  {"type", "dtype", "shape"} with None for a dynamic dimension.

  Deserializes with the installed JAX's StableHLO, so it raises for a module
  newer than JAX reads, or one that is not a StableHLO portable artifact.
  """
  from jax.extend import mlir as jex_mlir  # pylint: disable=import-outside-toplevel
  from jax.interpreters import mlir  # pylint: disable=import-outside-toplevel

  ir = mlir.ir
  with mlir.make_ir_context():
    parsed = jex_mlir.deserialize_portable_artifact(bytes(module))
    for op in parsed.body.operations:
      op = op.operation
      if op.name != "func.func" or ir.StringAttr(op.attributes["sym_name"]).value != entry:
        continue
      function_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
      return {
        "inputs": [_type_info(t) for t in function_type.inputs],
        "outputs": [_type_info(t) for t in function_type.results],
      }
  raise ValueError(f"the module has no function named {entry!r}")
