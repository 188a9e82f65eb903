"""paddle's global switches: ``set_flags`` / ``get_flags`` (paddle's ``FLAGS_*`` names, values kept
here; pycoll reads only those in ``ACTED_ON``) and ``get_default_device``."""
from __future__ import annotations

from typing import Dict, Sequence, Union

from pycoll import _blas_threads
from pycoll._logging import logger
from pycoll._paddle_flags import CPU_BUILD, GPU_BUILD, FlagValue
from pycoll.device import get_device

_PREFIX = "FLAGS_"
_DEFAULTS: Dict[str, FlagValue] = {**CPU_BUILD, **GPU_BUILD}
_values: Dict[str, FlagValue] = {}  # the flags set, by full name
_said: set = set()  # the flags whose setting has been said to change nothing (once each)
# read by auto_parallel.optimizer; the BLAS's threads (``_blas_threads``)
ACTED_ON = frozenset({"FLAGS_enable_auto_parallel_align_mode", "FLAGS_paddle_num_threads"})


def _known(flag: object, verb: str) -> str:
    if not isinstance(flag, str) or not flag.startswith(_PREFIX) or flag[len(_PREFIX):] not in _DEFAULTS:
        raise ValueError(f"Flag {flag} cannot {verb} its value through this function: it is not one of "
                         f"paddle's public flags (FLAGS_<name>, e.g. FLAGS_check_nan_inf)")
    return flag


def _typed(flag: str, value: object) -> FlagValue:
    """`value` as the type of `flag`'s default: bool, int, float or str; TypeError naming the flag
    for a value that does not convert (paddle's own binding refuses those too)."""
    default = _DEFAULTS[flag[len(_PREFIX):]]
    kind = type(default)
    if kind is str:
        ok = isinstance(value, str)
    elif kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:  # bool and int flags take whole numbers (a bool flag 0 or 1 too)
        ok = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        ok = ok and (kind is int or value in (0, 1))
    if not ok:
        raise TypeError(f"set_flags: {flag} takes a {kind.__name__} value, got {value!r}")
    return kind(value)


def set_flags(flags: Dict[str, Union[bool, str, float]]) -> None:
    """Set paddle's flags, e.g. ``set_flags({'FLAGS_check_nan_inf': True})``: every name must be one
    of paddle's public flags (ValueError otherwise) and every value of its type (TypeError).
    Nothing is set unless all are valid. pycoll acts on those in ``ACTED_ON`` only, and says so
    of the others (once a flag)."""
    if not isinstance(flags, dict):
        raise TypeError("flags in set_flags should be a dict")
    checked = {_known(key, "set"): None for key in flags}
    for key in checked:
        checked[key] = _typed(key, flags[key])
    for key in sorted(set(checked) - _said - ACTED_ON):
        logger.warning("set_flags: pycoll keeps %s for get_flags but does not act on it", key)
        _said.add(key)
    _values.update(checked)
    if "FLAGS_paddle_num_threads" in checked:
        _blas_threads.set_threads(checked["FLAGS_paddle_num_threads"])


def get_flags(flags: Union[str, Sequence[str]]) -> Dict[str, FlagValue]:
    """``{name: value}`` for a flag name or a list/tuple of them: the value set, else paddle's
    default."""
    if isinstance(flags, str):
        flags = [flags]
    elif not isinstance(flags, (list, tuple)):
        raise TypeError(f"Flags in get_flags should be a list, tuple or string, got {type(flags).__name__}")
    return {_known(f, "get"): _values.get(f, _DEFAULTS[f[len(_PREFIX):]]) for f in flags}


def get_default_device() -> str:
    """Where new tensors go: 'cpu' or 'gpu:N' (pycoll's current device)."""
    return get_device()
