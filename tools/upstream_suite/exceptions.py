"""The known exceptions: upstream tests that pass with JAX's module and fail with
this package for a reason that is not a defect. Everything else that passes
with JAX's module and not with this package is a regression.

One entry per test, or per family of parametrised tests: `pattern` is a test
id, `file.py::Class::test_name`, in which `*` matches anything (nothing else
is special, so ids with brackets or dots are written as they are). Add an
entry only with its reason; remove it when the test passes (the run lists the
entries that matched no failure).
"""

import dataclasses
import re

# This package reaches upstream's result another way, and the test looks at the
# way rather than the result.
MECHANISM = "upstream's mechanism"
# The test expects the exception of the same class as ours and matches a
# sentence of upstream's message; ours says more.
WORDING = "wording only (same exception class, ours says more)"

# What a failed assertRaisesRegex reports: the class matched (else the
# exception itself would have been the failure), the message did not.
_REGEX_MISMATCH = r'^AssertionError: ".*" does not match "'

_CALL_TF_GRAPH = (
  "looks for the `tf.call_tf_function` custom call that upstream writes for "
  "`call_tf_graph=True`; this package splits the function around the TF call "
  "instead (results verified)"
)
_NON_COMPILABLE_GRAPH = (
  _CALL_TF_GRAPH + "; under `jax.jit` ours raises its ValueError that TF cannot compile "
  "the function, where upstream's says that only `jax2tf.convert` exports it"
)
_GRADIENT_DISABLED = (
  "Gradient explicitly disabled. Reason: Gradient requested for {}, which was converted "
  "with with_gradient=False; convert it with with_gradient=True."
)
_OUTPUT_DECLARED = "call_tf: output_shape_dtype declares result 0 of the TF function <lambda> "


@dataclasses.dataclass(frozen=True)
class Known:
  pattern: str
  category: str
  # MECHANISM: why. WORDING: the exception class and what ours says.
  reason: str = ""
  exception: str = ""
  ours_says: str = ""
  # A regex the failure message with ours must match (re.search), so that a
  # test that starts failing another way is a regression again.
  failure: str = ""

  def __post_init__(self):
    assert self.category in (MECHANISM, WORDING), self.category
    assert self.reason if self.category == MECHANISM else self.exception and self.ours_says

  def matches(self, test_id: str) -> bool:
    regex = ".*".join(re.escape(part) for part in self.pattern.split("*"))
    return re.fullmatch(regex, test_id) is not None

  def explains(self, message: str) -> bool:
    expected = self.failure or (_REGEX_MISMATCH if self.category == WORDING else "")
    return re.search(expected, message, re.DOTALL) is not None

  def describe(self) -> str:
    if self.category == MECHANISM:
      return self.reason
    return f"{self.exception} with both; ours says `{self.ours_says}`"


