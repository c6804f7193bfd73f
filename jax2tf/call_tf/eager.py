"""Moving arrays between JAX and TF eager without copies (DLPack).

On CPU both runtimes can alias one buffer, within their alignment rules: TF's
CPU kernels assume 64-byte aligned buffers (TF aborts the whole process on a
less aligned tensor), JAX's CPU client 16-byte aligned ones. Both allocators
give 64, so JAX arrays and TF results cross without copies; a NumPy array
crosses without a copy when it is C-contiguous, writable, 64-byte aligned and
of a dtype DLPack carries (NumPy's own allocator often gives only 16). Where
DLPack cannot be used the data is copied.

NumPy arrays stay mutable after the call, so a TF result that aliases a
borrowed NumPy buffer (`tf.identity` and `tf.reshape` hand their input's buffer
on) is copied before it becomes a JAX array, which must never change.
"""

from collections.abc import Callable, Sequence

import jax
import numpy as np
import tensorflow as tf

_DLPACK_CPU, _DLPACK_CUDA, _DLPACK_ROCM = 1, 2, 10
_JAX_CPU_ALIGNMENT = 16
_TF_CPU_ALIGNMENT = 64


class _TfDlpack:
  """Gives a TF eager tensor the `__dlpack__` protocol that jax.dlpack wants."""

  def __init__(self, tensor: tf.Tensor, device: tuple):
    self._tensor = tensor
    self._device = device

  def __dlpack__(self, *args, **kwargs):
    del args, kwargs  # TF exports on its own stream, synchronously
    return tf.experimental.dlpack.to_dlpack(self._tensor)

  def __dlpack_device__(self):
    return self._device


def _tf_device(t: tf.Tensor) -> tuple | None:
  spec = tf.DeviceSpec.from_string(t.backing_device or t.device or "")
  kind = (spec.device_type or "CPU").upper()
  index = spec.device_index or 0
  if kind == "CPU":
    return _DLPACK_CPU, 0
  if kind == "GPU":
    return _DLPACK_CUDA, index
  return None


def _host_extent(t: tf.Tensor):
  """(start, end) of an eager CPU tensor's own buffer, or None."""
  try:
    view = t._numpy()  # pylint: disable=protected-access  (no copy on CPU)
  except Exception:
    return None
  if not isinstance(view, np.ndarray) or view.nbytes == 0:
    return None
  return view.ctypes.data, view.ctypes.data + view.nbytes


def _aligned(t: tf.Tensor) -> bool:
  extent = _host_extent(t)
  return extent is not None and extent[0] % _JAX_CPU_ALIGNMENT == 0


def to_jax(t: tf.Tensor) -> jax.Array:
  device = _tf_device(t)
  if device is not None and (device[0] != _DLPACK_CPU or _aligned(t)):
    try:
      return jax.dlpack.from_dlpack(_TfDlpack(t, device))
    except Exception:
      pass
  return jax.numpy.asarray(t.numpy())


def _jax_to_tf(x: jax.Array):
  if x.is_fully_addressable and not _misaligned_on_cpu(x):
    try:
      return tf.experimental.dlpack.from_dlpack(x.__dlpack__())
    except Exception:
      pass
  return None


def _misaligned_on_cpu(x: jax.Array) -> bool:
  try:
    if next(iter(x.devices())).platform != "cpu":
      return False
    return x.unsafe_buffer_pointer() % _TF_CPU_ALIGNMENT != 0
  except Exception:
    return True


def _numpy_to_tf(x: np.ndarray):
  if (
    x.size == 0
    or not x.flags.c_contiguous
    or not x.flags.writeable
    or x.ctypes.data % _TF_CPU_ALIGNMENT != 0
  ):
    return None
  try:
    # The capsule holds a reference to `x`, so its buffer outlives the tensor.
    return tf.experimental.dlpack.from_dlpack(x.__dlpack__())
  except Exception:  # a dtype DLPack does not carry (e.g. bfloat16)
    return None


def _to_tf(x):
  """(tensor, extent of a NumPy buffer the tensor borrows, or None)."""
  if isinstance(x, (tf.Tensor, tf.Variable)):
    return tf.convert_to_tensor(x), None
  if isinstance(x, jax.Array):
    t = _jax_to_tf(x)
    if t is not None:
      return t, None
  elif isinstance(x, np.ndarray):
    t = _numpy_to_tf(x)
    if t is not None:
      return t, (x.ctypes.data, x.ctypes.data + x.nbytes)
  return tf.constant(np.asarray(x)), None


def _overlaps(extent, borrowed) -> bool:
  return extent is not None and any(
    extent[0] < end and start < extent[1] for start, end in borrowed
  )


def call(run: Callable[[list], Sequence[tf.Tensor]], args) -> list:
  """Runs `run` on `args` (JAX or NumPy arrays) as TF tensors; JAX results."""
  tensors, borrowed = [], []
  for a in args:
    t, extent = _to_tf(a)
    tensors.append(t)
    if extent is not None:
      borrowed.append(extent)
  outs = run(tensors)
  return [
    jax.numpy.array(o.numpy(), copy=True)
    if borrowed and _overlaps(_host_extent(o), borrowed)
    else to_jax(o)
    for o in outs
  ]
