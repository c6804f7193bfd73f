"""The case tables, one module per rule family of jax2tf/graph/rules/.

`tests/cases/<family>.py` holds the `CASES` of `jax2tf/graph/rules/<family>.py`,
in the vocabulary of tests/support/case.py; tests/support/collect.py gathers
them, tests/primitives/test_cases.py runs them. They live outside the package
so that the wheel carries no test data.
"""
