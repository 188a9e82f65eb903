"""paddle.device.cuda: what pycoll can say about the CUDA GPUs (through CuPy, when installed).
``import pycoll`` imports this module, so ``pycoll.device.cuda.device_count()`` works as paddle's."""
from typing import Any

from pycoll.device import device_place, gpu_count, import_cupy
from pycoll.device import synchronize as _synchronize


def device_count() -> int:
    """How many GPUs are visible: 0 without CuPy, without a driver or without a GPU."""
    return gpu_count()


def synchronize(device: Any = None) -> None:
    """Wait until the GPU ``device`` (default the current one; an index, 'gpu:N' or a place) has
    finished all its work (paddle's ``device.cuda.synchronize``)."""
    if device is not None and device_place(device)[0] != "gpu":
        raise ValueError(f"device.cuda.synchronize: device={device!r} is not a GPU")
    _synchronize(device)


def empty_cache() -> None:
    """Give the GPU memory CuPy's pools hold unused back to the driver (paddle's
    ``device.cuda.empty_cache``); nothing to do without CuPy."""
    if gpu_count():
        cupy = import_cupy()
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
