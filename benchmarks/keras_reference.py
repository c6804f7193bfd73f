"""The model set's MLP, actor-critic, CNN, ResNet-50, Transformer LM, GPT with
rotary embeddings, ViT and BiLSTM in Keras 3, Flax weights copied.

The reference for the TFLite benchmarks (latency and size; quantized accuracy)
and for the speed of the graph paths that TF runs op by op (keras_twins): the
same network as a Keras user would write it, with Keras's standard layers.
`build(name, params, inputs)` returns the Keras model for the shape of
`inputs` (batch dynamic, the other sizes fixed) after checking that it
computes what the Flax model computes on them.
"""

import numpy as np


def _keras():
  import keras  # pylint: disable=import-outside-toplevel

  return keras


def _mlp(params, shape):
  keras = _keras()
  p = params["params"]
  layers = [keras.Input(shape)]
  for i, width in enumerate((128, 128)):
    layers.append(keras.layers.Dense(width, activation="relu", name=f"Dense_{i}"))
  layers.append(keras.layers.Dense(10, name="Dense_2"))
  model = keras.Sequential(layers)
  for i in range(3):
    model.get_layer(f"Dense_{i}").set_weights([p[f"Dense_{i}"]["kernel"], p[f"Dense_{i}"]["bias"]])
  return model


def _actor_critic(params, shape):
  from benchmarks.models import actor_critic as ac  # pylint: disable=import-outside-toplevel

  keras = _keras()
  p = params["params"]
  obs = keras.Input(shape)
  h = obs
  for name in ("torso_0", "torso_1"):
    h = keras.layers.Dense(ac.HIDDEN, activation="tanh", name=name)(h)
  log_probs = keras.layers.Dense(ac.ACTIONS, activation="log_softmax", name="policy")(h)
  value = keras.layers.Flatten()(keras.layers.Dense(1, name="value")(h))
  value = keras.layers.Reshape(())(value)
  model = keras.Model(obs, [log_probs, value])
  for name in ("torso_0", "torso_1", "policy", "value"):
    model.get_layer(name).set_weights([p[name]["kernel"], p[name]["bias"]])
  return model


def _cnn(params, shape):
  keras = _keras()
  p = params["params"]
  model = keras.Sequential([
    keras.Input(shape),
    keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="Conv_0"),
    keras.layers.AveragePooling2D(2),
    keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="Conv_1"),
    keras.layers.AveragePooling2D(2),
    keras.layers.Flatten(),
    keras.layers.Dense(64, activation="relu", name="Dense_0"),
    keras.layers.Dense(10, name="Dense_1"),
  ])
  for name in ("Conv_0", "Conv_1", "Dense_0", "Dense_1"):
    # Flax and Keras share the layouts: HWIO kernels, (in, out) dense kernels.
    model.get_layer(name).set_weights([p[name]["kernel"], p[name]["bias"]])
  return model


def _scope(variables, block):
  """The Flax parameters and BatchNorm statistics of one module, and its Keras name prefix."""
  if block is None:
    return variables["params"], variables["batch_stats"], ""
  return variables["params"][block], variables["batch_stats"][block], f"{block}_"


def _batch_norm(keras, x, variables, block, name):
  p, stats, prefix = _scope(variables, block)
  # Flax's epsilon (Keras's default is 1e-3); inference mode reads the running statistics.
  layer = keras.layers.BatchNormalization(epsilon=1e-5, name=prefix + name)
  y = layer(x, training=False)
  layer.set_weights([p[name]["scale"], p[name]["bias"], stats[name]["mean"], stats[name]["var"]])
  return y


def _conv(keras, x, variables, block, name, features, size, strides=1, padding="same"):
  p, _, prefix = _scope(variables, block)
  # Keras's "same" is Flax's "SAME": both put the odd padding row after the input.
  layer = keras.layers.Conv2D(features, size, strides, padding, use_bias=False, name=prefix + name)
  y = layer(x)
  layer.set_weights([p[name]["kernel"]])  # HWIO in both
  return y


