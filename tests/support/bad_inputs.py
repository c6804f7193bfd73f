"""The bad-input catalogue: what a user can get wrong, and the error each gives.

Each `BadInput` makes one mistake through a public entry point (`convert`,
`call_tf`, SavedModel saving and loading, `to_tflite`, `to_tfjs`, the command
line) and says which exception comes, which words its message must contain
(the argument or primitive it names, what was expected, what came, the
remedy) and when it is raised. tests/test_bad_inputs.py runs every entry and
checks also that no file is left behind; docs/errors.md is rendered from the
same table (`python -m tools.errors_doc`).

`when` is the earliest moment the information exists: "convert" (the
`convert` / `call_tf` / `to_*` call itself), "first call" (the arguments are
needed: shapes, dtypes, pytrees; in eager mode and when a tf.function is
traced alike), "staging" (when JAX or TF traces or compiles the function),
"TF run time" (only values or the serving machine can tell).
"""

import contextlib
import dataclasses
import io
import os
import pathlib
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
from jax import lax

import jax2tf

X = np.arange(6, dtype=np.float32).reshape(2, 3)
SPEC = jax.ShapeDtypeStruct((2, 3), np.float32)
CLI_MODEL = "jax2tf.demo_model:cnn"


@dataclasses.dataclass(frozen=True)
class BadInput:
  name: str  # a short id
  entry: str  # the entry point: convert, call_tf, SavedModel, to_tflite, to_tfjs, CLI
  what: str  # the mistake, in words
  trigger: Callable  # trigger(tmp: pathlib.Path, native: bool | None)
  raises: type[BaseException]
  says: tuple[str, ...]  # words the message contains
  when: str
  # convert's entries run with native and with graph serialization.
  serializations: tuple = (None,)
  prepare: Callable | None = None  # prepare(tmp, native): files that exist before


class CommandFailed(Exception):
  """A `jax2tf` command line that exited with a non-zero status."""

  def __init__(self, status: int, stderr: str):
    super().__init__(f"exit status {status}: {stderr.strip()}")
    self.status = status


def _cli(*argv: str) -> None:
  from jax2tf import cli  # the command line imports its subcommands eagerly

  err = io.StringIO()
  with contextlib.redirect_stderr(err):
    status = cli.main([*argv, "--quiet"] if argv[0] == "export" else list(argv))
  if status:
    raise CommandFailed(status, err.getvalue())


def _conv(fun, native, **kwargs):
  return jax2tf.convert(fun, native_serialization=native, **kwargs)


def _traced(fun, native, spec, **kwargs):
  """Traces the converted `fun` in a tf.function for one TensorSpec."""
  f = tf.function(_conv(fun, native, **kwargs), autograph=False)
  return f.get_concrete_function(spec)


def _ident(a):
  return a


def _save(tmp, native, **kwargs):
  module = tf.Module()
  module.f = tf.function(
    _conv(_ident, native, **kwargs),
    autograph=False,
    input_signature=[tf.TensorSpec([2, 3], tf.float32)],
  )
  tf.saved_model.save(module, os.path.join(tmp, "saved"))


def _save_for_tpu(tmp, native):
  _save(tmp, True, native_serialization_platforms=("tpu",))


def _restored(tmp):
  return tf.saved_model.load(os.path.join(tmp, "saved")).f


def _grad_of(f_tf):
  v = tf.Variable(X)
  with tf.GradientTape() as tape:
    y = f_tf(v)
  return tape.gradient(y, v)


def _two_inputs_samples():
  yield [X, X]


def _wrong_shape_samples():
  yield [np.ones((5,), np.float32)]


def _existing_file(tmp, native):
  (tmp / "model").write_text("not a model")


def _existing_dir(tmp, native):
  (tmp / "out").mkdir()
  (tmp / "out" / "keep.txt").write_text("kept")


def _tfjs_model(tmp, native):
  jax2tf.to_tfjs(lambda a: a * 2, SPEC, path=tmp / "tfjs")


def _with_env(name, value, fun):
  old = os.environ.get(name)
  os.environ[name] = value
  try:
    return fun()
  finally:
    if old is None:
      del os.environ[name]
    else:
      os.environ[name] = old


# The moments an error can come at, earliest first (see the module's docstring).
WHEN = ("convert", "first call", "staging", "TF run time")
BOTH = ("native", "graph")
_R = BadInput

