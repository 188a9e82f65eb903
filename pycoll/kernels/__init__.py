"""Fused flatten / unflatten: many arrays through one contiguous buffer, in one call.

This is how gradient buckets are packed for a collective and unpacked after it: ``flatten`` copies
a list of arrays into one 1-D buffer (optionally scaled and cast on the way), ``unflatten`` copies
the buffer's consecutive slices back into the arrays, in place. The copies run in pycoll's compiled
kernels (``pycoll._C``) with the GIL released; this package is their only caller and checks every
argument first: ``checks`` holds what both paths check, ``host`` and ``device`` the two paths,
``compiled`` the one import of ``pycoll._C``.

Host and device: numpy arrays go to the C++ kernels, which copy before returning. CuPy arrays go
to the CUDA kernels, which enqueue ONE kernel for the whole list on CuPy's current stream of the
arrays' device and return without waiting for it, as a CuPy operation does. A build of
``pycoll._C`` without the CUDA kernels (``build_info()["cuda_kernels"]`` is False) still serves
CuPy arrays, with one CuPy copy per array: slower, same results; it says so once, as a warning of
the ``pycoll`` logger. CuPy is imported only when a device array comes in.

Buffer rules (for every array passed in, ``arrays``, ``out`` and ``flat``):

* All numpy.ndarray, or all cupy.ndarray on one device; C-contiguous, any shape; arrays are taken
  in list order, each in C order.
* ``arrays`` is a non-empty list or tuple whose arrays all share one dtype; zero-size arrays are
  fine. The buffer holds exactly their total number of elements (64-bit: past 2**31 is fine).
* Without ``scale`` and without a cast, any fixed-size dtype is copied byte for byte.
* ``scale`` (a Python int or float) needs float16, bfloat16 (``ml_dtypes.bfloat16``, CuPy's
  bfloat16), float32 or float64 data (native byte order). The product is computed
  in the wider of the source and target types, with ``scale`` rounded to that type, then rounded
  to the target type: exactly NumPy's ``(a.astype(wide) * scale).astype(target)``. For bfloat16
  that is float32, as NumPy (with ml_dtypes) multiplies bfloat16 by a Python float in float32.
* Casts served: float32 -> float16, float16 -> float32, float64 -> float32, float32 -> float64,
  float32 -> bfloat16 and bfloat16 -> float32. Rounding is to nearest even,
  bit for bit as ``numpy.ndarray.astype``.
* Arrays written to (``out``, the arrays of ``unflatten``) must be writeable, and the buffer must
  not overlap the arrays in memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np
from numpy.typing import DTypeLike

from pycoll.kernels import device, host
from pycoll.kernels.checks import check_list, is_device
from pycoll.kernels.compiled import build_info

if TYPE_CHECKING:
    import cupy

__all__ = ["flatten", "unflatten", "build_info"]

Array = Union[np.ndarray, "cupy.ndarray"]


def flatten(
    arrays: Sequence[Array],
    out: Optional[Array] = None,
    *,
    scale: Optional[float] = None,
    dtype: DTypeLike = None,
) -> Array:
    """Copy ``arrays``, in order, into one contiguous 1-D buffer and return it.

    Args:
        arrays: a non-empty list or tuple of C-contiguous arrays of one dtype: all numpy arrays,
            or all CuPy arrays on one device.
        out: where to write, or None to allocate (on the arrays' device for CuPy arrays). A
            writeable, C-contiguous array of the arrays' kind (any shape) of exactly
            ``sum(a.size for a in arrays)`` elements and dtype ``dtype``; it is returned.
        scale: multiply every element by this number (needs floating-point data; computed in
            the wider of the two dtypes, see the module docstring).
        dtype: the buffer's dtype, default the arrays' dtype; another one casts (see the module
            docstring for the pairs served).

    Returns:
        ``out``, or a new 1-D array of the total size. For CuPy arrays the copy is enqueued on
        the current stream, not finished.

    Raises:
        TypeError: an argument of the wrong type or dtype, host and device arrays mixed, or a
            cast that is not served.
        ValueError: a non-contiguous or read-only array, an empty list, a wrong-sized ``out``,
            one that overlaps the arrays in memory, or CuPy arrays on different devices.
    """
    fn = "pycoll.kernels.flatten"
    check_list(fn, arrays)
    path = device if is_device(arrays[0]) else host
    return path.flatten(fn, arrays, out, scale, dtype)


def unflatten(flat: Array, arrays: Sequence[Array], *, scale: Optional[float] = None) -> None:
    """Copy consecutive slices of ``flat`` into ``arrays``, in place: the inverse of ``flatten``.

    Args:
        flat: a C-contiguous array (any shape) of exactly ``sum(a.size for a in arrays)``
            elements: a numpy array, or a CuPy array on the arrays' device.
        arrays: a non-empty list or tuple of writeable, C-contiguous arrays of one dtype and of
            ``flat``'s kind; ``flat`` is cast to their dtype if the dtypes differ (see the module
            docstring for the pairs).
        scale: multiply every element by this number (needs floating-point data).

    For CuPy arrays the copy is enqueued on the current stream, not finished, when this returns.

    Raises:
        TypeError, ValueError: as ``flatten`` does, with ``flat`` in the place of ``out``.
    """
    fn = "pycoll.kernels.unflatten"
    check_list(fn, arrays)
    path = device if is_device(flat) else host
    path.unflatten(fn, flat, arrays, scale)
