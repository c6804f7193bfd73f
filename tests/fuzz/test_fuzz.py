"""The differential fuzzer (tools.fuzz): a short fixed-seed run, and its parts."""

import dataclasses
import importlib.util

import jax
import ml_dtypes
import numpy as np
import pytest
from jax import export, lax

from jax2tf.lite import litert_converter
from tests.primitives import runner as case_runner
from tests.support import compare, refusals
from tools.fuzz import (
  driver,
  generator,
  isolation,
  known_gaps,
  minimize,
  program,
  rewrites,
  targets,
  writer,
)


def _found(want, got, *, exact=False, tol=(1.6e-4, 1.6e-4), args=0) -> targets.Outcome:
  """A mismatch of `got` against JAX's `want`, as the runner gives it (on argument set `args`)."""
  found = compare.mismatch(np.asarray(want), np.asarray(got), tol=tol, exact=exact, where="p")
  assert found is not None, (want, got)
  return targets.mismatched(found, args)


F32, BF16 = np.float32, ml_dtypes.bfloat16

# The CI run: seed and count fixed, so the counts are the same on every machine.
CI_SEED, CI_PROGRAMS = 0, 16


def test_fixed_seed_has_no_unexplained_mismatches(tmp_path):
  summary = driver.fuzz(CI_SEED, programs=CI_PROGRAMS, out=str(tmp_path), progress=None)
  assert summary.programs == CI_PROGRAMS
  for column, counter in summary.counts.items():
    assert sum(counter.values()) == CI_PROGRAMS, (column, counter)
  unexplained = [(f.program, f.column, f.detail, f.path) for f in summary.unexplained()]
  assert not unexplained, f"unexplained mismatches (cases written to {tmp_path}): {unexplained}"
  assert not list(tmp_path.iterdir())


# The litert route's column (--litert), on the first programs of the CI seed.
LITERT_PROGRAMS = 4


@pytest.mark.skipif(
  not litert_converter.is_installed(), reason="the litert route needs litert-converter"
)
def test_fixed_seed_on_the_litert_route_has_no_unexplained_mismatches(tmp_path):
  summary = driver.fuzz(
    CI_SEED, programs=LITERT_PROGRAMS, out=str(tmp_path), progress=None, litert=True
  )
  column = targets.column_name(targets.DEPLOYED["litert"])
  assert list(summary.counts)[-1] == column
  assert sum(summary.counts[column].values()) == LITERT_PROGRAMS, summary.counts[column]
  unexplained = [(f.program, f.column, f.detail, f.path) for f in summary.unexplained()]
  assert not unexplained, f"unexplained mismatches (cases written to {tmp_path}): {unexplained}"


def _well_typed(p: program.Program):
  assert p.is_valid(), p.source()
  fun = p.fun()
  for args in p.args:
    out = jax.jit(fun)(*args)
    shapes = jax.eval_shape(fun, *args)
    assert jax.tree_util.tree_map(lambda x: (x.shape, x.dtype), out) == jax.tree_util.tree_map(
      lambda x: (x.shape, x.dtype), shapes
    )
  if p.polymorphic_shapes is not None:
    # Well typed for every size of "b", not only the two it runs at.
    specs = export.symbolic_args_specs(list(p.args[0]), list(p.polymorphic_shapes))
    jax.eval_shape(fun, *specs)


@pytest.mark.parametrize("seed", [0, 7, 123])
def test_generator_programs_are_well_typed_and_reproducible(seed):
  kinds = set()
  for index in range(25):
    p = generator.generate(seed, index)
    _well_typed(p)
    again = generator.generate(seed, index)
    assert again.source() == p.source()
    for a, b in zip(jax.tree_util.tree_leaves(p.args), jax.tree_util.tree_leaves(again.args)):
      compare.assert_same(a, b, exact=True)
    kinds |= {"poly"} if p.polymorphic_shapes else set()
    kinds |= {"grad"} if p.grad else set()
    kinds |= {e.op for e in p.eqs}
  assert len(kinds) > 15, kinds


def test_an_input_with_b_past_its_leading_axis_gets_a_spec():
  p = generator.generate(4, 24)  # x2 joins a (1, b, 1) value
  assert p.polymorphic_shapes[-1] == "1, b, 1", p.polymorphic_shapes
  _well_typed(p)


def test_a_program_typed_only_at_its_concrete_sizes_is_not_valid():
  x0 = np.zeros((1, 3, 1), np.float32)
  x1 = np.zeros((3, 1), np.float32)
  eqs = (
    program.Eq("v0", "lax.broadcast_in_dim(x1, (1, x1.shape[0], 1), (1, 2))", ("x1",),
               "broadcast_in_dim", True),
    program.Eq("v1", "lax.add(x0, v0)", ("x0", "v0"), "add", True),
  )
  p = program.Program(("x0", "x1"), ((x0, x1),), eqs, ("v1",), name="static_beside_b")
  # At b = 3 the shapes agree; as symbols a static 3 meets "b".
  assert not dataclasses.replace(p, polymorphic_shapes=(None, "b, 1")).is_valid()
  assert dataclasses.replace(p, polymorphic_shapes=("1, b, 1", "b, 1")).is_valid()


def _chain() -> program.Program:
  rng = np.random.default_rng(0)
  x0 = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
  x1 = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
  eqs = (
    program.Eq("v0", "lax.sin(x0)", ("x0",), "sin", False),
    program.Eq("v1", "lax.tanh(v0)", ("v0",), "tanh", False),
    program.Eq("v2", "lax.mul(v1, x1)", ("v1", "x1"), "mul", True),
    program.Eq("v3", "lax.reduce_sum(v2, (1,))", ("v2",), "reduce_sum", False),
    program.Eq("v4", "lax.cos(x1)", ("x1",), "cos", False),
  )
  return program.Program(("x0", "x1"), ((x0, x1),), eqs, ("v3", "v4"), name="chain")


class _WrongTanh:
  """lax, but with a tanh that is off by one: a target that mis-computes one primitive."""

  def __getattr__(self, name):
    return (lambda x: lax.tanh(x) + 1) if name == "tanh" else getattr(lax, name)


def _fails_on_fake_target(p: program.Program) -> bool:
  scope = dict(program.NAMESPACE, lax=_WrongTanh())
  exec(p.source(), scope)  # noqa: S102
  want = targets.expected(p)
  got = [jax.tree_util.tree_map(np.asarray, scope[p.name](*args)) for args in p.args]
  try:
    for w, g in zip(want, got):
      compare.assert_same(w, g, tol=(1e-5, 1e-5))
  except AssertionError:
    return True
  return False


def test_minimizer_reduces_a_planted_mismatch_to_its_equation():
  chain = _chain()
  assert _fails_on_fake_target(chain)
  small = minimize.minimize(chain, _fails_on_fake_target)
  assert [e.op for e in small.eqs] == ["tanh"], small.source()
  assert sum(a.size for a in small.args[0]) == 1, small.args
  assert _fails_on_fake_target(small)
  # The value tanh ran on is sin's, as JAX computed it in the chain.
  sines = np.asarray(jax.jit(lax.sin)(chain.args[0][0])).ravel()
  assert np.isin(small.args[0][0].ravel(), sines).all(), (small.args, sines)