CATALOGUE: tuple[BadInput, ...] = (
  # ---- convert: the function and the options ----
  _R("fun_not_callable", "convert", "fun_jax is not callable",
     lambda tmp, native: jax2tf.convert(3),
     TypeError, ("fun_jax must be callable", "got 3"), "convert"),
  _R("flag_not_bool", "convert", "with_gradient='yes' (a flag that is not a bool)",
     lambda tmp, native: jax2tf.convert(_ident, with_gradient="yes"),
     TypeError, ("with_gradient must be a bool", "'yes'"), "convert"),
  _R("no_xla_with_native", "convert", "enable_xla=False with native serialization",
     lambda tmp, native: jax2tf.convert(_ident, enable_xla=False, native_serialization=True),
     ValueError, ("enable_xla=False needs graph serialization", "native_serialization=False"),
     "convert"),
  _R("platform_unknown", "convert", "native_serialization_platforms names no platform",
     lambda tmp, native: jax2tf.convert(_ident, native_serialization_platforms=("gpuu",)),
     ValueError, ("native_serialization_platforms", "'gpuu'", "'cpu', 'cuda', 'rocm', 'tpu'"),
     "convert"),
  _R("platforms_a_string", "convert", "native_serialization_platforms='cpu' (a string)",
     lambda tmp, native: jax2tf.convert(_ident, native_serialization_platforms="cpu"),
     TypeError, ("must be a sequence of platform names", "write ('cpu',)"), "convert"),
  _R("platform_not_lowered_for", "convert",
     "called eagerly on CPU, lowered for TPU only",
     lambda tmp, native: jax2tf.convert(_ident, native_serialization_platforms=("tpu",))(X),
     tf.errors.NotFoundError,
     ("The current platform CPU is not among the platforms required by the module: [TPU]",
      "native_serialization_platforms=('tpu',)", "add 'cpu'"), "first call"),
  _R("disabled_checks_strings", "convert", "native_serialization_disabled_checks=['platform']",
     lambda tmp, native: jax2tf.convert(_ident, native_serialization_disabled_checks=["platform"]),
     TypeError, ("expected jax2tf.DisabledSafetyCheck values", "got 'platform'"), "convert"),
  _R("tf_version_unknown", "convert", "target_tf_version='latest'",
     lambda tmp, native: _conv(_ident, native, target_tf_version="latest"),
     ValueError, ("target_tf_version='latest' is not a TensorFlow version", "known releases"),
     "convert", BOTH),
  _R("tf_version_too_old", "convert", "target_tf_version older than any TF that reads the modules",
     lambda tmp, native: _conv(_ident, native, target_tf_version="2.9"),
     ValueError, ("target_tf_version='2.9' is older than the oldest release", "2.15"),
     "convert", BOTH),
  _R("tf_version_too_new", "convert", "target_tf_version newer than the releases known",
     lambda tmp, native: _conv(_ident, native, target_tf_version="2.40"),
     ValueError, ("is newer than the newest TensorFlow release this package knows",
                  "Leave it unset"), "convert", BOTH),
  _R("default_serialization_env", "convert",
     "JAX2TF_DEFAULT_NATIVE_SERIALIZATION set to a word that is not a boolean",
     lambda tmp, native: _with_env("JAX2TF_DEFAULT_NATIVE_SERIALIZATION", "maybe",
                                   lambda: jax2tf.convert(_ident)),
     ValueError, ("JAX2TF_DEFAULT_NATIVE_SERIALIZATION", "'maybe'"), "convert"),
  # ---- convert: the arguments ----
  _R("keyword_not_in_signature", "convert", "a keyword argument the function does not take",
     lambda tmp, native: _conv(_ident, native)(X, z=X),
     TypeError, ("unexpected keyword argument 'z'",), "first call", BOTH),
  _R("too_many_arguments", "convert", "more positional arguments than parameters",
     lambda tmp, native: _conv(_ident, native)(X, X),
     TypeError, ("takes 1 positional argument but 2 were given",), "first call", BOTH),
  _R("missing_argument", "convert", "a required argument left out",
     lambda tmp, native: _conv(lambda a, b: a + b, native)(X),
     TypeError, ("missing 1 required positional argument: 'b'",), "first call", BOTH),
  _R("tf_string_argument", "convert", "a tf.string tensor as an argument",
     lambda tmp, native: _conv(_ident, native)(tf.constant(["a"])),
     TypeError, ("argument a has TF dtype string", "pass numeric or boolean tensors"),
     "first call", BOTH),
  _R("tf_resource_argument", "convert", "a resource tensor (a tf.Variable's handle)",
     lambda tmp, native: _conv(_ident, native)(tf.Variable(1.0).handle),
     TypeError, ("argument a has TF dtype resource",), "first call", BOTH),
  _R("tf_variant_argument", "convert", "a variant tensor (a TensorList)",
     lambda tmp, native: _conv(_ident, native)(tf.raw_ops.EmptyTensorList(
       element_shape=tf.constant([], tf.int32), max_num_elements=2, element_dtype=tf.float32)),
     TypeError, ("argument a has TF dtype variant",), "first call", BOTH),
  _R("python_string_argument", "convert", "a Python string as an argument",
     lambda tmp, native: _conv(_ident, native)("abc"),
     TypeError, ("argument a has dtype <U3", "expected a numeric or boolean array"),
     "first call", BOTH),
  _R("object_in_pytree", "convert", "an object that is not an array inside a pytree argument",
     lambda tmp, native: _conv(lambda d: d["w"], native)({"w": object()}),
     TypeError, ("argument d['w'] has dtype object",), "first call", BOTH),
  _R("result_not_array", "convert", "the function returns a string",
     lambda tmp, native: _conv(lambda a: "label", native)(X),
     TypeError, ("returned a value of type <class 'str'>", "not a valid JAX type"),
     "first call", BOTH),
  _R("unknown_dims_without_spec", "convert",
     "a tf.function input with unknown dimensions and no polymorphic_shapes",
     lambda tmp, native: _traced(_ident, native, tf.TensorSpec([None, 3], tf.float32)),
     ValueError, ("argument a has shape (?, 3) with unknown dimensions",
                  "no polymorphic_shapes spec", '"(b, _)"'), "first call", BOTH),
  _R("concrete_function_wrong_shape", "convert",
     "a traced concrete function called with another shape",
     lambda tmp, native: _traced(lambda a: a * 2.0, native,
                                 tf.TensorSpec([2, 3], tf.float32))(tf.ones((3, 3))),
     tf.errors.InvalidArgumentError, ("Shape of tensor a [3,3]", "[2,3]"), "first call", BOTH),
  # ---- convert: polymorphic shapes ----
  _R("spec_unbalanced", "convert", "a shape spec whose parentheses do not balance",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b,")(X),
     # jax 0.10 tokenizes the spec with Python's tokenizer, whose error is
     # replaced; jax 0.12 parses it and says what it expected.
     ValueError, ("spec '(b,' for argument a with shape (2, 3)",), "first call", BOTH),
  _R("spec_bad_token", "convert", "a shape spec with a non-integer size",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b, 1.5)")(X),
     ValueError, ("spec '(b, 1.5)' for argument a", "expecting integer, found 1.5"),
     "first call", BOTH),
  _R("spec_not_a_string", "convert", "a shape spec that is neither a string nor a PolyShape",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes=[3])(X),
     TypeError, ("each shape spec must be a str, a PolyShape or None", "got 3"), "first call",
     BOTH),
  _R("spec_rank", "convert", "a spec of another rank than the argument",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b,)")(X),
     ValueError, ("spec '(b,)' for argument a has rank 1", "rank 2 (shape (2, 3))"),
     "first call", BOTH),
  _R("spec_count", "convert", "more specs than positional arguments",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes=["(b, _)", "(b,)"])(X),
     ValueError, ("polymorphic_shapes has 2 entries", "1 positional argument"), "first call",
     BOTH),
  _R("spec_tree", "convert", "a spec pytree that does not match the argument's",
     lambda tmp, native: _conv(lambda d: d["a"], native,
                               polymorphic_shapes=[{"b": "(b,)"}])({"a": np.ones(2)}),
     ValueError, ("must be a pytree prefix of argument d", "expected keys: ['b']",
                  "present keys: ['a']"), "first call", BOTH),
  _R("spec_dict_unknown_name", "convert", "a spec dict keyed by a name the function lacks",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes={"q": "(b, _)"})(X),
     ValueError, ("unknown key(s) ['q']", "parameters ['a']"), "first call", BOTH),
  _R("spec_static_disagrees", "convert", "a spec whose fixed size disagrees with the argument",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b, 4)")(X),
     ValueError, ("spec '(b, 4)' for argument a with shape (2, 3)", "different size 4"),
     "first call", BOTH),
  _R("spec_placeholder_unknown", "convert", "'_' for a dimension the TensorSpec leaves unknown",
     lambda tmp, native: _traced(_ident, native, tf.TensorSpec([None, None], tf.float32),
                                 polymorphic_shapes="(b, _)"),
     ValueError, ("spec '(b, _)' for argument a with shape (?, ?)",
                  "unexpected placeholder for unknown dimension"), "first call", BOTH),
  _R("spec_contradictory", "convert", "one dimension variable for two different sizes",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b, b)")(X),
     tf.errors.InvalidArgumentError,
     ("Found inconsistency between dimension size args[0].shape[1] (= 3)",
      "the specification 'b' (= 2)"), "first call", BOTH),
  _R("spec_contradictory_across", "convert", "one variable, two arguments of different sizes",
     lambda tmp, native: _conv(lambda a, c: a, native, polymorphic_shapes=["(b, _)", "(b,)"])(
       X, np.ones(5, np.float32)),
     tf.errors.InvalidArgumentError, ("args[1].shape[0] (= 5)", "'b' (= 2)"), "first call",
     BOTH),
  _R("dimension_unsolvable", "convert", "a size that 2*b cannot take (odd)",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(2*b, _)")(
       np.ones((3, 3), np.float32)),
     tf.errors.InvalidArgumentError, ("Division had remainder 1 when computing the value of 'b'",),
     "first call", BOTH),
  _R("dimension_nonlinear", "convert", "a dimension given only as a product of variables",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b*c, _)")(X),
     ValueError, ("Cannot solve for values of dimension variables", "'b*c'"), "first call",
     BOTH),
  _R("dimension_zero", "convert", "size 0 for a dimension variable (they are >= 1)",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b, _)")(
       np.ones((0, 3), np.float32)),
     tf.errors.InvalidArgumentError, ("Expected value >= 1 for dimension variable 'b'",),
     "first call", BOTH),
  _R("constraint_violated", "convert", "arguments that break polymorphic_constraints",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b, _)",
                               polymorphic_constraints=("b >= 10",))(X),
     tf.errors.InvalidArgumentError, ("do not match the symbolic shape constraint b >= 10",
                                      "found -8"), "first call", BOTH),
  _R("constraint_malformed", "convert", "a constraint that does not parse",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b, _)",
                               polymorphic_constraints=("b >>= 10",))(X),
     ValueError, ("polymorphic_constraints: syntax error",), "first call", BOTH),
  _R("constraint_unknown_variable", "convert", "a constraint on a variable no spec has",
     lambda tmp, native: _conv(_ident, native, polymorphic_shapes="(b, _)",
                               polymorphic_constraints=("c >= 10",))(X),
     ValueError, ("constraint 'c >= 10' uses unknown dimension variable(s) ['c']",
                  "the variables of polymorphic_shapes are ['b']"), "first call", BOTH),
  _R("constraints_a_string", "convert", "polymorphic_constraints='b >= 2' (a string)",
     lambda tmp, native: _conv(_ident, native, polymorphic_constraints="b >= 2"),
     TypeError, ("must be a sequence of strings", "write ('b >= 2',)"), "convert", BOTH),
  # ---- convert: what cannot be converted ----
  _R("host_callback", "convert", "a host callback (pure_callback) in the function",
     lambda tmp, native: _conv(lambda a: jax.pure_callback(
       np.sin, jax.ShapeDtypeStruct(a.shape, a.dtype), a), native)(X),
     NotImplementedError, ("pure_callback", "host callback"), "first call", ("native",)),
  _R("host_callback_graph", "convert", "a host callback (pure_callback), graph serialization",
     lambda tmp, native: _conv(lambda a: jax.pure_callback(
       np.sin, jax.ShapeDtypeStruct(a.shape, a.dtype), a), native)(X),
     NotImplementedError, ("no rule for the JAX primitive 'pure_callback'",
                           "docs/effects_and_sharding.md"), "first call", ("graph",)),
  _R("needs_xla", "convert", "enable_xla=False for a scatter with a custom combiner (.at[].apply)",
     lambda tmp, native: jax2tf.convert(
       lambda a: a.at[0].apply(jnp.sin), native_serialization=False, enable_xla=False)(X),
     NotImplementedError, ("'scatter'", "needs XLA-only TensorFlow ops",
                           "Use enable_xla=True"), "first call"),
  _R("gradient_disabled", "convert", "a gradient of a function converted with_gradient=False",
     lambda tmp, native: _grad_of(_conv(jnp.sin, native, with_gradient=False)),
     LookupError, ("converted with with_gradient=False", "with_gradient=True"), "staging",
     BOTH),
  # ---- call_tf ----
  _R("call_tf_not_callable", "call_tf", "callable_tf is not callable",
     lambda tmp, native: jax2tf.call_tf(3),
     TypeError, ("callable_tf must be callable", "got 3"), "convert"),
  _R("call_tf_flag_not_bool", "call_tf", "has_side_effects='no' (a flag that is not a bool)",
     lambda tmp, native: jax2tf.call_tf(tf.sin, has_side_effects="no"),
     TypeError, ("has_side_effects must be a bool", "'no'"), "convert"),
  _R("call_tf_string_result", "call_tf", "a TF function that returns strings",
     lambda tmp, native: jax2tf.call_tf(tf.strings.as_string)(X),
     TypeError, ("result 0 of the TF function", "TF dtype string", "return numeric or boolean"),
     "first call"),
  _R("call_tf_resource_result", "call_tf", "a TF function that returns a resource",
     lambda tmp, native: jax2tf.call_tf(lambda a: tf.Variable(1.0).handle)(X),
     TypeError, ("TF dtype resource, which JAX cannot represent",), "first call"),
  _R("call_tf_variant_result", "call_tf", "a TF function that returns a variant (TensorList)",
     lambda tmp, native: jax2tf.call_tf(lambda a: tf.raw_ops.EmptyTensorList(
       element_shape=tf.constant([], tf.int32), max_num_elements=2, element_dtype=tf.float32))(X),
     TypeError, ("TF dtype variant, which JAX cannot represent",), "first call"),
  _R("call_tf_string_argument", "call_tf", "a tf.string tensor passed to a call_tf function",
     lambda tmp, native: jax2tf.call_tf(_ident)(tf.constant(["a"])),
     TypeError, ("argument 0 has TF dtype string", "pass numeric or boolean"), "first call"),
  _R("call_tf_python_string", "call_tf", "a Python string passed to a call_tf function",
     lambda tmp, native: jax2tf.call_tf(_ident)("s"),
     TypeError, ("argument 0 has dtype <U1", "pass numeric or boolean arrays"), "first call"),
  _R("call_tf_unexpected_keyword", "call_tf", "a keyword the TF function does not take",
     lambda tmp, native: jax2tf.call_tf(_ident)(X, b=X),
     TypeError, ("unexpected keyword argument 'b'",), "first call"),
  _R("call_tf_not_compilable", "call_tf", "TF ops XLA cannot compile, under jax.jit",
     lambda tmp, native: jax.jit(jax2tf.call_tf(
       lambda a: tf.strings.length(tf.strings.as_string(a))))(X),
     ValueError, ("TensorFlow cannot compile the TF function", "with XLA",
                  "call it outside JAX staging"), "staging"),
  _R("call_tf_dynamic_shape", "call_tf", "a result shape TF knows only at run time, under jit",
     lambda tmp, native: jax.jit(jax2tf.call_tf(lambda a: tf.unique(tf.reshape(a, [-1]))[0]))(X),
     ValueError, ("output has dynamic shape", "pass output_shape_dtype"), "staging"),
  _R("call_tf_variable_write", "call_tf", "a TF function that assigns a tf.Variable, under jit",
     lambda tmp, native: (lambda v: jax.jit(jax2tf.call_tf(lambda a: v.assign_add(1.0) * a))(X))(
       tf.Variable(1.0)),
     ValueError, ("writes to tf.Variables", "AssignAddVariableOp", "make the function pure"),
     "staging"),
  _R("call_tf_declared_shape", "call_tf", "output_shape_dtype of another shape than the result",
     lambda tmp, native: jax2tf.call_tf(tf.sin, output_shape_dtype=jax.ShapeDtypeStruct(
       (5,), np.float32))(X),
     ValueError, ("output_shape_dtype declares result 0", "with shape (5,)", "gives [2, 3]"),
     "first call"),
  _R("call_tf_declared_dtype", "call_tf", "output_shape_dtype of another dtype than the result",
     lambda tmp, native: jax.jit(jax2tf.call_tf(tf.sin, output_shape_dtype=jax.ShapeDtypeStruct(
       (2, 3), np.int32)))(X),
     ValueError, ("declares result 0", "as int32[2, 3]", "TF computes float32"), "staging"),
  _R("call_tf_declared_tree", "call_tf", "output_shape_dtype with another structure",
     lambda tmp, native: jax2tf.call_tf(lambda a: (a, a), output_shape_dtype=jax.ShapeDtypeStruct(
       (2, 3), np.float32))(X),
     ValueError, ("output_shape_dtype has the structure", "returns PyTreeDef((*, *))"),
     "first call"),
  _R("call_tf_symbolic_outside_convert", "call_tf",
     "symbolic shapes from jax.export, outside jax2tf.convert",
     lambda tmp, native: _call_tf_symbolic(),
     ValueError, ("symbolic shapes", "outside jax2tf.convert"), "staging"),
  # ---- SavedModel ----
  _R("restored_wrong_shape", "SavedModel", "a restored signature called with another shape",
     lambda tmp, native: _restored(tmp)(tf.ones((4, 3))),
     TypeError, ("Binding inputs to tf.function failed", "shape=(4, 3)",
                 "a: TensorSpec(shape=(2, 3)"), "first call", BOTH, _save),
  _R("restored_wrong_dtype", "SavedModel", "a restored signature called with another dtype",
     lambda tmp, native: _restored(tmp)(tf.ones((2, 3), tf.int32)),
     TypeError, ("dtype=tf.int32", "a: TensorSpec(shape=(2, 3), dtype=tf.float32"),
     "first call", BOTH, _save),
  _R("restored_other_platform", "SavedModel", "a model saved for TPU only, run on CPU",
     lambda tmp, native: _restored(tmp)(tf.ones((2, 3))),
     tf.errors.NotFoundError,
     ("The current platform CPU is not among the platforms required by the module: [TPU]",),
     "TF run time", prepare=_save_for_tpu),
  _R("large_closure", "convert", "a function closing over more than 2 GiB of arrays",
     lambda tmp, native: _conv(lambda a: a + jnp.sum(_large_closure()), native)(X),
     ValueError, ("closes over", "of arrays (largest: float32[", "a TensorFlow graph or "
                  "SavedModel can hold", "Pass large arrays"), "first call", BOTH),
  _R("large_constant_arguments", "convert",
     "arrays of more than 2 GiB passed as arguments in a tf.function (not tf.Variables)",
     lambda tmp, native: _large_array_arguments(native),
     ValueError, ("is called in a TensorFlow graph with 2.25 GiB of arrays as arguments",
                  "p[0] float32[", "a TensorFlow graph or SavedModel can hold",
                  "Give tf.Variables"), "first call", BOTH),
  # ---- to_tflite ----
  _R("tflite_route", "to_tflite", "an unknown route",
     lambda tmp, native: jax2tf.to_tflite(_ident, SPEC, route="fast"),
     ValueError, ("route: expected 'auto', 'graph', 'native' or 'litert', got 'fast'",), "convert"),
  _R("tflite_quantize", "to_tflite", "an unknown quantization",
     lambda tmp, native: jax2tf.to_tflite(_ident, SPEC, quantize="int4"),
     ValueError, ("quantize: expected one of", "got 'int4'"), "convert"),
  _R("tflite_int8_no_data", "to_tflite", "quantize='int8' without representative_dataset",
     lambda tmp, native: jax2tf.to_tflite(_ident, SPEC, quantize="int8"),
     ValueError, ("quantize='int8' needs representative_dataset",), "convert"),
  _R("tflite_dataset_not_callable", "to_tflite", "representative_dataset given as a list",
     lambda tmp, native: jax2tf.to_tflite(_ident, SPEC, quantize="int8",
                                          representative_dataset=[X]),
     TypeError, ("representative_dataset: expected a callable", "got list"), "convert"),
  _R("tflite_dataset_count", "to_tflite", "calibration samples with more arrays than inputs",
     lambda tmp, native: jax2tf.to_tflite(lambda a: a * 2, SPEC, quantize="int8",
                                          representative_dataset=_two_inputs_samples),
     ValueError, ("sample 0 has 2 array(s)", "takes 1 input(s) ['a']"), "convert"),
  _R("tflite_dataset_shape", "to_tflite", "calibration samples of another shape",
     lambda tmp, native: jax2tf.to_tflite(lambda a: a * 2, SPEC, quantize="int8",
                                          representative_dataset=_wrong_shape_samples),
     ValueError, ("sample 0, input 'a'", "got float32[5]", "takes float32[2, 3]"), "convert"),
  _R("tflite_flag_not_bool", "to_tflite", "allow_flex='yes'",
     lambda tmp, native: jax2tf.to_tflite(_ident, SPEC, allow_flex="yes"),
     TypeError, ("allow_flex must be a bool",), "convert"),
  _R("tflite_input_spec", "to_tflite", "an input spec that is a dtype name",
     lambda tmp, native: jax2tf.to_tflite(_ident, "float32"),
     TypeError, ("input_specs[0]: expected an array or a jax.ShapeDtypeStruct, got str",),
     "convert"),
  _R("tflite_spec_unbalanced", "to_tflite", "a shape spec whose parentheses do not balance",
     lambda tmp, native: jax2tf.to_tflite(_ident, SPEC, polymorphic_shapes="(b,"),
     ValueError, ("polymorphic_shapes spec '(b,' for argument a",), "convert"),
  _R("tflite_spec_count", "to_tflite", "more shape specs than inputs",
     lambda tmp, native: jax2tf.to_tflite(_ident, SPEC, polymorphic_shapes=["(b, _)", "(b,)"]),
     ValueError, ("expected one entry per input spec (1), got 2",), "convert"),
  _R("tflite_no_builtin", "to_tflite",
     "a primitive TFLite has no builtin kernel for (complex negation)",
     lambda tmp, native: jax2tf.to_tflite(lambda a: -a,
                                          jax.ShapeDtypeStruct((2, 3), np.complex64),
                                          route="graph", path=tmp / "m.tflite"),
     jax2tf.lite.TFLiteConversionError, ("JAX primitive neg",
                                    "TF op Neg on complex64", "allow_flex=True"), "convert"),
  _R("tflite_folder_missing", "to_tflite", "a path in a folder that does not exist",
     lambda tmp, native: jax2tf.to_tflite(_ident, SPEC, path=tmp / "no" / "m.tflite"),
     FileNotFoundError, ("path: the folder", "does not exist"), "convert"),
  _R("tflite_params_too_large", "to_tflite", "parameters larger than a flatbuffer holds",
     lambda tmp, native: jax2tf.to_tflite(lambda p, a: a * p, SPEC,
                                          params=_large_params()),
     ValueError, ("params:", "GiB of parameters do not fit in one TFLite flatbuffer"),
     "convert"),
  # ---- to_tfjs ----
  _R("tfjs_dtype", "to_tfjs", "an int8 input (TF.js has no int8)",
     lambda tmp, native: jax2tf.to_tfjs(lambda a: a + 1, jax.ShapeDtypeStruct((2, 3), np.int8),
                                        path=tmp / "m"),
     jax2tf.tfjs.TFJSConversionError, ("dtype int8 (TF.js has no int8 tensors)", "input 'a' is int8"),
     "convert"),
  _R("tfjs_op", "to_tfjs", "a primitive TF.js has no kernel for (digamma)",
     lambda tmp, native: jax2tf.to_tfjs(lax.digamma,
                                        jax.ShapeDtypeStruct((2, 3), np.float32), path=tmp / "m"),
     jax2tf.tfjs.TFJSConversionError, ("JAX primitive digamma", "TF.js"), "convert"),
  _R("tfjs_pytree_input", "to_tfjs", "a pytree as an input spec",
     lambda tmp, native: jax2tf.to_tfjs(_ident, {"a": SPEC}, path=tmp / "m"),
     TypeError, ("input_specs[0]", "got dict", "TF.js model takes arrays"), "convert"),
  _R("tfjs_path_exists", "to_tfjs", "a path that exists, without overwrite",
     lambda tmp, native: jax2tf.to_tfjs(lambda a: a * 2, SPEC, path=tmp / "model"),
     FileExistsError, ("exists; pass overwrite to replace it",), "convert",
     prepare=_existing_file),
  _R("tfjs_run_count", "to_tfjs", "jax2tf.tfjs.run with two inputs for a one-input model",
     lambda tmp, native: jax2tf.tfjs.run(tmp / "tfjs", X, X),
     TypeError, ("the model takes 1 inputs (a), got 2",), "first call", prepare=_tfjs_model),
  _R("tfjs_run_dtype", "to_tfjs", "jax2tf.tfjs.run with an input of another dtype",
     lambda tmp, native: jax2tf.tfjs.run(tmp / "tfjs", X.astype(np.int32)),
     TypeError, ("input 'a': the model takes float32, got int32",), "first call",
     prepare=_tfjs_model),
  _R("tfjs_run_backend", "to_tfjs", "jax2tf.tfjs.run on a backend Node does not have",
     lambda tmp, native: jax2tf.tfjs.run(tmp / "tfjs", X, backend="webgpu"),
     ValueError, ("backend: expected one of", "got 'webgpu'"), "first call",
     prepare=_tfjs_model),
  _R("tfjs_run_no_model", "to_tfjs", "jax2tf.tfjs.run on a folder without a model",
     lambda tmp, native: jax2tf.tfjs.run(tmp, X),
     FileNotFoundError, ("holds no TF.js model (no model.json)",), "first call"),
  # ---- the command line ----
  _R("cli_model_ref", "CLI", "a model reference without module:NAME",
     lambda tmp, native: _cli("export", "cnn", "--out", str(tmp / "m")),
     CommandFailed, ("exit status 2", "expected package.module:NAME, got 'cnn'"), "convert"),
  _R("cli_model_missing", "CLI", "a model name the module does not define",
     lambda tmp, native: _cli("export", "jax2tf.demo_model:missing", "--out", str(tmp / "m")),
     CommandFailed, ("exit status 2", "has no callable missing"), "convert"),
  _R("cli_target", "CLI", "an export target that does not exist",
     lambda tmp, native: _cli("export", CLI_MODEL, "--target", "onnx", "--out", str(tmp / "m")),
     CommandFailed, ("exit status 2", "invalid choice: 'onnx'"), "convert"),
  _R("cli_out_exists", "CLI", "--out names an existing folder, without --overwrite",
     lambda tmp, native: _cli("export", CLI_MODEL, "--out", str(tmp / "out")),
     CommandFailed, ("exit status 2", "exists; pass --overwrite"), "convert",
     prepare=_existing_dir),
  _R("cli_spec_count", "CLI", "more --polymorphic-shapes than the model has inputs",
     lambda tmp, native: _cli("export", CLI_MODEL, "--out", str(tmp / "m"),
                              "--polymorphic-shapes", "(b, 28, 28, 1)", "_"),
     CommandFailed, ("exit status 2", "expected one spec per input (1), got 2"), "convert"),
  _R("cli_tfjs_native", "CLI", "a TF.js export asked for native serialization",
     lambda tmp, native: _cli("export", CLI_MODEL, "--target", "tfjs", "--serialization",
                              "native", "--out", str(tmp / "m")),
     CommandFailed, ("exit status 2", "TF.js runs graphs of ordinary TF ops only"), "convert"),
  _R("cli_inspect_text_file", "CLI", "inspect given a text file",
     lambda tmp, native: _cli("inspect", str(tmp / "model")),
     CommandFailed, ("exit status 2", "expected a SavedModel directory"), "convert",
     prepare=_existing_file),
)


