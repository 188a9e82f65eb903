"""Fused flatten / unflatten: many arrays through one contiguous buffer, in one call.

This is how gradient buckets are packed for a collective and unpacked after it: ``flatten`` copies
a list of arrays into one 1-D buffer (optionally scaled and cast on the way), ``unflatten`` copies
the buffer's consecutive slices back into the arrays, in place. The copies run in pycoll's compiled
kernels (``pycoll._C``) with the GIL released; this module is their only caller and checks every
argument first.

Buffer rules (for every array passed in, ``arrays``, ``out`` and ``flat``):

* numpy.ndarray, C-contiguous, any shape; arrays are taken in list order, each in C order.
* ``arrays`` is a non-empty list or tuple whose arrays all share one dtype; zero-size arrays are
  fine. The buffer holds exactly their total number of elements (64-bit: past 2**31 is fine).
* Without ``scale`` and without a cast, any fixed-size dtype is copied byte for byte.
* ``scale`` (a Python int or float) needs float16, float32 or float64 data (native byte order).
  The product is computed in the wider of the source and target types, with ``scale`` rounded to
  that type, then rounded to the target type: exactly NumPy's
  ``(a.astype(wide) * scale).astype(target)``.
* Casts served: float32 -> float16, float16 -> float32, float64 -> float32, float32 -> float64.
  float16 rounding is to nearest even, bit for bit as ``numpy.ndarray.astype``.
* Arrays written to (``out``, the arrays of ``unflatten``) must be writeable, and the buffer must
  not overlap the arrays in memory.

This build serves numpy arrays on the host; device (CuPy) arrays are refused with a TypeError.
"""

from __future__ import annotations

import numbers
from typing import Optional, Sequence, Tuple

import numpy as np
from numpy.typing import DTypeLike

__all__ = ["flatten", "unflatten", "build_info"]

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_FLOATS = (_F16, _F32, _F64)
_CASTS = ((_F32, _F16), (_F16, _F32), (_F64, _F32), (_F32, _F64))
_CASTS_TEXT = "float32->float16, float16->float32, float64->float32, float32->float64"


def _ext():
    """pycoll._C, imported on first use so that ``import pycoll`` works without it."""
    try:
        from pycoll import _C
    except ImportError as exc:
        raise ImportError(
            "pycoll.kernels: the compiled kernels (pycoll._C) are not built or do not load "
            f"({exc}); build them with `pip install -e .` in the source tree"
        ) from exc
    return _C


def build_info() -> dict:
    """What this build of the compiled kernels contains, e.g.
    ``{"host_kernels": True, "cuda_kernels": False, "compiler": "gcc 12.2.0", "pybind11": "3.1.0",
    "cxx_standard": 201703}``."""
    return dict(_ext().build_info())


def flatten(
    arrays: Sequence[np.ndarray],
    out: Optional[np.ndarray] = None,
    *,
    scale: Optional[float] = None,
    dtype: DTypeLike = None,
) -> np.ndarray:
    """Copy ``arrays``, in order, into one contiguous 1-D buffer and return it.

    Args:
        arrays: a non-empty list or tuple of C-contiguous numpy arrays of one dtype.
        out: where to write, or None to allocate. A writeable, C-contiguous array (any shape) of
            exactly ``sum(a.size for a in arrays)`` elements and dtype ``dtype``; it is returned.
        scale: multiply every element by this number (needs floating-point data; computed in
            the wider of the two dtypes, see the module docstring).
        dtype: the buffer's dtype, default the arrays' dtype; another one casts (see the module
            docstring for the pairs served).

    Returns:
        ``out``, or a new 1-D array of the total size.

    Raises:
        TypeError: an argument of the wrong type or dtype, or a cast that is not served.
        ValueError: a non-contiguous or read-only array, an empty list, a wrong-sized ``out``
            or one that overlaps the arrays in memory.
    """
    fn = "pycoll.kernels.flatten"
    src, total = _check_arrays(fn, arrays, writeable=False)
    if dtype is None:
        dst = src
    else:
        try:
            dst = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"{fn}: dtype must be a numpy dtype, got {dtype!r}") from None
    scale = _check_scale_and_cast(fn, scale, src, dst, "the arrays", "dtype")
    if out is None:
        out = np.empty(total, dtype=dst)
    else:
        _check_buffer(fn, "out", out, dst, total, writeable=True)
    _ext().flatten(arrays, out, scale)
    return out


