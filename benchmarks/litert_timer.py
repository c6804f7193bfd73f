"""Times flatbuffers on LiteRT in a process of their own.

    python -m benchmarks.litert_timer REQUEST.json

The TFLite suite converts in a process that also holds JAX, TF, both
converters and the models; timing there moved ResNet-50's ratios by 10-20%
from one run to the next. This process imports only LiteRT and NumPy: it
loads each flatbuffer named in the request, runs it once on the input, and
times the flatbuffers round-robin with the suites' shared timer. It prints
one JSON object, {name: median seconds per call}.

The request: {"flatbuffers": {name: path}, "input": path of a .npy,
"threads": n, "settings": the fields of timing.Settings}.
"""

import json
import sys

import numpy as np

from benchmarks import timing


def runner(content: bytes, threads: int, x: np.ndarray):
  """A call of the flatbuffer's serving signature on `x`, planned for its size."""
  from ai_edge_litert import interpreter  # pylint: disable=import-outside-toplevel

  litert = interpreter.Interpreter(model_content=content, num_threads=threads)
  signature = litert.get_signature_runner("serving_default")
  (name,) = signature.get_input_details()
  signature(**{name: x})  # sizes and plans the tensors for this batch
  return lambda: signature(**{name: x})


def main(argv=None) -> int:
  (request_path,) = argv if argv is not None else sys.argv[1:]
  with open(request_path) as f:
    request = json.load(f)
  x = np.load(request["input"])
  calls = {}
  for name, path in request["flatbuffers"].items():
    with open(path, "rb") as f:
      calls[name] = runner(f.read(), request["threads"], x)
  times = timing.round_robin(calls, timing.Settings(**request["settings"]))
  print(json.dumps(times))
  return 0


if __name__ == "__main__":
  sys.exit(main())
