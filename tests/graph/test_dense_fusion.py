"""A dense layer (dot_general over trailing axes, plus a bias, maybe then
jax.nn.gelu's tanh form) as MatMul, BiasAdd and the GELU on the flattened
rows (jax2tf/graph/fusions.py): JAX's results, and ops TF's graph optimizer
fuses into one kernel."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf

RNG = np.random.default_rng(11)
X = RNG.normal(size=(6, 5, 16)).astype(np.float32)
W = (RNG.normal(size=(16, 24)) / 4).astype(np.float32)
W_HEADS = (RNG.normal(size=(16, 3, 4)) / 4).astype(np.float32)
BIAS = RNG.normal(size=(24,)).astype(np.float32)
BIAS_HEADS = RNG.normal(size=(3, 4)).astype(np.float32)
# GELU's special values: NaN, both infinities (JAX: -inf * 0 = NaN), the
# tail where 1 + tanh cancels to 0 (JAX: -0.0), zeros of both signs.
SPECIAL = np.array(
  [np.nan, np.inf, -np.inf, -1e30, -30.0, -9.0, -4.0, -1.0, -0.0, 0.0, 1e-30, 0.5, 3.0, 1e30],
  np.float32,
)


def _gelu_dense(x):
  return jax.nn.gelu(x @ W + BIAS)


def _gelu_dense_bias_first(x):
  return jax.nn.gelu(BIAS + jnp.einsum("btd,df->btf", x, W))


def _heads(x):
  # A projection to (heads, head_dim), as attention's query/key/value.
  return jnp.einsum("btd,dhk->bthk", x, W_HEADS) + BIAS_HEADS


def _rows(x):
  return x[0] @ W + BIAS


def _gelu_also_returned(x):
  h = x @ W + BIAS
  return jax.nn.gelu(h), h


def _exact_gelu(x):
  return jax.nn.gelu(x @ W + BIAS, approximate=False)


def _no_bias(x):
  return jax.nn.gelu(x @ W)


def _dense_relu(x):
  return jax.nn.relu(x @ W + BIAS)


FUNCTIONS = [
  _gelu_dense,
  _gelu_dense_bias_first,
  _heads,
  _rows,
  _gelu_also_returned,
  _exact_gelu,
  _no_bias,
  _dense_relu,
]
MODES = [(m, x) for x in (True, False) for m in ("eager", "graph", "compiled")]


def _converted(f, enable_xla, poly=None):
  return jax2tf.convert(
    f, native_serialization=False, enable_xla=enable_xla, polymorphic_shapes=poly
  )


def _run(f, args, mode, enable_xla):
  converted = _converted(f, enable_xla)
  if mode == "eager":
    return converted(*args)
  return tf.function(converted, autograph=False, jit_compile=mode == "compiled")(*args)


def _assert_like_jax(got, want):
  got, want = tf.nest.flatten(got), jax.tree_util.tree_leaves(want)
  assert len(got) == len(want)
  for g, w in zip(got, want):
    w = np.asarray(w)
    assert g.shape == w.shape
    np.testing.assert_allclose(g.numpy(), w, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode,enable_xla", MODES)
def test_dense_layers_give_jax_results(f, mode, enable_xla):
  _assert_like_jax(_run(f, (X,), mode, enable_xla), jax.jit(f)(X))


@pytest.mark.parametrize("mode,enable_xla", MODES)
def test_gelu_of_special_values_gives_jax_results(mode, enable_xla):
  # A kernel of ones over a column of zeros passes each value to the GELU as
  # it is (no product of inf and 0 is summed).
  def f(x):
    return jax.nn.gelu(x @ jnp.ones((2, 1), x.dtype) + jnp.zeros(1, x.dtype))

  x = np.stack([SPECIAL, np.zeros_like(SPECIAL)], axis=1)
  want = np.asarray(jax.jit(f)(x))
  got = _run(f, (x,), mode, enable_xla).numpy()
  np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def _graph(f, specs, enable_xla=False):
  converted = _converted(f, enable_xla)
  return tf.function(converted, autograph=False).get_concrete_function(*specs).graph


def _bias_added_matmuls(graph) -> list:
  """The rank-2 MatMuls whose only reader is a BiasAdd."""
  found = []
  for op in graph.get_operations():
    if op.type != "MatMul":
      continue
    readers = [c for c in op.outputs[0].consumers()]
    if len(readers) == 1 and readers[0].type == "BiasAdd":
      found.append(readers[0])
  return found


@pytest.mark.parametrize(
  "f,fused,gelu",
  [
    (_gelu_dense, True, True),
    (_gelu_dense_bias_first, True, True),
    (_heads, True, False),
    (_rows, True, False),
    (_gelu_also_returned, True, False),
    (_exact_gelu, True, False),
    (_no_bias, False, False),
    # The relu's group keeps the sum: it makes the bias's zeros +0.0.
    (_dense_relu, False, False),
  ],
  ids=lambda x: getattr(x, "__name__", str(x)),
)
@pytest.mark.parametrize("enable_xla", [True, False])
def test_a_dense_layer_is_a_matmul_with_a_bias_add(f, fused, gelu, enable_xla):
  graph = _graph(f, [tf.TensorSpec(X.shape, tf.float32)], enable_xla)
  bias_adds = _bias_added_matmuls(graph)
  assert bool(bias_adds) == fused
  if fused:
    # The GELU reads the BiasAdd on the flattened rows, before any Reshape.
    readers = {c.type for c in bias_adds[0].outputs[0].consumers()}
    assert ("Mul" in readers) == gelu


def test_a_dense_layer_with_a_polymorphic_batch():
  f = _gelu_dense
  converted = _converted(f, False, ["(b, t, 16)"])
  run = tf.function(converted, autograph=False, input_signature=[tf.TensorSpec((None, None, 16))])
  for shape in ((2, 3, 16), (7, 1, 16)):
    x = RNG.normal(size=shape).astype(np.float32)
    _assert_like_jax(run(x), jax.jit(f)(x))
  graph = run.get_concrete_function().graph
  assert _bias_added_matmuls(graph)


@pytest.mark.parametrize("mode,enable_xla", MODES)
def test_a_dense_layer_of_no_rows_gives_jax_results(mode, enable_xla):
  x = np.zeros((0, 5, 16), np.float32)
  _assert_like_jax(_run(_gelu_dense, (x,), mode, enable_xla), jax.jit(_gelu_dense)(x))


def _fused_matmul_ops(f) -> list[list[str]]:
  """The fused ops of each fused MatMul TF's graph optimizer makes of the
  converted `f` (a plain tf.function, as a server runs it)."""
  graph_def = _graph(f, [tf.TensorSpec(X.shape, tf.float32)]).as_graph_def()
  graph = tf.Graph()
  with graph.as_default():
    tf.graph_util.import_graph_def(graph_def, name="")
  placeholders = [op for op in graph.get_operations() if op.type == "Placeholder"]
  outputs = [op for op in graph.get_operations() if op.type == "Identity"][-1].outputs[0]
  metadata = tf.compat.v1.RunMetadata()
  with tf.compat.v1.Session(graph=graph) as session:
    session.run(
      outputs,
      {placeholders[0].outputs[0]: X},
      options=tf.compat.v1.RunOptions(output_partition_graphs=True),
      run_metadata=metadata,
    )
  fused = []
  for partition in metadata.partition_graphs:
    for node in partition.node:
      if "FusedMatMul" in node.op:
        fused.append([s.decode() for s in node.attr["fused_ops"].list.s])
  return fused


def test_tf_fuses_the_matmul_bias_and_gelu_into_one_kernel():
  # TensorFlow's x86 builds run oneDNN by default: the supported ones fuse.
  assert _fused_matmul_ops(_no_bias) == []
  assert _fused_matmul_ops(_rows) == [["BiasAdd"]]
  assert _fused_matmul_ops(_gelu_dense) == [["BiasAdd", "GeluApproximate"]]
