"""The model set (benchmarks/models) converted with graph serialization.

Every model and every shape-polymorphic variant is converted once with its
parameters as an argument (`polymorphic_shapes=[None, spec, ...]`) and run at
two sizes in each TF mode against `jax.jit` on the same inputs. One TF
function (with `None` for the polymorphic dimensions in its signature) serves
both sizes, so the test proves the polymorphism of the TF graph, not only of
the JAX trace. The same models run with native serialization in a smaller
parametrisation, so that the set is proven with both lowerings.

The fast tier (not marked slow) holds the small models at their batch
variant; `-m slow` adds the full cross product.
"""

import functools
import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

import jax2tf
from benchmarks import models
from tests.tf_modes import TF_MODES, tensor_specs

# (model, variant, mode) that run in the fast tier: the small models at their
# batch variant, every mode for the MLP and one mode each for the others.
FAST_GRAPH = {
    ("mlp", "batch", "eager"), ("mlp", "batch", "graph"), ("mlp", "batch", "compiled"),
    ("cnn", "batch", "graph"), ("gnn", "batch", "eager"),
    ("actor_critic", "batch", "compiled"),
}
FAST_NATIVE = {("mlp", "batch"), ("cnn", "batch")}
GRADIENT_MODELS = tuple(models.REGISTRY)
FAST_GRADIENT = {("mlp", "eager"), ("cnn", "graph")}
FAST_WALK = {"mlp", "cnn"}
SAVED_MODELS = ("cnn", "gnn")


def _slow_unless(fast: bool):
  return () if fast else (pytest.mark.slow,)


def _graph_params():
  for name in models.REGISTRY:
    for v in models.variants_of(name):
      for mode in TF_MODES:
        yield pytest.param(name, v.name, mode, id=f"{name}-{v.name}-{mode}",
                           marks=_slow_unless((name, v.name, mode) in FAST_GRAPH))


def _native_params():
  for name in models.REGISTRY:
    for v in models.variants_of(name):
      yield pytest.param(name, v.name, id=f"{name}-{v.name}",
                         marks=_slow_unless((name, v.name) in FAST_NATIVE))


# -- helpers -----------------------------------------------------------------

@functools.lru_cache(maxsize=2)
def _converted(name: str, variant: str, native: bool):
  # Cached so that the three TF modes of one variant (consecutive rows) share
  # one lowering, as a user converting once and calling from several places
  # would; a few only, or a test-all worker holds every model's lowerings.
  m = models.get(name)
  v = m.variant(variant)
  return jax2tf.convert(m.fn, native_serialization=native,
                        polymorphic_shapes=m.polymorphic_shapes(v),
                        polymorphic_constraints=v.constraints)


@functools.lru_cache(maxsize=2)
def _params_tf(name: str):
  return jax.tree_util.tree_map(tf.constant, models.get(name).params)


def _tf_callable(f_tf, m: models.Model, variant: models.Variant, mode: str):
  if mode == "eager":
    return f_tf
  sig = [jax.tree_util.tree_map(lambda p: tf.TensorSpec(p.shape, tf.as_dtype(p.dtype)),
                                m.params),
         *tensor_specs(m.inputs_for(variant, variant.sizes[0]), variant.specs)]
  return tf.function(lambda params, *xs: f_tf(params, *xs), autograph=False,
                     input_signature=sig, jit_compile=(mode == "compiled"))


def _assert_close(got, expected, m: models.Model, where: str):
  got_leaves = tf.nest.flatten(got)
  exp_leaves = jax.tree_util.tree_leaves(expected)
  assert len(got_leaves) == len(exp_leaves), where
  for i, (g, e) in enumerate(zip(got_leaves, exp_leaves)):
    g, e = np.asarray(g), np.asarray(e)
    at = f"{where} output {i}"
    assert g.shape == e.shape, f"{at}: shape {g.shape}, JAX gives {e.shape}"
    assert g.dtype == e.dtype, f"{at}: dtype {g.dtype}, JAX gives {e.dtype}"
    np.testing.assert_allclose(g, e, rtol=m.rtol, atol=m.atol, err_msg=at)


def _run_variant(name: str, variant: str, mode: str, native: bool):
  m = models.get(name)
  v = m.variant(variant)
  f = _tf_callable(_converted(name, variant, native), m, v, mode)
  for size in v.sizes:
    inputs = m.inputs_for(v, size)
    expected = jax.jit(m.fn)(m.params, *inputs)
    got = f(_params_tf(name), *[tf.constant(x) for x in inputs])
    _assert_close(got, expected, m,
                  f"{name}[{variant}={size}, {mode}, "
                  f"{'native' if native else 'graph'}]")
  if mode != "eager":
    # One TF function served every size.
    assert f.experimental_get_tracing_count() == 1


# -- forward passes ------------------------------------------------------------

