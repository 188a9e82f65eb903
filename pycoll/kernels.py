"""Fused flatten / unflatten: many arrays through one contiguous buffer, in one call.

This is how gradient buckets are packed for a collective and unpacked after it: ``flatten`` copies
a list of arrays into one 1-D buffer (optionally scaled and cast on the way), ``unflatten`` copies
the buffer's consecutive slices back into the arrays, in place. The copies run in pycoll's compiled
kernels (``pycoll._C``) with the GIL released; this module is their only caller and checks every
argument first.

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
* ``scale`` (a Python int or float) needs float16, float32 or float64 data (native byte order), or
  on the device also bfloat16 (``ml_dtypes.bfloat16``, CuPy's bfloat16). The product is computed
  in the wider of the source and target types, with ``scale`` rounded to that type, then rounded
  to the target type: exactly NumPy's ``(a.astype(wide) * scale).astype(target)``. For bfloat16
  that is float32, as NumPy (with ml_dtypes) multiplies bfloat16 by a Python float in float32.
* Casts served: float32 -> float16, float16 -> float32, float64 -> float32, float32 -> float64;
  on the device also float32 -> bfloat16 and bfloat16 -> float32. Rounding is to nearest even,
  bit for bit as ``numpy.ndarray.astype``.
* Arrays written to (``out``, the arrays of ``unflatten``) must be writeable, and the buffer must
  not overlap the arrays in memory.
"""

from __future__ import annotations

import functools
import numbers
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import DTypeLike

from pycoll._logging import logger

if TYPE_CHECKING:
    import cupy

__all__ = ["flatten", "unflatten", "build_info"]

Array = Union[np.ndarray, "cupy.ndarray"]

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_FLOATS = (_F16, _F32, _F64)
_CASTS = ((_F32, _F16), (_F16, _F32), (_F64, _F32), (_F32, _F64))
_CASTS_TEXT = "float32->float16, float16->float32, float64->float32, float32->float64"

# The device kernels' floating types and casts, by dtype name: bfloat16 is ml_dtypes', which
# NumPy knows only once ml_dtypes is imported.
_DEVICE_FLOATS = ("float16", "bfloat16", "float32", "float64")
_DEVICE_CASTS = {
    ("float32", "float16"), ("float16", "float32"), ("float32", "bfloat16"),
    ("bfloat16", "float32"), ("float64", "float32"), ("float32", "float64"),
}
_DEVICE_CASTS_TEXT = _CASTS_TEXT + ", float32->bfloat16, bfloat16->float32"


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
    ``{"host_kernels": True, "cuda_kernels": True, "nvcc": "13.0.88", "cuda_arch": "75;80;90+PTX",
    "cuda_runtime": "13.0 (static)", "compiler": "gcc 12.2.0", "pybind11": "3.1.0",
    "cxx_standard": 201703}``; without the CUDA kernels, ``"cuda_kernels": False`` and no
    ``nvcc``, ``cuda_arch`` or ``cuda_runtime``."""
    return dict(_ext().build_info())


@functools.lru_cache(maxsize=None)
def _cuda_built() -> bool:
    return bool(_ext().build_info()["cuda_kernels"])


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
    _check_list(fn, arrays)
    if _is_device(arrays[0]):
        return _flatten_device(fn, arrays, out, scale, dtype)
    src, total = _check_arrays(fn, arrays, "arrays[0]", writeable=False)
    dst = src if dtype is None else _dtype(fn, dtype)
    scale = _check_scale_and_cast(fn, scale, src, dst, "the arrays", "dtype")
    if out is None:
        out = np.empty(total, dtype=dst)
    else:
        _check_buffer(fn, "out", out, dst, total, writeable=True)
    _ext().flatten(arrays, out, scale)
    return out


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
        TypeError: an argument of the wrong type or dtype, host and device arrays mixed, or a
            cast that is not served.
        ValueError: a non-contiguous or read-only array, an empty list, a wrong-sized ``flat``,
            one that overlaps the arrays in memory, or CuPy arrays on different devices.
    """
    fn = "pycoll.kernels.unflatten"
    _check_list(fn, arrays)
    if _is_device(flat):
        _unflatten_device(fn, flat, arrays, scale)
        return
    if not isinstance(flat, np.ndarray):
        raise _not_numpy(fn, "flat", flat, "arrays[0]")
    dst, total = _check_arrays(fn, arrays, "flat", writeable=True)
    _check_buffer(fn, "flat", flat, flat.dtype, total, writeable=False)
    scale = _check_scale_and_cast(fn, scale, flat.dtype, dst, "flat", "the arrays' dtype")
    _ext().unflatten(flat, arrays, scale)


