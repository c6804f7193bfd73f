"""JAX functions that compute a primitive from primitives every target runs.

Where a target lacks the kernel a primitive needs (an integer convolution or
matrix product on TFLite, a sort anywhere but XLA), the same JAX function
is its form on every route: the graph interpreter lowers it with
`ctx.lower_fun`, and a native module gets it as the primitive's lowering
(jax2tf/native/target_lowerings.py), so both write what JAX computes with
the ops the target has. No TensorFlow here.
"""
