"""The lowerings of primitives a target has no kernel for, as JAX forms.

A native module for a target without XLA (TF's TFLite converter, the
standalone litert-converter) would carry `stablehlo.sort`, an integer
`convolution` or `dot_general`, which those converters refuse or LiteRT
cannot run. Exported for such a target, those primitives lower to the JAX
forms of jax2tf/jax_forms, chosen by the kernel lists the graph route reads
(`Target.lacks_kernel`):
  - sort, top_k and approx_top_k: TopK passes over integer order keys, where
    the target lacks `XlaSort` (no sort op but XLA's), as the graph route's
    sort rule writes them in TF ops;
  - integer convolutions, and real ones with an input dilation (transposed
    convolutions) or batch groups: one dot_general of the input's windows,
    where it lacks `XlaConv` (the graph route lowers the same form for
    integers);
  - integer dot_general: the products summed, where it lacks an int32
    `MatMul` (the graph route lowers the same form);
  - select_and_scatter of max and min pooling gradients: strided slices,
    selects and pads, where it lacks `XlaSelectAndScatter` (the graph route
    lowers the same form);
  - rng_bit_generator: XLA's counter-based hashes in uint32 words, where it
    lacks `XlaRngBitGenerator` (the graph route lowers the same form);
  - mulhi of 32-bit integers: the high word from 16-bit halves, where it
    lacks a uint64 `Mul` (as the graph route's rule computes it);
  - comparisons of floats in IEEE's total order (lt_to, le_to, eq_to): of
    the sort's integer order keys, where it takes no XLA ops (only XLA's
    compare has a TOTALORDER type);
  - geqrf, householder_product, hessenberg, tridiagonal and geqp3 of real
    matrices: LAPACK's Householder steps (jax2tf/jax_forms/householder.py,
    as the graph route lowers them), where it takes no XLA ops: JAX's
    portable rules for the first two are the `Qr` and
    `ProductOfElementaryHouseholderReflectors` custom calls only XLA expands
    (ormqr is a JAX loop of reflections already), and every other native
    module takes the forms of the last three (portable_lowering.py).
    Complex matrices, which the converters refuse anyway and whose forms
    crash both converters, keep the custom calls;
  - lu: getrf's unblocked steps in a loop (jax2tf/jax_forms/lu.py), where
    it takes no XLA ops: JAX's blocked rule solves a triangle per block (no
    LiteRT kernel), swaps the rows of a batch with scatters neither
    converter takes, and needs static sizes;
  - triangular_solve and cholesky of real matrices: substitution and
    Cholesky's column steps in a loop (jax2tf/jax_forms/triangular.py),
    where it takes no XLA ops: StableHLO's ops of those names have no
    LiteRT kernel (the graph route refuses them: TF's ops have none either);
  - the square of a complex number: the complex product, where the target
    cannot build a complex number from its parts (JAX's rule computes the
    parts and builds it; the graph route writes TF's Square).

Where it takes no XLA ops, the converters' and LiteRT's ways with some
operands also differ from XLA's, or end the process; those primitives lower
to forms that give them operands on which they agree:
  - dot_general contracting an axis of size 0: zeros; rev of an array with
    no elements: the array;
  - dynamic_slice and dynamic_update_slice with unsigned or 64-bit starts,
    which the converters cast to int32 before clamping: clamped first, in
    their own type (jax_forms/index_bounds.py);
  - scatters that drop a window partly outside the operand (LiteRT's kernel
    writes its inside part): such a window starts wholly outside;
  - argmax and argmin with an index type other than int32 or int64 (their
    ARG_MAX/ARG_MIN's): the int32 index, converted; of uint32 or uint64
    values: of their order keys;
  - reduce_precision to the operand's own format, which no converter lowers:
    the operand.
"""

import functools

import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax
from jax.extend.core import primitives as core_primitives
from jax.lax import linalg as lax_linalg

from jax2tf.internals import jax_private
from jax2tf.jax_forms import (
  conv_as_dot,
  doubling_scan,
  high_products,
  householder,
  index_bounds,
  lu,
  rng_bits,
  selected_windows,
  sequential_fold,
  sorting,
  summed_products,
  tflite_kernels,
  triangular,
)
from jax2tf.native import portable_lowering, reduce_folds
from jax2tf.shapes import dim_eval
from jax2tf.targets import Target, xla_fold


