"""paddle's ``device.cpu`` module (what ``get_device_module('cpu')`` answers): the CPU as a device
kind. It has no streams of its own, no memory statistics and no device count; the generator
controls are ``pycoll.device``'s (one generator serves every device), named lazily since they
belong to the tensor layer, as ``pycoll.device.cuda`` names them.
"""
from __future__ import annotations

from typing import Any

from pycoll.device.streams import Event, Stream, create_event, create_stream  # noqa: F401 - paddle's names

__all__ = ["Event", "Stream", "create_event", "create_stream", "device_count", "max_memory_allocated",
           "max_memory_reserved", "reset_max_memory_allocated", "reset_max_memory_reserved"]


def device_count() -> int:
    """0, as paddle's: the CPU is not counted as a device."""
    return 0


def _refuse(api: str) -> None:
    raise ValueError(f"The API pycoll.device.{api} is not supported on the CPU: it reports GPU memory "
                     f"(call it on a 'gpu:N' device)")


def max_memory_allocated(device: Any = None) -> int:
    """Refused with paddle's CPU ValueError: there are no CPU memory statistics."""
    _refuse("max_memory_allocated")


def max_memory_reserved(device: Any = None) -> int:
    """Refused with paddle's CPU ValueError: there are no CPU memory statistics."""
    _refuse("max_memory_reserved")


def reset_max_memory_allocated(device: Any = None) -> None:
    """Refused with paddle's CPU ValueError: there are no CPU memory statistics."""
    _refuse("reset_max_memory_allocated")


def reset_max_memory_reserved(device: Any = None) -> None:
    """Refused with paddle's CPU ValueError: there are no CPU memory statistics."""
    _refuse("reset_max_memory_reserved")


def __getattr__(name: str) -> Any:
    """``get_rng_state``, ``set_rng_state``, ``manual_seed``: pycoll.device's."""
    if name in ("get_rng_state", "set_rng_state", "manual_seed"):
        import pycoll.device

        return getattr(pycoll.device, name)
    raise AttributeError(f"module 'pycoll.device.cpu' has no attribute {name!r}")
