"""conv_general_dilated as Conv2D / Conv3D / DepthwiseConv2dNative / Conv2DBackpropInput.

Operands are brought to channels-last layouts (N, spatial..., C) and
(spatial..., I, O), which the ordinary TF convolutions read, and the result
is transposed to JAX's output layout. Every parameter has an exact ordinary
formulation for float and complex operands:
  - padding: Pad (or a slice for negative padding), then VALID;
  - lhs_dilation: Conv2DBackpropInput for 2-D stride-1 convolutions, else
    zeros interleaved between input elements;
  - strides together with rhs_dilation: a stride-1 convolution, then a
    strided slice of its result (TF kernels accept only one of the two);
  - feature groups: a grouped Conv2D / depthwise conv, or one conv per group;
  - batch groups: one conv per group of the batch;
  - complex operands: four real convolutions.
Integer convolutions use XlaConv where XLA ops are allowed (TF's integer Conv
kernels are missing for most types and ranks); without them, one dot_general
of the windows' slices with the kernel, lowered through the dot rule, which
wraps modulo 2**n as XLA does on every target.

Cases: tests/cases/conv.py
"""

import numpy as np
import tensorflow as tf
from jax import lax

from jax2tf.graph import registry, windowing
from jax2tf.graph import semantics as sem
from jax2tf.graph.registry import register
from jax2tf.internals import tf_private
from jax2tf.jax_forms import conv_as_dot
from jax2tf.shapes import dim_eval


def _is_int(dtype) -> bool:
  return np.dtype(dtype).kind in "iub"


def _transpose(x, perm):
  return x if list(perm) == list(range(len(perm))) else tf.transpose(x, perm)


@register(lax.conv_general_dilated_p)
def _conv(
  ctx,
  lhs,
  rhs,
  *,
  window_strides,
  padding,
  lhs_dilation,
  rhs_dilation,
  dimension_numbers,
  feature_group_count,
  batch_group_count,
  precision,
  preferred_element_type,
  out_sharding=None,
):
  del precision, out_sharding, preferred_element_type  # the result aval has the dtype
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  out_dtype = np.dtype(ctx.aval_out.dtype)
  if any(dim_eval.is_zero(d) for d in ctx.aval_out.shape):
    # An empty result (a window larger than the padded input, say): TF's
    # convolutions refuse a negative output size where XLA gives zero elements.
    return tf.zeros(ctx.shape(ctx.aval_out.shape), ctx.tf_dtype())
  if _is_int(out_dtype):
    integer_conv = ctx.kernel_or("XlaConv", _xla_conv, _int_conv_as_dot)
    return integer_conv(
      ctx,
      lhs,
      rhs,
      window_strides,
      padding,
      lhs_dilation,
      rhs_dilation,
      dimension_numbers,
      feature_group_count,
      batch_group_count,
    )
  nsp = len(lhs_spec) - 2
  lhs_perm = [lhs_spec[0], *lhs_spec[2:], lhs_spec[1]]
  rhs_perm = [*rhs_spec[2:], rhs_spec[1], rhs_spec[0]]
  lhs_shape = [ctx.avals_in[0].shape[i] for i in lhs_perm]
  rhs_shape = [ctx.avals_in[1].shape[i] for i in rhs_perm]
  dt = sem.compute_dtype(out_dtype)
  x = _transpose(tf.cast(lhs, dt), lhs_perm)
  w = _transpose(tf.cast(rhs, dt), rhs_perm)
  conv = _Conv(
    ctx,
    lhs_shape,
    rhs_shape,
    list(window_strides),
    list(padding),
    list(lhs_dilation),
    list(rhs_dilation),
    feature_group_count,
    batch_group_count,
  )
  if dt.is_complex:
    xr, xi, wr, wi = tf.math.real(x), tf.math.imag(x), tf.math.real(w), tf.math.imag(w)
    res = tf.complex(conv(xr, wr) - conv(xi, wi), conv(xr, wi) + conv(xi, wr))
  else:
    res = conv(x, w)
  # res is (N, spatial..., C); out_spec[j] is the output axis holding res axis j.
  res_axis_of = {out_spec[0]: 0, out_spec[1]: nsp + 1}
  res_axis_of.update({out_spec[2 + i]: 1 + i for i in range(nsp)})
  res = _transpose(res, [res_axis_of[j] for j in range(nsp + 2)])
  return tf.cast(res, tf.as_dtype(out_dtype))