def _rule(primitive, form_of):
  """`portable_lowering.form_rule`, falling back on the portable rule of
  `primitive` where it has one."""
  portable = dict(portable_lowering.portable_lowering_rules()).get(primitive)
  return portable_lowering.form_rule(primitive, form_of, portable)


def _is_static(*dims) -> bool:
  return all(dim_eval.is_constant(d) for d in dims)


# The forms gather along the sorted axis, which TF's converter refuses on
# operands of a symbolic shape; and TopK takes a symbolic k, or a polymorphic
# operand, only where the target reads TFLite's TOPK_V2 in the module
# (`tflite_ops_in_module`: litert-converter, whose pipeline also writes
# those gathers as selects).
def _sort_form(sizes_at_run_time: bool):
  def form_of(ctx, *, dimension, num_keys, **_):
    shape = ctx.avals_in[0].shape
    if not _is_static(*shape) and not sizes_at_run_time:
      return None
    if _is_static(shape[dimension]) and shape[dimension] == 0:
      return None
    return sorting.Sort(dimension, num_keys)

  return form_of


def _top_k_form(sizes_at_run_time: bool):
  def form_of(ctx, *, k, axis=-1, **_):
    (aval,) = ctx.avals_in
    if sorting.is_own_key(aval.dtype):
      return None  # TopK's kernel orders it as JAX does
    if not _is_static(k, *aval.shape) and not (sizes_at_run_time and _is_static(k)):
      return None
    return sorting.TopK(int(k), axis % len(aval.shape))

  return form_of


def _cumsum_form(ctx, *, axis, reverse):
  # A cumulative sum along a polymorphic axis is a window as long as the
  # axis, which JAX writes as a dynamic window the converter does not take;
  # LiteRT's CUMSUM takes any size. XLA adds in an order of its own (a
  # tree, on CPU), so the sums agree to rounding, as the graph route's
  # Cumsum does. CUMSUM takes no 16-bit floats: those stay windows.
  # Along an axis of one element XLA reduces nothing and keeps x, -0.0
  # included, where CUMSUM adds it to +0.0.
  (aval,) = ctx.avals_in
  if _is_static(*aval.shape) or np.dtype(aval.dtype) not in _CUMSUM_DTYPES:
    return None
  length = aval.shape[axis]
  if _is_static(length):
    return None if length == 1 else lambda x: [tflite_kernels.cumsum(x, axis, reverse)]

  def form(x):
    summed = tflite_kernels.cumsum(x, axis, reverse)
    return [jnp.where(jnp.asarray(x.shape[axis]) == 1, x, summed)]

  return form


_CUMSUM_DTYPES = frozenset(map(np.dtype, (np.float32, np.int32, np.int64)))


def _running_form(combine, combiner: str):
  """cummax, cummin or cumprod along a polymorphic axis: a window as long as
  the axis, which no converter takes, as steps of doubling shifts of
  `combine`, the StableHLO `combiner` (whose identity fills the shifts)."""

  def form_of(ctx, *, axis, reverse):
    (aval,) = ctx.avals_in
    if _is_static(aval.shape[axis]):
      return None
    identity = reduce_folds.identity(combiner, np.dtype(aval.dtype))
    return lambda x: [doubling_scan.doubling_scan(x, axis, reverse, combine, identity)]

  return form_of


def _fold_form(arg_kernels: bool):
  """A reduction with any body of polymorphic sizes, which LiteRT has no
  kernel for (STABLEHLO_REDUCE) and reduce_folds.py unrolls only at static
  ones: XLA's fold as a loop, where XLA folds straight through (several
  operands; one operand along reduced axes no longer than a tree window,
  which must then be static). An argmax's or argmin's stays where the
  target writes ARG_MAX and ARG_MIN of it at polymorphic sizes
  (`arg_kernels`: the litert pipeline, tflite_ops.py); TF's converter fails
  on those, so there it folds too."""

  def form_of(ctx, *, jaxpr, dimensions, **_):
    aval = ctx.avals_in[0]
    if _is_static(*aval.shape) or (arg_kernels and _is_arg_reduction(jaxpr.jaxpr)):
      return None
    lengths = [aval.shape[d] for d in dimensions]
    single = len(ctx.avals_out) == 1
    if single and (not _is_static(*lengths) or xla_fold.needs_tree(lengths)):
      return None
    return sequential_fold.SequentialFold.of_jaxpr(jaxpr, dimensions)

  return form_of


