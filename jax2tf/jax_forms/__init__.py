"""JAX functions that compute a primitive from primitives every target runs.

Where a target lacks the kernel a primitive needs (an integer convolution or
matrix product on TFLite, a sort anywhere but XLA), a native module gets the
JAX function here as the primitive's lowering
(jax2tf/native/target_lowerings.py), so that it computes what JAX computes
with the ops the target has. The graph route lowers the same functions for
integer convolutions and products, pooling gradients (select_and_scatter),
XLA's bit generator and LAPACK's Householder reductions (householder.py)
(`ctx.lower_fun`); its sort rule
(jax2tf/graph/rules/sorting.py) writes the same TopK passes in TF ops of
its own, through the uint32 lanes that this form does not take. No
TensorFlow here.
"""
