"""paddle 3.3's torch-style AMP names at the top level (``pycoll.autocast``,
``pycoll.is_autocast_enabled``, ``pycoll.get_autocast_dtype`` and its cpu/gpu forms): the functions
of ``pycoll.amp``. paddle keeps one AMP state for every device, so ``device_type`` is taken and,
as paddle's, not used."""
from __future__ import annotations

from pycoll.amp.auto_cast import autocast, get_autocast_dtype, is_autocast_enabled

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "get_autocast_cpu_dtype",
           "get_autocast_gpu_dtype"]

get_autocast_cpu_dtype = get_autocast_gpu_dtype = get_autocast_dtype  # paddle's aliases
