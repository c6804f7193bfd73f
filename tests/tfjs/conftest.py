"""Fixtures shared by the TF.js tests."""

import pytest

from jax2tf import tfjs


@pytest.fixture(scope="module")
def runners():
  """One Node process per backend (TF.js takes seconds to start), for a module's tests."""
  started = {backend: tfjs.Runner(backend) for backend in tfjs.runtime.BACKENDS}
  yield started
  for runner in started.values():
    runner.close()
