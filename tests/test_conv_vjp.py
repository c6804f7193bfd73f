"""jax2tf/autodiff/conv_vjp.py: the VJP of convolutions whose transposed padding is
symbolic, compared with JAX's VJP at concrete shapes."""

import jax
import numpy as np
import pytest
from jax import export, lax

from jax2tf.autodiff import conv_vjp

# (padding, window, strides, feature groups, rhs dilation, layout)
CONFIGS = [
    ("SAME", 3, 2, 1, 1, "NHWC"),
    ("SAME", 2, 3, 1, 1, "NCHW"),
    ("VALID", 3, 2, 1, 1, "NHWC"),
    ("VALID", 3, 2, 3, 2, "NCHW"),
    ("SAME", 3, 2, 3, 1, "NHWC"),  # depthwise
    (((1, 2), (0, 1)), 3, 3, 1, 2, "NHWC"),
    (((-1, 2), (2, 0)), 2, 2, 3, 1, "NCHW"),
]
SHAPES = [(2, 7, 9), (1, 8, 5), (1, 5, 6), (1, 4, 4)]


def _conv(padding, window, stride, groups, rhs_dilation, layout):
  dnums = ("NHWC", "HWIO", "NHWC") if layout == "NHWC" else ("NCHW", "OIHW", "NCHW")

  def f(x, w):
    return lax.conv_general_dilated(x, w, (stride, stride), padding,
                                    rhs_dilation=(rhs_dilation, rhs_dilation),
                                    dimension_numbers=dnums, feature_group_count=groups)

  kernel = ((window, window, 3 // groups, 6) if layout == "NHWC"
            else (6, 3 // groups, window, window))
  return f, kernel


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_vjp_matches_jax(config):
  f, kernel_shape = _conv(*config)
  layout = config[-1]
  spec = "b, h, w, 3" if layout == "NHWC" else "b, 3, h, w"
  x_aval = jax.ShapeDtypeStruct(export.symbolic_shape(spec), np.float32)
  w_aval = jax.ShapeDtypeStruct(kernel_shape, np.float32)
  # JAX's own VJP cannot be traced for these symbolic shapes.
  with pytest.raises(ValueError, match="padding argument to conv_general_dilated"):
    export.export(jax.jit(lambda x, w, ct: jax.vjp(f, x, w)[1](ct)))(
        x_aval, w_aval, jax.eval_shape(f, x_aval, w_aval))
  rewritten = conv_vjp.with_symbolic_conv_vjp(lambda x, w: [f(x, w)], [x_aval, w_aval])
  assert rewritten is not None
  vjp = jax.jit(lambda x, w, ct: jax.vjp(lambda a, b: rewritten(a, b)[0], x, w)[1](ct))
  exp = export.export(vjp)(x_aval, w_aval, jax.eval_shape(f, x_aval, w_aval))
  rng = np.random.default_rng(0)
  for b, h, w in SHAPES:
    x_shape = (b, h, w, 3) if layout == "NHWC" else (b, 3, h, w)
    x = rng.normal(size=x_shape).astype(np.float32)
    kernel = rng.normal(size=kernel_shape).astype(np.float32)
    y = f(x, kernel)
    if 0 in y.shape:
      continue
    ct = rng.normal(size=y.shape).astype(np.float32)
    for got, want in zip(exp.call(x, kernel, ct), jax.vjp(f, x, kernel)[1](ct)):
      assert got.shape == want.shape
      np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_static_or_unstrided_convolutions_are_left_to_jax():
  f, kernel_shape = _conv("SAME", 3, 1, 1, 1, "NHWC")
  x_aval = jax.ShapeDtypeStruct(export.symbolic_shape("b, h, w, 3"), np.float32)
  w_aval = jax.ShapeDtypeStruct(kernel_shape, np.float32)
  assert conv_vjp.with_symbolic_conv_vjp(lambda x, w: [f(x, w)], [x_aval, w_aval]) is None