KNOWN: list[Known] = [
  Known(
    "back_compat_tf_test.py::CompatTensoflowTest::test_tf_call_tf_function",
    MECHANISM,
    "compares the custom calls of the module with those of upstream's stored module: "
    + _CALL_TF_GRAPH,
    failure=r"Element counts were not equal",
  ),
  Known(
    "call_tf_test.py::RoundTripToTfTest::test_call_tf_graph",
    MECHANISM,
    _CALL_TF_GRAPH,
    failure=r"'stablehlo\.custom_call' not found",
  ),
  Known(
    "call_tf_test.py::RoundTripToTfTest::test_call_tf_graph_non_compilable_multiple_outputs",
    MECHANISM,
    _NON_COMPILABLE_GRAPH,
    failure=r'"call_tf_graph=True only support exporting by jax2tf\.convert currently" does not',
  ),
  Known(
    "call_tf_test.py::RoundTripToTfTest::test_call_tf_graph_non_compilable_zero_outputs",
    MECHANISM,
    _NON_COMPILABLE_GRAPH,
    failure=r'"call_tf_graph=True only support exporting by jax2tf\.convert currently" does not',
  ),
  Known(
    "call_tf_test.py::RoundTripToTfTest::test_call_tf_graph_ordered_version_9",
    MECHANISM,
    _NON_COMPILABLE_GRAPH,
    failure=r'"call_tf_graph=True only support exporting by jax2tf\.convert currently" does not',
  ),
  Known(
    "call_tf_test.py::CallTfTest::test_error_non_compilable_strings",
    WORDING,
    exception="ValueError",
    ours_says="call_tf: TensorFlow cannot compile the TF function f_tf_non_compilable with XLA "
    "for arguments [...], which is needed when it is called under jax.jit, lax.cond/while_loop/"
    "scan or another JAX staging context ..., with the remedy",
  ),
  Known(
    "call_tf_test.py::CallTfTest::test_output_shape_dtype_not_none",
    WORDING,
    exception="ValueError",
    ours_says="call_tf: output_shape_dtype has the structure PyTreeDef(None), but the TF "
    "function returns a result; output_shape_dtype must be a pytree with one "
    "jax.ShapeDtypeStruct per result",
  ),
  Known(
    "call_tf_test.py::CallTfTest::test_error_bad_result_string",
    WORDING,
    exception="ValueError",
    ours_says="call_tf: result 0 of the TF function fun_tf has TF dtype string, which JAX "
    "cannot represent; ...",
  ),
  Known(
    "call_tf_test.py::CallTfTest::test_error_bad_result_tensorarray",
    WORDING,
    exception="ValueError",
    ours_says="call_tf: result 0 of the TF function fun_tf is a tf.TensorArray (return "
    "ta.stack() for its elements) ...",
  ),
  Known(
    "call_tf_test.py::RoundTripToTfTest::test_shape_poly_error_mismatch_output_shape_dtype_kind=bad_dtype_x64_with_jit*",
    WORDING,
    exception="ValueError",
    ours_says=_OUTPUT_DECLARED + "as float64, but TF returns float32 ...",
  ),
  Known(
    "call_tf_test.py::CallTfTest::test_output_shape_dtype_none",
    WORDING,
    exception="ValueError",
    ours_says="call_tf: output_shape_dtype has the structure PyTreeDef(*), but the TF function "
    "fun_tf returns PyTreeDef(None); output_shape_dtype must be a pytree with one "
    "jax.ShapeDtypeStruct per result",
  ),
  Known(
    "call_tf_test.py::RoundTripToTfTest::test_shape_poly_error_mismatch_output_shape_dtype_kind=bad_dim*",
    WORDING,
    exception="ValueError",
    ours_says=_OUTPUT_DECLARED + "with shape (9,), but TF gives [4] for arguments float32[4]; "
    "fix the declared shape",
  ),
  Known(
    "call_tf_test.py::RoundTripToTfTest::test_shape_poly_error_mismatch_output_shape_dtype_kind=bad_dtype_with_jit*",
    WORDING,
    exception="ValueError",
    ours_says=_OUTPUT_DECLARED + "as int32[4], but TF computes float32 (after JAX's dtype "
    "canonicalization); fix the declared dtype",
  ),
  Known(
    "call_tf_test.py::RoundTripToTfTest::test_shape_poly_error_mismatch_output_shape_dtype_kind=bad_rank*",
    WORDING,
    exception="ValueError",
    ours_says=_OUTPUT_DECLARED + "with shape (), but TF gives [4] for arguments float32[4]; "
    "fix the declared shape",
  ),
  Known(
    "call_tf_test.py::RoundTripToTfTest::test_shape_poly_error_mismatch_output_shape_dtype_tree*",
    WORDING,
    exception="ValueError",
    ours_says="call_tf: output_shape_dtype has the structure PyTreeDef((*, *)), but the TF "
    "function sin returns PyTreeDef(*); output_shape_dtype must be a pytree with one "
    "jax.ShapeDtypeStruct per result",
  ),
  Known(
    "call_tf_test.py::RoundTripToJaxTest::test_without_gradient_saved_model",
    WORDING,
    exception="LookupError",
    ours_says=_GRADIENT_DISABLED.format("sum"),
  ),
  Known(
    "jax2tf_test.py::Jax2TfTest::test_convert_argument_non_callable_error",
    WORDING,
    exception="TypeError",
    ours_says="convert: fun_jax must be callable, got 5.0",
  ),
  Known(
    "jax2tf_test.py::Jax2TfTest::test_convert_argument_non_tensor_error",
    WORDING,
    exception="TypeError",
    ours_says="argument x has dtype object (value <function ...>); expected a numeric or boolean "
    "array, scalar or tf.Tensor",
  ),
  Known(
    "jax2tf_test.py::Jax2TfTest::test_effects_error",
    WORDING,
    exception="NotImplementedError",
    ours_says="Cannot convert f_jax with native serialization: it has effects ['host callback']. "
    "Host callbacks (jax.debug.print, ...) run Python inside the JAX process and cannot be "
    "carried into a TensorFlow graph. Remove them before converting ...",
  ),
  Known(
    "jax2tf_test.py::Jax2TfTest::test_gradients_disabled*",
    WORDING,
    exception="LookupError",
    ours_says=_GRADIENT_DISABLED.format("tan"),
  ),
  Known(
    "savedmodel_test.py::SavedModelTest::test_gradient_disabled",
    WORDING,
    exception="LookupError",
    ours_says=_GRADIENT_DISABLED.format("<lambda>"),
  ),
  Known(
    "shape_poly_test.py::ShapePolyTest::test_forgot_polymorphic_shapes_error",
    WORDING,
    exception="ValueError",
    ours_says="argument args[0] has shape (1, ?) with unknown dimensions, but no "
    'polymorphic_shapes spec for it; give one, e.g. polymorphic_shapes=... "(_, b)"',
  ),
]


def find(test_id: str) -> Known | None:
  return next((k for k in KNOWN if k.matches(test_id)), None)