# --- argument checks shared by host and device -----------------------------------------------


def _type_name(obj) -> str:
    cls = type(obj)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def _is_device(obj) -> bool:
    """Whether obj is a device array: its type has ``__cuda_array_interface__`` (asked of the type,
    as CuPy builds the interface, stream and all, each time the instance is asked)."""
    return hasattr(type(obj), "__cuda_array_interface__")


def _check_list(fn: str, arrays) -> None:
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(
            f"{fn}: arrays must be a list or tuple of numpy.ndarray or cupy.ndarray, "
            f"got {_type_name(arrays)}"
        )
    if not arrays:
        raise ValueError(f"{fn}: arrays is empty; pass at least one array")


def _dtype(fn: str, dtype: DTypeLike) -> np.dtype:
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{fn}: dtype must be a numpy dtype, got {dtype!r}") from None


def _scale_value(fn: str, scale) -> float:
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{fn}: scale must be an int or float, got {_type_name(scale)} ({scale!r})")
    try:
        return float(scale)
    except OverflowError:
        raise ValueError(f"{fn}: scale {scale!r} is too large for a float") from None


# --- host (numpy) ----------------------------------------------------------------------------


def _not_numpy(fn: str, name: str, obj, side: str) -> TypeError:
    """The error for a non-numpy `obj` where `side` (an argument's name), a numpy array, decided
    for the host."""
    if _is_device(obj):
        return TypeError(
            f"{fn}: {name} is a device array ({_type_name(obj)}), but {side} is a numpy.ndarray; "
            "pass host arrays only or device arrays only"
        )
    return TypeError(
        f"{fn}: {name} is a {_type_name(obj)}; need a numpy.ndarray (numpy.asarray(x)) "
        "or a cupy.ndarray"
    )


def _check_arrays(fn: str, arrays, side: str, *, writeable: bool) -> Tuple[np.dtype, int]:
    """The numpy arrays' common dtype and total size, after checking the buffer rules; `side`
    names the argument that made this a host call."""
    dtype = None
    total = 0
    for i, a in enumerate(arrays):
        if not isinstance(a, np.ndarray):
            raise _not_numpy(fn, f"arrays[{i}]", a, side)
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
        raise _not_numpy(fn, name, buf, "arrays[0]")
    _check_flat(fn, name, buf, dtype, total, writeable=writeable)


def _check_flat(fn: str, name: str, buf, dtype: np.dtype, total: int, *, writeable: bool) -> None:
    """Checks the flat buffer `name` (a host or device array) against the arrays: its dtype,
    layout, writeability and size."""
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
    if writeable and not getattr(buf.flags, "writeable", True):  # CuPy arrays are always writeable
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
    value = _scale_value(fn, scale)
    for dt in (src, dst):
        if dt not in _FLOATS:
            raise TypeError(
                f"{fn}: scale needs float16, float32 or float64 data (native byte order), "
                f"got {dt}"
            )
    return value


# --- device (CuPy) ---------------------------------------------------------------------------


def _cupy(fn: str, name: str, obj):
    """CuPy, imported for the device array `obj` (argument `name`)."""
    try:
        import cupy
    except ImportError as exc:
        raise TypeError(
            f"{fn}: {name} is a device array ({_type_name(obj)}); pycoll serves device arrays "
            f"through CuPy, which does not import ({exc}); install pycoll[cuda13] or "
            "pycoll[cuda12]"
        ) from None
    return cupy


def _not_cupy(fn: str, name: str, obj, side: str) -> TypeError:
    """The error for `obj` where `side` (an argument's name), a device array, decided for the
    device."""
    if isinstance(obj, np.ndarray):
        return TypeError(
            f"{fn}: {name} is a numpy.ndarray, but {side} is a device array; "
            "pass host arrays only or device arrays only"
        )
    if _is_device(obj):
        return TypeError(
            f"{fn}: {name} is a device array ({_type_name(obj)}) but not a cupy.ndarray; "
            f"pass cupy.asarray({name})"
        )
    return TypeError(f"{fn}: {name} is a {_type_name(obj)}; need a cupy.ndarray")