def _bottleneck(keras, x, variables, block, features, strides):
  relu = keras.layers.ReLU
  y = _conv(keras, x, variables, block, "Conv_0", features, 1)
  y = relu()(_batch_norm(keras, y, variables, block, "BatchNorm_0"))
  y = _conv(keras, y, variables, block, "Conv_1", features, 3, strides)
  y = relu()(_batch_norm(keras, y, variables, block, "BatchNorm_1"))
  y = _conv(keras, y, variables, block, "Conv_2", 4 * features, 1)
  y = _batch_norm(keras, y, variables, block, "BatchNorm_2")
  residual = x
  if "projection" in variables["params"][block]:
    residual = _conv(keras, x, variables, block, "projection", 4 * features, 1, strides)
    residual = _batch_norm(keras, residual, variables, block, "projection_norm")
  return relu()(keras.layers.Add()([y, residual]))


def _resnet50(variables, shape):
  from benchmarks.models import resnet50  # pylint: disable=import-outside-toplevel

  keras = _keras()
  inputs = keras.Input(shape)
  # The stem pads 3 on each side, as Flax's explicit padding says; "same" would pad 2 and 3.
  x = keras.layers.ZeroPadding2D(3)(inputs)
  x = _conv(keras, x, variables, None, "stem", 64, 7, 2, padding="valid")
  x = keras.layers.ReLU()(_batch_norm(keras, x, variables, None, "stem_norm"))
  x = keras.layers.MaxPooling2D(3, 2, padding="same")(x)
  block = 0
  for stage, blocks in enumerate(resnet50.STAGES):
    for i in range(blocks):
      strides = 2 if stage > 0 and i == 0 else 1
      x = _bottleneck(keras, x, variables, f"Bottleneck_{block}", 64 * 2**stage, strides)
      block += 1
  x = keras.layers.GlobalAveragePooling2D()(x)
  dense = keras.layers.Dense(resnet50.NUM_CLASSES, name="Dense_0")
  outputs = dense(x)
  p = variables["params"]["Dense_0"]
  dense.set_weights([p["kernel"], p["bias"]])
  return keras.Model(inputs, outputs)


def _gelu(x):
  # Flax's nn.gelu is the tanh approximation by default; Keras's "gelu" is the exact erf form.
  return _keras().activations.gelu(x, approximate=True)


def _layer_norm(keras, x, p, name, prefix=""):
  layer = keras.layers.LayerNormalization(epsilon=1e-6, name=prefix + name)  # Flax's epsilon
  y = layer(x)
  layer.set_weights([p[name]["scale"], p[name]["bias"]])
  return y


def _dense(keras, x, p, name, width, prefix="", activation=None):
  layer = keras.layers.Dense(width, activation=activation, name=prefix + name)
  y = layer(x)
  layer.set_weights([p[name]["kernel"], p[name]["bias"]])
  return y


def _pre_norm_block(keras, x, p, prefix, model, hidden: int, causal: bool):
  """A Flax pre-LayerNorm Transformer block (attention, then a GELU MLP to `hidden` features)
  of `model`, the module that defines HEADS and D_MODEL."""
  y = _layer_norm(keras, x, p, "LayerNorm_0", prefix)
  attention = keras.layers.MultiHeadAttention(
    model.HEADS, model.D_MODEL // model.HEADS, name=prefix + "MultiHeadDotProductAttention_0"
  )
  y = attention(y, y, use_causal_mask=causal)
  a = p["MultiHeadDotProductAttention_0"]
  # Flax's DenseGeneral kernels are (d, heads, head_dim) and (heads, head_dim, d), the layouts
  # of Keras's EinsumDense ones: no reshape needed.
  attention.set_weights(
    [a[k][w] for k in ("query", "key", "value", "out") for w in ("kernel", "bias")]
  )
  x = keras.layers.Add()([x, y])
  y = _layer_norm(keras, x, p, "LayerNorm_1", prefix)
  # Flax names Dense modules in construction order: the outer Dense_0 (to d) is made before
  # the inner Dense_1 (to `hidden`) that it is applied to.
  y = _dense(keras, y, p, "Dense_1", hidden, prefix, activation=_gelu)
  y = _dense(keras, y, p, "Dense_0", model.D_MODEL, prefix)
  return keras.layers.Add()([x, y])


