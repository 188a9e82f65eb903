"""``pycoll.amp``: paddle's automatic-mixed-precision API (``auto_cast``, ``decorate``,
``GradScaler``) and ``debugging`` (NaN/Inf checks, op counts). What it does here: see the
docstrings of ``auto_cast`` (the module) and ``grad_scaler``."""
from pycoll.amp.auto_cast import (amp_decorate, amp_guard, auto_cast, autocast, decorate, get_autocast_dtype,
                                  is_autocast_enabled, is_bfloat16_supported, is_float16_supported)
from pycoll.amp.grad_scaler import AmpScaler, GradScaler
from pycoll.amp import debugging

get_autocast_cpu_dtype = get_autocast_gpu_dtype = get_autocast_dtype

__all__ = ["AmpScaler", "GradScaler", "amp_decorate", "amp_guard", "autocast", "debugging", "auto_cast", "decorate",
           "get_autocast_cpu_dtype",
           "get_autocast_dtype", "get_autocast_gpu_dtype", "is_autocast_enabled", "is_bfloat16_supported",
           "is_float16_supported"]
