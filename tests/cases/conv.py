"""Cases of the convolution family (conv.py): conv_general_dilated in every layout and dtype."""

import numpy as np
from jax import lax

from tests.support import recorded
from tests.support.case import (
  BF16,
  C128,
  F16,
  F64,
  I8,
  I16,
  I32,
  I64,
  U8,
  A,
  Cases,
  case,
  fast_representatives,
  rand,
  refused,
)

CASES = Cases()


# ---------------------------------------------------------------------------
# Random operands.
def _conv(lhs, rhs, **kw):
  return lax.conv_general_dilated(lhs, rhs, **kw)


_CONV_TOL = (1e-4, 1e-4)
CASES.add("conv_nhwc", lambda x, w: _conv(x, w, window_strides=(1, 1), padding="SAME",
                                          dimension_numbers=("NHWC", "HWIO", "NHWC")),
          A(2, 8, 8, 3), A(3, 3, 3, 4), tol=_CONV_TOL)
CASES.add("conv_nchw_strided_padded", lambda x, w: _conv(
    x, w, window_strides=(2, 1), padding=((1, 2), (0, 1)),
    dimension_numbers=("NCHW", "OIHW", "NCHW")), A(2, 3, 9, 7), A(4, 3, 3, 2), tol=_CONV_TOL)
