"""paddle.device.cuda: pycoll's CUDA GPUs (through CuPy, when installed). ``import pycoll``
imports this module, so ``pycoll.device.cuda.device_count()`` works as paddle's.

The streams, events, memory statistics and properties are ``pycoll.device``'s own (paddle's
``device.cuda.Stream`` and ``device.Stream`` are one class here); the generator controls
(``get_rng_state``, ``set_rng_state``, ``manual_seed``) are ``pycoll.device``'s too, named lazily
since they belong to the tensor layer.
"""
from typing import Any

from pycoll.device import device_place
from pycoll.device import synchronize as _synchronize
from pycoll.device.memory_stats import (empty_cache, max_memory_allocated, max_memory_reserved,  # noqa: F401
                                        memory_allocated, memory_reserved, memory_summary,
                                        reset_max_memory_allocated, reset_max_memory_reserved)
from pycoll.device.properties import (device_count, get_device_capability, get_device_name,  # noqa: F401
                                      get_device_properties)
from pycoll.device.streams import (Event, Stream, create_event, create_stream, current_stream,  # noqa: F401
                                   stream_guard)

__all__ = ["Stream", "Event", "current_stream", "synchronize", "device_count", "empty_cache",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "stream_guard", "get_device_properties", "get_device_name", "get_device_capability",
           "reset_max_memory_allocated", "reset_max_memory_reserved", "memory_summary",
           "create_stream", "create_event"]


def synchronize(device: Any = None) -> None:
    """Wait until the GPU ``device`` (default the current one; an index, 'gpu:N' or a place) has
    finished all its work (paddle's ``device.cuda.synchronize``)."""
    if device is not None and device_place(device)[0] != "gpu":
        raise ValueError(f"device.cuda.synchronize: device={device!r} is not a GPU")
    _synchronize(device)


def __getattr__(name: str) -> Any:
    """``get_rng_state``, ``set_rng_state``, ``manual_seed``: pycoll.device's (one generator
    serves every device, see pycoll.random)."""
    if name in ("get_rng_state", "set_rng_state", "manual_seed"):
        import pycoll.device

        return getattr(pycoll.device, name)
    raise AttributeError(f"module 'pycoll.device.cuda' has no attribute {name!r}")