@pytest.mark.parametrize("name,variant,mode", list(_graph_params()))
def test_graph_model(name, variant, mode):
  _run_variant(name, variant, mode, native=False)


@pytest.mark.parametrize("name,variant", list(_native_params()))
def test_native_model(name, variant):
  # XlaCallModule compiles the same StableHLO in every TF mode, so one mode
  # (a tf.function with a polymorphic signature) is enough here.
  _run_variant(name, variant, "graph", native=True)


# -- gradients ---------------------------------------------------------------

def _loss(m: models.Model):
  def loss(params, *inputs):
    # Squares weigh every output element and sign; a plain sum would let
    # the gradient of a softmax output vanish.
    return sum(jnp.mean(jnp.square(o.astype(jnp.float32)))
               for o in jax.tree_util.tree_leaves(m.fn(params, *inputs)))
  return loss


@pytest.mark.parametrize("name,mode", [
    pytest.param(n, mode, id=f"{n}-{mode}", marks=_slow_unless((n, mode) in FAST_GRADIENT))
    for n in GRADIENT_MODELS for mode in TF_MODES])
def test_graph_gradient(name, mode):
  m = models.get(name)
  v = m.variant("batch")
  loss = _loss(m)
  loss_tf = jax2tf.convert(loss, native_serialization=False,
                           polymorphic_shapes=m.polymorphic_shapes(v))
  params_vars = jax.tree_util.tree_map(tf.Variable, m.params)

  def grads_tf(*inputs):
    with tf.GradientTape() as tape:
      value = loss_tf(params_vars, *inputs)
    return value, tape.gradient(value, params_vars)

  if mode != "eager":
    grads_tf = tf.function(grads_tf, autograph=False, jit_compile=(mode == "compiled"))
  for size in v.sizes:
    inputs = m.inputs_for(v, size)
    value, grads = grads_tf(*[tf.constant(x) for x in inputs])
    exp_value, exp_grads = jax.jit(jax.value_and_grad(loss))(m.params, *inputs)
    where = f"{name}[batch={size}, {mode}]"
    np.testing.assert_allclose(value.numpy(), exp_value, rtol=m.rtol, atol=m.atol,
                               err_msg=f"{where} loss")
    flat_exp, _ = jax.tree_util.tree_flatten_with_path(exp_grads)
    flat_got = jax.tree_util.tree_leaves(grads, is_leaf=lambda x: x is None)
    assert len(flat_got) == len(flat_exp)
    for (path, e), g in zip(flat_exp, flat_got):
      assert g is not None, f"{where}: no TF gradient for {jax.tree_util.keystr(path)}"
      _assert_gradient_close(tf.convert_to_tensor(g).numpy(), np.asarray(e), m,
                             f"{where} gradient of {jax.tree_util.keystr(path)}")


def _assert_gradient_close(got, expected, m: models.Model, where: str):
  # Normwise: through many ReLUs (ResNet-50), last-bit differences in the
  # forward pass flip a few activation masks, which moves single gradient
  # entries by far more than rounding while the gradient as a whole agrees
  # to ~1e-4. A wrong rule (layout, sign, missing term) is off by O(1).
  assert got.shape == expected.shape, where
  err = float(np.linalg.norm((got - expected).ravel()))
  scale = float(np.linalg.norm(expected.ravel()))
  tol = m.rtol * 10 * scale + m.atol * 10
  assert err <= tol, f"{where}: |got - expected| = {err:.3e} > {tol:.3e} (|expected| = {scale:.3e})"


# -- no XlaCallModule anywhere -----------------------------------------------

def _all_op_types(graph_def) -> set:
  ops = {n.op for n in graph_def.node}
  for fdef in graph_def.library.function:   # nested functions: gradients, loops
    ops |= {n.op for n in fdef.node_def}
  return ops


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=_slow_unless(n in FAST_WALK)) for n in models.REGISTRY])
def test_graph_has_no_xla_call_module(name):
  m = models.get(name)
  v = m.variants[0]
  f = _tf_callable(_converted(name, v.name, False), m, v, "graph")
  concrete = f.get_concrete_function()
  ops = _all_op_types(concrete.graph.as_graph_def())
  assert "XlaCallModule" not in ops, sorted(ops)
  # The walk must have seen the model's own arithmetic, not an empty shell.
  assert ops & {"MatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum", "XlaDot",
                "XlaDotV2", "Conv2D", "XlaConv", "XlaConvV2"}, sorted(ops)

  native = _tf_callable(_converted(name, v.name, True), m, v, "graph")
  native_ops = _all_op_types(native.get_concrete_function().graph.as_graph_def())
  assert "XlaCallModule" in native_ops, "the walk would not find the op it looks for"


