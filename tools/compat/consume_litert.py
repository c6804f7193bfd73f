"""Run a producer's .tflite files on the installed LiteRT (ai-edge-litert).

LiteRT and numpy only: runs in a throwaway environment with one release.
  python consume_litert.py PRODUCED_DIR
"""

import importlib.metadata
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter
from compare import check_all, consumer


def load(path, artifact):
  runner = Interpreter(model_path=path).get_signature_runner("serving_default")
  names = artifact["input_names"]

  def run(args):
    outputs = runner(**dict(zip(names, args)))
    # to_tflite names the outputs output_0, output_1, ... in JAX's order.
    return [np.asarray(outputs[k]) for k in sorted(outputs, key=lambda k: int(k.split("_")[-1]))]

  return run


def main():
  me = consumer("litert", importlib.metadata.version("ai-edge-litert"))
  print(f"consumer ai-edge-litert {me['version']} on Python {me['python']}", flush=True)
  check_all(sys.argv[1], "tflite", me, load)


if __name__ == "__main__":
  main()
