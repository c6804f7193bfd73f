"""A differential fuzzer: random lax programs, converted and run in every column, against jax.jit.

generator.py draws programs (ops.py: the operations; values.py: inputs with
edge values), targets.py runs one in one column and judges it, minimize.py
shrinks a mismatch, known_gaps.py explains the known ones, writer.py writes
the rest as cases, driver.py loops and counts. docs/fuzzing.md says how to use it.
"""
