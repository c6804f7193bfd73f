# Entry points. Everything installs into .venv (Python 3.11) with the pinned
# known-good set from constraints/; the 3.12 lane uses .venv312.
PYTHON ?= python3.11
VENV ?= .venv
PY = $(VENV)/bin/python
CONSTRAINTS ?= constraints/py311.txt
PYTEST_ARGS ?=
export TF_CPP_MIN_LOG_LEVEL ?= 2

VENV_LITERT ?= .venv-litert

PY312 ?= $(shell ls -d $$(pyenv root 2>/dev/null)/versions/3.12.*/bin/python3.12 2>/dev/null | tail -n 1)
VENV312 ?= .venv312

.PHONY: chromium compat upstream-suite jax-harness demo docs test test-all test-py312 test-all-py312 test-litert bench bench-quick bench-scale fuzz install lint format clean

$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c $(CONSTRAINTS) -e ".[cpu,test,bench,lint]"
	touch $@

# TF.js for Node (pure JavaScript, and its WebAssembly backend), at the versions
# package-lock.json pins: what the TF.js tests and jax2tf.tfjs.run load models with.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Headless Chromium for the browser tests (tests/tfjs/test_browser.py, the
# drawing example): Debian's package, installed with apt-get where this runs
# as root on Debian; elsewhere the make goes on and those tests say they are
# skipped for want of Chromium (or set JAX2TF_CHROMIUM to one).
chromium:
	@if command -v chromium >/dev/null 2>&1; then \
	  echo "chromium: $$(command -v chromium) (for the browser tests)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "chromium: installing Debian's chromium with apt-get, for the browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
	    && echo "chromium: installed $$(command -v chromium)") \
	  || echo "chromium: apt-get failed; the browser tests will be skipped"; \
	else \
	  echo "chromium: not found and apt-get is not usable here; the browser tests will be skipped"; \
	fi

# TF's own TF.js converter (tensorflowjs_converter), which converts the Keras
# twins of the TF.js benchmarks (benchmarks/tfjs_twin.py): about 1 MB, in a
# folder of its own, without its dependencies (it pins old releases; it runs
# on $(VENV)'s TensorFlow).
TFJS_CONVERTER ?= .tfjs-converter

$(TFJS_CONVERTER)/.installed: constraints/tfjs-converter.txt | $(VENV)/.installed
	rm -rf $(TFJS_CONVERTER)
	$(PY) -m pip install -q --no-deps --target $(TFJS_CONVERTER) -r constraints/tfjs-converter.txt
	touch $@

install: $(VENV)/.installed node_modules/.installed chromium

# The TF.js export of the demo needs Node.js and npm; without them the demo
# says it skips that target.
demo: $(VENV)/.installed
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory node_modules/.installed; \
	else echo "npm not found: the demo will skip its TF.js export"; fi
	$(PY) -m jax2tf.demo

# The fast tier: every test not marked slow. Of the case table it runs, in each
# column, the representatives that tests/primitives/representatives.py picks
# (about 3,800 of its 34,000 tests; test-all runs the rest): about 5,300 tests,
# some 12 minutes on two cores. The slowest tests are listed at the end: CI has
# 60 minutes on two cores.
test: $(VENV)/.installed node_modules/.installed chromium $(TFJS_CONVERTER)/.installed
	$(PY) -m pytest -n 2 -q -m "not slow" --durations=15 $(PYTEST_ARGS)

# The model-set tests convert and compile every model (ResNet-50 included):
# they run in fresh worker processes of their own, as a worker that has run
# the rest of the exhaustive tier first has been seen to die compiling there.
MODEL_SET_TESTS ?= tests/graph/test_models.py tests/lite/test_models.py \
  tests/tfjs/test_models.py tests/lite/test_quantization.py tests/lite/test_litert_browser.py

test-all: $(VENV)/.installed node_modules/.installed chromium $(TFJS_CONVERTER)/.installed
	$(PY) -m pytest -n 2 -q $(addprefix --ignore=,$(MODEL_SET_TESTS)) $(PYTEST_ARGS)
	$(PY) -m pytest -n 2 -q $(MODEL_SET_TESTS) $(PYTEST_ARGS)

# Native and graph serialization (shape polymorphism included) on Python 3.12
# with the newest JAX.
$(VENV312)/.installed: pyproject.toml constraints/py312.txt
	@test -n "$(PY312)" || (echo "no Python 3.12 under $$(pyenv root)/versions" && exit 1)
	$(PY312) -m venv $(VENV312)
	$(VENV312)/bin/python -m pip install -q -c constraints/py312.txt -e ".[cpu,test]"
	touch $@

PY312_TESTS ?= tests/native tests/graph tests/spec tests/primitives tests/test_internals.py tests/test_packaging.py
# The deployment columns of the case table (LiteRT, TF.js) run on the 3.11 lane
# (-m "not slow" keeps each TF column's representatives, as in `make test`),
# and the coverage page is rendered from its cases (jax 0.12 has one more:
# relayout, a primitive jax 0.10 lacks).
PY312_SELECT ?= not litert and not tfjs-node and not coverage_page_is_current

test-py312: $(VENV312)/.installed
	$(VENV312)/bin/python -m pytest -n 2 -q -m "not slow" -k "$(PY312_SELECT)" $(PY312_TESTS) $(PYTEST_ARGS)

