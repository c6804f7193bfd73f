"""What a comparison says: the json that docs/compatibility.md is rendered
from, and the text printed at the end of a run."""

import datetime
import json
import platform
import subprocess
from importlib import metadata

from tools.upstream_suite.compare import Comparison


def _version(*names: str) -> str | None:
  for name in names:
    try:
      return metadata.version(name)
    except metadata.PackageNotFoundError:
      pass
  return None


def commit(root: str) -> str | None:
  """The commit of this package that "ours" ran, marked when its files differ."""
  try:
    head = subprocess.run(
      ["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    dirty = subprocess.run(
      ["git", "-C", root, "status", "--porcelain", "jax2tf"], capture_output=True, text=True
    ).stdout.strip()
  except (OSError, subprocess.CalledProcessError):
    return None
  return head + (" with uncommitted changes" if dirty else "")


def results(
  comparison: Comparison,
  *,
  tag: str,
  sample: int,
  files: tuple[str, ...],
  ours_commit: str | None,
  date: str | None = None,
) -> dict:
  return {
    "date": date or datetime.date.today().isoformat(),
    "tag": tag,
    "python": platform.python_version(),
    "jax": _version("jax"),
    "jaxlib": _version("jaxlib"),
    "tensorflow": _version("tensorflow", "tensorflow-cpu"),
    "commit": ours_commit,
    "sample": sample,
    "files": list(files),
    "counts": comparison.counts,
    "exceptions": comparison.exceptions,
    "regressions": comparison.regressions,
    "only_ours": comparison.only_ours,
    "fail_both": comparison.fail_both,
    "unused_exceptions": comparison.unused,
  }


def write(data: dict, path: str) -> None:
  with open(path, "w") as f:
    json.dump(data, f, indent=1)
    f.write("\n")


def counts_table(counts: dict[str, dict[str, int]]) -> list[str]:
  head = ("collected", "passed", "failed", "errored", "skipped")
  lines = [f"{'':10s}" + "".join(f"{h:>10s}" for h in head)]
  for config, c in counts.items():
    lines.append(f"{config:10s}" + "".join(f"{c[h]:10d}" for h in head))
  return lines


def text(comparison: Comparison, full: bool) -> list[str]:
  lines = counts_table(comparison.counts)
  lines += ["", f"known exceptions: {len(comparison.exceptions)}"]
  lines += [f"  {e['test']}  [{e['category']}]" for e in comparison.exceptions]
  lines += ["", f"pass only with this package: {len(comparison.only_ours)}"]
  lines += [f"  {e['test']}  (upstream: {e['outcome']})" for e in comparison.only_ours]
  lines += ["", f"fail with both: {len(comparison.fail_both)}"]
  # In a selection, an exception that matched nothing says nothing.
  if full and comparison.unused:
    lines += ["", "known exceptions that no test needed (remove them from exceptions.py):"]
    lines += [f"  {p}" for p in comparison.unused]
  lines += ["", f"REGRESSIONS: {len(comparison.regressions)}" if comparison.regressions else ""]
  for r in comparison.regressions:
    lines += [f"  {r['test']} [{r['outcome']}] {r['message'][:200]}"]
    if "note" in r:
      lines += [f"    {r['note']}"]
  return lines