class _DeviceArrays:
    """The CuPy arrays of one call, checked: their dtype, device, data pointers and sizes."""

    def __init__(self, fn: str, cp, arrays, side: str):
        first = arrays[0]
        if not isinstance(first, cp.ndarray):
            raise _not_cupy(fn, "arrays[0]", first, side)
        self.dtype: np.dtype = first.dtype
        self.device: int = first.data.device_id
        self.ptrs: List[int] = []
        self.counts: List[int] = []
        for i, a in enumerate(arrays):  # the hot loop of a call with many arrays: kept lean
            if not isinstance(a, cp.ndarray):
                raise _not_cupy(fn, f"arrays[{i}]", a, side)
            if a.dtype != self.dtype:
                raise TypeError(
                    f"{fn}: arrays[{i}] has dtype {a.dtype}, but arrays[0] has {self.dtype}; "
                    "all arrays must share one dtype"
                )
            # What a.flags.c_contiguous reads, without building a flags object per array.
            if not a._c_contiguous:
                raise ValueError(
                    f"{fn}: arrays[{i}] is not C-contiguous (shape {a.shape}, strides "
                    f"{a.strides}); pass a contiguous copy (cupy.ascontiguousarray)"
                )
            if a.data.device_id != self.device:
                raise ValueError(
                    f"{fn}: arrays[{i}] is on device {a.data.device_id}, but arrays[0] is on "
                    f"device {self.device}; all arrays must be on one device"
                )
            self.ptrs.append(a.data.ptr)
            self.counts.append(a.size)
        self.total = sum(self.counts)

    def check_buffer(self, fn: str, cp, name: str, buf, dtype: np.dtype) -> None:
        """Checks `buf`, the flat buffer named `name`, against the arrays (but for overlap)."""
        if not isinstance(buf, cp.ndarray):
            raise _not_cupy(fn, name, buf, "arrays[0]")
        _check_flat(fn, name, buf, dtype, self.total, writeable=False)
        if buf.data.device_id != self.device:
            raise ValueError(
                f"{fn}: {name} is on device {buf.data.device_id}, but the arrays are on device "
                f"{self.device}; pass a buffer on the arrays' device"
            )

    def check_overlap(self, fn: str, name: str, buf) -> None:
        """Refuses a buffer that overlaps an array (vectorized: lists can be long)."""
        lo = buf.data.ptr
        hi = lo + buf.nbytes
        ptrs = np.asarray(self.ptrs, dtype=np.int64)  # device addresses are below 2**63
        counts = np.asarray(self.counts, dtype=np.int64)
        hits = (counts > 0) & (ptrs < hi) & (ptrs + counts * self.dtype.itemsize > lo)
        if hits.any():
            raise ValueError(
                f"{fn}: {name} overlaps arrays[{int(hits.argmax())}] in memory; "
                "pass distinct buffers"
            )


def _device_float(dt: np.dtype) -> bool:
    return dt.name in _DEVICE_FLOATS and dt.isnative


def _check_device_scale_and_cast(
    fn: str, scale, src: np.dtype, dst: np.dtype, src_name: str, dst_name: str
) -> Optional[float]:
    """Checks the cast src -> dst (named for messages) and the scale; returns the scale rounded
    by NumPy to the dtype the copy computes in, or None."""
    if src != dst and not (
        (src.name, dst.name) in _DEVICE_CASTS and src.isnative and dst.isnative
    ):
        raise TypeError(
            f"{fn}: cannot cast {src_name} ({src}) to {dst_name} {dst}; "
            f"the casts served on the device are {_DEVICE_CASTS_TEXT}"
        )
    if scale is None:
        return None
    value = _scale_value(fn, scale)
    for dt in (src, dst):
        if not _device_float(dt):
            raise TypeError(
                f"{fn}: scale needs float16, bfloat16, float32 or float64 data (native byte "
                f"order), got {dt}"
            )
    with np.errstate(over="ignore"):  # a scale past the type's range is inf there, as in NumPy
        return float(np.asarray(value, dtype=_wide(src, dst)))


def _wide(src: np.dtype, dst: np.dtype) -> np.dtype:
    """The dtype a device copy computes in: the wider of the two, float32 for bfloat16."""
    wide = src if src.itemsize >= dst.itemsize else dst
    return _F32 if wide.name == "bfloat16" else wide


