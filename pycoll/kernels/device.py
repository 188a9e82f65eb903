"""The device path: CuPy arrays, checked, then one CUDA kernel for the whole list, enqueued on
CuPy's current stream of the arrays' device; without the CUDA kernels in the build, the CuPy
fallback (one CuPy copy per array, same results, a warning once). CuPy is imported only when a
device array comes in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence

import numpy as np
from numpy.typing import DTypeLike

from pycoll._logging import logger
from pycoll.kernels.checks import DEVICE, as_dtype, check_flat, check_scale_and_cast, is_device, type_name
from pycoll.kernels.compiled import cuda_built, ext

if TYPE_CHECKING:
    import cupy

_F32 = np.dtype(np.float32)


def flatten(fn: str, arrays: Sequence[Any], out: Any, scale: Any, dtype: DTypeLike) -> "cupy.ndarray":
    """``pycoll.kernels.flatten`` (named `fn` in errors) for a list that starts with a device array."""
    cp = _cupy(fn, "arrays[0]", arrays[0])
    batch = _DeviceArrays(fn, cp, arrays, "arrays[0]")
    src = batch.dtype
    dst = src if dtype is None else as_dtype(fn, dtype)
    scale = _check_scale_and_cast(fn, scale, src, dst, "the arrays", "dtype")
    if out is None:
        with cp.cuda.Device(batch.device):
            out = cp.empty(batch.total, dtype=dst)
    else:
        batch.check_buffer(fn, cp, "out", out, dst)
    batch.check_overlap(fn, "out", out)
    if cuda_built():
        _run_cuda(cp, "flatten", batch, out, src, dst, scale)
    else:
        _copy_each_cupy(cp, batch.device, arrays, out, src, dst, scale, into_flat=True)
    return out


def unflatten(fn: str, flat: Any, arrays: Sequence[Any], scale: Any) -> None:
    """``pycoll.kernels.unflatten`` (named `fn` in errors) for a device array `flat`."""
    cp = _cupy(fn, "flat", flat)
    if not isinstance(flat, cp.ndarray):
        raise _not_cupy(fn, "flat", flat, "flat")
    batch = _DeviceArrays(fn, cp, arrays, "flat")
    batch.check_buffer(fn, cp, "flat", flat, flat.dtype)
    src, dst = flat.dtype, batch.dtype
    scale = _check_scale_and_cast(fn, scale, src, dst, "flat", "the arrays' dtype")
    batch.check_overlap(fn, "flat", flat)
    if cuda_built():
        _run_cuda(cp, "unflatten", batch, flat, src, dst, scale)
    else:
        _copy_each_cupy(cp, batch.device, arrays, flat, src, dst, scale, into_flat=False)


def _check_scale_and_cast(fn: str, scale: Any, src: np.dtype, dst: np.dtype, src_name: str,
                          dst_name: str) -> Optional[float]:
    """The shared check against what the device serves; the scale comes back rounded by NumPy to
    the dtype the copy computes in, as the kernels use it."""
    value = check_scale_and_cast(fn, DEVICE, scale, src, dst, src_name, dst_name)
    if value is None:
        return None
    with np.errstate(over="ignore"):  # a scale past the type's range is inf there, as in NumPy
        return float(np.asarray(value, dtype=_wide(src, dst)))


def _cupy(fn: str, name: str, obj):
    """CuPy, imported for the device array `obj` (argument `name`)."""
    try:
        import cupy
    except ImportError as exc:
        raise TypeError(
            f"{fn}: {name} is a device array ({type_name(obj)}); pycoll serves device arrays "
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
    if is_device(obj):
        return TypeError(
            f"{fn}: {name} is a device array ({type_name(obj)}) but not a cupy.ndarray; "
            f"pass cupy.asarray({name})"
        )
    return TypeError(f"{fn}: {name} is a {type_name(obj)}; need a cupy.ndarray")


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
        check_flat(fn, name, buf, dtype, self.total, writeable=False)
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


def _wide(src: np.dtype, dst: np.dtype) -> np.dtype:
    """The dtype a device copy computes in: the wider of the two, float32 for bfloat16."""
    wide = src if src.itemsize >= dst.itemsize else dst
    return _F32 if wide.name == "bfloat16" else wide


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
    C = ext()
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
    wider dtype, with `scale` already rounded to it, then rounded once to y's dtype. One
    difference remains: CuPy compiles its kernels with -ftz=true, so float32 (and bfloat16)
    subnormals read or made here become zeros of the same sign, where the kernels keep them."""
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
