"""Developer tools run from the repository root (`python -m tools.<name>`): the
generators of docs/primitive_coverage.md and docs/errors.md, the differential
fuzzer, the recorder of deployment columns, the version matrix, the runners of
upstream's own jax2tf tests and of JAX's primitive harnesses. None of this
ships in the wheel.
"""
