"""The vocabulary of primitive test cases, and what reads it.

`case` declares cases (argument generators, tolerances, expected refusals and
known gaps per column), `compare` compares a converted result with JAX's,
`collect` gathers the case tables of the rule families (`tests/cases/<family>.py`),
and tools/coverage_doc.py renders them into docs/primitive_coverage.md.
`refusals` reads the deployment converters' refusals, and `bad_inputs` is the
catalogue of mistakes that tests/test_bad_inputs.py makes. The test runner
lives in tests/primitives/. None of this ships in the wheel.
"""