def _is_arg_reduction(body) -> bool:
  """Whether `body` is an argmax's or argmin's (a value and its index, the
  values compared greater or less), as module_patterns.arg_direction reads
  it in StableHLO."""
  if len(body.invars) != 4 or len(body.outvars) != 2:
    return False
  acc, _, x, _ = body.invars
  return any(e.primitive.name in ("gt", "lt") and list(e.invars) == [acc, x] for e in body.eqns)


def _bitwise_fold_form(combine):
  # xor, and and or of integers (and xor of booleans) from their identity:
  # any order of folding gives XLA's answer, so a loop, at any polymorphic
  # size. The converters make REDUCE_ALL and REDUCE_ANY of boolean and/or.
  def form_of(ctx, *, axes, **_):
    aval = ctx.avals_in[0]
    if _is_static(*aval.shape) or (aval.dtype == np.bool_ and combine is not lax.bitwise_xor):
      return None
    identity = np.array(-1 if combine is lax.bitwise_and else 0).astype(aval.dtype)
    fold = sequential_fold.SequentialFold(lambda a, b: [combine(a, b)], tuple(sorted(axes)))
    return lambda x: fold(x, identity)

  return form_of


def _approx_top_k_form(ctx, *, reduction_dimension, is_max_k, **_):
  axis = reduction_dimension % len(ctx.avals_in[0].shape)
  size = ctx.avals_out[0].shape[axis]
  if not _is_static(size, *ctx.avals_in[0].shape):
    return None
  return sorting.ApproxTopK(int(size), axis, is_max_k)


def _is_integer(dtype) -> bool:
  return np.dtype(dtype).kind in "iub" and np.dtype(dtype).itemsize <= 4


def _conv_form(ctx, *, lhs_dilation, batch_group_count, **params):
  out = ctx.avals_out[0]
  spatial = ctx.avals_in[1].shape
  # One slice of the image per kernel position: the kernel's size must be
  # static, the image's may be polymorphic (slices of run-time sizes).
  if not _is_static(*spatial):
    return None
  if _is_static(*out.shape) and any(d == 0 for d in out.shape):
    # No result to compute (a window larger than the input), which the
    # converters refuse to write as a convolution.
    return lambda lhs, rhs: [jnp.zeros(out.shape, out.dtype)]
  if not _is_integer(out.dtype):
    # Real convolutions keep the converters' CONV_2D and its kin, except
    # those with an input dilation (a transposed convolution) or batch
    # groups, which they refuse or write as a TRANSPOSE_CONV that LiteRT
    # sizes wrongly.
    if not jnp.issubdtype(out.dtype, jnp.floating):
      return None
    if all(d == 1 for d in lhs_dilation) and batch_group_count == 1:
      return None
  return conv_as_dot.ConvAsDot.of(
    out, lhs_dilation=lhs_dilation, batch_group_count=batch_group_count, **params
  )


def _zeros_form(ctx):
  out = ctx.avals_out[0]
  return lambda *_: [jnp.zeros(out.shape, out.dtype)]


def _dot_form(integer_products: bool):
  def form_of(ctx, *, dimension_numbers, **_):
    (lhs_contracting, _), _ = dimension_numbers
    lhs_shape = ctx.avals_in[0].shape
    if _is_static(*ctx.avals_out[0].shape) and any(
      dim_eval.is_zero(lhs_shape[d]) for d in lhs_contracting
    ):
      # A sum of no products: TF's TFLite converter ends the process on
      # it (SIGFPE), and LiteRT fails to prepare the BATCH_MATMUL
      # litert-converter writes.
      return _zeros_form(ctx)
    out = ctx.avals_out[0]
    if not integer_products or not _is_integer(out.dtype):
      return None
    products = summed_products.SummedProducts(dimension_numbers, np.dtype(np.int32), out.dtype)
    return lambda lhs, rhs: [products(lhs, rhs)]

  return form_of


