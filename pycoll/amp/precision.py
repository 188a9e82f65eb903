"""``auto_cast`` and ``decorate`` (paddle.amp).

paddle computes in float16/bfloat16 under ``auto_cast`` only on accelerators; on the CPU it warns
that it "makes no effect" and computes in float32, and so does pycoll. pycoll has no lists of
low-precision ops yet, so on a GPU too it computes in float32 and says so once: a script written
for paddle's AMP runs unchanged and trains at full precision.
"""
from __future__ import annotations

import warnings
from typing import Any, Iterable, Optional

from pycoll.device import current_place, device_place, place_str

_DTYPES = ("float16", "bfloat16")
_LEVELS = ("O0", "OD", "O1", "O2")

_amp_dtype = "float16"  # the dtype of the auto_cast in force on an accelerator
# the dtype of the last auto_cast entered on an accelerator, kept after it ends: paddle's tracer
# keeps it, and GradScaler.scale, called after the block, reads it
_last_amp_dtype = "float16"
_enabled = False


def place_name() -> str:
    return f"Place({place_str(current_place())})"  # as tensors print it


def on_accelerator() -> bool:
    """Whether paddle would run AMP here (a GPU place)."""
    return current_place()[0] == "gpu"


def _no_low_precision_yet(what: str) -> None:
    warnings.warn(f"{what}: pycoll has no float16/bfloat16 op lists yet; it computes in float32 on "
                  f"{place_name()}", stacklevel=3)


def _check(level: Any, dtype: Any) -> tuple:
    """(level, dtype) in paddle's spelling ('o1' is 'O1', 'BFLOAT16' 'bfloat16', as paddle takes
    them); ValueError for others."""
    spelled = (level.upper() if isinstance(level, str) else level, dtype.lower() if isinstance(dtype, str) else dtype)
    if spelled[0] not in _LEVELS:
        raise ValueError(f"level must be one of {list(_LEVELS)}, got {level!r}")
    if spelled[1] not in _DTYPES:
        raise ValueError(f"dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    return spelled


class auto_cast:
    """Context manager (and decorator) for paddle's automatic mixed precision:
    ``with pycoll.amp.auto_cast(): loss = model(x)`` (see the module docstring for what it does
    here). ``is_autocast_enabled()`` and ``get_autocast_dtype()`` report it inside."""

    def __init__(self, enable: bool = True, custom_white_list: Optional[Iterable[str]] = None,
                 custom_black_list: Optional[Iterable[str]] = None, level: str = "O1",
                 dtype: str = "float16", use_promote: bool = True):
        level, dtype = _check(level, dtype)
        overlap = set(custom_white_list or ()) & set(custom_black_list or ())
        if overlap:
            raise ValueError(f"custom_white_list and custom_black_list both name {sorted(overlap)}")
        self._args = (enable, custom_white_list, custom_black_list, level, dtype, use_promote)
        self._enable = bool(enable) and level != "O0"
        self._dtype = dtype

    def __enter__(self) -> "auto_cast":
        global _amp_dtype, _enabled, _last_amp_dtype
        self._previous = (_amp_dtype, _enabled)
        if self._enable:
            if on_accelerator():
                _no_low_precision_yet("auto_cast")
                _amp_dtype = _last_amp_dtype = self._dtype
            else:
                warnings.warn(f"amp_guard can only be enabled on CUDAPlace, XPUPlace, and CustomPlace, current "
                              f"place is {place_name()}, so it makes no effect.", stacklevel=2)
        _enabled = self._enable and on_accelerator()
        return self

    def __exit__(self, *exc: Any) -> None:
        global _amp_dtype, _enabled
        _amp_dtype, _enabled = self._previous

    def __call__(self, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with auto_cast(*self._args):
                return fn(*args, **kwargs)
        return wrapper


amp_guard = auto_cast


def is_autocast_enabled() -> bool:
    """Whether an enabled ``auto_cast`` is in force on an accelerator (False on the CPU, as paddle)."""
    return _enabled


def get_autocast_dtype() -> str:
    """The dtype of the ``auto_cast`` in force on an accelerator ('float16' otherwise, as paddle)."""
    return _amp_dtype


def last_autocast_dtype() -> str:
    """The dtype of the last ``auto_cast`` entered on an accelerator, also once it has ended."""
    return _last_amp_dtype


def decorate(models: Any, optimizers: Any = None, level: str = "O1", dtype: str = "float16",
             master_weight: Optional[bool] = None, save_dtype: Optional[str] = None,
             master_grad: bool = False, excluded_layers: Any = None) -> Any:
    """paddle's ``amp.decorate``: for level O2 paddle casts the models' parameters to ``dtype``
    (keeping float32 master weights in the optimizers) on accelerators; pycoll keeps them float32
    (see the module docstring). Returns ``models``, or ``(models, optimizers)`` when optimizers are
    given, as paddle does."""
    level, dtype = _check(level, dtype)
    if level == "O2" and on_accelerator():
        _no_low_precision_yet("decorate(level='O2')")
    return models if optimizers is None else (models, optimizers)


def is_float16_supported(device: Optional[str] = None) -> bool:
    """Whether AMP runs in float16 on ``device`` (default: the current place): False, for now (see
    the module docstring)."""
    device_place(device)  # a bad device is refused, as paddle's
    return False


def is_bfloat16_supported(device: Optional[str] = None) -> bool:
    """Whether ``device`` (default: the current place) supports bfloat16 AMP, as paddle answers
    it: True on the CPU (where paddle's and pycoll's ``auto_cast`` compute in float32 all the same);
    False on a GPU, for now (see the module docstring)."""
    return device_place(device)[0] == "cpu"
