"""``python -m jax2tf.dropin``: the startup file of the drop-in switch.

With the file in site-packages, ``JAX2TF_INSTALL_AS_JAX_EXPERIMENTAL=1`` makes
``jax.experimental.jax2tf`` this package in every process of the environment,
also in those that never import jax2tf (see jax2tf/dropin/__init__.py).
"""

import argparse
import sys

from jax2tf import dropin


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(
    prog="python -m jax2tf.dropin",
    description=(
      f"Write or remove {dropin.STARTUP_FILE}, which makes {dropin.ENV_VAR}=1 "
      f"turn {dropin.UPSTREAM} into the jax2tf package at interpreter start."
    ),
  )
  action = parser.add_mutually_exclusive_group(required=True)
  action.add_argument("--write-startup-file", action="store_true")
  action.add_argument("--remove-startup-file", action="store_true")
  parser.add_argument("--site-dir", help="the site-packages folder (default: this environment's)")
  args = parser.parse_args(argv)
  if args.write_startup_file:
    path = dropin.write_startup_file(args.site_dir)
    print(f"wrote {path}; {dropin.ENV_VAR}=1 now turns the switch on")
  else:
    removed = dropin.remove_startup_file(args.site_dir)
    print(f"removed {removed}" if removed else "no startup file to remove")
  return 0


if __name__ == "__main__":
  sys.exit(main())