def _narrow_starts_form(starts_from: int):
  """For dynamic_slice (`starts_from` 1) and dynamic_update_slice (2)."""

  def form_of(ctx, **params):
    operand = ctx.avals_in[0]
    starts = ctx.avals_in[starts_from : starts_from + len(operand.shape)]
    if len(ctx.avals_in) != starts_from + len(operand.shape):
      return None  # sizes of a symbolic slice follow the starts
    if not any(index_bounds.needs_narrowing(s.dtype) for s in starts):
      return None
    window = params["slice_sizes"] if starts_from == 1 else ctx.avals_in[1].shape
    if not _is_static(*operand.shape, *window):
      return None
    primitive = lax.dynamic_slice_p if starts_from == 1 else lax.dynamic_update_slice_p

    def bounded(*operands):
      fixed, starts = operands[:starts_from], operands[starts_from:]
      starts = index_bounds.clamped_int32_starts(starts, operand.shape, window)
      return [primitive.bind(*fixed, *starts, **params)]

    return bounded

  return form_of


def _scatter_form(ctx, *, dimension_numbers, mode, **params):
  operand, _, updates = ctx.avals_in
  if mode != lax.GatherScatterMode.FILL_OR_DROP:
    return None
  if not _is_static(*operand.shape, *updates.shape):
    return None
  if not index_bounds.has_partial_windows(operand.shape, updates.shape, dimension_numbers):
    return None
  primitive = ctx.primitive

  def dropped(operand_value, indices, updates_value):
    indices = index_bounds.drop_partial_windows(
      indices, operand.shape, updates.shape, dimension_numbers
    )
    # The starts left are inside or wholly outside, where every mode agrees.
    return [
      primitive.bind(
        operand_value,
        indices,
        updates_value,
        dimension_numbers=dimension_numbers,
        mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS,
        **params,
      )
    ]

  return dropped


def _arg_index_form(ctx, *, axes, index_dtype):
  # The converters write argmax and argmin as TFLite's ARG_MAX/ARG_MIN,
  # whose index is int32 or int64 and whose operand is no uint32: another
  # index type is a conversion of the int32 one (which holds every index of
  # an axis LiteRT can hold), and wide unsigned values are compared as
  # their order keys (the same order, so the same first extreme).
  wide_unsigned = (
    np.dtype(ctx.avals_in[0].dtype).kind == "u" and np.dtype(ctx.avals_in[0].dtype).itemsize >= 4
  )
  own_index = np.dtype(index_dtype) in (np.dtype(np.int32), np.dtype(np.int64))
  if own_index and not wide_unsigned:
    return None
  primitive = ctx.primitive

  def converted(x):
    if wide_unsigned:
      (x,) = sorting.order_keys(x)
    index = primitive.bind(x, axes=axes, index_dtype=np.dtype(np.int32))
    return [lax.convert_element_type(index, index_dtype)]

  return converted


def _reduce_precision_form(ctx, *, exponent_bits, mantissa_bits):
  # Rounding to a format as wide as the operand's own changes nothing
  # (remat's name markers write one); the converters have no lowering for
  # the op at all.
  info = ml_dtypes.finfo(ctx.avals_in[0].dtype)
  if exponent_bits >= int(info.nexp) and mantissa_bits >= int(info.nmant):
    return lambda x: [x]
  return None


def _rev_form(ctx, **_):
  # Reversing no elements: LiteRT's REVERSE_V2 ends the process on it.
  if any(dim_eval.is_zero(d) for d in ctx.avals_in[0].shape):
    return lambda x: [x]
  return None


def _scatter_to_selected_form(ctx, *, select_prim, **params):
  form = selected_windows.ScatterToSelected.of(select_prim, **params)
  return form