def _decoder_block(keras, x, p, prefix):
  from benchmarks.models import transformer_lm as lm  # pylint: disable=import-outside-toplevel

  return _pre_norm_block(keras, x, p, prefix, lm, 4 * lm.D_MODEL, causal=True)


def _transformer_lm(params, shape):
  from benchmarks.models import transformer_lm as lm  # pylint: disable=import-outside-toplevel

  keras = _keras()
  p = params["params"]
  # The sequence length is static, as in the `batch` variant that jax2tf converts; only the
  # batch is dynamic.
  tokens = keras.Input(shape, dtype="int32")
  # The output projection is the transposed token embedding, as Flax's `embed.attend`.
  embed = keras.layers.ReversibleEmbedding(lm.VOCAB, lm.D_MODEL, name="Embed_0")
  pos_embed = keras.layers.Embedding(lm.MAX_LEN, lm.D_MODEL, name="pos_embed")
  # Position ids 0..seq-1 for every row, counted along the tokens: the ids must be a graph tensor
  # for the Embedding layer to be part of the model, and the plainer `zeros_like(tokens) +
  # arange(seq)` becomes an int32 BiasAdd, which TFLite has no builtin kernel for.
  positions = keras.ops.cumsum(keras.ops.ones_like(tokens), axis=1) - 1
  x = keras.layers.Add()([embed(tokens), pos_embed(positions)])
  for i in range(lm.LAYERS):
    x = _decoder_block(keras, x, p[f"Block_{i}"], f"Block_{i}_")
  x = _layer_norm(keras, x, p, "LayerNorm_0")
  outputs = embed(x, reverse=True)
  embed.set_weights([p["Embed_0"]["embedding"]])
  pos_embed.set_weights([p["pos_embed"]["embedding"]])
  return keras.Model(tokens, outputs)


def _rms_norm(keras, x, p, name, prefix=""):
  # Keras's default epsilon (1e-6) is Flax's.
  layer = keras.layers.RMSNormalization(name=prefix + name)
  y = layer(x)
  layer.set_weights([p[name]["scale"]])
  return y


def _rotary_embedding():
  """A layer rotating queries or keys (batch, time, heads, head_dim) by their positions:
  Keras has none."""
  keras = _keras()
  ops = keras.ops

  class RotaryEmbedding(keras.layers.Layer):
    def call(self, x):
      half = x.shape[-1] // 2
      freqs = 1.0 / (10000.0 ** (ops.arange(half, dtype="float32") / half))
      angles = ops.arange(x.shape[1], dtype="float32")[:, None] * freqs[None, :]
      sin = ops.sin(angles)[None, :, None, :]
      cos = ops.cos(angles)[None, :, None, :]
      # The two halves of each head are the pairs rotated together, as in the Flax model
      # (not interleaved even and odd features).
      x1, x2 = x[..., :half], x[..., half:]
      return ops.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)

  return RotaryEmbedding


def _rotary_attention(keras, x, p, prefix):
  from benchmarks.models import gpt_rotary as gpt  # pylint: disable=import-outside-toplevel

  # Keras's MultiHeadAttention has no place to rotate the projected queries and keys, so the
  # projections are EinsumDense layers with Flax's DenseGeneral kernel layouts, (d, 3, heads,
  # head_dim) and (heads, head_dim, d), and the attention is Keras's own op.
  seq = x.shape[1]
  qkv = keras.layers.EinsumDense(
    "btd,dshe->btshe", (seq, 3, gpt.HEADS, gpt.HEAD_DIM), name=prefix + "qkv"
  )
  out = keras.layers.EinsumDense("bthe,hed->btd", (seq, gpt.D_MODEL), name=prefix + "out")
  rotary = _rotary_embedding()(name=prefix + "rotary")
  y = qkv(x)
  q, k, v = rotary(y[:, :, 0]), rotary(y[:, :, 1]), y[:, :, 2]
  # A causal mask that sets the scores above the diagonal to a large negative number, where
  # the Flax model uses float32's lowest: every row keeps its diagonal, so both weigh the
  # masked keys exactly zero.
  y = out(keras.ops.dot_product_attention(q, k, v, is_causal=True))
  qkv.set_weights([p["qkv"]["kernel"]])
  out.set_weights([p["out"]["kernel"]])
  return y