# The exhaustive tier of the same tests on the 3.12 lane.
test-all-py312: $(VENV312)/.installed
	$(VENV312)/bin/python -m pytest -n 2 -q -k "$(PY312_SELECT)" $(PY312_TESTS) $(PYTEST_ARGS)

# The LiteRT lane: the package as `pip install "jax2tf[litert]"` installs it,
# without TensorFlow (and Flax, from the examples extra, for the demo model),
# at the versions of constraints/py311.txt; the tests of what works there
# (to_tflite's litert route, jax2tf.lite, `jax2tf export --target tflite`,
# the errors that name the TensorFlow extras). Fails if TensorFlow is
# importable in the lane.
LITERT_TESTS ?= tests/lite/test_litert_route.py tests/lite/test_without_tensorflow.py \
  tests/lite/test_litert_quantize.py tests/lite/test_linear_algebra_forms.py
NO_TENSORFLOW_CHECK = import importlib.util, sys; \
  sys.exit("TensorFlow is importable in $(VENV_LITERT), which must run without it" \
           if importlib.util.find_spec("tensorflow") else 0)

$(VENV_LITERT)/.installed: pyproject.toml constraints/litert.txt
	$(PYTHON) -m venv $(VENV_LITERT)
	$(VENV_LITERT)/bin/python -m pip install -q -c constraints/litert.txt -e ".[litert,examples]" \
	  pytest pytest-xdist
	$(VENV_LITERT)/bin/python -c '$(NO_TENSORFLOW_CHECK)'
	touch $@

test-litert: $(VENV_LITERT)/.installed
	$(VENV_LITERT)/bin/python -c '$(NO_TENSORFLOW_CHECK)'
	$(VENV_LITERT)/bin/python -m pytest -n 2 -q $(LITERT_TESTS) $(PYTEST_ARGS)

# The full run regenerates docs/benchmarks.md and docs/benchmarks/*.png; the
# quick one (CI's smoke test) writes only under benchmarks/results/.
# Both time TF.js in Node and Chromium, beside the Keras twins converted by
# TF's TF.js converter.
bench: $(VENV)/.installed node_modules/.installed $(TFJS_CONVERTER)/.installed
	$(PY) -m benchmarks.run

bench-quick: $(VENV)/.installed node_modules/.installed $(TFJS_CONVERTER)/.installed
	$(PY) -m benchmarks.run --quick

# A decoder-only Transformer up to 3.5 GB of parameters, exported each way and
# served without JAX (docs/benchmarks/scale.md); needs about 5 GB of memory
# and 4 GB of disk. SCALE_ARGS=--quick: tiny models, under benchmarks/results/.
SCALE_ARGS ?=
bench-scale: $(VENV)/.installed
	$(PY) -m benchmarks.suites.scale $(SCALE_ARGS)

# Differential fuzzing against jax.jit (docs/fuzzing.md): random lax programs in
# every column; unexplained mismatches are written as cases under fuzz_out/.
FUZZ_ARGS ?= --seed 0 --budget 600
fuzz: $(VENV)/.installed
	$(PY) -m tools.fuzz $(FUZZ_ARGS)

# Generated pages: the primitive coverage page and the cases of each primitive,
# from the case table, and the error catalogue, from tests/support/bad_inputs.py.
docs: $(VENV)/.installed
	$(PY) -m tools.coverage_doc
	$(PY) -m tools.errors_doc

# The version matrix (docs/compatibility.md): exports with both JAX lanes, runs
# the artifacts on TensorFlow 2.17-2.21, LiteRT and TF.js releases installed
# fresh (downloads several GB; each environment is deleted after use). Not part
# of `make test`.
compat: $(VENV)/.installed $(VENV312)/.installed
	PYTHONPATH=. $(PY) -m tools.compat.run

# Upstream's own jax2tf tests (jax/experimental/jax2tf/tests of JAX at the
# installed JAX's tag), run unchanged with JAX's module and with this package
# in its place, then compared; rewrites docs/upstream_suite.json and its
# section of docs/compatibility.md. Fails on a test that passes with JAX's
# module only and is no known exception (tools/upstream_suite/exceptions.py).
# About 15 minutes on two cores; downloads the tag's sources from GitHub, or
# takes them from a clone: UPSTREAM_SUITE_ARGS="--jax-checkout DIR". Not part
# of `make test`.
UPSTREAM_SUITE_ARGS ?=
upstream-suite: $(VENV)/.installed
	$(PY) -m tools.upstream_suite $(UPSTREAM_SUITE_ARGS)

# JAX's own primitive harnesses without XLA ops, in the three TF modes
# (tools/jax_harness: about half an hour on two cores); writes docs/jax_harness.json.
jax-harness: $(VENV)/.installed
	$(PY) -m tools.jax_harness $(JAX_HARNESS_ARGS)

# Lint (ruff), formatting check (ruff format), types (mypy) and the layers of
# the package (lint-imports), as configured in pyproject.toml; `make format`
# rewrites what the check would flag. Formatted: the package, the examples, and
# the test machinery that is code (the case tables are aligned by hand).
FORMATTED ?= jax2tf examples tests/support tests/tf_modes.py tools/__init__.py tools/fuzz \
  tools/coverage_doc.py tools/errors_doc.py tools/record_column.py tools/upstream_suite \
  tools/jax_harness

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check $(FORMATTED)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

format: $(VENV)/.installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format $(FORMATTED)

clean:
	rm -rf $(VENV) $(VENV312) $(VENV_LITERT) $(TFJS_CONVERTER) .pytest_cache node_modules