def _select_and_scatter_form(ctx, *, select_jaxpr, select_consts, scatter_jaxpr, scatter_consts,
                             padding, **params):  # fmt: skip
  boolean = ctx.avals_out[0].dtype == np.bool_
  select_prim = selected_windows.only_primitive(select_jaxpr, select_consts, (lax.ge_p, lax.le_p))
  combine = lax.or_p if boolean else lax.add_p
  if selected_windows.only_primitive(scatter_jaxpr, scatter_consts, (combine,)) is None:
    return None
  # XLA's padding here keeps its positions out of every window's pick.
  if any(p != (0, 0) for p in padding):
    return None
  form = selected_windows.ScatterToSelected.of(select_prim, padding=padding, **params)
  if form is None:
    return None

  def scatter(operand, source, init):
    (added,) = form(source, operand)
    return [added | init if boolean else added + init]

  return scatter


def _rng_bits_form(ctx, *, shape, dtype, algorithm, **_):
  # LiteRT's own RNG_BIT_GENERATOR gives XLA's 64-bit bits, and nothing for
  # an empty shape; the form computes in uint32 words alone, and its 64-bit
  # words (a uint64 state or 64-bit bits) would need uint64 shifts.
  state_dtype = np.dtype(ctx.avals_in[0].dtype)
  if state_dtype.itemsize != 4 or np.dtype(dtype).itemsize > 4:
    return None
  if any(dim_eval.is_zero(d) for d in shape):
    return None
  fn = rng_bits.generator(shape, dtype, algorithm, state_dtype)
  return lambda state: list(fn(state))


def _is_real(ctx) -> bool:
  return not jnp.issubdtype(ctx.avals_in[0].dtype, jnp.complexfloating)


def _complex_square_form(ctx, **_):
  # JAX writes a complex square from its parts, (re - im)(re + im) and
  # 2 re im, and builds the result with stablehlo.complex. Here it is the
  # complex product, as TF's Square (the graph route): the same imaginary
  # part, and a real part re*re - im*im, which differs from JAX's by the
  # rounding of the two products (within their size, |x|**2 ulps).
  if _is_real(ctx):
    return None
  return lambda x: [x * x]


def _lu_form(ctx, **_):
  # JAX's blocked LU solves a triangle per block of columns (no LiteRT
  # kernel), swaps rows with batched scatters under vmap (which neither
  # converter takes) and unrolls over static sizes only.
  k = ctx.avals_out[1].shape[-1]
  return lambda a: list(lu.lu(a, k))


def _triangular_solve_form(ctx, **params):
  # Complex matrices keep stablehlo.triangular_solve, which the converters
  # refuse, as they refuse complex linear algebra anyway.
  if not _is_real(ctx):
    return None
  return lambda a, b: [triangular.triangular_solve(a, b, **params)]


def _cholesky_form(ctx, **_):
  if not _is_real(ctx):
    return None
  return lambda a: [triangular.cholesky(a)]


def _high_product_form(ctx, **_):
  if np.dtype(ctx.avals_in[0].dtype).itemsize > 4:
    return None
  return lambda x, y: [high_products.multiply_high(x, y)]


def _householder_product(a, taus):
  return [householder.householder_product(a, taus)]


def _real_householder_rules():
  # The converters take no complex linear algebra (complex strided slices,
  # selects, sums), and both crash on the complex forms: complex matrices
  # keep the portable rule (geqrf, householder_product) or JAX's LAPACK one
  # (hessenberg, tridiagonal, geqp3), which the converters refuse.
  real = functools.partial(portable_lowering.householder_form, real_only=True)
  return [
    _rule(jax_private.geqrf_p, real(householder.geqrf)),
    _rule(lax_linalg.householder_product_p, real(_householder_product)),
    portable_lowering.form_rule(lax_linalg.hessenberg_p, real(householder.hessenberg)),
    portable_lowering.form_rule(lax_linalg.tridiagonal_p, real(householder.tridiagonal, "lower")),
    portable_lowering.form_rule(jax_private.geqp3_p, real(householder.geqp3)),
  ]


def _total_order_form(compare):
  def form_of(ctx, **_):
    if not jnp.issubdtype(ctx.avals_in[0].dtype, jnp.floating):
      return None  # integers' total order is their order

    def compare_keys(x, y):
      (x_key,) = sorting.order_keys(x, total_order=True)
      (y_key,) = sorting.order_keys(y, total_order=True)
      return [compare(x_key, y_key)]

    return compare_keys

  return form_of


