"""The samples of `to_tflite`'s `representative_dataset`, checked.

A sample is a list with one array per input, in the function's order, or a
dict by input name; both routes that calibrate (TF's converter, and
ai-edge-quantizer on the litert route) take it by name, as their own
positional order is that of the flatbuffer's input tensors. Each array is
checked against its input: a calibrator would otherwise run the model on
whatever comes, or stop with an error about tensor buffers that names
neither sample nor input. No TensorFlow here.
"""

from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np


def samples(
  dataset: Callable,
  names: Sequence[str],
  shapes: Mapping[str, Sequence[int | None]],
  dtypes: Mapping[str, np.dtype],
) -> Iterator[dict[str, np.ndarray]]:
  """{input name: array} for each sample of `dataset()`, each array of its
  input's dtype; `shapes` holds None for a dynamic dimension."""
  for n, sample in enumerate(dataset()):
    if not isinstance(sample, dict):
      sample = list(sample) if isinstance(sample, (list, tuple)) else [sample]
      if len(sample) != len(names):
        raise ValueError(
          f"representative_dataset: sample {n} has {len(sample)} array(s), but the "
          f"model takes {len(names)} input(s) {list(names)}"
        )
      sample = dict(zip(names, sample))
    elif sorted(sample) != sorted(names):
      raise ValueError(
        f"representative_dataset: sample {n} has the keys {sorted(sample)}, but the "
        f"model's inputs are {list(names)}"
      )
    yield {name: _checked(sample[name], name, shapes[name], dtypes[name], n) for name in names}


def _checked(value, name: str, shape: Sequence[int | None], dtype, n: int) -> np.ndarray:
  value = np.asarray(value)
  dtype = np.dtype(dtype)
  fits = len(value.shape) == len(shape) and all(
    d is None or d == v for d, v in zip(shape, value.shape)
  )
  if not fits or not np.can_cast(value.dtype, dtype, "same_kind"):
    want = "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
    raise ValueError(
      f"representative_dataset: sample {n}, input {name!r}: got "
      f"{value.dtype}{list(value.shape)}, but the model takes {dtype}{want}"
    )
  return value.astype(dtype, copy=False)
