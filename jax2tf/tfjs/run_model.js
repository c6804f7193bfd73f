// Runs a TF.js graph model written by jax2tf.to_tfjs on Node, with the pure
// JavaScript TF.js (`@tensorflow/tfjs`, and `@tensorflow/tfjs-backend-wasm`
// for the wasm backend): what jax2tf.tfjs.run starts.
//
//   node run_model.js REQUEST.json
//
// REQUEST.json: {"model": DIR, "backend": "cpu" | "wasm", "outputs": [NAME...],
//   "runs": [{INPUT: {"dtype", "shape", "file"}}...]}, files relative to the
// request's folder, little-endian. Writes response.json beside it:
//   {"backend": NAME, "runs": [[{"name", "dtype", "shape", "file"}...]...]}.
'use strict';

const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs');

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
  const values = await tensor.data();
  fs.writeFileSync(path.join(folder, file), Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  return {name, dtype: tensor.dtype, shape: tensor.shape, file};
}

async function main(requestPath) {
  const folder = path.dirname(requestPath);
  const request = JSON.parse(fs.readFileSync(requestPath, 'utf8'));
  await useBackend(request.backend);
  const model = await tf.loadGraphModel(directoryHandler(request.model));
  const runs = [];
  for (const [i, run] of request.runs.entries()) {
    const inputs = {};
    for (const [name, spec] of Object.entries(run)) inputs[name] = readTensor(folder, spec);
    // executeAsync runs the loops that control flow lowers to, too.
    let outputs = await model.executeAsync(inputs, request.outputs);
    if (!Array.isArray(outputs)) outputs = [outputs];
    const written = [];
    for (const [j, tensor] of outputs.entries()) {
      const name = request.outputs[j];
      written.push(await writeTensor(folder, `run${i}-${name}.bin`, name, tensor));
    }
    runs.push(written);
    tf.dispose([...Object.values(inputs), ...outputs]);
  }
  const response = {backend: tf.getBackend(), runs};
  fs.writeFileSync(path.join(folder, 'response.json'), JSON.stringify(response));
}

// The error follows a marker line: TF.js writes its own notices to stderr too.
main(process.argv[2]).catch(error => {
  process.stderr.write(`${ERROR_MARKER}\n${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
