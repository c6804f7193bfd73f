"""The interleaved timer shared by every suite.

Alternatives are timed round-robin in one process so that noise from other
jobs on a shared machine (and frequency changes) hits them alike; each sample
is a loop of calls long enough to dwarf the clock's resolution, and the
figure reported is the median per-call time over the samples.
"""

import dataclasses
import math
import random
import statistics
import sys
import time


@dataclasses.dataclass(frozen=True)
class Settings:
  samples: int        # samples per alternative
  sample_s: float     # target seconds per sample (at least one call)
  warmup: int         # calls before timing, after the first (compiling) one
  conversions: int    # repetitions of each conversion measurement


QUICK = Settings(samples=5, sample_s=0.02, warmup=2, conversions=1)
FULL = Settings(samples=15, sample_s=0.15, warmup=5, conversions=3)

_T0 = time.perf_counter()


def progress(msg: str) -> None:
  # The full run takes many minutes; one line per measurement shows where it is.
  print(f"[{time.perf_counter() - _T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def sync_tf(out):
  # Fetching one result waits for the op, as block_until_ready does for JAX.
  import tensorflow as tf
  for t in tf.nest.flatten(out):
    t.numpy()
  return out


def sync_jax(out):
  import jax  # here, so that a timing process without JAX (litert_timer) never loads it

  return jax.block_until_ready(out)


def once(fn) -> float:
  t0 = time.perf_counter()
  fn()
  return time.perf_counter() - t0


def _calls_per_sample(call, sample_s: float) -> int:
  return max(1, math.ceil(sample_s / max(once(call), 1e-7)))


def round_robin(alternatives: dict, cfg: Settings) -> dict:
  """alternatives: name -> call (which must block). Returns name -> median s."""
  return {n: statistics.median(s) for n, s in round_robin_samples(alternatives, cfg).items()}


def round_robin_samples(alternatives: dict, cfg: Settings) -> dict:
  """name -> seconds per call of each round (`cfg.samples` rounds, every
  alternative once per round, in a new order each round)."""
  for call in alternatives.values():
    for _ in range(cfg.warmup):
      call()
  loops = {n: _calls_per_sample(c, cfg.sample_s) for n, c in alternatives.items()}
  samples = {n: [] for n in alternatives}
  names = list(alternatives)
  order = random.Random(0)
  for _ in range(cfg.samples):
    # A new order each round keeps an alternative from always following the
    # same neighbour (whose caches, allocations and still-spinning worker
    # threads it would inherit); rotating would keep the cyclic order.
    order.shuffle(names)
    for n in names:
      call, k = alternatives[n], loops[n]
      t0 = time.perf_counter()
      for _ in range(k):
        call()
      samples[n].append((time.perf_counter() - t0) / k)
  return samples


def paired_excess(samples: dict, base: str) -> dict:
  """name -> the median over rounds of its time minus `base`'s in the same
  round. Where the machine's speed drifts by more than the difference
  measured (a bare TF call varies by tens of microseconds from run to run),
  differences taken round by round cancel the drift that a difference of
  two medians keeps."""
  return {
    n: statistics.median(a - b for a, b in zip(s, samples[base]))
    for n, s in samples.items()
  }


def median(xs) -> float:
  return statistics.median(xs)