def test_minimizer_drops_equations_again_after_cutting_inputs():
  # As p23000 of seed 14: the reduction alone mismatched only once the
  # input's rows that hid the difference were cut away.
  x0 = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
  eqs = (
    program.Eq("v0", "lax.sin(x0)", ("x0",), "sin", False),
    program.Eq("v1", "lax.cos(v0)", ("v0",), "cos", False),
  )
  chain = program.Program(("x0",), ((x0,),), eqs, ("v1",), name="hidden")

  def fails(p):
    ops = {e.op for e in p.eqs}
    return "sin" in ops and ("cos" in ops or p.args[0][0].shape[0] == 1)

  small = minimize.minimize(chain, fails)
  assert [e.op for e in small.eqs] == ["sin"] and small.args[0][0].shape[0] == 1


def test_case_writer_writes_a_case_the_case_runner_runs(tmp_path):
  x = np.array([np.nan, -0.0, np.inf, 1.5, ml_dtypes.finfo(ml_dtypes.bfloat16).smallest_subnormal])
  p = program.Program(
    ("x0", "x1"),
    ((x.astype(ml_dtypes.bfloat16), np.array([[1, -128], [127, 0]], np.int8)),),
    (
      program.Eq("v0", "lax.neg(x0)", ("x0",), "neg", True),
      program.Eq("v1", "lax.rev(x1, (1,))", ("x1",), "rev", True),
    ),
    ("v0", "v1"),
    name="written",
  )
  path = writer.write_case(
    tmp_path, p, tol=None, seed=3, index=4, column="graph-eager", detail="a detail"
  )
  spec = importlib.util.spec_from_file_location("written_case", path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  (case,) = module.CASES
  assert case.name == "written" and case.exact
  for made, arg in zip(case.make_args(), p.args[0]):
    compare.assert_same(arg, made, exact=True)
  for column in [("native", "eager"), ("graph", "graph"), ("graph_no_xla", "compiled")]:
    case_runner.run(case, *column)
  assert "--seed 3 --start 4 --programs 1" in path.read_text()


def test_known_gaps_need_their_condition():
  tiny = ml_dtypes.finfo(ml_dtypes.bfloat16).smallest_subnormal
  log = program.Program(
    ("x0",),
    ((np.array([-tiny], ml_dtypes.bfloat16),),),
    (program.Eq("v0", "lax.log(x0)", ("x0",), "log", False),),
    ("v0",),
  )
  runner = targets.Runner()

  def rerun(p, column=("graph", "eager")):
    outcome = runner.run(p, column)
    return outcome if outcome.status == targets.MISMATCH else None

  detail = rerun(log)
  assert detail.mismatch.kind == compare.NAN_POSITIONS, detail
  assert known_gaps.explain(log, ("graph", "eager"), detail, rerun) is not None
  # Not in a column the gap leaves out (LiteRT's FULLY_CONNECTED clamp is LiteRT's only).
  clamp = _found(np.array([np.inf], BF16), np.array([ml_dtypes.finfo(BF16).max], BF16))
  assert known_gaps.explain(log, ("graph", "eager"), clamp, lambda p: clamp) is None
  normal = dataclasses.replace(log, args=((np.array([-1.0], ml_dtypes.bfloat16),),))
  assert known_gaps.explain(normal, ("graph", "eager"), detail, rerun) is None
  # A mismatch that stays when the subnormals are flushed is not theirs.
  assert known_gaps.explain(log, ("graph", "eager"), detail, lambda p: detail) is None


def test_a_gap_that_varies_by_cpu_explains_each_of_its_outcomes():
  # LiteRT's log kernels differ by instruction set: the case table pins
  # log_logistic_huge_arguments on NaN positions (a Xeon with AVX-512), and
  # on matching JAX (an EPYC without it).
  log = program.Program(
    ("x0",),
    ((np.array([1e30], np.float32),),),
    (program.Eq("v0", "lax.log(x0)", ("x0",), "log", False),),
    ("v0",),
  )
  column = targets.DEPLOYED["tflite"]
  gap = known_gaps.explain(log, column, _found(np.array([69.07755], F32), np.array([np.nan], F32)))
  assert gap is not None and gap.source == "elementwise.log_logistic_huge_arguments"
  for got in (0.0, 1.0):
    detail = _found(np.array([69.07755], F32), np.array([got], F32))
    assert known_gaps.explain(log, column, detail) is None, detail


def test_a_rounding_apart_converted_to_integers_is_known_only_one_step_off():
  def converted(expr, name):
    return program.Program(
      ("x0",),
      ((np.array([3.7979789], np.float32),),),
      (program.Eq("v0", expr, ("x0",), name, name != "erf"),
       program.Eq("v1", "lax.convert_element_type(v0, np.uint32)", ("v0",),
                  "convert_element_type", True)),
      ("v1",),
    )

  erf = converted("lax.erf(x0)", "erf")
  column = ("native", "eager")
  one_step = _found(np.array([1], np.uint32), np.array([0], np.uint32))
  assert known_gaps.explain(erf, column, one_step) is not None
  three_steps = _found(np.array([3], np.uint32), np.array([0], np.uint32))
  assert known_gaps.explain(erf, column, three_steps) is None
  # A program JAX computes exactly has no rounding to blame.
  floor = converted("lax.floor(x0)", "floor")
  assert known_gaps.explain(floor, column, one_step) is None


def test_excess_16_bit_precision_under_jit_compile_is_known_there_only():
  def rem_of_sum(dtype):
    x = np.array([-1.0], dtype)
    y = np.array([-0.84765625], dtype)
    return program.Program(
      ("x0", "x1"),
      ((x, y),),
      (program.Eq("v0", "lax.add(x1, x0)", ("x1", "x0"), "add", True),
       program.Eq("v1", "lax.rem(v0, x1)", ("v0", "x1"), "rem", True)),
      ("v1",),
    )

  detail = _found(np.array([-0.15], BF16), np.array([-0.1499], BF16), exact=True)
  bf16 = rem_of_sum(ml_dtypes.bfloat16)
  assert known_gaps.explain(bf16, ("graph", "compiled"), detail) is not None
  assert known_gaps.explain(bf16, ("graph", "eager"), detail) is None
  assert known_gaps.explain(rem_of_sum(np.float32), ("graph", "compiled"), detail) is None


def test_an_argmax_tie_is_known_only_where_jax_rounds():
  def argmax_of(expr, name, exact):
    return program.Program(
      ("x0",),
      ((np.array([1.0348, -0.9, 0.4833], np.float32),),),
      (program.Eq("v0", expr, ("x0",), name, exact),
       program.Eq("v1", "lax.argmax(v0, 0, np.int32)", ("v0",), "argmax", True)),
      ("v1",),
    )

  detail = _found(np.int32(0), np.int32(2))
  column = ("graph", "eager")
  assert known_gaps.explain(argmax_of("lax.atan2(x0, x0)", "atan2", False), column, detail)
  assert known_gaps.explain(argmax_of("lax.neg(x0)", "neg", True), column, detail) is None


def test_overflow_order_gap_needs_huge_inputs_whose_taming_ends_the_mismatch():
  big = np.finfo(np.float32).max
  total = program.Program(
    ("x0",),
    ((np.array([big, big, -np.inf], np.float32),),),
    (program.Eq("v0", "lax.reduce_sum(x0, (0,))", ("x0",), "reduce_sum", False),),
    ("v0",),
  )
  detail = _found(np.float32(np.nan), np.float32(-np.inf))
  column = targets.DEPLOYED["tfjs"]
  tamed = rewrites.tamed(total)
  assert tamed is not None and np.abs(tamed.args[0][0][:2]).max() < 2.0**64
  assert np.isneginf(tamed.args[0][0][2])  # infinities are no huge finite values
  assert known_gaps.explain(total, column, detail, lambda p: None) is not None
  # The mismatch stays once tamed, and nothing explains what is left.
  left = _found(np.float32(1.0), np.float32(1e30))
  assert known_gaps.explain(total, column, detail, lambda p: left) is None
  # What is left once tamed is a known gap of its own: the combination is known.
  clamp = _found(np.float32(np.inf), np.float32(3.4e38))
  litert = targets.DEPLOYED["tflite"]
  dot = dataclasses.replace(
    total,
    args=((np.array([big, 1.0], np.float32),),),
    eqs=(program.Eq("v0", "lax.dot(x0, x0)", ("x0",), "dot_general", False),),
  )
  assert known_gaps.explain(dot, litert, detail, lambda p: clamp) is not None
  normal = dataclasses.replace(total, args=((np.array([1.0, 2.0, -np.inf], np.float32),),))
  assert rewrites.tamed(normal) is None
  assert known_gaps.explain(normal, column, detail, lambda p: None) is None


def test_overflow_order_gap_takes_booleans_that_see_the_nan_but_no_other_values():
  big = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
  finite_product = program.Program(
    ("x0",),
    ((np.array([1.72, big, -0.0, -1.79], ml_dtypes.bfloat16),),),
    (program.Eq("v0", "lax.cumprod(x0, 0, reverse=True)", ("x0",), "cumprod", False),
     program.Eq("v1", "lax.is_finite(v0)", ("v0",), "is_finite", True)),
    ("v1",),
  )
  column = ("graph", "eager")
  seen = _found(np.array([False, True, True, True]), np.array([True, True, True, True]))
  assert known_gaps.explain(finite_product, column, seen, lambda p: None) is not None
  # Taming that leaves the mismatch explains nothing.
  assert known_gaps.explain(finite_product, column, seen, lambda p: seen) is None
  # A number that differs is no NaN seen through a boolean.
  number = _found(np.array([1.0, 0, 0, 0], BF16), np.array([2.0, 0, 0, 0], BF16))
  assert known_gaps.explain(finite_product, column, number, lambda p: None) is None


def test_subnormal_quotient_gap_needs_huge_inputs_whose_taming_ends_the_mismatch():
  def quotient_of(value):
    return program.Program(
      ("x0",),
      ((np.array([value], np.float32),),),
      (program.Eq("v0", "lax.integer_pow(x0, -1)", ("x0",), "integer_pow", False),
       program.Eq("v1", "lax.atan2(v0, v0)", ("v0",), "atan2", False)),
      ("v1",),
    )

  tfjs = targets.DEPLOYED["tfjs"]
  detail = _found(np.array([0.0], F32), np.array([0.7853982], F32))
  huge = quotient_of(np.finfo(np.float32).max)
  assert known_gaps.explain(huge, tfjs, detail, lambda p: None) is not None
  assert known_gaps.explain(huge, tfjs, detail, lambda p: detail) is None
  assert known_gaps.explain(quotient_of(2.0), tfjs, detail, lambda p: None) is None


def test_nextafter_gap_holds_only_where_jax_has_zeros_for_subnormals():
  after = program.Program(
    ("x0", "x1"),
    ((np.array([-0.0], np.float32), np.array([-4.2], np.float32)),),
    (program.Eq("v0", "lax.nextafter(x0, x1)", ("x0", "x1"), "nextafter", False),
     program.Eq("v1", "lax.max(v0, x1)", ("v0", "x1"), "max", False)),
    ("v1",),
  )
  native = ("native", "eager")
  def apart(jax_value, converted):
    return _found(np.array([jax_value], F32), np.array([converted], F32), exact=True)

  flushed = apart(-0.0, -1.4e-45)
  assert known_gaps.explain(after, native, flushed, lambda p: None) is not None
  normal = apart(-0.0, -1.5e-38)
  assert known_gaps.explain(after, native, normal, lambda p: None) is None
  other = apart(1.0, 1.4e-45)
  assert known_gaps.explain(after, native, other, lambda p: None) is None
  without = dataclasses.replace(
    after, eqs=(program.Eq("v1", "lax.max(x0, x1)", ("x0", "x1"), "max", False),)
  )
  assert known_gaps.explain(without, native, flushed, lambda p: None) is None


def test_tflite_tan_gap_holds_only_beyond_its_exact_reduction():
  def tan_of(values):
    return program.Program(
      ("x0",),
      ((np.array(values, np.float32),),),
      (program.Eq("v0", "lax.tan(x0)", ("x0",), "tan", False),),
      ("v0",),
    )

  litert = targets.DEPLOYED["tflite"]
  detail = _found(np.array([0.5, 1.0], F32), np.array([0.7, 1.0], F32))
  far = tan_of([1e6, 1.0])
  assert np.abs(rewrites.within_tan_range(far).args[0][0]).max() == 2.0**13
  assert known_gaps.explain(far, litert, detail, lambda p: None) is not None
  assert known_gaps.explain(far, litert, detail, lambda p: detail) is None
  assert rewrites.within_tan_range(tan_of([1.0, -2.0])) is None
  assert known_gaps.explain(tan_of([1.0, -2.0]), litert, detail, lambda p: None) is None
  assert known_gaps.explain(far, ("graph_no_xla", "eager"), detail, lambda p: None) is None


def test_a_refusal_naming_the_primitive_is_no_mismatch():
  class Refusing(targets.Runner):
    def results(self, p, column):
      raise NotImplementedError("lax.sin: not supported with enable_xla=False; use native")

  sin = program.Program(
    ("x0",), ((np.ones(2, np.float32),),), (program.Eq("v0", "lax.sin(x0)", ("x0",), "sin", False),), ("v0",)
  )
  assert Refusing().run(sin, ("graph_no_xla", "eager")).status == targets.REFUSED

  class Unclear(targets.Runner):
    def results(self, p, column):
      raise NotImplementedError("something went wrong")

  assert Unclear().run(sin, ("graph_no_xla", "eager")).status == targets.MISMATCH


def _refusing(message: str) -> targets.Runner:
  """A runner whose every column refuses with `message`."""

  class Refusing(targets.Runner):
    def results(self, p, column):
      raise NotImplementedError(message)

  return Refusing()


def _one_op(expr: str, op: str, x) -> program.Program:
  return program.Program(
    ("x0",), ((x,),), (program.Eq("v0", expr, ("x0",), op, True),), ("v0",), name=op
  )


def test_a_deployment_columns_refusal_counts_only_where_its_kernel_lists_predict_it():
  sin = _one_op("lax.sin(x0)", "sin", np.ones(2, np.float32))
  smallest = _one_op("lax.min(x0, x0)", "min", np.array([True, False]))
  litert = targets.DEPLOYED["litert"]
  assert litert == ("tflite_litert", "litert")

  def by_litert(line):
    return (
      "to_tflite (route 'litert'): litert-converter cannot legalize the module:\n"
      f"  {line}\nRemedies: route='graph' or route='native'"
    )

  listed = by_litert(
    "tf.Minimum on bool, emitted for the JAX primitive min (at f.py:3): a TF op that LiteRT "
    "runs only through the Flex delegate"
  )
  refused = _refusing(listed).run(smallest, litert)
  assert (refused.status, refused.detail) == (targets.REFUSED, "cannot convert tf.Minimum on bool")
  # It names the program's primitive, but the LITERT target's list does not
  # hold stablehlo.sine: the converter refused what the lists say it converts.
  unlisted = by_litert(
    "stablehlo.sine on float32, emitted for the JAX primitive sin (at f.py:3): failed to "
    "legalize operation 'stablehlo.sine'"
  )
  outcome = _refusing(unlisted).run(sin, litert)
  assert outcome.status == targets.MISMATCH, outcome
  kind = "refused, not in the litert kernel lists"
  assert outcome.detail == f"{kind}: cannot convert stablehlo.sine on float32"
  assert driver.mismatch_kind(outcome) == kind
  # Of two lines, the one the lists do not hold is named.
  both = listed + "\n  " + unlisted.splitlines()[1].strip()
  assert _refusing(both).run(sin, litert).detail == outcome.detail
  # A refusal that names nothing missing is a mismatch too.
  vague = _refusing("to_tflite (route 'litert'): litert-converter cannot write the module")
  assert vague.run(sin, litert).status == targets.MISMATCH
  # TF's converter's column reads its own list: Neg on complex64 is in it, Sin on float32 not.
  tflite = targets.DEPLOYED["tflite"]
  neg = "TF op Neg on complex64, emitted for the JAX primitive neg (at f.py:3)"
  assert _refusing(neg).run(sin, tflite).status == targets.REFUSED
  tf_sin = "TF op Sin on float32, emitted for the JAX primitive sin (at f.py:3)"
  outcome = _refusing(tf_sin).run(sin, tflite)
  assert outcome.status == targets.MISMATCH and "TF op Sin on float32" in outcome.detail
  # TF's columns keep their rule: a refusal naming the program's primitive.
  assert _refusing(unlisted).run(sin, ("graph_no_xla", "eager")).status == targets.REFUSED


def test_the_litert_route_column_comes_behind_its_flag():
  litert = targets.DEPLOYED["litert"]
  assert targets.columns() == targets.TF_COLUMNS
  assert targets.columns(litert=True) == (*targets.TF_COLUMNS, litert)
  assert targets.columns(True, True, True)[-3:] == (
    targets.DEPLOYED["tflite"], litert, targets.DEPLOYED["tfjs"]
  )
  assert targets.column_name(litert) == "tflite_litert-litert"
  assert "tflite_litert-litert" in driver.new_summary(0, False, False, litert=True).counts


def test_a_missing_litert_converter_is_an_error_naming_the_extra(tmp_path, monkeypatch):
  monkeypatch.setattr(litert_converter, "is_installed", lambda: False)
  with pytest.raises(ImportError, match=r"jax2tf\[litert\]"):
    driver.fuzz(0, programs=1, litert=True, out=str(tmp_path), progress=None)
  assert not list(tmp_path.iterdir())


def test_the_minimizer_keeps_the_kind_of_mismatch():
  # Program 3248 of seed 13 gave inf for NaN on TF.js; a smaller program
  # that lost a sign of zero there (XLA folding a sum of a broadcast) is
  # another mismatch, not this one made small.
  kinds = [
    driver.mismatch_kind(outcome)
    for outcome in (
      _found(np.array([np.nan], F32), np.array([np.inf], F32)),
      _found(np.array([0.0], F32), np.array([-0.0], F32)),
      _found(np.array([1.0], F32), np.array([2.0], F32), exact=True),
      _found(np.array([1.0], F32), np.array([2.0], F32)),
      targets.Outcome(targets.MISMATCH, "ValueError: Invalid tensor size."),
    )
  ]
  assert kinds == [
    "NaN positions differ",
    "signs of zero differ",
    "values differ",
    "values differ",
    "ValueError",
  ]


def test_a_column_matching_jax_op_by_op_where_jit_differs_is_known(monkeypatch):
  # JAX 0.10's jax.jit of program 2673 of seed 13 (a dynamic_slice, then a
  # scatter-add that drops its update) gave another slice than JAX op by op.
  # Here jit's result is faked one off; a column giving op by op's passes as
  # known, one giving neither stays a mismatch.
  x = np.array([0.5, -2.0], np.float32)
  sin = program.Program(
    ("x0",), ((x,),), (program.Eq("v0", "lax.sin(x0)", ("x0",), "sin", False),), ("v0",)
  )
  right = targets.expected_op_by_op(sin)
  wrong = [jax.tree_util.tree_map(lambda r: r + 1, results) for results in right]
  monkeypatch.setattr(targets, "expected", lambda p: wrong)

  class Giving(targets.Runner):
    def __init__(self, results):
      super().__init__()
      self.given = results

    def results(self, p, column):
      return self.given

  column = ("graph", "eager")
  [(_, status, finding, _)] = driver.run_program(
    sin, wrong, [column], Giving(right), seed=13, index=0, out=None
  )
  assert (status, finding.explanation) == (driver.KNOWN, driver.JIT_DIFFERS)
  neither = [jax.tree_util.tree_map(lambda r: r - 1, results) for results in right]
  [(_, status, finding, _)] = driver.run_program(
    sin, wrong, [column], Giving(neither), seed=13, index=0, out=None
  )
  assert (status, finding.explanation) == (targets.MISMATCH, None)


def test_a_program_that_ends_the_process_is_a_finding_and_the_run_goes_on(tmp_path, monkeypatch):
  # Program 5 of seed 0 is one slice, program 6 one comparison (ne): the
  # children abort in graph-eager on the first and in JAX's jit of the second.
  # Each child runs at most one program, so the run also goes on across a
  # child that ended when its count was done.
  monkeypatch.setenv("JAX2TF_FUZZ_ABORT", "graph-eager:slice,reference:ne")
  summary = isolation.fuzz(
    0, start=5, programs=2, out=str(tmp_path), progress=None, crash_tries=2, child_programs=1
  )
  assert summary.programs == 2
  for column, counter in summary.counts.items():
    assert sum(counter.values()) == 2, (column, counter)
  [finding] = summary.findings
  assert (finding.program, finding.column) == ("fuzz_s0_p5", "graph-eager")
  assert finding.explanation is None and "SIGABRT" in finding.detail
  assert summary.counts["graph-eager"][targets.MISMATCH] == 1
  # Written as a case that reproduces the program.
  written = (tmp_path / "fuzz_s0_p5_graph_eager.py").read_text()
  assert "--seed 0 --start 5 --programs 1" in written and "lax.slice" in written
  # JAX's jit of program 6 ended a child: it was compared with JAX op by op.
  assert [c.split(":")[0] for c in summary.reference_crashes] == ["fuzz_s0_p6"]
  assert summary.counts["native-eager"][targets.PASS] == 2


# The two tests below start children that end their process, as the one above
# does (the fast tier's check of the isolation); they run in `make test-all`.
@pytest.mark.slow
def test_a_compiled_crash_where_jax_jit_crashes_too_is_xlas(tmp_path, monkeypatch):
  # Program 6 of seed 0 is one comparison (ne): JAX's jit of it and the
  # native, graph and compiled graph columns all end their process. Native
  # serialization hands XLA JAX's module and jit_compile has XLA compile the
  # graph's ops, so those crashes are XLA's; the uncompiled graph's is a finding.
  monkeypatch.setenv(
    "JAX2TF_FUZZ_ABORT", "reference:ne,native-eager:ne,graph-eager:ne,graph-compiled:ne"
  )
  summary = isolation.fuzz(0, start=6, programs=1, out=str(tmp_path), progress=None, crash_tries=2)
  found = {f.column: f for f in summary.findings}
  xlas = driver.describe(known_gaps.XLA_ENDS_JAX_TOO)
  assert found["native-eager"].explanation == xlas
  assert found["graph-compiled"].explanation == xlas
  assert found["graph-eager"].explanation is None
  assert summary.counts["native-eager"][driver.KNOWN] == 1
  assert summary.counts["graph-compiled"][driver.KNOWN] == 1


@pytest.mark.slow
def test_a_crash_the_column_alone_does_not_reproduce_is_rerun_with_jax_op_by_op(
  tmp_path, monkeypatch
):
  # Program 42345 of seed 14 (lt, cond, sin) mismatches on LiteRT (its SIN
  # beyond |x| ~1e9, a known gap). JAX 0.10's jit has aborted a child on a
  # program the minimizer shrank one to (a slice of a concatenation with an
  # empty operand); here jit aborts on every shrunk program with a sin.
  # LiteRT alone survives the program: the child reruns it with JAX's values
  # op by op, and the mismatch is the known one, no finding.
  monkeypatch.setenv(targets.ABORT, "shrunk:sin")
  summary = isolation.fuzz(
    14, start=42345, programs=1, out=str(tmp_path), progress=None, tflite=True, crash_tries=2
  )
  assert summary.programs == 1
  [finding] = summary.findings
  assert finding.column == "tflite-litert" and finding.explanation is not None
  assert summary.counts["tflite-litert"][driver.KNOWN] == 1
  assert summary.reference_crashes
  assert all("(shrunk, in tflite-litert)" in c for c in summary.reference_crashes)
  assert not list(tmp_path.iterdir())


def test_a_missing_runtime_is_an_error_before_any_program(tmp_path, monkeypatch):
  monkeypatch.setenv("JAX2TF_NODE_MODULES", str(tmp_path / "nothing"))
  with pytest.raises(FileNotFoundError, match="TF.js is not installed"):
    driver.fuzz(0, programs=1, tfjs=True, out=str(tmp_path), progress=None)
  assert not list(tmp_path.iterdir())


def test_a_dead_childs_last_words_skip_routine_logging(tmp_path):
  log = tmp_path / "stderr"
  log.write_text(
    "Fatal Python error: Segmentation fault\n"
    "W0000 00:00:1795701793.018598   29427 tf_tfl_flatbuffer_helpers.cc:367] Ignored x.\n"
  )
  with open(log, "r+") as stderr:
    words = isolation._last_words(stderr, -11)  # pylint: disable=protected-access
  assert words == "the process died (killed by SIGSEGV): Fatal Python error: Segmentation fault"


def test_a_dead_childs_last_words_come_from_the_step_that_died(tmp_path):
  earlier = "Converted an earlier program's tf.Sum to SUM\n"
  log = tmp_path / "stderr"
  log.write_text(earlier + "Floating point exception\n")
  since = len(earlier.encode())
  with open(log, "r+") as stderr:
    words = isolation._last_words(stderr, -8, since=since)  # pylint: disable=protected-access
    quiet = isolation._last_words(stderr, -8, since=log.stat().st_size)  # pylint: disable=protected-access
  assert words == "the process died (killed by SIGFPE): Floating point exception"
  assert quiet == "the process died (killed by SIGFPE): no message"


def test_refusals_are_counted_by_what_is_missing():
  import jax2tf

  def smaller(x, y):
    return lax.min(x, y)

  x = np.arange(3, dtype=np.uint8)
  with pytest.raises(NotImplementedError) as by_tflite:
    jax2tf.to_tflite(lambda a: -a, x.astype(np.complex64), route="graph", verify=False)
  with pytest.raises(NotImplementedError) as by_tfjs:
    jax2tf.to_tfjs(smaller, x, x)
  tflite = targets.refusal_reasons(str(by_tflite.value))
  tfjs = targets.refusal_reasons(str(by_tfjs.value))
  assert tflite == ["no kernel for TF op Neg on complex64"]
  assert tfjs == ["no uint8 tensors", "uint8 in the signature"]
  assert targets.refusal_reasons("to_tflite (route 'graph'): crashes\nRemedies: no") == ["crashes"]
  # The case-table recorder reads the blamed primitive from the same lines.
  assert refusals.missing(str(by_tflite.value)) == [
    refusals.Missing(refusals.KERNEL, "Neg", "complex64", "neg")
  ]
  assert [(m.kind, m.name, m.primitive) for m in refusals.missing(str(by_tfjs.value))] == [
    (refusals.TENSORS, "uint8", "min"),
    (refusals.SIGNATURE, "uint8", None),
    (refusals.SIGNATURE, "uint8", None),
    (refusals.SIGNATURE, "uint8", None),
  ]

  summary = driver.new_summary(0, tflite=True, tfjs=False)
  for reasons in (tflite, tflite, ["no kernel for TF op Pow"]):
    summary.record("tflite-litert", targets.REFUSED, None, "; ".join(reasons))
  summary.record("tflite-litert", targets.PASS)
  assert summary.refusal_table().splitlines() == [
    "tflite-litert: 3 of 4 refused",
    "        2  no kernel for TF op Neg on complex64",
    "        1  no kernel for TF op Pow",
  ]


def test_a_product_with_constant_zeros_that_litert_folds_is_known():
  x = np.array([np.inf, -2.0], np.float32)

  def one(expr, uses):
    return program.Program(("x0", "x1"), ((x, x),), (program.Eq("v0", expr, uses, "mul", False),), ("v0",))

  folded = one("lax.mul(x0, lax.full_like(x0, 0.0))", ("x0",))
  plain = one("lax.mul(x0, x1)", ("x0", "x1"))
  assert program.multiplies_by_a_constant(folded) and not program.multiplies_by_a_constant(plain)
  # Zeros updated with an empty slice stay constant whatever the slice's
  # index (p13617 of seed 14: the cotangent of an empty dynamic_slice).
  empty_update = "lax.dynamic_update_slice(lax.full_like(x0, 0.0), x0[:0], (i,))"
  indexed = program.Program(
    ("x0", "i"),
    ((x, np.int32(1)),),
    (
      program.Eq("v0", empty_update, ("x0", "i"), "dynamic_update_slice", False),
      program.Eq("v1", "lax.mul(x0, v0)", ("x0", "v0"), "mul", False),
    ),
    ("v1",),
  )
  assert program.multiplies_by_a_constant(indexed)
  folded_results = program.results_with_zero_products_folded(indexed)
  np.testing.assert_array_equal(folded_results[0][0], np.zeros(2, np.float32))
  litert = targets.DEPLOYED["tflite"]
  def nan_as(converted, args=0):
    return _found(np.array([np.nan, 2.0], F32), np.array([converted, 2.0], F32), args=args)

  detail = nan_as(0.0)
  gap = known_gaps.explain(folded, litert, detail)
  assert gap is not None and "folded_zero_product" in gap.when
  assert known_gaps.explain(plain, litert, detail) is None
  # Only where the column gives the folded +0.0 ...
  assert known_gaps.explain(folded, litert, nan_as(1.0)) is None
  # ... or what JAX gives with the folded product (p30285 of seed 14: a
  # gradient adds 1 to a product of inf and folded zeros).
  plus_one = program.Program(
    ("x0",),
    ((x,),),
    (
      program.Eq("v0", "lax.mul(x0, lax.full_like(x0, 0.0))", ("x0",), "mul", False),
      program.Eq("v1", "lax.add(v0, lax.full_like(x0, 1.0))", ("v0", "x0"), "add", False),
    ),
    ("v1",),
  )
  [(jax_sum,)] = targets.expected(plus_one)
  assert np.isnan(jax_sum[0]) and jax_sum[1] == 1.0

  def sum_as(converted, args=0):
    return _found(jax_sum, np.array([converted, 1.0], F32), args=args)

  assert known_gaps.explain(plus_one, litert, sum_as(1.0)) is not None
  assert known_gaps.explain(plus_one, litert, sum_as(2.0)) is None
  assert known_gaps.explain(plus_one, litert, sum_as(1.0, args=1)) is None


def test_litert_complex_products_recovering_infinities_are_known():
  # p3166 of seed 14: (-inf + tiny j) * (1 + nan j) is nan + nan j in XLA;
  # LiteRT's MUL, as C's complex product, recovers -inf for the real part.
  x0 = np.array([complex(-np.inf, 1e-45)], np.complex64)
  x1 = np.array([complex(1.0, np.nan)], np.complex64)
  p = program.Program(
    ("x0", "x1"), ((x0, x1),), (program.Eq("v0", "lax.mul(x0, x1)", ("x0", "x1"), "mul", True),), ("v0",)
  )
  litert = targets.DEPLOYED["tflite"]
  def nan_as(real, imag=np.nan):
    want = np.array([complex(np.nan, np.nan)], np.complex64)
    got = np.empty(1, np.complex64)
    got.real, got.imag = real, imag
    return _found(want, got)

  gap = known_gaps.explain(p, litert, nan_as(-np.inf))
  assert gap is not None and "Annex G" in gap.why
  # A number where C's product would give an infinity is something else.
  assert known_gaps.explain(p, litert, nan_as(1.0)) is None
  # p11335: a complex integer_pow is such products, (-inf + tiny j) ** 3 too.
  cube = program.Program(
    ("x0",), ((x0,),), (program.Eq("v0", "lax.integer_pow(x0, 3)", ("x0",), "integer_pow", True),), ("v0",)
  )
  imaginary = nan_as(np.nan, np.inf)
  assert imaginary.mismatch.part == "imaginary"
  assert known_gaps.explain(cube, litert, imaginary) is not None


def test_complex_products_apart_are_known_only_at_special_parts():
  # p14880 of seed 14: a complex dot with an infinite part is NaN in JAX's
  # XLA, infinite in TF's; as int32 that is 0 and -2147483648.
  def converted(x, y):
    part = "lax.imag(v0)" if np.iscomplexobj(x) else "v0"
    eqs = (
      program.Eq("v0", "lax.mul(x0, x1)", ("x0", "x1"), "mul", True),
      program.Eq("v1", part, ("v0",), "imag", True),
      program.Eq("v2", "lax.convert_element_type(v1, np.int32)", ("v1",), "convert", True),
    )
    return program.Program(("x0", "x1"), ((x, y),), eqs, ("v2",))

  infinite = np.array([complex(-1.0, np.inf), 1 + 1j], np.complex64)
  p = converted(infinite, np.array([1 + 2j, 3 - 4j], np.complex64))
  def zero_as(value):
    return _found(np.array([0, 2], np.int32), np.array([value, 2], np.int32))

  graph = ("graph", "eager")
  assert known_gaps.explain(p, graph, zero_as(-2147483648)) is not None
  assert known_gaps.explain(p, graph, zero_as(7)) is None
  real = converted(np.array([np.inf, 1.0], np.float32), np.array([2.0, 3.0], np.float32))
  assert known_gaps.explain(real, graph, zero_as(-2147483648)) is None
  # Both gaps hold only where a product reads a part that is infinite, NaN,
  # zero or huge: with moderate parts the formulas agree.
  moderate = converted(np.array([1 + 2j, -3 + 1j], np.complex64), np.array([2 - 1j, 1 + 1j], np.complex64))
  assert known_gaps.explain(moderate, graph, zero_as(-2147483648)) is None
  def product(x):
    eq = program.Eq("v0", "lax.mul(x0, x1)", ("x0", "x1"), "mul", True)
    return program.Program(("x0", "x1"), ((x, np.array([2 - 1j, 1 + 1j], np.complex64)),), (eq,), ("v0",))

  parts = _found(np.array([complex(1, np.nan), 1j], np.complex64), np.array([complex(1, np.inf), 1j], np.complex64))
  assert parts.mismatch.part == "imaginary"
  assert known_gaps.explain(product(infinite), graph, parts) is not None
  assert known_gaps.explain(product(np.array([1 + 2j, -3 + 1j], np.complex64)), graph, parts) is None
  for special in (0.0, 3e19):
    edged = product(np.array([complex(special, 1.0), 1j], np.complex64))
    assert known_gaps.explain(edged, graph, parts) is not None, special
  # Finite parts apart only from a power with a huge part (p41643 of seed
  # 14: (1 + 0j) ** (-0 + 3.4e38j) has real part 0 in JAX, 1 in TF).
  def power(y):
    eq = program.Eq("v0", "lax.pow(x0, x1)", ("x0", "x1"), "pow", True)
    return program.Program(("x0", "x1"), ((np.array([1 + 0j], np.complex64), y),), (eq,), ("v0",))

  apart = _found(np.array([complex(0.0, 1.0)], np.complex64), np.array([complex(1.0, 1.0)], np.complex64))
  assert (apart.mismatch.part, apart.mismatch.kind) == ("real", compare.VALUES)
  assert known_gaps.explain(power(np.array([complex(-0.0, 3.4e38)], np.complex64)), graph, apart) is not None
  assert known_gaps.explain(power(np.array([complex(-0.0, 3.0)], np.complex64)), graph, apart) is None
  # Finite parts apart from a product, not a power, are something else.
  assert known_gaps.explain(product(infinite), graph, apart) is None


def test_the_sign_of_a_dot_of_zero_terms_is_known_only_as_jaxs_minus_zero():
  # p4412 of seed 14: a gradient's dot of zeros by negative numbers.
  row, matrix = np.zeros((1, 2), np.float32), np.full((2, 3), -2.0, np.float32)
  dims = (((1,), (0,)), ((), ()))
  assert np.signbit(jax.jit(lambda a, b: lax.dot_general(a, b, dims))(row, matrix)).all()
  eq = program.Eq("v0", f"lax.dot_general(x0, x1, {dims})", ("x0", "x1"), "dot_general", False)
  p = program.Program(("x0", "x1"), ((row, matrix),), (eq,), ("v0",))
  def at_0_2(jax_value, converted):
    want, got = np.full((1, 3), -0.0, F32), np.full((1, 3), -0.0, F32)
    want[0, 2], got[0, 2] = jax_value, converted
    return _found(want, got)

  graph = ("graph", "eager")
  assert known_gaps.explain(p, graph, at_0_2(-0.0, 0.0)) is not None
  assert known_gaps.explain(p, graph, at_0_2(0.0, -0.0)) is None
  # p50949: LiteRT's FULLY_CONNECTED gives -0.0 where JAX gives +0.0 (TF's
  # kernels never do), and no other value.
  litert = targets.DEPLOYED["tflite"]
  assert known_gaps.explain(p, litert, at_0_2(0.0, -0.0)) is not None
  assert known_gaps.explain(p, litert, at_0_2(0.0, 1.0)) is None


def test_a_pad_cotangent_that_tf_folds_to_zeros_is_known():
  # p14153 of seed 14: a gradient adds x's -0.0 and the zero cotangent a
  # pad's operand gets where only its padding is used; TF's graph optimizer
  # folds that zero and x + 0 away, JAX's XLA and TF eager add.
  x, minus_zeros = np.array([1.0, 2.0], np.float32), np.array([-0.0, -0.0], np.float32)
  eqs = (
    program.Eq("v0", "lax.pad(x0, np.float32(0), [(1, 0, 1)])", ("x0",), "pad", False),
    program.Eq("v1", "lax.slice_in_dim(v0, 0, 4, 2, 0)", ("v0",), "slice", False),
    program.Eq("v2", "lax.mul(x0, x1)", ("x0", "x1"), "mul", True),
  )
  p = program.Program(("x0", "x1"), ((x, minus_zeros),), eqs, ("v1", "v2"), grad=True)
  runner = targets.Runner()
  folded = runner.run(p, ("graph", "graph"))
  assert folded.status == targets.MISMATCH and "JAX 0.0, converted -0.0" in folded.detail
  assert runner.run(p, ("graph", "eager")).status == targets.PASS
  gap = known_gaps.explain(p, ("graph", "graph"), folded)
  assert gap is not None and "pad's transpose" in gap.why
  # Not the other way round, nor in eager columns.
  m = folded.mismatch
  swapped = dataclasses.replace(m, expected=m.actual, actual=m.expected)
  other_way = targets.mismatched(swapped, folded.args)
  assert known_gaps.explain(p, ("graph", "compiled"), other_way) is None
  assert known_gaps.explain(p, ("graph", "eager"), folded) is None


def test_what_a_program_computes_from_litert_rsqrt_at_zero_is_known():
  def ge_rsqrt(x0):
    eqs = (program.Eq("v0", "lax.rsqrt(x0)", ("x0",), "rsqrt", False),
           program.Eq("v1", "lax.ge(x1, v0)", ("x1", "v0"), "ge", True))
    args = ((np.array([x0], np.float32), np.array([-1.5], np.float32)),)
    return program.Program(("x0", "x1"), args, eqs, ("v1",))

  def rerun_giving(column_result):
    def rerun(p):
      [(want,)] = targets.expected(p)
      return None if np.array_equal(want, column_result) else _found(want, column_result)

    return rerun

  litert = targets.DEPLOYED["tflite"]
  def detail(jax_value, converted):
    return _found(np.array([jax_value]), np.array([converted]))

  # LiteRT's RSQRT(-0.0) is NaN, and -1.5 >= NaN is False.
  gap = known_gaps.explain(
    ge_rsqrt(-0.0), litert, detail(True, False), rerun_giving(np.array([False]))
  )
  assert gap is not None and gap.when == ("litert_rsqrt",)
  # Away from zero LiteRT's RSQRT is JAX's: a mismatch there is something else.
  other = known_gaps.explain(
    ge_rsqrt(4.0), litert, detail(False, True), rerun_giving(np.array([True]))
  )
  assert other is None


def test_tfjs_unit_broadcasts_of_polymorphic_empty_results_are_known():
  # p11710 of seed 14: float32 (b, 0) to int32, b = 1 at run time; TF.js's
  # broadcastTo turns the scalar bounds of the conversion into shape (1, 1).
  x = np.zeros((1, 0), np.float32)

  def convert(polymorphic_shapes):
    return program.Program(
      ("x0",),
      ((x,),),
      (program.Eq("v0", "lax.convert_element_type(x0, np.int32)", ("x0",), "convert_element_type", True),),
      ("v0",),
      polymorphic_shapes=polymorphic_shapes,
    )

  tfjs = targets.DEPLOYED["tfjs"]
  def detail(got, want):
    return _found(np.zeros(want, np.int32), np.zeros(got, np.int32))

  gap = known_gaps.explain(convert(("b, 0",)), tfjs, detail((1, 1), (1, 0)))
  assert gap is not None and "broadcastTo" in gap.why
  # Only for a polymorphic program, and only 1s where JAX has 0s and 1s.
  assert known_gaps.explain(convert(None), tfjs, detail((1, 1), (1, 0))) is None
  assert known_gaps.explain(convert(("b, 0",)), tfjs, detail((2, 1), (2, 0))) is None
  assert known_gaps.explain(convert(("b, 0",)), tfjs, detail((1,), (1, 0))) is None


def test_a_sum_of_huge_terms_that_cancel_is_known_within_their_rounding():
  # p39204 of seed 14: a gradient sums a row 3.4e38, -3.4e38, -1.2; JAX's XLA
  # adds left to right (-1.2), TF's kernels otherwise (0).
  def summed(row):
    eq = program.Eq("v0", "lax.reduce_sum(x0, (0,))", ("x0",), "reduce_sum", False)
    return program.Program(("x0",), ((np.array(row, np.float32),),), (eq,), ("v0",))

  def detail(converted):
    return _found(np.float32(-1.2), np.float32(converted), tol=(0.00016, 0.0007))

  graph = ("graph", "eager")
  huge = summed([3.4e38, -3.4e38, -1.2])
  gap = known_gaps.explain(huge, graph, detail(0.0))
  assert gap is not None and "huge terms cancel" in gap.why
  # A few roundings of 3.4e38 apart (an ulp there is 2e31), not more ...
  assert known_gaps.explain(huge, graph, detail(1e33)) is None
  assert known_gaps.explain(huge, graph, detail(np.inf)) is None
  # ... and not where the terms are moderate.
  assert known_gaps.explain(summed([3.0, -3.0, -1.2]), graph, detail(0.0)) is None
  # A dot's terms are products of its factors.
  eq = program.Eq("v0", "lax.dot(x0, x1)", ("x0", "x1"), "dot_general", False)
  factors = (np.array([1e19, -1e19, 1.0], np.float32), np.array([1e19, 1e19, -1.2], np.float32))
  dot = program.Program(("x0", "x1"), (factors,), (eq,), ("v0",))
  assert known_gaps.explain(dot, graph, detail(0.0)) is not None


def test_a_scatter_add_of_huge_updates_that_cancel_is_known_within_their_rounding():
  # p57167 of seed 14: updates -3.4e38j and 3.4e38j at one index of an
  # operand holding -0.46j: JAX's XLA added them in order (0), TF's kernel
  # the two updates first (-0.46).
  def scattered(updates):
    eq = program.Eq("v0", "x0.at[x1].add(x2)", ("x0", "x1", "x2"), "scatter-add", False)
    args = (np.array([0.85, -0.46], np.float32), np.array([-1, 1], np.int32), np.array(updates, np.float32))
    return program.Program(("x0", "x1", "x2"), (args,), (eq,), ("v0",))

  def detail(converted):
    return _found(np.array([0.85, 0.0], F32), np.array([0.85, converted], F32))

  graph = ("graph", "eager")
  gap = known_gaps.explain(scattered([-3.4e38, 3.4e38]), graph, detail(-0.46))
  assert gap is not None and "scatter-add" in gap.why
  assert known_gaps.explain(scattered([-3.0, 3.0]), graph, detail(-0.46)) is None
  assert known_gaps.explain(scattered([-3.4e38, 3.4e38]), graph, detail(1e33)) is None


def test_a_remainder_of_a_huge_dividend_by_a_rounded_divisor_is_known():
  # p42199 of seed 14: rem(3.4e38, cumprod(...)) with the product one ulp
  # apart (rounded in another order) is any value between 0 and the divisor.
  def remainder(dividend, divisor_eq):
    eqs = (divisor_eq, program.Eq("v1", "lax.rem(x1, v0)", ("x1", "v0"), "rem", True))
    args = ((np.array([-1.349, 0.0428, 2.316], np.float32), np.array([dividend, 2.0, 1.0], np.float32)),)
    return program.Program(("x0", "x1"), args, eqs, ("v1",))

  rounded = program.Eq("v0", "lax.cumprod(x0, 0, reverse=True)", ("x0",), "cumprod", False)
  exact = program.Eq("v0", "lax.abs(x0)", ("x0",), "abs", True)
  def detail(converted):
    return _found(np.array([0.065, 0, 0], F32), np.array([converted, 0, 0], F32), tol=(0.00016, 0.0003))

  graph = ("graph", "eager")
  gap = known_gaps.explain(remainder(3.4e38, rounded), graph, detail(0.104))
  assert gap is not None and "remainder" in gap.why
  # Not beyond twice the divisor, not for a dividend a few times the
  # divisor, nor where nothing rounds the operands.
  assert known_gaps.explain(remainder(3.4e38, rounded), graph, detail(7.0)) is None
  assert known_gaps.explain(remainder(30.0, rounded), graph, detail(0.104)) is None
  assert known_gaps.explain(remainder(3.4e38, exact), graph, detail(0.104)) is None


@pytest.mark.parametrize(
  "expr, op",
  [
    # p51133 of seed 14: both XLAs flush the subnormal to -0.0, and rsqrt
    # makes +-inf of the zeros; TF's XLA kept the first of tied zeros.
    ("lax.cummin(x0, 1, reverse=True)", "cummin"),
    ("lax.cummax(x0, 1)", "cummax"),
    ("lax.max(x0, lax.rev(x0, (1,)))", "max"),
    ("lax.min(lax.rev(x0, (1,)), x0)", "min"),
  ],
)
def test_a_tie_of_signed_zeros_in_native_min_max_gives_jax_zero(expr, op):
  # TF's XLA returns the first operand of a tie; the native module gives
  # JAX's zero (+0.0 for a max, -0.0 for a min), so the native columns keep
  # no fuzz gap for min and max.
  eqs = (
    program.Eq("v0", expr, ("x0",), op, True),
    program.Eq("v1", "lax.rsqrt(v0)", ("v0",), "rsqrt", False),
  )
  x = np.array([[0.0, -1.401298464324817e-45, -0.0, 0.0]], np.float32)
  tied = program.Program(("x0",), ((x,),), eqs, ("v1",))
  for mode in ("eager", "graph", "compiled"):
    assert targets.Runner().run(tied, ("native", mode)).status == targets.PASS, mode


def test_a_negated_boolean_under_jit_compile_without_xla_ops_is_known():
  # p51243 of seed 14: -convert(False) is -0.0 in JAX; the no-XLA graph's
  # neg is a product by -1, which TF's XLA turns into a select giving +0.0.
  eqs = (
    program.Eq("v0", "lax.convert_element_type(x0, np.float32)", ("x0",), "convert_element_type", True),
    program.Eq("v1", "lax.neg(v0)", ("v0",), "neg", True),
  )
  p = program.Program(("x0",), ((np.array([False, True]),),), eqs, ("v1",))
  runner = targets.Runner()
  compiled = ("graph_no_xla", "compiled")
  outcome = runner.run(p, compiled)
  assert outcome.status == targets.MISMATCH and "JAX -0.0, converted 0.0" in outcome.detail
  assert known_gaps.explain(p, compiled, outcome) is not None
  # Not in the no-XLA graph run by TF itself, nor the other way round.
  assert runner.run(p, ("graph_no_xla", "graph")).status == targets.PASS
  m = outcome.mismatch
  other_way = targets.mismatched(dataclasses.replace(m, expected=m.actual, actual=m.expected))
  assert known_gaps.explain(p, compiled, other_way) is None
