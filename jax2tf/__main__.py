"""`python -m jax2tf ...`: the command line (see jax2tf/cli)."""

import sys

from jax2tf.cli import main

sys.exit(main())