def _gpt_block(keras, x, p, prefix):
  from benchmarks.models import gpt_rotary as gpt  # pylint: disable=import-outside-toplevel

  y = _rms_norm(keras, x, p, "RMSNorm_0", prefix)
  x = keras.layers.Add()([x, _rotary_attention(keras, y, p["Attention_0"], prefix)])
  y = _rms_norm(keras, x, p, "RMSNorm_1", prefix)
  gate = keras.layers.Dense(2 * gpt.D_MODEL, "silu", use_bias=False, name=prefix + "gate")
  up = keras.layers.Dense(2 * gpt.D_MODEL, use_bias=False, name=prefix + "up")
  down = keras.layers.Dense(gpt.D_MODEL, use_bias=False, name=prefix + "down")
  y = down(keras.layers.Multiply()([gate(y), up(y)]))
  for layer in (gate, up, down):
    layer.set_weights([p[layer.name.removeprefix(prefix)]["kernel"]])
  return keras.layers.Add()([x, y])


def _gpt_rotary(params, shape):
  from benchmarks.models import gpt_rotary as gpt  # pylint: disable=import-outside-toplevel

  keras = _keras()
  p = params["params"]
  # The sequence length is static (the rotation angles are constants of the graph), the batch
  # dynamic.
  tokens = keras.Input(shape, dtype="int32")
  embed = keras.layers.Embedding(gpt.VOCAB, gpt.D_MODEL, name="Embed_0")
  x = embed(tokens)
  embed.set_weights([p["Embed_0"]["embedding"]])
  for i in range(gpt.LAYERS):
    x = _gpt_block(keras, x, p[f"Block_{i}"], f"Block_{i}_")
  x = _rms_norm(keras, x, p, "RMSNorm_0")
  head = keras.layers.Dense(gpt.VOCAB, use_bias=False, name="lm_head")
  outputs = head(x)
  head.set_weights([p["lm_head"]["kernel"]])
  return keras.Model(tokens, outputs)


def _vit_block(keras, x, p, prefix):
  from benchmarks.models import vit  # pylint: disable=import-outside-toplevel

  return _pre_norm_block(keras, x, p, prefix, vit, 2 * vit.D_MODEL, causal=False)


def _vit(params, shape):
  from benchmarks.models import vit  # pylint: disable=import-outside-toplevel

  keras = _keras()
  p = params["params"]
  images = keras.Input(shape)
  patches = keras.layers.Conv2D(vit.D_MODEL, vit.PATCH, vit.PATCH, name="patch_embed")
  x = patches(images)
  patches.set_weights([p["patch_embed"]["kernel"], p["patch_embed"]["bias"]])
  _, height, width, _ = x.shape
  x = keras.layers.Reshape((height * width, vit.D_MODEL))(x)
  # The fixed 2-D sinusoidal code of the patch grid, a constant for the image size.
  x = x + np.asarray(vit.sincos_2d(height, width, vit.D_MODEL))
  for i in range(vit.LAYERS):
    x = _vit_block(keras, x, p[f"Block_{i}"], f"Block_{i}_")
  x = keras.layers.GlobalAveragePooling1D()(_layer_norm(keras, x, p, "LayerNorm_0"))
  return keras.Model(images, _dense(keras, x, p, "Dense_0", vit.CLASSES))