CASES.add("conv_dilated", lambda x, w: _conv(
    x, w, window_strides=(1, 1), padding=((0, 0), (1, 1)), lhs_dilation=(2, 1),
    rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")),
          A(1, 6, 8, 2), A(2, 3, 2, 3), tol=_CONV_TOL)
CASES.add("conv_feature_group", lambda x, w: _conv(
    x, w, window_strides=(1, 1), padding="SAME", feature_group_count=2,
    dimension_numbers=("NHWC", "HWIO", "NHWC")), A(2, 5, 5, 4), A(3, 3, 2, 6), tol=_CONV_TOL)
CASES.add("conv_depthwise", lambda x, w: _conv(
    x, w, window_strides=(1, 1), padding="SAME", feature_group_count=4,
    dimension_numbers=("NHWC", "HWIO", "NHWC")), A(1, 5, 5, 4), A(3, 3, 1, 4), tol=_CONV_TOL,
          slow=True)
CASES.add("conv_batch_group", lambda x, w: _conv(
    x, w, window_strides=(1, 1), padding="VALID", batch_group_count=2,
    dimension_numbers=("NHWC", "HWIO", "NHWC")), A(4, 5, 5, 3), A(2, 2, 3, 4), tol=_CONV_TOL)
# A window larger than the input: JAX's result has no elements.
CASES.add("conv_empty_output", lambda x, w: _conv(x, w, window_strides=(1, 1), padding="VALID"),
          A(1, 2, 3, 3), A(4, 2, 5, 5))
CASES.add("conv_1d", lambda x, w: _conv(x, w, window_strides=(2,), padding="SAME",
                                        dimension_numbers=("NWC", "WIO", "NWC")),
          A(2, 11, 3), A(3, 3, 5), tol=_CONV_TOL)
CASES.add("conv_transpose", lambda x, w: lax.conv_transpose(
    x, w, strides=(2, 2), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
          A(1, 4, 4, 2), A(3, 3, 2, 3), tol=_CONV_TOL)
CASES.add("conv_3d", lambda x, w: _conv(x, w, window_strides=(1, 1, 1), padding="SAME",
                                        dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
          A(1, 4, 4, 4, 2), A(2, 2, 2, 2, 3), tol=_CONV_TOL, slow=True)
CASES.add("conv_bfloat16", lambda x, w: _conv(x, w, window_strides=(1, 1), padding="SAME",
                                              dimension_numbers=("NHWC", "HWIO", "NHWC")),
          A(1, 5, 5, 2, dtype=BF16), A(3, 3, 2, 3, dtype=BF16), tol=(5e-2, 5e-2), slow=True)
CASES.add("conv_float64", lambda x, w: _conv(x, w, window_strides=(1, 1), padding="SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC")),
          A(1, 5, 5, 2, dtype=F64), A(3, 3, 2, 3, dtype=F64), tol=(1e-10, 1e-10), slow=True)
CASES.add("conv_preferred_f32_bf16", lambda x, w: lax.conv_general_dilated(
    x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
    preferred_element_type=np.float32), A(1, 4, 4, 2, dtype=BF16), A(3, 3, 2, 2, dtype=BF16),
          tol=(1e-2, 1e-2), slow=True)
CASES[:] = fast_representatives(CASES, ["conv_float64"])


# ---------------------------------------------------------------------------
# Fixed operands: every parameter of conv_general_dilated.

def in_bf16(f):
  """`f` on bfloat16 copies of its float32 arguments (cast inside the function)."""
  return lambda *args: f(*[a.astype(BF16) for a in args])


def conv(strides=(1, 1), padding=((0, 0), (0, 0)), lhs_dil=None, rhs_dil=None,
         dn=("NHWC", "HWIO", "NHWC"), groups=1, batch_groups=1, preferred=None):
  return lambda x, w: lax.conv_general_dilated(
      x, w, strides, padding, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
      dimension_numbers=dn, feature_group_count=groups, batch_group_count=batch_groups,
      preferred_element_type=preferred)


NCHW = ("NCHW", "OIHW", "NCHW")
CTOL = (1e-4, 1e-4)
x_nhwc = rand((2, 7, 8, 3))
w_hwio = rand((3, 2, 3, 4), seed=1)

CASES += [
    case("conv_nhwc_valid", conv(), x_nhwc, w_hwio, graph_ops=["Conv2D"], tol=CTOL),
    case("conv_nchw_same", conv(padding="SAME", dn=NCHW),
         rand((2, 3, 7, 8)), rand((4, 3, 3, 2), seed=1), graph_ops=["Conv2D"], tol=CTOL),
    case("conv_mixed_layouts", conv(padding=((1, 2), (0, 1)), dn=("NCHW", "HWIO", "NHWC")),
         rand((2, 3, 7, 8)), w_hwio, tol=CTOL, slow=True),
    case("conv_strides_asym_pad", conv(strides=(2, 3), padding=((2, 0), (1, 3))),
         x_nhwc, w_hwio, tol=CTOL),
    case("conv_negative_pad", conv(padding=((-1, -1), (0, -2))), x_nhwc, w_hwio, tol=CTOL,
         slow=True),
    case("conv_rhs_dilation", conv(rhs_dil=(2, 2)), x_nhwc, w_hwio, tol=CTOL),
    case("conv_stride_and_dilation", conv(strides=(2, 1), rhs_dil=(1, 2), padding="SAME"),
         x_nhwc, w_hwio, tol=CTOL),
    case("conv_transposed", conv(padding=((2, 1), (1, 2)), lhs_dil=(2, 2)),
         x_nhwc, w_hwio, graph_ops=["Conv2DBackpropInput"], tol=CTOL),
    case("conv_transposed_big_pad", conv(padding=((4, 0), (-1, 3)), lhs_dil=(3, 2)),
         x_nhwc, w_hwio, tol=CTOL, slow=True),
    case("conv_lhs_dil_strided", conv(strides=(2, 2), padding=((1, 1), (2, 1)), lhs_dil=(2, 3),
                                      rhs_dil=(1, 2)), x_nhwc, w_hwio, tol=CTOL),
    case("conv_grouped", conv(groups=3, padding="SAME"),
         rand((2, 7, 8, 6)), rand((3, 3, 2, 6), seed=1), tol=CTOL),
    case("conv_depthwise_nhwc", conv(groups=3, padding="SAME"),
         x_nhwc, rand((3, 3, 1, 6), seed=1), graph_ops=["DepthwiseConv2dNative"], tol=CTOL),
    case("conv_depthwise_uneven_strides", conv(groups=3, strides=(1, 2), rhs_dil=(2, 1)),
         x_nhwc, rand((3, 3, 1, 3), seed=1), tol=CTOL, slow=True),
    case("conv_batch_groups", conv(batch_groups=2),
         rand((4, 5, 5, 3)), rand((2, 2, 3, 6), seed=1), tol=CTOL),
    case("conv_grouped_lhs_dil", conv(groups=2, lhs_dil=(2, 1), padding=((1, 1), (0, 0))),
         rand((2, 5, 5, 4)), rand((2, 2, 2, 6), seed=1), tol=CTOL, slow=True),
    case("conv1d_nwc", lambda x, w: lax.conv_general_dilated(
        x, w, (2,), ((1, 2),), rhs_dilation=(2,), dimension_numbers=("NWC", "WIO", "NWC")),
         rand((2, 11, 3)), rand((3, 3, 4), seed=1), tol=CTOL),
    case("conv1d_ncw_depthwise", lambda x, w: lax.conv_general_dilated(
        x, w, (1,), "SAME", dimension_numbers=("NCH", "OIH", "NCH"), feature_group_count=3),
         rand((2, 3, 9)), rand((6, 1, 3), seed=1), tol=CTOL, slow=True),
    case("conv3d_ndhwc", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 2, 1), "SAME", dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
         rand((1, 4, 5, 6, 2)), rand((2, 3, 2, 2, 3), seed=1), graph_ops=["Conv3D"], tol=CTOL),
    case("conv3d_grouped_lhs_dil", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1, 1), ((1, 0), (0, 1), (1, 1)), lhs_dilation=(2, 1, 1),
        dimension_numbers=("NCDHW", "OIDHW", "NCDHW"), feature_group_count=2),
         rand((1, 4, 3, 4, 4)), rand((4, 2, 2, 2, 2), seed=1), tol=CTOL, slow=True),
    case("conv_f16", conv(padding="SAME"), rand((1, 5, 5, 3), F16),
         rand((3, 3, 3, 2), F16, seed=1), tol=(1e-2, 1e-2)),
    case("conv_bf16", in_bf16(conv()), rand((1, 5, 5, 3)), rand((3, 3, 3, 2), seed=1),
         tol=(2e-2, 1e-1), slow=True),
    case("conv_bf16_pref_f32", in_bf16(conv(preferred=np.float32)),
         rand((1, 5, 5, 3)), rand((3, 3, 3, 2), seed=1), tol=CTOL),
    case("conv_c64", conv(padding="SAME"),
         rand((1, 5, 5, 2), np.complex64), rand((3, 3, 2, 2), np.complex64, seed=1), tol=CTOL),
    case("conv_i32", conv(padding="SAME"),
         rand((1, 5, 5, 2), I32, -50, 50), rand((3, 3, 2, 2), I32, -50, 50, seed=1)),
    case("conv_i8_pref_i32", conv(preferred=np.int32),
         rand((1, 5, 5, 2), I8, -100, 100), rand((3, 3, 2, 2), I8, -100, 100, seed=1),
         slow=True),
    case("poly_conv_batch", conv(padding="SAME"), x_nhwc, w_hwio,
         polymorphic_shapes=["(b, 7, 8, 3)", None], graph_ops=["Conv2D"], tol=CTOL),
    case("poly_conv_spatial_same_strided", conv(strides=(2, 2), padding="SAME"),
         rand((2, 7, 7, 3)), w_hwio, polymorphic_shapes=["(_, b, b, _)", None], tol=CTOL),
    case("poly_conv_nchw_depthwise", conv(groups=3, padding="SAME", dn=NCHW),
         rand((2, 3, 6, 6)), rand((6, 1, 3, 3), seed=1),
         polymorphic_shapes=["(n, 3, h, h)", None], tol=CTOL),
    case("poly_conv_transposed", conv(padding=((2, 1), (1, 2)), lhs_dil=(2, 2)),
         x_nhwc, w_hwio, polymorphic_shapes=["(b, h, w, 3)", None], tol=CTOL),
    case("poly_conv_lhs_dil_3d", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1, 1), ((1, 0), (0, 1), (1, 2)), lhs_dilation=(2, 1, 2),
        dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
         rand((1, 3, 4, 3, 2)), rand((2, 2, 2, 2, 3), seed=1),
         polymorphic_shapes=["(b, d, 4, d, 2)", None], tol=CTOL),
    # 64-bit dtypes
    case("conv_f64", conv(padding="SAME"), rand((1, 5, 5, 2), F64),
         rand((3, 3, 2, 2), F64, seed=1), tol=(1e-10, 1e-6)),
    case("conv_c128_grouped", conv(groups=2), rand((1, 5, 5, 4), C128),
         rand((3, 3, 2, 2), C128, seed=1), tol=(1e-10, 1e-10), slow=True),
]