class _Conv:
  """A real convolution on channels-last operands, for fixed parameters."""

  def __init__(
    self,
    ctx,
    lhs_shape,
    rhs_shape,
    strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    groups,
    batch_groups,
  ):
    self.ctx = ctx
    self.lhs_shape, self.rhs_shape = lhs_shape, rhs_shape
    self.strides, self.padding = strides, padding
    self.lhs_dilation, self.rhs_dilation = lhs_dilation, rhs_dilation
    self.groups, self.batch_groups = groups, batch_groups
    self.nsp = len(strides)

  def __call__(self, x, w):
    if self.batch_groups > 1:
      # Batch group g (a contiguous block of the batch) meets output features
      # block g; the results are those blocks side by side.
      bg = self.batch_groups
      part = self._part(batch=self.lhs_shape[0] // bg, out=self.rhs_shape[-1] // bg, batch_groups=1)
      xs = tf.split(x, bg, axis=0)
      ws = tf.split(w, bg, axis=-1)
      return tf.concat([part._grouped(a, b) for a, b in zip(xs, ws)], axis=-1)
    return self._grouped(x, w)

  def _grouped(self, x, w):
    g = self.groups
    if g == 1:
      return self._dilated(x, w)
    in_per_group = self.rhs_shape[-2]
    if self.nsp in (1, 2) and in_per_group == 1 and _all_one(self.lhs_dilation):
      return self._depthwise(x, w)
    if self.nsp in (1, 2) and _all_one(self.lhs_dilation):
      return self._plain(x, w)  # Conv2D takes grouped filters directly
    part = self._part(channels=self.lhs_shape[-1] // g, out=self.rhs_shape[-1] // g, groups=1)
    xs = tf.split(x, g, axis=-1)
    ws = tf.split(w, g, axis=-1)
    return tf.concat([part._dilated(a, b) for a, b in zip(xs, ws)], axis=-1)

  def _part(self, *, batch=None, channels=None, out=None, groups=None, batch_groups=None):
    """The convolution of one group's slices of the operands."""
    lhs_shape, rhs_shape = list(self.lhs_shape), list(self.rhs_shape)
    if batch is not None:
      lhs_shape[0] = batch
    if channels is not None:
      lhs_shape[-1] = channels
    if out is not None:
      rhs_shape[-1] = out
    return _Conv(
      self.ctx,
      lhs_shape,
      rhs_shape,
      self.strides,
      self.padding,
      self.lhs_dilation,
      self.rhs_dilation,
      self.groups if groups is None else groups,
      self.batch_groups if batch_groups is None else batch_groups,
    )

  def _depthwise(self, x, w):
    # (spatial..., 1, C*M) -> (spatial..., C, M): output channel c*M + m is
    # input channel c with multiplier m, JAX's group order.
    ctx = self.ctx
    c = self.groups
    m = self.rhs_shape[-1] // c
    x, shape = windowing.pad_or_crop(ctx, x, self.lhs_shape, self._pads())
    if self.nsp == 1:
      x = tf.expand_dims(x, 1)
      w = tf.expand_dims(w, 0)
    ks = [int(k) for k in (self.rhs_shape[:-2] if self.nsp == 2 else [1, *self.rhs_shape[:-2]])]
    w = tf.reshape(w, ks + [c, m])
    strides = self.strides if self.nsp == 2 else [1] + self.strides
    dil = self.rhs_dilation if self.nsp == 2 else [1] + self.rhs_dilation
    both = any(s > 1 for s in strides) and any(d > 1 for d in dil)
    uneven = strides[0] != strides[1]
    if both or uneven:
      res = tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID", dilations=dil)
      res = res[:, :: strides[0], :: strides[1], :]
    else:
      res = tf.nn.depthwise_conv2d(x, w, [1, *strides, 1], "VALID", dilations=dil)
    return res[:, 0] if self.nsp == 1 else res

  def _pads(self):
    return [(0, 0)] + [tuple(p) for p in self.padding] + [(0, 0)]

  def _dilated(self, x, w):
    if _all_one(self.lhs_dilation):
      return self._plain(x, w)
    if (
      self.nsp == 2
      and _all_one(self.strides)
      and _all_one(self.rhs_dilation)
      and all(isinstance(k, int) for k in self.rhs_shape[:2])
    ):
      return self._transposed(x, w)
    x, shape = windowing.dilate(self.ctx, x, self.lhs_shape, [1, *self.lhs_dilation, 1], 0)
    return self._plain(x, w, shape)

  def _transposed(self, x, w):
    """Conv2DBackpropInput: stride s spreads the input like lhs_dilation s does.

    It yields every output position of the input dilated by s and padded by
    k-1 on both sides with the kernel flipped; JAX's padding then selects a
    window of that (or extends it with zeros)."""
    ctx = self.ctx
    n, h, wd, _ = self.lhs_shape
    kh, kw, _, o = self.rhs_shape
    sh, sw = self.lhs_dilation
    filt = tf.transpose(tf.reverse(w, [0, 1]), [0, 1, 3, 2])
    full = [n, (h - 1) * sh + kh, (wd - 1) * sw + kw, o]
    res = tf.nn.conv2d_transpose(x, filt, ctx.shape(full), [1, sh, sw, 1], "VALID")
    (lo_h, hi_h), (lo_w, hi_w) = self.padding
    res, _ = windowing.pad_or_crop(
      ctx,
      res,
      full,
      [(0, 0), (lo_h - (kh - 1), hi_h - (kh - 1)), (lo_w - (kw - 1), hi_w - (kw - 1)), (0, 0)],
    )
    return res

  def _is_tf_same(self, shape) -> bool:
    """Whether the padding is what TF's padding="SAME" gives for this input:
    then the convolution pads itself, one op (and one TFLite CONV_2D) where
    Pad + VALID would be two."""
    for n, k, s, d, (lo, hi) in zip(
      shape[1:-1], self.rhs_shape[: self.nsp], self.strides, self.rhs_dilation, self.padding
    ):
      if not (isinstance(k, int) and isinstance(lo, int) and isinstance(hi, int)):
        return False
      effective = (k - 1) * d + 1
      if s == 1:
        total = effective - 1
      elif isinstance(n, int):
        total = max((-(-n // s) - 1) * s + effective - n, 0)
      else:
        return False  # TF's SAME depends on the (here symbolic) size
      if (lo, hi) != (total // 2, total - total // 2):
        return False
    return True

  def _plain(self, x, w, shape=None):
    ctx = self.ctx
    shape = self.lhs_shape if shape is None else shape
    strides, dil = self.strides, self.rhs_dilation
    both = any(s > 1 for s in strides) and any(d > 1 for d in dil)
    padding = "VALID"
    if not both and any(p != (0, 0) for p in map(tuple, self.padding)) and self._is_tf_same(shape):
      padding = "SAME"
    else:
      x, _ = windowing.pad_or_crop(ctx, x, shape, self._pads())
    conv_strides = [1] * self.nsp if both else strides
    if self.nsp == 2:
      res = tf.nn.conv2d(x, w, [1, *conv_strides, 1], padding, dilations=[1, *dil, 1])
    else:
      res = tf.nn.convolution(x, w, conv_strides, padding, dilations=dil)
    if both:
      res = res[(slice(None),) + tuple(slice(None, None, s) for s in strides)]
    return res


def _all_one(xs) -> bool:
  return all(v == 1 for v in xs)


def _xla_conv(
  ctx,
  lhs,
  rhs,
  window_strides,
  padding,
  lhs_dilation,
  rhs_dilation,
  dimension_numbers,
  feature_group_count,
  batch_group_count,
):
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  dnums = tf_private.ConvolutionDimensionNumbers(
    input_batch_dimension=lhs_spec[0],
    input_feature_dimension=lhs_spec[1],
    input_spatial_dimensions=list(lhs_spec[2:]),
    kernel_output_feature_dimension=rhs_spec[0],
    kernel_input_feature_dimension=rhs_spec[1],
    kernel_spatial_dimensions=list(rhs_spec[2:]),
    output_batch_dimension=out_spec[0],
    output_feature_dimension=out_spec[1],
    output_spatial_dimensions=list(out_spec[2:]),
  )
  compute = sem.compute_dtype(ctx.aval_out.dtype)
  pads = [[ctx.dim(lo), ctx.dim(hi)] for lo, hi in padding]
  if not all(isinstance(p, int) for pair in pads for p in pair):
    pads = tf.reshape(sem.stack_dims([p for pair in pads for p in pair]), [-1, 2])
  res = tf_private.xla_conv(
    tf.cast(lhs, compute),
    tf.cast(rhs, compute),
    list(window_strides),
    pads,
    list(lhs_dilation),
    list(rhs_dilation),
    dnums,
    feature_group_count=feature_group_count,
    batch_group_count=batch_group_count,
    preferred_element_type=compute,
  )
  return sem.cast_result(res, ctx.aval_out.dtype)


def _int_conv_as_dot(
  ctx,
  lhs,
  rhs,
  window_strides,
  padding,
  lhs_dilation,
  rhs_dilation,
  dimension_numbers,
  feature_group_count,
  batch_group_count,
):
  """An integer convolution without XLA ops: the form of
  jax2tf/jax_forms/conv_as_dot.py, lowered through the rules of its pad,
  slices and dot_general (the dot wraps modulo 2**n on every target, in
  exact halves on TF.js)."""
  kernel = [ctx.avals_in[1].shape[d] for d in dimension_numbers.rhs_spec[2:]]
  if not all(dim_eval.is_constant(k) for k in kernel):
    raise registry.no_xla_error(
      ctx.primitive,
      dict(dimension_numbers=dimension_numbers, kernel_shape=tuple(kernel)),
      "an integer convolution is written out once per kernel position, and the kernel's "
      "spatial size is symbolic here; give the kernel a constant shape",
    )
  spec = conv_as_dot.ConvAsDot.of(
    ctx.aval_out,
    window_strides=window_strides,
    padding=padding,
    lhs_dilation=lhs_dilation,
    rhs_dilation=rhs_dilation,
    dimension_numbers=dimension_numbers,
    feature_group_count=feature_group_count,
    batch_group_count=batch_group_count,
  )
  return ctx.lower_fun(spec, [lhs, rhs])[0]
