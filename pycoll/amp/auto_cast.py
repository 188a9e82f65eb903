"""``auto_cast`` and ``decorate`` (paddle.amp).

paddle computes in float16/bfloat16 under ``auto_cast`` only on accelerators; on the CPU it warns
that it "makes no effect" and computes in float32, and so does pycoll. pycoll has no lists of
low-precision ops yet, so on a GPU too it computes in float32 and says so once: a script written
for paddle's AMP runs unchanged and trains at full precision.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable, Optional

from pycoll.device import current_place, device_place, place_str
from pycoll.logic_ops import is_floating_point

_DTYPES = ("float16", "bfloat16")
_LEVELS = ("O0", "OD", "O1", "O2")
_SAVE_DTYPES = ("float16", "bfloat16", "float32", "float64")

_amp_dtype = "float16"  # the dtype of the auto_cast in force on an accelerator
# the dtype of the last auto_cast entered (enabled or not, on any place), kept after it ends, float32
# before any: paddle's amp state keeps it, and GradScaler.scale, called after the block, reads it
_last_amp_dtype = "float32"
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
        _last_amp_dtype = self._dtype
        if self._enable:
            if on_accelerator():
                _no_low_precision_yet("auto_cast")
                _amp_dtype = self._dtype
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


def autocast(device_type: Any, dtype: str = "float16", enabled: bool = True,
             cache_enabled: bool = True) -> auto_cast:
    """``auto_cast(enable=enabled, dtype=dtype)`` (paddle's ``paddle.autocast`` and
    ``paddle.amp.autocast``); ``device_type`` (required, as paddle's) and ``cache_enabled`` are not
    used."""
    return auto_cast(enable=enabled, dtype=dtype)


def is_autocast_enabled(device_type: Any = None) -> bool:
    """Whether an enabled ``auto_cast`` is in force on an accelerator (False on the CPU, as
    paddle). paddle keeps one AMP state for every device: ``device_type`` is taken, not used."""
    return _enabled


def get_autocast_dtype(device_type: Any = None) -> str:
    """The dtype of the ``auto_cast`` in force on an accelerator ('float16' otherwise, as paddle);
    ``device_type`` as ``is_autocast_enabled``'s."""
    return _amp_dtype


def last_autocast_dtype() -> str:
    """The dtype of the last ``auto_cast`` entered, also once it has ended ('float32' before any)."""
    return _last_amp_dtype


def decorate(models: Any, optimizers: Any = None, level: str = "O1", dtype: str = "float16",
             master_weight: Optional[bool] = None, save_dtype: Optional[str] = None,
             master_grad: bool = False, excluded_layers: Any = None) -> Any:
    """paddle's ``amp.decorate``: for level O2 paddle casts the models' parameters to ``dtype``
    (keeping float32 master weights in the optimizers) on accelerators; pycoll keeps them float32
    (see the module docstring). ``save_dtype`` casts what the models' ``state_dict()`` gives at
    O2 on an accelerator, as paddle's. Returns ``models``, or ``(models, optimizers)`` when
    optimizers are given, as paddle does. Arguments are checked as paddle's dygraph checks them
    (its ``level`` and ``dtype`` exactly as spelt, unlike ``auto_cast``'s)."""
    if level not in ("O1", "O2"):
        raise ValueError(f"decorate: level should be O1 or O2 (O1 represents AMP train mode, O2 pure "
                         f"float16/bfloat16 train mode), got {level!r}")
    if dtype not in _DTYPES:
        raise ValueError(f"decorate: dtype only supports 'float16' or 'bfloat16', got {dtype!r}")
    layers = _all_of(models, "models", lambda m: hasattr(m, "sublayers") and hasattr(m, "parameters"),
                     "a single model or a list of models (Layers)")
    if optimizers is not None:
        _all_of(optimizers, "optimizers", lambda o: hasattr(o, "step") and hasattr(o, "_parameter_list"),
                "a single optimizer or a list of optimizers")
    if save_dtype is not None and save_dtype not in _SAVE_DTYPES:
        raise ValueError(f"decorate: save_dtype can only be float16, bfloat16, float32 or float64, got {save_dtype!r}")
    if level == "O2" and on_accelerator():
        _no_low_precision_yet("decorate(level='O2')")
        if save_dtype is not None:
            for model in layers:
                for layer in model.sublayers(include_self=True):
                    layer.register_state_dict_hook(_SavedAs(save_dtype))
    return models if optimizers is None else (models, optimizers)


amp_decorate = decorate


def _all_of(given: Any, name: str, is_one: Callable[[Any], bool], what: str) -> list:
    """``given`` (one object or a list) as a list; TypeError naming ``name`` unless each is one."""
    items = list(given) if isinstance(given, list) else [given]
    if not items or not all(is_one(item) for item in items):
        raise TypeError(f"decorate: {name} must be either {what}, got {type(given).__name__}")
    return items


class _SavedAs:
    """A state_dict hook: each floating-point entry cast to ``dtype`` (paddle's StateDictHook)."""

    def __init__(self, dtype: str):
        self._dtype = dtype

    def __call__(self, state_dict: dict) -> None:
        for key, value in state_dict.items():
            if is_floating_point(value):
                cast = value.astype(self._dtype)
                cast.name = value.name
                state_dict[key] = cast


def is_float16_supported(device: Optional[str] = None) -> bool:
    """Whether AMP runs in float16 on ``device`` (default: the current place): False, for now (see
    the module docstring)."""
    _place_of(device, "is_float16_supported")
    return False


def is_bfloat16_supported(device: Optional[str] = None) -> bool:
    """Whether ``device`` (default: the current place) supports bfloat16 AMP, as paddle answers
    it: True on the CPU (where paddle's and pycoll's ``auto_cast`` compute in float32 all the same);
    False on a GPU, for now (see the module docstring)."""
    return _place_of(device, "is_bfloat16_supported")[0] == "cpu"


def _place_of(device: Any, fn: str) -> Any:
    """``device`` (a place's name, a Place, or None: the current place) as a place."""
    if device is not None and not isinstance(device, str) and not hasattr(device, "is_cpu_place"):
        raise ValueError(f"{fn}: device must be a str such as 'cpu' or 'gpu:0', a Place, or None, got {device!r}")
    return device_place(device)  # a bad name is refused, as paddle's
