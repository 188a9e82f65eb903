"""paddle 3.3's torch-style AMP names at the top level (``pycoll.autocast``,
``pycoll.is_autocast_enabled``, ``pycoll.get_autocast_dtype`` and its cpu/gpu forms): thin faces of
``pycoll.amp``'s ``auto_cast`` and its state. paddle keeps one AMP state for every device, so
``device_type`` is taken and, as paddle's, not used."""
from __future__ import annotations

from typing import Any

from pycoll.amp import precision
from pycoll.amp.precision import autocast

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "get_autocast_cpu_dtype",
           "get_autocast_gpu_dtype"]


def is_autocast_enabled(device_type: Any = None) -> bool:
    """Whether an enabled ``auto_cast`` is in force (False on the CPU, where paddle's makes no effect)."""
    return precision.is_autocast_enabled()


def get_autocast_dtype(device_type: Any = None) -> str:
    """The dtype of the ``auto_cast`` in force, 'float16' when none is."""
    return precision.get_autocast_dtype() if precision.is_autocast_enabled() else "float16"


get_autocast_cpu_dtype = get_autocast_gpu_dtype = get_autocast_dtype  # paddle's aliases
