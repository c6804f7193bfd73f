"""Upstream's own jax2tf test suite (`jax/experimental/jax2tf/tests/` of a JAX
release tag), run unchanged twice: with JAX's module, then with this package
in its place (`jax2tf.install()`). A test that passes with JAX's module and not
with this package is a regression unless it is a known exception
(tools/upstream_suite/exceptions.py).

    python -m tools.upstream_suite [--jax-checkout DIR | --tag TAG] [--sample N]
        [--only ours|upstream] [--file NAME ...] [-k EXPR]
    python -m tools.upstream_suite --from-junit UPSTREAM.xml OURS.xml

The test files are fetched at run time (fetch.py) and run in a temporary
directory; this repository holds none of them. A full run writes
docs/upstream_suite.json and re-renders docs/compatibility.md.
"""
