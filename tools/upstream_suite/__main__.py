"""python -m tools.upstream_suite [--jax-checkout DIR | --tag TAG] [--sample N]
[--only ours|upstream] [--file NAME ...] [-k EXPR] [--from-junit UP.xml OURS.xml]

Exit status: 0, 1 when a test regressed (passes with JAX's module, not with
this package, and is no known exception), 2 when a run itself went wrong.
"""

import argparse
import pathlib
import shutil
import sys
import tempfile

from tools.upstream_suite import compare, fetch, junit, report, run

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_OUTPUT = ROOT / "docs" / "upstream_suite.json"


def _parser() -> argparse.ArgumentParser:
  p = argparse.ArgumentParser(
    prog="python -m tools.upstream_suite",
    description="Runs upstream's jax2tf tests, unchanged, with JAX's module and with this "
    "package in its place, and compares.",
  )
  source = p.add_mutually_exclusive_group()
  source.add_argument("--jax-checkout", metavar="DIR", help="a git clone of JAX with the tag")
  source.add_argument(
    "--from-junit",
    nargs=2,
    metavar=("UPSTREAM_XML", "OURS_XML"),
    help="compare two JUnit files of earlier runs instead of running",
  )
  p.add_argument("--tag", help="JAX's release tag (default: that of the installed jax)")
  p.add_argument(
    "--sample", type=int, default=10, help="run one in N tests of primitives_test.py (1: all)"
  )
  p.add_argument("--only", choices=run.CONFIGS, help="run one configuration (no comparison)")
  p.add_argument(
    "--file", action="append", choices=run.FILES, metavar="NAME", help="only these test files"
  )
  p.add_argument("-k", dest="select", metavar="EXPR", help="pytest's -k, in both runs")
  p.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (0: none)")
  p.add_argument(
    "--timeout", type=int, default=600, help="seconds a test may take (with pytest-timeout)"
  )
  p.add_argument("--work", metavar="DIR", help="run in DIR (default: a new temporary folder)")
  p.add_argument("--keep", action="store_true", help="keep the run's folder (logs, JUnit XML)")
  p.add_argument(
    "--commit", help="with --from-junit: the commit of this package that the runs tested"
  )
  p.add_argument(
    "--output",
    default=str(DEFAULT_OUTPUT),
    help="where a full run writes its results (default docs/upstream_suite.json, which "
    "also re-renders docs/compatibility.md)",
  )
  return p


def _publish(comparison: compare.Comparison, args, files, ours_commit, date=None) -> None:
  data = report.results(
    comparison, tag=args.tag, sample=args.sample, files=files, ours_commit=ours_commit, date=date
  )
  report.write(data, args.output)
  print(f"wrote {args.output}")
  if pathlib.Path(args.output).resolve() == DEFAULT_OUTPUT:
    from tools.compat import render

    render.main([str(DEFAULT_OUTPUT.with_name("compatibility.json"))])
    print(f"wrote {DEFAULT_OUTPUT.with_name('compatibility.md')}")


def _finish(comparison: compare.Comparison, full: bool) -> int:
  print("\n".join(report.text(comparison, full)).rstrip())
  return 1 if comparison.regressions else 0


def _run_both(args, work: pathlib.Path, files: tuple[str, ...]) -> int:
  print(f"upstream tests: {run.prepare(work, args.tag, args.jax_checkout)}", flush=True)
  results = {}
  for config in (args.only,) if args.only else run.CONFIGS:
    print(f"{config}: running (log: {work / f'{config}.log'})", flush=True)
    result = run.run(
      work,
      config,
      files=files,
      sample=args.sample,
      workers=args.workers,
      select=args.select,
      timeout=args.timeout,
    )
    print(f"{config}: {result.summary()}", flush=True)
    # pytest: 0 all passed, 1 some failed; anything else is no result.
    if result.returncode not in (0, 1):
      print(f"{config}: pytest exited with {result.returncode}; see {result.log}")
      return 2
    problems = run.check_switch(result, ROOT)
    if problems:
      print(f"{config}: the run did not test the jax2tf it should have:", *problems, sep="\n  ")
      return 2
    results[config] = junit.load(str(result.junit))
  if args.only:
    print("\n".join(report.counts_table({args.only: compare.counts(results[args.only])})))
    return 0
  comparison = compare.compare(results["upstream"], results["ours"])
  full = not args.select and files == run.FILES
  if full:
    _publish(comparison, args, files, report.commit(str(ROOT)))
  else:
    print("a selection: docs/upstream_suite.json is left as it is")
  return _finish(comparison, full)


def main(argv=None) -> int:
  args = _parser().parse_args(argv)
  args.tag = args.tag or fetch.default_tag()
  files = tuple(f for f in run.FILES if f in args.file) if args.file else run.FILES
  if args.from_junit:
    up, ours = (junit.load(p) for p in args.from_junit)
    comparison = compare.compare(up, ours)
    _publish(comparison, args, files, args.commit, junit.date(args.from_junit[1]))
    return _finish(comparison, full=True)
  work = pathlib.Path(args.work or tempfile.mkdtemp(prefix="jax2tf-upstream-suite-"))
  work.mkdir(parents=True, exist_ok=True)
  try:
    status = _run_both(args, work, files)
  except fetch.Unavailable as e:
    print(f"upstream tests: {e}", file=sys.stderr)
    if not args.work:
      shutil.rmtree(work, ignore_errors=True)
    return 2
  # A failed run keeps its logs and JUnit files for reading.
  if status or args.keep or args.work:
    print(f"the run's folder: {work}")
  else:
    shutil.rmtree(work, ignore_errors=True)
  return status


if __name__ == "__main__":
  sys.exit(main())
