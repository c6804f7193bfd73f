// How every runner here times a model's steady calls: TF.js in Node
// (jax2tf/tfjs/run_model.js) and the pages that run TF.js and LiteRT.js in
// headless Chromium. Loaded with require() in Node, with <script> in a page
// (there it sets window.jax2tfTiming).
//
// steadyMs(call, samples): the median over `samples` samples of the mean time
// of one `call()` (an async function) in a sample, in milliseconds.
(function (exports) {
  'use strict';

  // A sample is a loop of calls lasting at least this long. Chromium's clock
  // counts in steps of 0.1 ms (without cross-origin isolation) and a small
  // model's call takes about that, so one call per sample would time the
  // clock.
  const SAMPLE_MS = 20;
  // Calls during this long (at least one) are not counted: until the
  // JavaScript engine's optimizing compiler has compiled the runtime's code
  // for this model, its calls run slower (an MLP of 40 us a call on Node's
  // wasm backend took 150-600 us over its first few hundred milliseconds).
  const WARMUP_MS = 300;

  async function steadyMs(call, samples) {
    const warming = performance.now();
    do {
      await call();
    } while (performance.now() - warming < WARMUP_MS);
    // Each sample calls until it has lasted SAMPLE_MS: a count of calls
    // chosen from the warm-up's pace would make short samples wherever the
    // calls got quicker after it (a busy machine).
    const means = [];
    for (let s = 0; s < samples; s++) {
      const begun = performance.now();
      let done = 0;
      do {
        await call();
        done += 1;
      } while (performance.now() - begun < SAMPLE_MS);
      means.push((performance.now() - begun) / done);
    }
    means.sort((a, b) => a - b);
    return means[Math.floor(means.length / 2)];
  }

  exports.steadyMs = steadyMs;
})(typeof module === 'undefined' ? (globalThis.jax2tfTiming = {}) : module.exports);