def _lstm_weights(cell):
  """Keras's LSTM weights from a Flax LSTMCell's.

  Flax keeps a Dense per gate and per source (ii, if, ig, io on the input, without bias;
  hi, hf, hg, ho on the state, with bias); Keras one input kernel, one recurrent kernel and
  one bias, each with the gates side by side in the same order i, f, g (Keras's c), o."""
  gates = "ifgo"
  return [
    np.concatenate([cell[f"i{g}"]["kernel"] for g in gates], axis=-1),
    np.concatenate([cell[f"h{g}"]["kernel"] for g in gates], axis=-1),
    np.concatenate([cell[f"h{g}"]["bias"] for g in gates], axis=-1),
  ]


def _bilstm(params, shape):
  from benchmarks.models import bilstm  # pylint: disable=import-outside-toplevel

  keras = _keras()
  p = params["params"]
  tokens = keras.Input(shape, dtype="int32")
  embed = keras.layers.Embedding(bilstm.VOCAB, bilstm.EMBED, name="Embed_0")
  # Keras's Bidirectional hands the backward outputs back in time order and concatenates
  # forward then backward, as Flax's does; both LSTMs start from zero states and use
  # Flax's sigmoid gates and tanh.
  layer = keras.layers.Bidirectional(
    keras.layers.LSTM(bilstm.HIDDEN, return_sequences=True), name="Bidirectional_0"
  )
  x = layer(embed(tokens))
  embed.set_weights([p["Embed_0"]["embedding"]])
  # Flax makes the forward cell first.
  layer.set_weights(_lstm_weights(p["LSTMCell_0"]) + _lstm_weights(p["LSTMCell_1"]))
  x = keras.layers.GlobalAveragePooling1D()(x)
  return keras.Model(tokens, _dense(keras, x, p, "Dense_0", bilstm.CLASSES))


BUILDERS = {
  "mlp": _mlp,
  "actor_critic": _actor_critic,
  "cnn": _cnn,
  "resnet50": _resnet50,
  "transformer_lm": _transformer_lm,
  "gpt_rotary": _gpt_rotary,
  "vit": _vit,
  "bilstm": _bilstm,
}


def build(name: str, params, inputs, rtol: float = 1e-5, atol: float = 1e-5):
  """The Keras model for `name` at the shape of `inputs` (the batch dynamic), checked
  against the Flax outputs on `inputs`."""
  import jax  # pylint: disable=import-outside-toplevel

  from benchmarks import models  # pylint: disable=import-outside-toplevel

  model = BUILDERS[name](params, np.shape(inputs[0])[1:])
  want = jax.tree_util.tree_leaves(jax.jit(models.get(name).fn)(params, *inputs))
  got = jax.tree_util.tree_leaves(model(*inputs))
  assert len(got) == len(want), f"keras {name}: {len(got)} outputs, Flax has {len(want)}"
  for g, w in zip(got, want):
    np.testing.assert_allclose(
      np.asarray(g), np.asarray(w), rtol=rtol, atol=atol, err_msg=f"keras {name}"
    )
  return model


def to_tflite(model, quantize: str | None = None, calibration=None) -> bytes:
  """TF's TFLite converter on the Keras model, the way Keras 3 documents it:
  `model.export` to a SavedModel, then `TFLiteConverter.from_saved_model`;
  quantized as `jax2tf.to_tflite(quantize=...)` does, calibrating "int8" on
  `calibration` (a list of samples, each a tuple of the model's inputs)."""
  import tempfile  # pylint: disable=import-outside-toplevel

  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  from jax2tf.lite import converter  # pylint: disable=import-outside-toplevel

  def samples():
    for sample in calibration:
      yield [tf.constant(x) for x in sample]

  with tempfile.TemporaryDirectory() as tmp:
    model.export(tmp, format="tf_saved_model", verbose=False)
    tflite = tf.lite.TFLiteConverter.from_saved_model(tmp)
    if quantize is not None:
      converter.configure(
        tflite, quantize=quantize, calibration=samples if quantize == "int8" else None
      )
    return tflite.convert()
