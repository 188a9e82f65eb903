"""Argument checks shared by the optimizers and the learning-rate schedulers: a wrong type is a
TypeError, a value out of range a ValueError, and both name the argument."""
from __future__ import annotations

import numbers
from typing import Any, Optional


def real(value: Any, name: str, low: Optional[float] = None, high: Optional[float] = None,
         low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a float, checked against ``[low, high]`` (an end left open with ``*_open``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    too_low = low is not None and (v <= low if low_open else v < low)
    too_high = high is not None and (v >= high if high_open else v > high)
    if too_low or too_high:
        lo = "-inf" if low is None else f"{low}"
        hi = "inf" if high is None else f"{high}"
        span = f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
        raise ValueError(f"{name} must be in {span}, got {value!r}")
    return v


def integer(value: Any, name: str, low: Optional[int] = None) -> int:
    """``value`` as an int (a bool is refused), at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)
