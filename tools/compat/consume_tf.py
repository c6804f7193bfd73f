"""Load and run a producer's SavedModels on the installed TensorFlow.

TF and numpy only (no jax, no jax2tf): runs in a throwaway environment with
one TensorFlow release.
  python consume_tf.py PRODUCED_DIR
Prints one RESULT line per SavedModel of every manifest under PRODUCED_DIR.
"""

import sys

import numpy as np
import tensorflow as tf
from compare import check_all, consumer


def load(path, artifact):
  model = tf.saved_model.load(path)

  def run(args):
    return [np.asarray(t) for t in tf.nest.flatten(model.f(*[tf.constant(a) for a in args]))]

  return run


def main():
  me = consumer("tensorflow", tf.__version__)
  print(f"consumer TensorFlow {tf.__version__} on Python {me['python']}", flush=True)
  check_all(sys.argv[1], "savedmodel", me, load)


if __name__ == "__main__":
  main()
