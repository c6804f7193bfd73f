// Runs a TF.js graph model written by jax2tf.to_tfjs on Node, with the pure
// JavaScript TF.js (`@tensorflow/tfjs`, and `@tensorflow/tfjs-backend-wasm`
// for the wasm backend): what jax2tf.tfjs.run starts.
//
//   node run_model.js REQUEST.json
//   node run_model.js --serve      (request paths on stdin, one per line)
//
// REQUEST.json: {"model": DIR, "backend": "cpu" | "wasm", "outputs": [NAME...],
//   "runs": [{INPUT: {"dtype", "shape", "file"}}...]}, files relative to the
// request's folder, little-endian. Writes response.json beside it:
//   {"backend": NAME, "runs": [[{"name", "dtype", "shape", "file"}...]...],
//    "timings": [{"first_ms", "steady_ms"}...], "load_ms"}; with
// "timing_calls": N in the request, steady_ms is the median of N samples of
// runs (jax2tf/deploy/steady_time.js).
'use strict';

const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs');
const timing = require('../deploy/steady_time.js');
const {runModel} = require('./execute.js');

const TYPED = {float32: Float32Array, int32: Int32Array, bool: Uint8Array};
const ERROR_MARKER = '--- jax2tf.tfjs: error ---';

// Pure TF.js in Node has no file:// loader: model.json and the shards are
// read here and handed over as the artifacts of an IOHandler.
function directoryHandler(dir) {
  return {
    load: async () => {
      const model = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
      const weightSpecs = [];
      const shards = [];
      for (const group of model.weightsManifest) {
        weightSpecs.push(...group.weights);
        for (const file of group.paths) shards.push(fs.readFileSync(path.join(dir, file)));
      }
      const weights = Buffer.concat(shards);
      return {
        modelTopology: model.modelTopology,
        format: model.format,
        generatedBy: model.generatedBy,
        convertedBy: model.convertedBy,
        signature: model.signature,
        userDefinedMetadata: model.userDefinedMetadata,
        weightSpecs,
        // A copy: a Buffer may be a view into a larger pool.
        weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.length),
      };
    },
  };
}

async function useBackend(name) {
  if (name === 'wasm') {
    const wasm = require('@tensorflow/tfjs-backend-wasm');
    const root = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'));
    wasm.setWasmPaths(path.join(root, 'dist') + path.sep);
  }
  if (!(await tf.setBackend(name))) throw new Error(`TF.js backend ${name} failed to start`);
  await tf.ready();
}

function readTensor(folder, spec) {
  const bytes = fs.readFileSync(path.join(folder, spec.file));
  // Copied into an aligned buffer of its own, as typed arrays need.
  const aligned = new Uint8Array(bytes.length);
  aligned.set(bytes);
  const Typed = TYPED[spec.dtype];
  const values = new Typed(aligned.buffer, 0, bytes.length / Typed.BYTES_PER_ELEMENT);
  return tf.tensor(values, spec.shape, spec.dtype);
}

async function writeTensor(folder, file, name, tensor) {
  let values = await tensor.data();
  // A kernel may hand back its input's array (a Cast from bool or int32):
  // the bytes are written as the tensor's dtype says.
  const Typed = TYPED[tensor.dtype];
  if (Typed && !(values instanceof Typed)) values = Typed.from(values);
  fs.writeFileSync(path.join(folder, file), Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  return {name, dtype: tensor.dtype, shape: tensor.shape, file};
}

// The shape checks of a polymorphic model (jax2tf/tfjs/shape_checks.py) fail
// with TF.js's reshape error; which of them failed, and its message, is read
// from the checks' conditions, which depend on the input shapes alone.
const CHECK_FAILURE = 'must match the product of shape 0';

async function explainShapeCheck(model, inputs, error) {
  const checks = ((model.metadata || {}).jax2tf || {}).shape_checks || [];
  if (!checks.length || !String(error && error.message).includes(CHECK_FAILURE)) return error;
  let held = await model.executeAsync(inputs, checks.map(c => `${c.node}/as_int`));
  if (!Array.isArray(held)) held = [held];
  const failed = [];
  for (const [i, tensor] of held.entries()) {
    if ((await tensor.data())[0] === 0) failed.push(checks[i].message);
  }
  tf.dispose(held);
  if (!failed.length) return error;
  const shapes = Object.entries(inputs).map(([n, t]) => `${n}: [${t.shape}]`).join(', ');
  return new Error(`the input shapes (${shapes}) do not satisfy the model's polymorphic shapes:\n` +
                   failed.join('\n'));
}

// The steady time of a run (outputs read back each time: a backend may
// return before it has computed) over `timing_calls` samples
// (jax2tf/deploy/steady_time.js), or null.
async function steadyMs(model, inputs, request) {
  const samples = request.timing_calls || 0;
  if (!samples) return null;
  return await timing.steadyMs(async () => {
    let outputs = await runModel(model, inputs, request.outputs);
    if (!Array.isArray(outputs)) outputs = [outputs];
    for (const tensor of outputs) await tensor.data();
    tf.dispose(outputs);
  }, samples);
}

async function runRequest(requestPath) {
  const folder = path.dirname(requestPath);
  const request = JSON.parse(fs.readFileSync(requestPath, 'utf8'));
  await useBackend(request.backend);
  const loadStarted = performance.now();
  const model = await tf.loadGraphModel(directoryHandler(request.model));
  const loadMs = performance.now() - loadStarted;
  const runs = [];
  const timings = [];
  for (const [i, run] of request.runs.entries()) {
    const inputs = {};
    for (const [name, spec] of Object.entries(run)) inputs[name] = readTensor(folder, spec);
    let outputs;
    const started = performance.now();
    try {
      outputs = await runModel(model, inputs, request.outputs);
    } catch (error) {
      throw await explainShapeCheck(model, inputs, error);
    }
    timings.push({first_ms: performance.now() - started,
                  steady_ms: await steadyMs(model, inputs, request)});
    if (!Array.isArray(outputs)) outputs = [outputs];
    const written = [];
    for (const [j, tensor] of outputs.entries()) {
      const name = request.outputs[j];
      written.push(await writeTensor(folder, `run${i}-${name}.bin`, name, tensor));
    }
    runs.push(written);
    tf.dispose([...Object.values(inputs), ...outputs]);
  }
  model.dispose();
  const response = {backend: tf.getBackend(), runs, timings, load_ms: loadMs};
  fs.writeFileSync(path.join(folder, 'response.json'), JSON.stringify(response));
}

function describe(error) {
  return error && error.stack ? error.stack : String(error);
}

// --serve: one request path per line of stdin, one reply per request on
// stdout, a line of REPLY_PREFIX and JSON ({"ok": true} or {"error": TEXT}),
// so that many models run in one process (TF.js takes a second or two to
// start). Other lines on stdout are TF.js's notices.
const REPLY_PREFIX = 'jax2tf.tfjs reply: ';
async function serve() {
  const lines = require('readline').createInterface({input: process.stdin});
  for await (const line of lines) {
    if (!line.trim()) continue;
    let reply;
    try {
      await runRequest(line.trim());
      reply = {ok: true};
    } catch (error) {
      reply = {error: describe(error)};
    }
    process.stdout.write(REPLY_PREFIX + JSON.stringify(reply) + '\n');
  }
}

// The error follows a marker line: TF.js writes its own notices to stderr too.
(process.argv[2] === '--serve' ? serve() : runRequest(process.argv[2])).catch(error => {
  process.stderr.write(`${ERROR_MARKER}\n${describe(error)}\n`);
  process.exit(1);
});
