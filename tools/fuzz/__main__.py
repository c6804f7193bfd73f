"""python -m tools.fuzz --seed 0 [--start I] (--budget SECONDS | --programs N) [--tflite]
[--litert] [--tfjs]"""

import argparse
import sys

from tools.fuzz import driver, isolation, targets


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(
    prog="python -m tools.fuzz",
    description="Differential fuzzing of jax2tf against jax.jit on random lax programs.",
  )
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--budget", type=float, help="seconds to run (programs stop starting)")
  parser.add_argument(
    "--programs",
    type=int,
    help="programs to run: the counts then depend on the seed (and start) only",
  )
  parser.add_argument(
    "--start", type=int, default=0, help="the first program's index (to run a part of the stream)"
  )
  parser.add_argument("--out", default="fuzz_out", help="where unexplained mismatches are written")
  parser.add_argument("--tflite", action="store_true", help="also run on LiteRT (to_tflite)")
  parser.add_argument(
    "--litert",
    action="store_true",
    help="also run on LiteRT by the litert route (to_tflite(route='litert'): JAX's StableHLO "
    "through litert-converter, no TensorFlow)",
  )
  parser.add_argument("--tfjs", action="store_true", help="also run on TF.js in Node (to_tfjs)")
  parser.add_argument(
    "--in-process",
    action="store_true",
    help="run the programs in this process (faster to start; a program that aborts "
    "the process ends the run instead of becoming a finding)",
  )
  args = parser.parse_args(argv)
  if args.programs is None and args.budget is None:
    parser.error("give --programs N or --budget SECONDS")
  try:
    targets.check_runtimes(args.tflite, args.tfjs, args.litert)
  except (ImportError, FileNotFoundError) as e:
    parser.error(str(e))
  summary = (driver if args.in_process else isolation).fuzz(
    args.seed,
    programs=args.programs,
    budget=args.budget,
    start=args.start,
    out=args.out,
    tflite=args.tflite,
    tfjs=args.tfjs,
    litert=args.litert,
    progress=lambda line: print(line, flush=True),
  )
  print()
  print(summary.table())
  if summary.refusals:
    print("\nRefused, the most frequent reasons:")
    print(summary.refusal_table())
  for f in summary.findings:
    where = f"known gap ({f.explanation[:120]})" if f.explanation else f"written to {f.path}"
    print(f"{f.program} [{f.column}] {f.detail[:160]}\n    -> {where}")
  for crash in summary.reference_crashes:
    print(f"JAX's jax.jit aborted the process (compared with JAX op by op): {crash}")
  unexplained = len(summary.unexplained())
  print(
    f"\nseed {args.seed}: {summary.programs} programs in {summary.seconds:.0f} s; "
    f"{unexplained} unexplained mismatches"
  )
  return 1 if unexplained else 0


if __name__ == "__main__":
  sys.exit(main())
