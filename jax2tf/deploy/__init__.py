"""What the deployment converters (lite/, tfjs/) share: the traced TF function
with named inputs and outputs that they read (`signature`), the JAX primitive
and user line behind a TF op, for refusals in JAX's terms (`provenance`),
writing artifacts whole or not at all (`artifacts`), Node.js and a
long-lived Node child answering JSON lines (`node`: TF.js in Node, and the
browser driver), and headless Chromium for the models that run in a
browser (`headless`: TF.js, LiteRT.js)."""
