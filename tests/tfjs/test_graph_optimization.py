"""The graph to_tfjs writes is folded and fused (jax2tf/tfjs/optimize.py) and
still computes what jax.jit computes on both TF.js backends, NaN and signed
zeros included where the fused forms could change them."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf

import jax2tf
from jax2tf.tfjs import graph_folding, graph_fusion, untiled_broadcasts

BACKENDS = ["cpu", "wasm"]
SPECIAL = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, -1.5, 2.0, -1e-45], np.float32)


def _ops(model) -> list[str]:
  return [n["op"] for n in model.model_json["modelTopology"]["node"]]


def _constant_only_ops(model) -> list[str]:
  """The ops whose data inputs are all Consts: what folding leaves none of."""
  nodes = model.model_json["modelTopology"]["node"]
  const = {n["name"] for n in nodes if n["op"] == "Const"}
  found = []
  for n in nodes:
    data = [i for i in n.get("input", []) if not i.startswith("^")]
    if n["op"] != "Const" and data and all(i.split(":")[0] in const for i in data):
      found.append(f"{n['op']} {n['name']}")
  return found


def _assert_same(got, want, rtol=1e-5, atol=1e-5, what=""):
  got, want = np.asarray(got), np.asarray(want)
  assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"NaNs {what}")
  finite = ~np.isnan(want)
  np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol, err_msg=what)
  zeros = finite & (want == 0)
  np.testing.assert_array_equal(
    np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg=f"signs of zeros {what}"
  )


def _check(runners, fun, params, *inputs, **tolerance):
  model = jax2tf.to_tfjs(fun, *inputs, params=params)
  want = jax.tree_util.tree_leaves(jax.jit(fun)(params, *inputs))
  for backend in BACKENDS:
    got = runners[backend].run(model, *inputs)
    for g, w in zip(got, want):
      _assert_same(g, np.asarray(w), what=f"on {backend}", **tolerance)
  return model


def _rng(seed):
  return np.random.default_rng(seed)


def dense_relu(params, x):
  for w, b in params:
    x = jax.nn.relu(x @ w + b)
  return x


def _dense_params(seed, sizes=(8, 16, 4)):
  rng = _rng(seed)
  return [
    (rng.normal(size=(m, n)).astype(np.float32), rng.normal(size=(n,)).astype(np.float32))
    for m, n in zip(sizes, sizes[1:])
  ]


def test_dense_layers_fuse_bias_and_keep_nan_and_zero_signs(runners):
  x = _rng(0).normal(size=(16, 8)).astype(np.float32)
  # NaN rows stay NaN through the fused bias and the Relu. (Not infinities:
  # the wasm backend's matrix product gives no NaN for inf - inf, fused or not.)
  x[:, 0] = np.resize(SPECIAL[np.isfinite(SPECIAL) | np.isnan(SPECIAL)], 16)
  model = _check(runners, dense_relu, _dense_params(1), x)
  ops = _ops(model)
  assert ops.count("_FusedMatMul") == 2 and "MatMul" not in ops and "Abs" not in ops, ops
  assert _constant_only_ops(model) == []


def test_relu_gives_positive_zero_and_keeps_nan_without_abs(runners):
  # 1037 values: the wasm kernel's vector loop and its remainder.
  x = np.resize(SPECIAL, 1037)
  model = _check(runners, lambda p, x: jax.nn.relu(x * p), np.float32(1.0), x, rtol=0, atol=0)
  assert "Abs" not in _ops(model) and "Relu" in _ops(model)


def conv_bn_relu(params, x):
  """A convolution and an inference BatchNorm, as flax writes them, then a
  depthwise convolution with a bias."""
  dn = ("NHWC", "HWIO", "NHWC")
  y = jax.lax.conv_general_dilated(x, params["w"], (1, 1), "SAME", dimension_numbers=dn)
  scale = params["gamma"] * jax.lax.rsqrt(params["var"] + 1e-5)
  y = (y - params["mean"].reshape(1, 1, 1, -1)) * scale.reshape(1, 1, 1, -1)
  y = jax.nn.relu(y + params["beta"].reshape(1, 1, 1, -1))
  channels = y.shape[-1]
  y = jax.lax.conv_general_dilated(
    y, params["dw"], (1, 1), "SAME", dimension_numbers=dn, feature_group_count=channels
  )
  return jax.nn.relu(y + params["dw_bias"])


def _conv_params(seed, cin=3, cout=8):
  rng = _rng(seed)
  f = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
  return {
    "w": f(3, 3, cin, cout) * 0.3,
    "gamma": f(cout),
    "beta": f(cout),
    "mean": f(cout) * 0.1,
    "var": rng.uniform(0.5, 1.5, cout).astype(np.float32),
    "dw": f(3, 3, 1, cout),
    "dw_bias": f(cout),
  }


def test_batch_norm_folds_into_the_convolution(runners):
  x = _rng(2).normal(size=(2, 8, 8, 3)).astype(np.float32)
  model = _check(runners, conv_bn_relu, _conv_params(3), x)
  ops = _ops(model)
  assert "_FusedConv2D" in ops and "FusedDepthwiseConv2dNative" in ops, ops
  for op in ("Sub", "Mul", "Rsqrt", "Reshape", "Abs"):
    assert op not in ops, ops
  assert _constant_only_ops(model) == []


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_a_zero_bias_adds_nothing(runners, zero):
  # Adding -0.0 changes nothing; adding +0.0 turns -0.0 into +0.0, which
  # TF.js's products never give (they sum from +0.0): both leave a plain
  # product, exact on -0.0 and NaN inputs. (Where the sum is read without a
  # Relu, a bias of -0.0 leaves the product's zero sign, which XLA's keeps
  # and TF.js's does not, folded or not: that case is left out.)
  params = {
    "w": np.ones((1, 1, 1, 1), np.float32),
    "b": np.array([zero], np.float32),
    "m": np.ones((2, 3), np.float32),
    "c": np.full(3, zero, np.float32),
  }

  def fun(p, x, v):
    dn = ("NHWC", "HWIO", "NHWC")
    y = jax.lax.conv_general_dilated(x, p["w"], (1, 1), "VALID", dimension_numbers=dn)
    z = v @ p["m"] + p["c"]
    return (jax.nn.relu(y + p["b"]), jax.nn.relu(z)) + (
      (z,) if zero == 0 and not np.signbit(zero) else ()
    )

  x = np.array([-0.0, 0.0, -1.0, 2.0, -3.0, 0.5, 4.0, -0.0], np.float32).reshape(1, 8, 1, 1)
  v = np.array([[-0.0, -0.0], [0.0, -0.0], [-1.0, 1.0], [np.nan, 1.0], [2.5, -3.0]], np.float32)
  model = _check(runners, fun, params, x, v, rtol=0, atol=0)
  ops = set(_ops(model)) - {"Placeholder", "Const", "Identity"}
  assert sorted(ops) == ["Conv2D", "MatMul", "Relu"], ops


def test_constants_fold_to_the_values_jax_computes(runners):
  ints = np.arange(-6, 6, dtype=np.int32)

  def fun(p, x, i):
    # int32 division and shifts of constants, a bool mask, a float rsqrt.
    k = (p["i"] // 4) * 3 + jnp.right_shift(p["i"], 1)
    mask = (p["i"] % 3) == 0
    return x * jax.lax.rsqrt(p["v"]).reshape(3, 4), i + k, jnp.where(mask, i, -i)

  params = {"i": ints, "v": np.linspace(0.5, 4, 12).astype(np.float32)}
  x = _rng(4).normal(size=(3, 4)).astype(np.float32)
  model = _check(runners, fun, params, x, ints, rtol=1e-6, atol=0)
  assert _constant_only_ops(model) == []
  assert "Rsqrt" not in _ops(model) and "FloorDiv" not in _ops(model)


def test_broadcast_of_a_small_constant_to_a_large_shape_stays_an_op(runners):
  def fun(p, x):
    return x + jnp.broadcast_to(p, (256, 1024)) * 2

  x = np.zeros((256, 1024), np.float32)
  model = _check(runners, fun, np.float32(1.25), x)
  # 1 MiB of float32 would be written if the broadcast were folded.
  shards = sum(len(v) for k, v in model.files.items() if k.endswith(".bin"))
  assert shards < 64 * 1024, shards


def _tf_graph_def(build):
  graph = tf.Graph()
  with graph.as_default():
    outputs = build()
  return graph.as_graph_def(), {t.op.name for t in outputs}


def test_stateful_ops_are_not_folded():
  def build():
    c = tf.constant(np.arange(6, dtype=np.float32))
    return [tf.reshape(c, [2, 3]) + tf.random.uniform([2, 3])]

  graph_def, keep = _tf_graph_def(build)
  assert graph_folding.fold_constants(graph_def, keep) == 1  # the Reshape
  ops = {n.op for n in graph_def.node}
  assert "RandomUniform" in ops


def test_fuse_leaves_shared_results_alone():
  # The matrix product is read twice: its value must stay as it is.
  def build():
    x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    y = tf.matmul(x, tf.constant(np.ones((3, 4), np.float32)))
    return [
      tf.identity(y + tf.constant(np.ones(4, np.float32)), name="a"),
      tf.identity(y * 2.0, name="b"),
    ]

  graph_def, keep = _tf_graph_def(build)
  assert graph_fusion.fuse(graph_def, keep | {"x"}) == 0


def _broadcasting_selects(graph_def) -> list[str]:
  """The SelectV2 nodes with an operand of another static shape than their
  result, and the BroadcastTo nodes: what TF.js would run with Tile."""
  graph = tf.Graph()
  with graph.as_default():
    tf.graph_util.import_graph_def(graph_def, name="")
  found = []
  for op in graph.get_operations():
    out = op.outputs[0].shape.as_list() if op.outputs else None
    if op.type == "BroadcastTo" or (
      op.type == "SelectV2" and any(t.shape.as_list() != out for t in op.inputs)
    ):
      found.append(f"{op.type} {op.name}")
  return found


def test_untile_writes_broadcasts_exactly_without_tile():
  x_value = np.resize(SPECIAL, (2, 3, 4))

  def build():
    x = tf.compat.v1.placeholder(tf.float32, [None, 3, 4], name="x")
    row = tf.compat.v1.placeholder(tf.float32, [4], name="row")
    mask = tf.constant(np.arange(12).reshape(3, 4) % 3 == 0)
    ints = tf.compat.v1.placeholder(tf.int32, [1, 4], name="ints")
    return [
      tf.identity(tf.raw_ops.SelectV2(condition=mask, t=x, e=np.float32(np.nan)), name="scalar"),
      tf.identity(tf.raw_ops.SelectV2(condition=x > 0, t=row, e=x), name="row_operand"),
      tf.identity(tf.raw_ops.SelectV2(condition=mask, t=ints, e=np.int32(-7)), name="ints"),
      tf.identity(tf.broadcast_to(mask, [2, 3, 4]), name="bools"),
      tf.identity(tf.broadcast_to(np.float32(-0.0), [2, 3, 4]), name="negative_zero"),
    ]

  graph_def, keep = _tf_graph_def(build)
  feed = {"x:0": x_value, "row:0": np.float32([-0.0, np.nan, 0.0, 2.5]), "ints:0": [[1, 2, 3, 4]]}
  names = [f"{name}:0" for name in sorted(keep)]

  def run(graph_def):
    graph = tf.Graph()
    with graph.as_default():
      tf.graph_util.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as session:
      return session.run(names, feed)

  want = run(graph_def)
  assert len(_broadcasting_selects(graph_def)) == 5
  # The mask and the NaN of the first select, the row, the row and the -7 of
  # the int select (its mask has its shape), and the two BroadcastTos.
  assert untiled_broadcasts.untile(graph_def) == 7
  assert _broadcasting_selects(graph_def) == []
  for name, got, expected in zip(names, run(graph_def), want):
    assert got.dtype == expected.dtype and got.shape == expected.shape, name
    # Bit for bit: NaN, and the signs of zeros, as the broadcast gives them.
    np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8), err_msg=name)


def masked(p, x):
  """A causal mask's select, and a select of a row, as attention and a
  max pool's NaN handling write them."""
  t = x.shape[-1]
  causal = jnp.arange(t)[:, None] >= jnp.arange(t)[None, :]
  scores = jnp.where(causal, x, jnp.finfo(x.dtype).min)
  return jax.nn.softmax(scores, axis=-1), jnp.where(x > 0, p, x)


def test_selects_of_broadcast_operands_run_without_tile_at_any_batch(runners):
  row = np.float32([-0.0, np.nan, 1.5, -2.0, 0.0, 3.0])
  model = jax2tf.to_tfjs(
    masked,
    jax.ShapeDtypeStruct((2, 4, 6, 6), np.float32),
    params=row,
    polymorphic_shapes=["(b, 4, 6, 6)"],
  )
  assert "Fill" in _ops(model) and "BroadcastTo" not in _ops(model)
  for batch in (1, 3):
    x = _rng(batch).normal(size=(batch, 4, 6, 6)).astype(np.float32)
    x[0, 0, :, 0] = SPECIAL[:6]
    want = jax.jit(masked)(row, x)
    for backend in BACKENDS:
      for got, w in zip(runners[backend].run(model, x), want):
        _assert_same(got, np.asarray(w), what=f"batch {batch} on {backend}")