# ---------------------------------------------------------------------------
# Integer convolutions: without XLA ops, one dot_general of the windows'
# slices with the kernel; sums wrap modulo 2**n as XLA's do.
def _ints(shape, dtype=I32, seed=0, lo=-50, hi=50):
  return rand(shape, dtype, lo, hi, seed=seed)


CASES += [
    case("conv_i32_nchw_strided_dilated",
         conv(strides=(2, 1), padding=((1, 2), (0, 1)), rhs_dil=(1, 2), dn=NCHW),
         _ints((2, 3, 9, 8)), _ints((4, 3, 2, 3), seed=1)),
    case("conv_i32_lhs_dilation", conv(padding=((2, 1), (-1, 2)), lhs_dil=(2, 3)),
         _ints((1, 4, 5, 2)), _ints((3, 2, 2, 3), seed=1)),
    case("conv_i32_grouped", conv(groups=2, padding="SAME", dn=("NCHW", "HWIO", "NHWC")),
         _ints((2, 4, 5, 5)), _ints((3, 3, 2, 6), seed=1)),
    case("conv_i32_batch_groups", conv(batch_groups=2), _ints((4, 5, 5, 3)),
         _ints((2, 2, 3, 6), seed=1)),
    case("conv_i32_wraps", conv(padding="SAME"), _ints((1, 4, 4, 3), lo=-2**31, hi=2**31 - 1),
         _ints((3, 3, 3, 2), seed=1, lo=-2**31, hi=2**31 - 1)),
    case("conv_i8_wraps", conv(), _ints((1, 5, 5, 3), I8, lo=-128, hi=127),
         _ints((2, 2, 3, 2), I8, seed=1, lo=-128, hi=127)),
    case("conv_u8_pref_i16", conv(preferred=np.int16), _ints((1, 5, 5, 3), U8, lo=0, hi=255),
         _ints((2, 2, 3, 2), U8, seed=1, lo=0, hi=255), slow=True),
    case("conv1d_i16_depthwise", lambda x, w: lax.conv_general_dilated(
        x, w, (1,), "SAME", dimension_numbers=("NCH", "OIH", "NCH"), feature_group_count=3),
         _ints((2, 3, 9), I16), _ints((6, 1, 3), I16, seed=1), slow=True),
    case("conv3d_i32", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 2, 1), "SAME", dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
         _ints((1, 3, 4, 3, 2)), _ints((2, 2, 2, 2, 3), seed=1), slow=True),
    case("conv_i64", conv(padding="SAME"), _ints((1, 4, 4, 2), I64, lo=-2**40, hi=2**40),
         _ints((3, 3, 2, 2), I64, seed=1, lo=-2**20, hi=2**20), slow=True),
    case("poly_conv_i32", conv(padding="SAME"), _ints((2, 5, 5, 2)),
         _ints((3, 3, 2, 2), seed=1), polymorphic_shapes=["(b, h, h, 2)", None]),
    # A kernel of symbolic size: its positions, written out one slice each,
    # are only known at run time.
    case("poly_conv_i32_kernel", conv(), _ints((1, 5, 5, 2)), _ints((3, 3, 2, 2), seed=1),
         polymorphic_shapes=[None, "(k, k, 2, 2)"],
         refuse=refused("conv_general_dilated", "TF has no integer Conv kernels for most "
                        "types and ranks, so without XLA ops an integer convolution sums one "
                        "slice of the input per kernel position; with a kernel of symbolic "
                        "size their number is only known at run time (a loop of dynamic "
                        "slices would do, not written: kernels are weights of constant "
                        "shape in practice)", "graph_no_xla")),
]

# ---------------------------------------------------------------------------
# The deployment columns (LiteRT on each route, TF.js): the cases each refuses
# for want of a kernel and those it runs otherwise than XLA, recorded from runs
# of the column (tools/record_column.py) in tests/cases/recorded/<column>/conv.json.
CASES[:] = recorded.apply(CASES, "tflite", "conv")
CASES[:] = recorded.apply(CASES, "tflite_native", "conv")
CASES[:] = recorded.apply(CASES, "tflite_litert", "conv")
CASES[:] = recorded.apply(CASES, "tfjs", "conv")
