"""What the deployment converters (lite/, tfjs/) share: the traced TF function
with named inputs and outputs that they read (`signature`), the JAX primitive
and user line behind a TF op, for refusals in JAX's terms (`provenance`), and
writing artifacts whole or not at all (`artifacts`)."""
