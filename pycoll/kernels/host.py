"""The host path: numpy arrays, checked, then copied by the C++ kernels before the call returns."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import DTypeLike

from pycoll.kernels.checks import HOST, as_dtype, check_flat, check_scale_and_cast, is_device, type_name
from pycoll.kernels.compiled import ext


def flatten(fn: str, arrays: Sequence[Any], out: Optional[np.ndarray], scale: Any,
            dtype: DTypeLike) -> np.ndarray:
    """``pycoll.kernels.flatten`` (named `fn` in errors) for a list that starts with a numpy array."""
    src, total = _check_arrays(fn, arrays, "arrays[0]", writeable=False)
    dst = src if dtype is None else as_dtype(fn, dtype)
    scale = check_scale_and_cast(fn, HOST, scale, src, dst, "the arrays", "dtype")
    if out is None:
        out = np.empty(total, dtype=dst)
    else:
        _check_buffer(fn, "out", out, dst, total, writeable=True)
    ext().flatten(arrays, out, scale)
    return out


def unflatten(fn: str, flat: Any, arrays: Sequence[Any], scale: Any) -> None:
    """``pycoll.kernels.unflatten`` (named `fn` in errors) for a `flat` that is no device array."""
    if not isinstance(flat, np.ndarray):
        raise _not_numpy(fn, "flat", flat, "arrays[0]")
    dst, total = _check_arrays(fn, arrays, "flat", writeable=True)
    _check_buffer(fn, "flat", flat, flat.dtype, total, writeable=False)
    scale = check_scale_and_cast(fn, HOST, scale, flat.dtype, dst, "flat", "the arrays' dtype")
    ext().unflatten(flat, arrays, scale)


def _not_numpy(fn: str, name: str, obj: Any, side: str) -> TypeError:
    """The error for a non-numpy `obj` where `side` (an argument's name), a numpy array, decided
    for the host."""
    if is_device(obj):
        return TypeError(
            f"{fn}: {name} is a device array ({type_name(obj)}), but {side} is a numpy.ndarray; "
            "pass host arrays only or device arrays only"
        )
    return TypeError(
        f"{fn}: {name} is a {type_name(obj)}; need a numpy.ndarray (numpy.asarray(x)) "
        "or a cupy.ndarray"
    )


def _check_arrays(fn: str, arrays: Sequence[Any], side: str, *,
                  writeable: bool) -> Tuple[np.dtype, int]:
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


def _check_buffer(fn: str, name: str, buf: Any, dtype: np.dtype, total: int, *,
                  writeable: bool) -> None:
    if not isinstance(buf, np.ndarray):
        raise _not_numpy(fn, name, buf, "arrays[0]")
    check_flat(fn, name, buf, dtype, total, writeable=writeable)
