// How every runner here calls a TF.js graph model: TF.js in Node
// (run_model.js) and the page headless Chromium opens (browser_page.html).
// Loaded with require() in Node, with <script> in a page (there it sets
// window.jax2tfExecute).
//
// runModel(model, inputs, outputs): the outputs of model.execute where the
// model allows it, else of model.executeAsync (loops and conditionals: TF's
// dynamic control flow). The first call finds out which and the model
// remembers it. execute runs synchronously, without executeAsync's
// bookkeeping, which in Chromium costs about 0.4 ms a call: an MLP that
// execute runs in 0.09 ms took 0.48 ms through executeAsync, as much as a
// small model's whole time.
(function (exports) {
  'use strict';

  async function runModel(model, inputs, outputs) {
    if (!model.jax2tfNeedsAsync) {
      try {
        return model.execute(inputs, outputs);
      } catch (error) {
        if (!/executeAsync/.test(String(error && error.message))) throw error;
        model.jax2tfNeedsAsync = true;
      }
    }
    return await model.executeAsync(inputs, outputs);
  }

  exports.runModel = runModel;
})(typeof module === 'undefined' ? (globalThis.jax2tfExecute = {}) : module.exports);
