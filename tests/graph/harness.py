"""Running graph-serialization cases against JAX in every TF mode and flavour.

A rule family's test module holds a table of `Case`s and one parametrised test:

    CASES = [Case("sin_f32", jnp.sin, [arg((3, 4), np.float32)]), ...]

    @pytest.mark.parametrize("case", CASES, ids=case_id)
    @pytest.mark.parametrize("mode", TF_MODES)
    @pytest.mark.parametrize("flavour", FLAVOURS)
    def test_family(case, mode, flavour):
      run_case(case, mode, flavour)
"""

import dataclasses
from typing import Any, Callable, Sequence

import jax
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from tests import tf_modes
from tests.tf_modes import TF_MODES, in_mode  # noqa: F401  (re-exported)

FLAVOURS = ("xla", "no_xla")


@dataclasses.dataclass
class Case:
  name: str
  fun: Callable
  args: Sequence[Any]                  # arrays, or callables(rng) -> array
  rtol: float = 1e-6
  atol: float = 1e-6
  polymorphic_shapes: Any = None
  # Flavours/modes where the case must be refused with NotImplementedError
  # (e.g. an op that needs XLA-only TF ops under enable_xla=False), with why.
  refused: dict = dataclasses.field(default_factory=dict)   # {flavour: reason}
  compare: Callable | None = None      # compare(result_tf, expected_jax) -> None
  graph_ops: Sequence[str] = ()        # TF op types that must appear in the graph


def case_id(case: Case) -> str:
  return case.name


def params(cases: Sequence[Case], slow: Sequence[str]) -> list:
  """Cases as pytest params; those named in `slow` run only in the slow tier."""
  unknown = set(slow) - {c.name for c in cases}
  assert not unknown, unknown
  return [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.name in slow else [])
          for c in cases]


def arg(shape, dtype=np.float32, low=-3.0, high=3.0, seed=0):
  """A random argument of the given shape and dtype."""
  rng = np.random.default_rng(seed)
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if np.issubdtype(dtype, np.integer):
    info = np.iinfo(dtype)
    lo, hi = max(int(low), info.min), min(int(high), info.max)
    return rng.integers(lo, hi + 1, size=shape, dtype=dtype)
  if np.issubdtype(dtype, np.complexfloating):
    re_, im = rng.uniform(low, high, shape), rng.uniform(low, high, shape)
    return (re_ + 1j * im).astype(dtype)
  return rng.uniform(low, high, shape).astype(dtype)


def convert(case: Case, flavour: str):
  return jax2tf.convert(case.fun, native_serialization=False,
                        enable_xla=(flavour == "xla"),
                        polymorphic_shapes=case.polymorphic_shapes)


def _assert_close(res, exp, rtol, atol, where):
  res, exp = np.asarray(res), np.asarray(exp)
  assert res.shape == exp.shape, f"{where}: shape {res.shape} != JAX's {exp.shape}"
  assert res.dtype == exp.dtype, f"{where}: dtype {res.dtype} != JAX's {exp.dtype}"
  if exp.dtype.kind == "V" and jax.dtypes.issubdtype(exp.dtype, np.inexact):
    # bfloat16 / float8 (ml_dtypes): compare their values as float32.
    res, exp = res.astype(np.float32), exp.astype(np.float32)
  if exp.dtype.kind in "fc":
    nan_res, nan_exp = np.isnan(res), np.isnan(exp)
    np.testing.assert_array_equal(nan_res, nan_exp, err_msg=f"{where}: NaN positions")
    keep = ~nan_exp
    np.testing.assert_allclose(res[keep].astype(np.float64 if exp.dtype.kind == "f" else exp.dtype),
                               exp[keep].astype(np.float64 if exp.dtype.kind == "f" else exp.dtype),
                               rtol=rtol, atol=atol, err_msg=where)
  else:
    np.testing.assert_array_equal(res, exp, err_msg=where)


def _tf_callable(case: Case, mode: str, flavour: str, args):
  f_tf = convert(case, flavour)
  if mode == "eager":
    return f_tf
  # A polymorphic case is traced with unknown dimensions, so that its
  # dimension values are computed by TF ops at run time.
  sig = None if case.polymorphic_shapes is None else \
      tf_modes.tensor_specs(args, case.polymorphic_shapes)
  return tf.function(f_tf, autograph=False, input_signature=sig,
                     jit_compile=(mode == "compiled"))


def _check_graph(case: Case, flavour: str, f_graph, args):
  concrete = (f_graph.get_concrete_function() if case.polymorphic_shapes is not None
              else f_graph.get_concrete_function(*args))
  ops = tf_modes.graph_op_types(concrete)
  assert "XlaCallModule" not in ops, f"{case.name}: graph serialization emitted XlaCallModule"
  missing = set(case.graph_ops) - ops
  assert not missing, f"{case.name}: graph lacks {missing}; has {sorted(ops)}"
  if flavour == "no_xla":
    xla_ops = sorted(op for op in ops if op.startswith("Xla"))
    assert not xla_ops, f"{case.name}: enable_xla=False emitted {xla_ops}"


def concrete_args(case: Case) -> list:
  """The case's arguments, drawing those given as callables(rng)."""
  return [a(np.random.default_rng(i)) if callable(a) else a for i, a in enumerate(case.args)]


def run_case(case: Case, mode: str, flavour: str):
  args = concrete_args(case)
  f_tf = _tf_callable(case, mode, flavour, args)
  if flavour in case.refused:
    try:
      f_tf(*args)
    except NotImplementedError as e:
      assert "enable_xla" in str(e) or "no rule" in str(e), str(e)
      return
    raise AssertionError(f"{case.name}: expected a refusal under {flavour} "
                         f"({case.refused[flavour]}), but it converted")
  expected = jax.jit(case.fun)(*args)
  result = f_tf(*args)
  res_leaves = tf.nest.flatten(result)
  exp_leaves = jax.tree_util.tree_leaves(expected)
  assert len(res_leaves) == len(exp_leaves)
  for i, (r, e) in enumerate(zip(res_leaves, exp_leaves)):
    where = f"{case.name}[{mode}, {flavour}] output {i}"
    r = r.numpy() if hasattr(r, "numpy") else np.asarray(r)
    if case.compare is not None:
      case.compare(r, np.asarray(e))
    else:
      _assert_close(r, np.asarray(e), case.rtol, case.atol, where)
  if mode == "graph":
    _check_graph(case, flavour, f_tf, args)
