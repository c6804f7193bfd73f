"""What a rule gets besides its operands: avals, flavour, dimension values, sub-lowering."""

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
import tensorflow as tf

from jax2tf.graph import bit_ops, semantics
from jax2tf.shapes import dim_eval
from jax2tf.targets import Target, quirks
from jax2tf.tf_dims import TFDimArithmetic


@dataclasses.dataclass
class LoweringEnv:
  """State shared by all rules of one conversion."""

  target: Target  # who runs the graph, and what it can run
  dim_values: dict[str, tf.Tensor]  # dimension variable -> int32 TF scalar
  lower_jaxpr: Callable[..., list]  # (closed_jaxpr, args) -> results
  # With uint32 as int32 bits (TF.js): whether the rule at hand takes them
  # so (False for the rules that the interpreter hands real uint32 tensors).
  uint32_in_lanes: bool = True
  # For TFLite: whether the rule at hand computes its float16 and bfloat16
  # values in float32, or its 8- and 16-bit integers in int32
  # (jax2tf/graph/float_lanes.py, int_lanes.py).
  in_wide_lanes: bool = False

  def hide_from_grappler(self, x: tf.Tensor, rewrite: str) -> tf.Tensor:
    """`x` out of sight of TF's graph optimizer, where the target runs it,
    so that it cannot make `rewrite` (one of semantics.GRAPPLER_REWRITES)."""
    if rewrite not in semantics.GRAPPLER_REWRITES:
      raise ValueError(f"unknown grappler rewrite {rewrite!r}; see semantics.GRAPPLER_REWRITES")
    if not self.target.runs_grappler:
      return x
    if rewrite in semantics.TF_RUNTIME_REWRITES and not self.target.runs_on_tf:
      return x
    return semantics.hidden_from_grappler(x)


@dataclasses.dataclass
class RuleContext:
  primitive: Any
  avals_in: Sequence[Any]
  avals_out: Sequence[Any]
  env: LoweringEnv
  # For a broadcast_in_dim: whether its users broadcast for it
  # (implicit_broadcasts.py), so that its rule only aligns the axes.
  broadcast_by_users: bool = False

  @property
  def target(self) -> Target:
    """What runs the graph: rules ask it about capabilities, never its name."""
    return self.env.target

  @property
  def bits(self) -> bit_ops.BitOps:
    """The target's integer bit operations, with XLA's semantics."""
    return bit_ops.BitOps(self.env.target)

  def kernel_or(self, op: str, kernel: Callable, formulation: Callable, dtype=None) -> Callable:
    """`kernel` (TF's op `op`), or `formulation` (the same in other ops)
    where the target has no kernel for `op` on `dtype`."""
    return formulation if self.env.target.lacks_kernel(op, dtype) else kernel

  def hide_from_grappler(self, x: tf.Tensor, rewrite: str) -> tf.Tensor:
    """`x` out of sight of TF's graph optimizer (LoweringEnv.hide_from_grappler)."""
    return self.env.hide_from_grappler(x, rewrite)

  @property
  def uint32_in_int32_bits(self) -> bool:
    """Whether the rule's uint32 operands come, and its uint32 results go,
    as int32 tensors of the same bits (TF.js, for rules registered so)."""
    return self.env.target.uint32_as_int32_bits and self.env.uint32_in_lanes

  @property
  def in_wide_lanes(self) -> bool:
    """Whether the rule computes 16-bit floats in float32 or narrow integers
    in int32 for TFLite: its avals say the wide dtype, and TF's TFLite
    converter would move the widening cast below a Gather or BroadcastTo of
    an operand (float_lanes.py)."""
    return self.env.in_wide_lanes

  def lower_jaxpr(self, closed_jaxpr, args) -> list:
    """Lowers a sub-computation (branches, loop bodies, called functions)."""
    return self.env.lower_jaxpr(closed_jaxpr, list(args))

  def lower_fun(self, fun, args) -> list:
    """Lowers `fun`, a JAX function of the rule's operands (JAX's own
    expansion of a primitive, say), traced at the rule's input avals."""
    return self.lower_jaxpr(jax.make_jaxpr(fun)(*self.avals_in), args)

  def dim(self, d) -> int | tf.Tensor:
    """A dimension as a Python int when constant, else an int32 TF scalar."""
    if dim_eval.is_constant(d):
      return int(d)
    return dim_eval.evaluate(d, self.env.dim_values, TFDimArithmetic)

  def shape(self, shape) -> list[int] | tf.Tensor:
    """A shape as a list of ints when static, else a 1-D int32 TF tensor."""
    return semantics.stack_dims([self.dim(d) for d in shape])

  def reshape(self, x: tf.Tensor, shape) -> tf.Tensor:
    """`tf.reshape(x, shape)` for a JAX shape. With one symbolic dimension and
    no static zero, the target is a constant holding -1 there (TF infers the
    same size from the element count): TFLite then sizes the result before
    running, where a computed target would make it and everything after it a
    dynamic tensor, sized again at each call and kept off XNNPack."""
    symbolic = [i for i, d in enumerate(shape) if not dim_eval.is_constant(d)]
    if len(symbolic) == 1 and all(
      dim_eval.is_constant(d) and int(d) != 0 for i, d in enumerate(shape) if i != symbolic[0]
    ):
      return tf.reshape(x, [-1 if i == symbolic[0] else int(d) for i, d in enumerate(shape)])
    return tf.reshape(x, self.shape(shape))

  def reverse(self, x: tf.Tensor, shape, axes: Sequence[int]) -> tf.Tensor:
    """`x`, of JAX shape `shape`, reversed along `axes`, in ops each target
    runs. LiteRT's REVERSE_V2 takes only adjacent axes, and ends the process
    where the axes after the first reversed one hold no elements (a [2, 0]
    reversed along 0). Where a symbolic dimension there may be such a 0 at
    run time, the reversed axes move last as one flattened axis: reversing
    all of them reverses their row-major index, and nothing follows it."""
    axes = sorted(axes)
    if not axes or any(dim_eval.is_zero(d) for d in shape):
      return x  # an array with no elements is its own reverse
    if self.target.reverses_any_axes:
      return tf.reverse(x, axes)
    if self.is_static(shape[axes[0] + 1 :]):
      for run in quirks.reverse_runs(axes):
        x = tf.reverse(x, run)
      return x
    kept = [i for i in range(len(shape)) if i not in axes]
    order = kept + axes
    moved = [shape[i] for i in order]
    if order != sorted(order):
      x = tf.transpose(x, order)
    flat = self.reshape(x, moved[: len(kept)] + [math.prod(moved[len(kept) :])])
    x = self.reshape(tf.reverse(flat, [len(kept)]), moved)
    if order != sorted(order):
      x = tf.transpose(x, np.argsort(order).tolist())
    return x

  def is_static(self, shape) -> bool:
    return all(dim_eval.is_constant(d) for d in shape)

  @property
  def aval_out(self):
    assert len(self.avals_out) == 1, self.avals_out
    return self.avals_out[0]

  def tf_dtype(self, aval=None) -> tf.DType:
    """The TF dtype holding `aval` (by default the only output's): its own,
    but int32 for uint32 when TF.js runs the graph."""
    dtype = tf.as_dtype(np.dtype((self.aval_out if aval is None else aval).dtype))
    if dtype == tf.uint32 and self.uint32_in_int32_bits:
      return tf.int32
    return dtype