def _flatten_device(fn: str, arrays, out, scale, dtype) -> "cupy.ndarray":
    cp = _cupy(fn, "arrays[0]", arrays[0])
    batch = _DeviceArrays(fn, cp, arrays, "arrays[0]")
    src = batch.dtype
    dst = src if dtype is None else _dtype(fn, dtype)
    scale = _check_device_scale_and_cast(fn, scale, src, dst, "the arrays", "dtype")
    if out is None:
        with cp.cuda.Device(batch.device):
            out = cp.empty(batch.total, dtype=dst)
    else:
        batch.check_buffer(fn, cp, "out", out, dst)
    batch.check_overlap(fn, "out", out)
    if _cuda_built():
        _run_cuda(cp, "flatten", batch, out, src, dst, scale)
    else:
        _copy_each_cupy(cp, batch.device, arrays, out, src, dst, scale, into_flat=True)
    return out


def _unflatten_device(fn: str, flat, arrays, scale) -> None:
    cp = _cupy(fn, "flat", flat)
    if not isinstance(flat, cp.ndarray):
        raise _not_cupy(fn, "flat", flat, "flat")
    batch = _DeviceArrays(fn, cp, arrays, "flat")
    batch.check_buffer(fn, cp, "flat", flat, flat.dtype)
    src, dst = flat.dtype, batch.dtype
    scale = _check_device_scale_and_cast(fn, scale, src, dst, "flat", "the arrays' dtype")
    batch.check_overlap(fn, "flat", flat)
    if _cuda_built():
        _run_cuda(cp, "unflatten", batch, flat, src, dst, scale)
    else:
        _copy_each_cupy(cp, batch.device, arrays, flat, src, dst, scale, into_flat=False)


def _copy_each_cupy(cp, device: int, arrays, flat, src, dst, scale, into_flat: bool) -> None:
    """The fallback where the CUDA kernels were not built: CuPy copies, one array at a time,
    into ``flat`` (flatten) or out of it (unflatten)."""
    _warn_fallback()
    with cp.cuda.Device(device):
        flat = flat.reshape(-1)
        offset = 0
        for a in arrays:
            part, whole = flat[offset : offset + a.size], a.reshape(-1)
            if into_flat:
                _copy_cupy(whole, part, src, dst, scale)
            else:
                _copy_cupy(part, whole, src, dst, scale)
            offset += a.size


def _run_cuda(cp, direction: str, batch: _DeviceArrays, flat, src, dst, scale) -> None:
    """One CUDA kernel for the whole batch, on the current stream of the arrays' device."""
    C = _ext()
    counts = batch.counts
    if scale is None and src == dst:  # a byte copy, whatever the dtype
        src_code = dst_code = C.cuda_types["bytes"]
        counts = [n * src.itemsize for n in counts]
    else:
        src_code, dst_code = C.cuda_types[src.name], C.cuda_types[dst.name]
    stream = cp.cuda.get_current_stream(batch.device).ptr
    if direction == "flatten":
        C.cuda_flatten(batch.ptrs, counts, src_code, flat.data.ptr, dst_code, scale,
                       batch.device, stream)
    else:
        C.cuda_unflatten(flat.data.ptr, src_code, batch.ptrs, counts, dst_code, scale,
                         batch.device, stream)


_fallback_warned = False


def _warn_fallback() -> None:
    global _fallback_warned
    if not _fallback_warned:
        _fallback_warned = True
        logger.warning(
            "pycoll.kernels: this build of pycoll._C has no CUDA kernels (nvcc was not found "
            "when it was built, or PYCOLL_CUDA=0), so device arrays are copied one at a time "
            "with CuPy, which is slower; reinstall pycoll where nvcc is on PATH "
            "(PYCOLL_CUDA=1 makes the build insist on it)"
        )


def _copy_cupy(x, y, src: np.dtype, dst: np.dtype, scale: Optional[float]) -> None:
    """y[...] = x (both 1-D CuPy arrays of one size), computed as the CUDA kernels do: in the
    wider dtype, with `scale` already rounded to it, then rounded once to y's dtype."""
    if x.size == 0:
        return
    if scale is None and src == dst:
        y.data.copy_from_device_async(x.data, x.nbytes)  # byte for byte, any dtype
        return
    wide = _wide(src, dst)
    v = x.astype(wide, copy=False)
    if scale is not None:
        v = v * wide.type(scale)  # a NumPy scalar keeps the product in `wide`
    y[...] = v.astype(dst, copy=False)
