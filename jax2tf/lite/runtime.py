"""Running a `.tflite` model on the LiteRT interpreter (`ai-edge-litert`)."""

import numpy as np

from jax2tf.deploy.signature import output_index

SIGNATURE = "serving_default"


def _litert():
  try:
    from ai_edge_litert import interpreter  # pylint: disable=import-outside-toplevel
  except ModuleNotFoundError as e:
    raise ImportError(
      "running a .tflite model needs the LiteRT interpreter: "
      'pip install "jax2tf[tflite]" (the ai-edge-litert package)'
    ) from e
  return interpreter


def check_installed():
  """Raises ImportError, saying what to install, where LiteRT is missing."""
  _litert()


def interpreter(model: bytes, num_threads: int | None = None):
  litert = _litert()
  return litert.Interpreter(model_content=bytes(model), num_threads=num_threads)


def run(
  model: bytes,
  *args,
  input_names=None,
  num_threads: int | None = None,
  signature: str = SIGNATURE,
  **named,
):
  """The model's outputs, as a list in the order of JAX's flattened result.

  Inputs go by name (`run(model, x=..., y=...)`), or positionally in the JAX
  function's order: that order is `input_names`, else the `input_names` of a
  `LiteModel` from `to_tflite` (a flatbuffer's signature lists its inputs by
  name only, so a model read from a file with several inputs needs names).
  Polymorphic dimensions take the sizes of the inputs. `signature`: the
  signature to run, for a model with several (`to_tflite_signatures`).
  """
  litert_interpreter = interpreter(model, num_threads)
  available = litert_interpreter.get_signature_list()
  if signature not in available:
    raise ValueError(f"signature: the model has {sorted(available)}, not {signature!r}")
  runner = litert_interpreter.get_signature_runner(signature)
  details = runner.get_input_details()
  named = name_inputs(model, args, named, input_names, signature, list(details))
  feed = {}
  for name, arg in named.items():
    want = np.dtype(details[name]["dtype"])
    arg = np.asarray(arg)
    if arg.dtype != want:
      raise TypeError(f"input {name!r}: the model takes {want}, got {arg.dtype}")
    feed[name] = arg
  outputs = invoke(runner, feed)
  return [np.asarray(outputs[k]) for k in sorted(outputs, key=output_index)]


def name_inputs(model, args, named: dict, input_names, signature: str, names) -> dict:
  """{input name: argument}: the positional `args` named in the order of
  `input_names` (else the one the model carries, see `_input_order`; a
  model of one input needs none), with the `named` ones; raises TypeError
  unless they are exactly the model's inputs `names`."""
  if args:
    order = input_names if input_names is not None else _input_order(model, signature)
    if order is None and len(names) == 1:
      order = tuple(names)
    if order is None:
      raise TypeError(
        f"the model has inputs {sorted(names)}; pass them by name, or give input_names "
        "for positional inputs"
      )
    if len(order) != len(args):
      raise TypeError(f"the model takes {len(order)} inputs ({', '.join(order)}), got {len(args)}")
    named = {**dict(zip(order, args)), **named}
  missing, unknown = set(names) - set(named), set(named) - set(names)
  if missing or unknown:
    raise TypeError(
      f"the model's inputs are {sorted(names)}; missing {sorted(missing)}, unknown {sorted(unknown)}"
    )
  return named


def _input_order(model, signature: str):
  """The positional order of the inputs of `signature` that the model
  carries: a `LiteModel`'s `input_names` (its one signature), or the
  `signature_inputs` of a model with several."""
  several = getattr(model, "signature_inputs", None)
  if several is not None:
    return several.get(signature)
  if signature == SIGNATURE:
    return getattr(model, "input_names", None)
  return None


def invoke(runner, feed: dict) -> dict:
  """`runner(**feed)` for a signature runner of `interpreter(...)`, also where
  an output has no elements.

  LiteRT computes such an output (its shape, and no bytes), but the Python
  wrapper refuses to read a tensor of 0 bytes ("Invalid tensor size."); an app
  reading it through LiteRT's C, C++ or Java API gets its shape and no data.
  The runner has invoked the model when it fails to read, so the outputs are
  read one by one here, the empty ones from their shapes.
  """
  try:
    return runner(**feed)
  except ValueError as e:
    if "Invalid tensor size" not in str(e):
      raise
  outputs = {}
  for name, details in runner.get_output_details().items():
    shape = tuple(details["shape"])
    if 0 in shape:
      outputs[name] = np.zeros(shape, details["dtype"])
    else:
      # The runner's interpreter and subgraph: LiteRT's SignatureRunner has
      # no public accessor for the tensors of its subgraph.
      outputs[name] = runner._interpreter.get_tensor(details["index"], runner._subgraph_index)  # noqa: SLF001
  return outputs
