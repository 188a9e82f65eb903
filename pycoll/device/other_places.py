"""paddle's place classes for memory and devices pycoll puts no tensors on: ``CUDAPinnedPlace``,
``XPUPlace``, ``XPUPinnedPlace``, ``IPUPlace`` and ``CustomPlace``. They are ``Place`` classes, so
``isinstance(place, XPUPlace)`` answers (False for every place pycoll hands out).

``CUDAPinnedPlace()`` is made where a GPU is visible, as paddle's CUDA build makes it, and refused
on a CPU-only machine with paddle's CPU build's RuntimeError; pycoll keeps host tensors in NumPy's
(pageable) memory and has no pinned place to put one in, so ``set_device``, ``to_tensor(place=)``
and the like refuse it. pycoll runs on no Kunlun XPU, Graphcore IPU or plug-in device: those
classes refuse to be made, as paddle's builds without such devices do (ValueError, and
RuntimeError for ``XPUPinnedPlace``, paddle's errors on its CPU build).
"""
from __future__ import annotations

from typing import Any

from pycoll.device import gpu_count
from pycoll.device.places import Place

__all__ = ["CUDAPinnedPlace", "XPUPlace", "XPUPinnedPlace", "IPUPlace", "CustomPlace"]

_ONLY = "pycoll runs on CPUs and CUDA GPUs only; use CPUPlace() or CUDAPlace(n)"


def _index(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return value


class CUDAPinnedPlace(Place):
    """paddle's ``CUDAPinnedPlace()``: page-locked host memory, ``Place(gpu_pinned)``."""

    __slots__ = ()

    def __new__(cls) -> "CUDAPinnedPlace":
        if gpu_count() == 0:
            raise RuntimeError("Cannot use CUDAPinnedPlace in CPU only version: CuPy sees no GPU here "
                               "(no GPU, no driver, or CuPy is not installed)")
        return tuple.__new__(cls, ("gpu_pinned", 0))

    def __repr__(self) -> str:
        return "Place(gpu_pinned)"

    def text(self) -> str:
        return "gpu_pinned"

    def __reduce__(self) -> tuple:
        return (CUDAPinnedPlace, ())


class XPUPlace(Place):
    """paddle's ``XPUPlace(dev_id)``: refused, pycoll runs on no Kunlun XPU."""

    __slots__ = ()

    def __new__(cls, dev_id: int) -> "XPUPlace":
        raise ValueError(f"XPUPlace({_index('dev_id', dev_id)}): {_ONLY}")


class XPUPinnedPlace(Place):
    """paddle's ``XPUPinnedPlace()``: refused, pycoll runs on no Kunlun XPU."""

    __slots__ = ()

    def __new__(cls) -> "XPUPinnedPlace":
        raise RuntimeError(f"Cannot use XPUPinnedPlace: {_ONLY}")


class IPUPlace(Place):
    """paddle's ``IPUPlace()``: refused, pycoll runs on no Graphcore IPU."""

    __slots__ = ()

    def __new__(cls) -> "IPUPlace":
        raise ValueError(f"IPUPlace(): {_ONLY}")


class CustomPlace(Place):
    """paddle's ``CustomPlace(device_type, device_id)``: refused, pycoll has no plug-in devices
    (paddle: the device type is not registered as a custom device)."""

    __slots__ = ()

    def __new__(cls, device_type: str, device_id: int) -> "CustomPlace":
        if not isinstance(device_type, str):
            raise TypeError(f"device_type must be a str like 'npu', got {type(device_type).__name__}")
        raise ValueError(f"CustomPlace({device_type!r}, {_index('device_id', device_id)}): {device_type!r} is not "
                         f"a registered custom device; {_ONLY}")
