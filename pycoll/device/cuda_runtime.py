"""The runtime-level names of paddle 3.3.1's torch-style ``paddle.cuda`` that ``paddle.device`` does
not have: ``cudart``, ``CudaError`` / ``check_error``, ``mem_get_info``, ``nvtx``,
``is_initialized`` and its own ``set_device`` (an int is a GPU index there). Over CuPy:
``cudart()`` is CuPy's runtime module, so its function names are CuPy's (``memGetInfo``,
``profilerStart``...), not paddle's ``cudaMemGetInfo``.
"""
from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any, Tuple

from pycoll.device import (PlaceObject, current_place, gpu_index, import_cupy, is_compiled_with_cuda,
                           set_device as _set_device)

__all__ = ["cudart", "CudaError", "check_error", "mem_get_info", "nvtx", "is_initialized", "set_device"]


def cudart() -> ModuleType:
    """The CUDA runtime module: ``cupy.cuda.runtime`` (RuntimeError where no GPU is visible)."""
    gpu_index(None, "cudart", RuntimeError)
    return import_cupy().cuda.runtime


class CudaError(RuntimeError):
    """A CUDA runtime error code as an exception: CUDA's text for ``code``, then ``(code)``
    (paddle's message, e.g. ``out of memory (2)``)."""

    def __init__(self, code: int) -> None:
        text = str(import_cupy().cuda.runtime.CUDARuntimeError(int(code)))  # 'cudaErrorX: its text'
        super().__init__(f"{text.split(': ', 1)[-1]} ({int(code)})")
        self.code = int(code)


def check_error(res: int) -> None:
    """Raise ``CudaError(res)`` unless ``res`` is CUDA's success code, 0."""
    if isinstance(res, bool) or not isinstance(res, int):
        raise TypeError(f"check_error: res must be an int (a CUDA runtime return code), got {type(res).__name__}")
    if res != 0:
        raise CudaError(res)


def mem_get_info(device: Any = None) -> Tuple[int, int]:
    """``(free, total)`` bytes of the GPU ``device`` (default the current device; an index,
    'gpu:N', 'cuda:N' or a CUDAPlace), from ``cudaMemGetInfo``. ValueError for a device that is
    not a GPU (paddle's ``Expected a cuda device``)."""
    if device is None:
        device = PlaceObject(current_place())
    if isinstance(device, PlaceObject) and device[0] != "gpu":
        raise ValueError(f"mem_get_info: Expected a cuda device, but got: {device}")
    index = gpu_index(device, "mem_get_info")
    cuda = import_cupy().cuda
    with cuda.Device(index):
        free, total = cuda.runtime.memGetInfo()
    return int(free), int(total)


class nvtx:  # noqa: N801 - paddle's name
    """NVTX ranges (shown by Nsight Systems), through CuPy's ``cupy.cuda.nvtx``."""

    @staticmethod
    def range_push(msg: str) -> None:
        """Open a range named ``msg``."""
        if not isinstance(msg, str):
            raise TypeError(f"nvtx.range_push: msg must be a str, got {type(msg).__name__}")
        _nvtx().RangePush(msg)

    @staticmethod
    def range_pop() -> None:
        """Close the most recently opened range."""
        _nvtx().RangePop()


def _nvtx() -> ModuleType:
    if importlib.util.find_spec("cupy") is None:
        raise RuntimeError("nvtx needs CuPy, which is not installed: pip install 'pycoll[cuda12]' (or cuda13)")
    import cupy.cuda.nvtx

    if not cupy.cuda.nvtx.available:
        raise RuntimeError("nvtx: this CuPy was built without NVTX")
    return cupy.cuda.nvtx


def is_initialized() -> bool:
    """Whether pycoll can use a CUDA GPU here (paddle asks whether it was built with one)."""
    return is_compiled_with_cuda()


def set_device(device: Any) -> None:
    """paddle.cuda's ``set_device``: an int is a GPU index (refused while the CPU is the current
    device, as paddle's CPU build does), a str or a place as ``pycoll.set_device`` takes them."""
    if isinstance(device, int) and not isinstance(device, bool):
        if current_place()[0] == "cpu":
            raise ValueError(f"cuda.set_device({device}): an index names a GPU, and the current device is the "
                             f"CPU; pass 'gpu:{device}' to move to a GPU")
        device = ("gpu", device)
    elif not isinstance(device, (str, PlaceObject)):
        raise ValueError(f"Unsupported device type: {type(device)}. Expected int, str or CUDAPlace.")
    _set_device(device)
