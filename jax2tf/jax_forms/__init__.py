"""JAX functions that compute a primitive from primitives every target runs.

Where a target lacks the kernel a primitive needs (an integer convolution or
matrix product on TFLite, a sort anywhere but XLA), a native module gets the
JAX function here as the primitive's lowering
(jax2tf/native/target_lowerings.py), so that it computes what JAX computes
with the ops the target has; every native module gets the Hessenberg and
tridiagonal reductions and pivoted QR of householder.py, which JAX computes
only with LAPACK custom calls (jax2tf/native/portable_lowering.py). The
graph route lowers the same functions for integer convolutions and
products, pooling gradients (select_and_scatter), XLA's bit generator,
the Householder reductions and, for TFLite and TF.js, Cholesky factors
and triangular solves (triangular.py) (`ctx.lower_fun`); its sort rule
(jax2tf/graph/rules/sorting.py) writes the same TopK passes in TF ops of
its own, through the uint32 lanes that this form does not take, and its
LU rule the steps of lu.py in TF ops. No TensorFlow here.
"""
