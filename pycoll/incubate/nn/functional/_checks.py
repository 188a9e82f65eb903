"""Argument checks the fused functions share: the quantised-output arguments pycoll does not
implement, the dropout arguments, and the first normalised axis."""
from __future__ import annotations

from typing import Any

_MODES = ("upscale_in_train", "downscale_in_infer")


def refuse_quant(fn: str, quant_scale: Any) -> None:
    """paddle's fused kernels write int8 when quant_scale > 0 (a GPU inference path); pycoll
    computes the floating-point result only and says so instead of quantising silently."""
    if isinstance(quant_scale, bool) or not isinstance(quant_scale, (int, float)):
        raise TypeError(f"{fn}: quant_scale must be a number, got {quant_scale!r}")
    if quant_scale > 0:
        raise NotImplementedError(f"{fn}: quant_scale={quant_scale} asks for an int8 output, which pycoll does not "
                                  f"implement; leave quant_scale <= 0 (the default -1) for the floating-point result")


def check_dropout(fn: str, name: str, p: Any, mode: str) -> None:
    """p a number in [0, 1] and mode one of paddle's two dropout modes."""
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number in [0, 1], got {p!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: {name} must be in [0, 1], got {p}")
    if mode not in _MODES:
        raise ValueError(f"{fn}: mode must be 'upscale_in_train' or 'downscale_in_infer', got {mode!r}")


def begin_axis(fn: str, begin_norm_axis: Any, ndim: int) -> int:
    """begin_norm_axis in [-ndim, ndim) as a non-negative axis (paddle's rule)."""
    if isinstance(begin_norm_axis, bool) or not isinstance(begin_norm_axis, int) \
            or not -ndim <= begin_norm_axis < ndim:
        raise ValueError(f"{fn}: begin_norm_axis must be an int in [{-ndim}, {ndim}) for a {ndim}-D x, "
                         f"got {begin_norm_axis!r}")
    return begin_norm_axis % ndim
