"""JAX's own primitive harnesses, converted with graph serialization and no
XLA ops (`native_serialization=False, enable_xla=False`), run in TF eager,
`tf.function` and `tf.function(jit_compile=True)` against `jax.jit` on CPU.

    python -m tools.jax_harness [--groups G ...] [--per-group N] [--out PATH]

The harnesses come from the installed JAX (`jax._src.internal_test_util.
test_harnesses`, shipped in its wheel); nothing of them enters the repository.
Each group runs in a process of its own, so that a crash costs one group.
Results compare exactly at the dtype's tolerance, and where JAX leaves an
output implementation-defined (eigen and singular vectors, the order of
eig's eigenvalues, the other triangle of a Cholesky factor, ties of an
unstable sort or top-k, a result wider than its operands) by what defines it
(`defined.py`). The run fails on any case that neither passes nor is one of
the refusals argued in docs/primitive_coverage.md (`ALLOWED_ERRORS`).
"""