_SCATTERS = (
  lax.scatter_p,
  lax.scatter_add_p,
  lax.scatter_mul_p,
  lax.scatter_min_p,
  lax.scatter_max_p,
  *((lax.scatter_sub_p,) if hasattr(lax, "scatter_sub_p") else ()),
)


def lowering_rules(target: Target) -> tuple:
  """(primitive, rule) pairs for `jax.export.export(_override_lowering_rules=...)`
  for a module for `target`: the forms of what `target` has no kernel for,
  then the portable rules (portable_lowering.py) of the other primitives
  (JAX would take a primitive's first rule)."""
  forms = _forms(target)
  replaced = {p for p, _ in forms}
  portable = portable_lowering.portable_lowering_rules()
  return forms + tuple((p, rule) for p, rule in portable if p not in replaced)


@functools.cache
def _forms(target: Target) -> tuple:
  rules = []
  if target.lacks_kernel("XlaSort"):
    rules += [
      _rule(lax.sort_p, _sort_form(target.tflite_ops_in_module)),
      _rule(lax.top_k_p, _top_k_form(target.tflite_ops_in_module)),
      _rule(lax.approx_top_k_p, _approx_top_k_form),
    ]
  if target.lacks_kernel("XlaConv"):
    rules.append(_rule(lax.conv_general_dilated_p, _conv_form))
  if target.tflite_ops_in_module:
    rules.append(_rule(lax.cumsum_p, _cumsum_form))
  if not target.xla_ops:
    rules += [
      _rule(lax.dot_general_p, _dot_form(target.lacks_kernel("MatMul", "int32"))),
      _rule(lax.rev_p, _rev_form),
      _rule(lax.reduce_precision_p, _reduce_precision_form),
      _rule(lax.dynamic_slice_p, _narrow_starts_form(1)),
      _rule(lax.dynamic_update_slice_p, _narrow_starts_form(2)),
      _rule(lax.argmax_p, _arg_index_form),
      _rule(lax.argmin_p, _arg_index_form),
      _rule(lax.cummax_p, _running_form(jnp.maximum, "stablehlo.maximum")),
      _rule(lax.cummin_p, _running_form(jnp.minimum, "stablehlo.minimum")),
      _rule(lax.cumprod_p, _running_form(jnp.multiply, "stablehlo.multiply")),
      _rule(lax.reduce_p, _fold_form(target.tflite_ops_in_module)),
      _rule(lax.reduce_xor_p, _bitwise_fold_form(lax.bitwise_xor)),
      _rule(lax.reduce_and_p, _bitwise_fold_form(lax.bitwise_and)),
      _rule(lax.reduce_or_p, _bitwise_fold_form(lax.bitwise_or)),
      *(_rule(p, _scatter_form) for p in _SCATTERS),
    ]
  elif target.lacks_kernel("MatMul", "int32"):
    rules.append(_rule(lax.dot_general_p, _dot_form(True)))
  if target.lacks_kernel("XlaSelectAndScatter"):
    rules += [
      _rule(lax.select_and_scatter_add_p, _scatter_to_selected_form),
      _rule(lax.select_and_scatter_p, _select_and_scatter_form),
    ]
  if target.lacks_kernel("Mul", "uint64") and hasattr(lax, "mulhi_p"):
    rules.append(_rule(lax.mulhi_p, _high_product_form))
  if not target.xla_ops:
    rules += [
      _rule(core_primitives.lt_to_p, _total_order_form(lax.lt)),
      _rule(core_primitives.le_to_p, _total_order_form(lax.le)),
      _rule(core_primitives.eq_to_p, _total_order_form(lax.eq)),
      *_real_householder_rules(),
      _rule(lax_linalg.lu_p, _lu_form),
      _rule(lax_linalg.triangular_solve_p, _triangular_solve_form),
      _rule(lax_linalg.cholesky_p, _cholesky_form),
    ]
  if not target.builds_complex_from_parts:
    rules.append(_rule(lax.square_p, _complex_square_form))
  if target.lacks_kernel("XlaRngBitGenerator"):
    rules.append(_rule(core_primitives.rng_bit_generator_p, _rng_bits_form))
  return tuple(rules)