def unflatten(
    flat: np.ndarray, arrays: Sequence[np.ndarray], *, scale: Optional[float] = None
) -> None:
    """Copy consecutive slices of ``flat`` into ``arrays``, in place: the inverse of ``flatten``.

    Args:
        flat: a C-contiguous numpy array (any shape) of exactly ``sum(a.size for a in arrays)``
            elements.
        arrays: a non-empty list or tuple of writeable, C-contiguous numpy arrays of one dtype;
            ``flat`` is cast to it if the dtypes differ (see the module docstring for the pairs).
        scale: multiply every element by this number (needs floating-point data).

    Raises:
        TypeError: an argument of the wrong type or dtype, or a cast that is not served.
        ValueError: a non-contiguous or read-only array, an empty list, a wrong-sized ``flat``
            or one that overlaps the arrays in memory.
    """
    fn = "pycoll.kernels.unflatten"
    dst, total = _check_arrays(fn, arrays, writeable=True)
    if not isinstance(flat, np.ndarray):
        raise _not_numpy(fn, "flat", flat)
    _check_buffer(fn, "flat", flat, flat.dtype, total, writeable=False)
    scale = _check_scale_and_cast(fn, scale, flat.dtype, dst, "flat", "the arrays' dtype")
    _ext().unflatten(flat, arrays, scale)


# --- argument checks -------------------------------------------------------------------------


def _type_name(obj) -> str:
    cls = type(obj)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def _not_numpy(fn: str, name: str, obj) -> TypeError:
    if hasattr(obj, "__cuda_array_interface__"):
        return TypeError(
            f"{fn}: {name} is a device array ({_type_name(obj)}); this build of pycoll's kernels "
            "serves numpy.ndarray only (no CUDA kernels: pycoll.kernels.build_info()"
            "['cuda_kernels'] is False); copy it to the host first"
        )
    return TypeError(
        f"{fn}: {name} is a {_type_name(obj)}; need a numpy.ndarray (numpy.asarray(x))"
    )


def _check_arrays(fn: str, arrays, *, writeable: bool) -> Tuple[np.dtype, int]:
    """The arrays' common dtype and total size, after checking the buffer rules."""
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(
            f"{fn}: arrays must be a list or tuple of numpy.ndarray, got {_type_name(arrays)}"
        )
    if not arrays:
        raise ValueError(f"{fn}: arrays is empty; pass at least one numpy.ndarray")
    dtype = None
    total = 0
    for i, a in enumerate(arrays):
        if not isinstance(a, np.ndarray):
            raise _not_numpy(fn, f"arrays[{i}]", a)
        if dtype is None:
            dtype = a.dtype
            if dtype.hasobject:
                raise TypeError(
                    f"{fn}: arrays have dtype {dtype}, which holds Python objects; "
                    "need a fixed-size dtype"
                )
        elif a.dtype != dtype:
            raise TypeError(
                f"{fn}: arrays[{i}] has dtype {a.dtype}, but arrays[0] has {dtype}; "
                "all arrays must share one dtype"
            )
        flags = a.flags
        if not flags.c_contiguous:
            raise ValueError(
                f"{fn}: arrays[{i}] is not C-contiguous (shape {a.shape}, strides {a.strides}); "
                "pass a contiguous copy (numpy.ascontiguousarray)"
            )
        if writeable and not flags.writeable:
            raise ValueError(f"{fn}: arrays[{i}] is read-only; it is written in place")
        total += a.size
    return dtype, total


def _check_buffer(fn: str, name: str, buf, dtype: np.dtype, total: int, *, writeable: bool) -> None:
    if not isinstance(buf, np.ndarray):
        raise _not_numpy(fn, name, buf)
    if buf.dtype != dtype:
        raise TypeError(
            f"{fn}: {name} has dtype {buf.dtype}, need {dtype}"
            + (" (pass dtype= to cast)" if name == "out" else "")
        )
    if not buf.flags.c_contiguous:
        raise ValueError(
            f"{fn}: {name} is not C-contiguous (shape {buf.shape}, strides {buf.strides}); "
            "pass a contiguous buffer"
        )
    if writeable and not buf.flags.writeable:
        raise ValueError(f"{fn}: {name} is read-only; it is written in place")
    if buf.size != total:
        raise ValueError(
            f"{fn}: {name} has {buf.size} elements (shape {buf.shape}), need exactly {total}, "
            "the arrays' total"
        )


def _check_scale_and_cast(
    fn: str, scale, src: np.dtype, dst: np.dtype, src_name: str, dst_name: str
) -> Optional[float]:
    """Checks the cast src -> dst (named for messages) and the scale; returns the scale as a float
    or None."""
    if src != dst and (src, dst) not in _CASTS:
        raise TypeError(
            f"{fn}: cannot cast {src_name} ({src}) to {dst_name} {dst}; "
            f"the casts served are {_CASTS_TEXT}"
        )
    if scale is None:
        return None
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{fn}: scale must be an int or float, got {_type_name(scale)} ({scale!r})")
    for dt in (src, dst):
        if dt not in _FLOATS:
            raise TypeError(
                f"{fn}: scale needs float16, float32 or float64 data (native byte order), "
                f"got {dt}"
            )
    try:
        return float(scale)
    except OverflowError:
        raise ValueError(f"{fn}: scale {scale!r} is too large for a float") from None
