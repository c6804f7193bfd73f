"""Placement annotations on the TFLite routes (jax2tf/native/placement.py):
on one device each is the identity on its operand, so the TFLite pipelines
drop them; the tf_xla pipeline keeps them for TF's XLA to partition with."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

pytest.importorskip("litert_converter", reason="the litert route needs litert-converter")

import jax2tf  # noqa: E402
from jax2tf import lite  # noqa: E402
from jax2tf.native import module_rewrite  # noqa: E402
from tests.cases.calls import _on_host  # noqa: E402
from tests.support import compare  # noqa: E402

_X = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)


def _constrained(x):
  single = jax.sharding.SingleDeviceSharding(jax.devices()[0])
  return jnp.tanh(lax.with_sharding_constraint(x * 2, single))


_FUNCTIONS = {
  "sharding_constraint": (_constrained, None),
  "sharding_constraint_polymorphic": (_constrained, ["(b, _)"]),
  "compute_on_host": (_on_host, None),
}


@pytest.mark.parametrize("route", ["litert", "native"])
@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_annotated_functions_convert_and_compute_what_jax_computes(name, route):
  if route == "native":
    pytest.importorskip("tensorflow")
  fun, polymorphic_shapes = _FUNCTIONS[name]
  model = jax2tf.to_tflite(fun, _X, route=route, polymorphic_shapes=polymorphic_shapes)
  (got,) = lite.run(model, _X)
  compare.assert_same(np.asarray(jax.jit(fun)(_X)), got, tol=(1e-6, 1e-6))


def _module_text(fun):
  return jax.jit(fun).lower(_X).as_text(debug_info=True)


@pytest.mark.parametrize("pipeline", ["litert", "tflite"])
def test_tflite_pipelines_leave_no_annotation(pipeline):
  text = module_rewrite.rewrite(_module_text(_constrained), pipeline)
  assert "sdy." not in text and "Sharding" not in text
  text = module_rewrite.rewrite(_module_text(_on_host), pipeline)
  assert "annotate_device_placement" not in text


def test_tf_xla_pipeline_keeps_the_annotations():
  text = module_rewrite.rewrite(_module_text(_constrained), "tf_xla")
  assert "sdy.sharding_constraint" in text
  text = module_rewrite.rewrite(_module_text(_on_host), "tf_xla")
  assert "annotate_device_placement" in text
