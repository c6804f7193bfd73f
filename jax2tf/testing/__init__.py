"""The vocabulary of primitive test cases, and what reads it.

`case` declares cases (argument generators, tolerances, expected refusals and
known gaps per column), `compare` compares a converted result with JAX's,
`collect` gathers the cases that sit beside each rule family
(`jax2tf/graph/rules/<family>_cases.py`), and `coverage_doc` renders them into
docs/primitive_coverage.md. The test runner lives in tests/primitives/.
"""
