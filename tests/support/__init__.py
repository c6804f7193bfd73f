"""The vocabulary of primitive test cases, and what reads it.

`case` declares cases (argument generators, tolerances, expected refusals and
known gaps per column), `compare` compares a converted result with JAX's,
`collect` gathers the case tables of the rule families (`tests/cases/<family>.py`),
`recorded` reads and writes what the deployment columns were recorded doing
with them (`tests/cases/recorded/<column>/<family>.json`), and
tools/coverage_doc.py renders them into docs/primitive_coverage.md and
docs/cases_by_primitive.md.
`refusals` reads the deployment converters' refusals, `bad_inputs` is the
catalogue of mistakes that tests/test_bad_inputs.py makes, and
`no_tensorflow` runs Python with TensorFlow hidden. The test runner
lives in tests/primitives/. None of this ships in the wheel.
"""
