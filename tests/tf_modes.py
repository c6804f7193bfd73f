"""The TF execution modes the tests compare; they live in jax2tf.testing.tf_modes,
which the fuzzer (jax2tf.testing.fuzz) shares."""

from jax2tf.testing.tf_modes import (  # noqa: F401
  TF_MODES,
  graph_op_types,
  in_mode,
  run_in_mode,
  tensor_specs,
  to_numpy,
)