def test_gradient_graph_has_no_xla_call_module():
  m = models.get("mlp")
  loss_tf = jax2tf.convert(_loss(m), native_serialization=False,
                           polymorphic_shapes=m.polymorphic_shapes(m.variant("batch")))
  params_vars = jax.tree_util.tree_map(tf.Variable, m.params)

  @tf.function(autograph=False, input_signature=[tf.TensorSpec([None, 64], tf.float32)])
  def grads(x):
    with tf.GradientTape() as tape:
      value = loss_tf(params_vars, x)
    return tape.gradient(value, params_vars)

  ops = _all_op_types(grads.get_concrete_function().graph.as_graph_def())
  assert "XlaCallModule" not in ops, sorted(ops)
  assert "MatMul" in ops or "XlaDot" in ops or "XlaDotV2" in ops, sorted(ops)


# -- SavedModel restored where JAX cannot be imported ------------------------

_NO_JAX_SCRIPT = textwrap.dedent("""
    import json, sys
    # Any import of JAX (or of this package) must fail in this process.
    sys.modules["jax"] = None
    sys.modules["jaxlib"] = None
    sys.modules["jax2tf"] = None
    sys.modules["flax"] = None
    try:
      import jax
    except ImportError:
      pass
    else:
      raise SystemExit("jax is importable")
    import numpy as np
    import tensorflow as tf
    requests = json.loads(sys.argv[1])
    out = {}
    for name, path, calls in requests:
      restored = tf.saved_model.load(path)
      out[name] = []
      for inputs, dtypes in calls:
        args = [tf.constant(np.asarray(x, dtype=d)) for x, d in zip(inputs, dtypes)]
        res = restored.f(*args)
        out[name].append([np.asarray(r).tolist() for r in tf.nest.flatten(res)])
    assert not {k for k, v in sys.modules.items()
                if v is not None and k.split(".")[0] in ("jax", "jaxlib", "flax")}
    print("RESULT" + json.dumps(out))
""")


def _save_graph_model(name: str, path) -> None:
  m = models.get(name)
  v = m.variant("batch")
  f_tf = jax2tf.convert(m.fn, native_serialization=False,
                        polymorphic_shapes=m.polymorphic_shapes(v))
  params_vars = jax.tree_util.tree_map(tf.Variable, m.params)
  module = tf.Module()
  module._variables = jax.tree_util.tree_leaves(params_vars)
  module.f = tf.function(
      lambda *xs: f_tf(params_vars, *xs), autograph=False,
      input_signature=tensor_specs(m.inputs, v.specs))
  tf.saved_model.save(module, str(path),
                      options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))


def _saved_op_types(path) -> set:
  sm = saved_model_pb2.SavedModel()
  with open(os.path.join(path, "saved_model.pb"), "rb") as fh:
    sm.ParseFromString(fh.read())
  ops = set()
  for mg in sm.meta_graphs:
    ops |= _all_op_types(mg.graph_def)
  return ops


@pytest.mark.subprocess
def test_saved_model_restores_without_jax(tmp_path):
  requests, expected = [], {}
  for name in SAVED_MODELS:
    path = str(tmp_path / name)
    _save_graph_model(name, path)
    ops = _saved_op_types(path)
    assert "XlaCallModule" not in ops, (name, sorted(ops))
    m = models.get(name)
    v = m.variant("batch")
    calls, expected[name] = [], []
    for size in v.sizes:
      inputs = m.inputs_for(v, size)
      calls.append(([x.tolist() for x in inputs], [str(x.dtype) for x in inputs]))
      expected[name].append(jax.tree_util.tree_leaves(jax.jit(m.fn)(m.params, *inputs)))
    requests.append((name, path, calls))

  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  proc = subprocess.run([sys.executable, "-c", _NO_JAX_SCRIPT, json.dumps(requests)],
                        capture_output=True, text=True, env=env, timeout=300,
                        cwd=str(tmp_path))
  assert proc.returncode == 0, proc.stderr[-3000:]
  line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT")][-1]
  out = json.loads(line[len("RESULT"):])
  for name in SAVED_MODELS:
    m = models.get(name)
    for size, got, exp in zip(m.variant("batch").sizes, out[name], expected[name]):
      assert len(got) == len(exp)
      for g, e in zip(got, exp):
        np.testing.assert_allclose(np.asarray(g, np.float32), np.asarray(e),
                                   rtol=m.rtol, atol=m.atol,
                                   err_msg=f"{name} restored, batch {size}")


# -- the registry itself -------------------------------------------------------

def test_registry_is_consistent():
  assert len(set(models.REGISTRY)) == len(models.REGISTRY)
  for name in models.REGISTRY:
    variants = models.variants_of(name)
    assert variants and variants[0].name == "batch", name
    assert len({v.name for v in variants}) == len(variants), name
    for v in variants:
      assert len(v.sizes) == 2 and v.sizes[0] != v.sizes[1], (name, v.name)
  # The benchmark cases keep their historical API.
  case = models.small_mlp_case(batch=2)
  assert case.x.shape == (2, 64) and callable(case.fn)