def _call_tf_symbolic():
  b_shape = jax.export.symbolic_shape("b")
  f = jax2tf.call_tf(tf.sin, output_shape_dtype=jax.ShapeDtypeStruct(b_shape, np.float32))
  return jax.export.export(jax.jit(f))(jax.ShapeDtypeStruct(b_shape, np.float32))


def _large_closure():
  # A broadcast view: 2.25 GiB to the size check, a few bytes of memory.
  return np.broadcast_to(np.float32(1.5), (2**29 + 2**26,))


def _large_params():
  return np.broadcast_to(np.float32(1.5), (2**29 + 2**26,))


def _large_array_arguments(native):
  # Two broadcast views, 1.12 GiB each to the size check, given as numpy arrays
  # (not tf.Variables) while a tf.function traces.
  halves = [np.broadcast_to(np.float32(1.5), (2**28 + 2**25,))] * 2
  f = _conv(lambda p, a: a + jnp.sum(p[0]) + jnp.sum(p[1]), native)
  return tf.function(lambda a: f(halves, a), autograph=False).get_concrete_function(
    tf.TensorSpec([2, 3], tf.float32))


def entries_and_serializations():
  """(entry, serialization) pairs, as the tests run them."""
  return [(e, s) for e in CATALOGUE for s in e.serializations]


def run(
  entry: BadInput, tmp: pathlib.Path, serialization: str | None, prepared: bool = False
) -> BaseException:
  """Triggers `entry` in the folder `tmp` (after its `prepare`, unless
  `prepared`); returns the exception it raised, or raises AssertionError when
  it raised none (another type propagates)."""
  native = None if serialization is None else serialization == "native"
  if entry.prepare is not None and not prepared:
    entry.prepare(tmp, native)
  try:
    entry.trigger(tmp, native)
  except entry.raises as e:
    return e
  raise AssertionError(f"{entry.name}: expected {entry.raises.__name__}, nothing was raised")
