"""Differentiating converted functions: the TF custom gradient whose backward
pass is JAX's VJP, converted the same way (`gradients`), and the VJP of
convolutions whose transposed padding is symbolic (`conv_vjp`)."""
