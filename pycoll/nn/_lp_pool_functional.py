"""paddle.nn.functional lp_pool1d and lp_pool2d: the power-average pooling (sum over a window of
x ** p) ** (1 / p), composed of pycoll's differentiable ops (pow, pad, average pooling), so the
gradient is paddle's (x / out) ** (p - 1) and create_graph works through it.

Window geometry is max/avg pooling's (`_pool_functional`): padding adds zeros to the sum, and a
ceil_mode window running past the input sums what it covers. As paddle's kernel, x ** p is taken as
it is (a negative x with a fractional p gives NaN), and p = inf gives the window's maximum.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, placed, require_floating
from pycoll.math_ops import pow
from pycoll.nn._pad_functional import pad
from pycoll.nn._pool_functional import _geometry, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from pycoll.nn._sliding import FORMATS, check_format
from pycoll.shape_ops import transpose
from pycoll.tensor import Tensor

__all__ = ["lp_pool1d", "lp_pool2d"]

Size = Union[int, Sequence[int]]

_POOLS = {1: (avg_pool1d, max_pool1d), 2: (avg_pool2d, max_pool2d)}


@param_aliases({"input": "x"})
def lp_pool1d(x: Tensor, norm_type: float, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
              ceil_mode: bool = False, data_format: str = "NCL", name: Optional[str] = None) -> Tensor:
    """(sum of x ** norm_type over each window) ** (1 / norm_type) along L of x [N, C, L] (or NLC).
    As paddle's, a bool given in `padding`'s place (the torch order) is taken as ceil_mode."""
    return _lp_pool(x, norm_type, kernel_size, stride, padding, ceil_mode, data_format, 1, "lp_pool1d")


@param_aliases({"input": "x"})
def lp_pool2d(x: Tensor, norm_type: float, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
              ceil_mode: bool = False, data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """lp_pool1d's rule over H and W of x [N, C, H, W] (or NHWC)."""
    return _lp_pool(x, norm_type, kernel_size, stride, padding, ceil_mode, data_format, 2, "lp_pool2d")


def _lp_pool(x: Tensor, norm_type: float, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
             data_format: str, nd: int, fn: str) -> Tensor:
    if isinstance(padding, bool):  # paddle's decorator: lp_pool2d(x, p, k, s, True) means ceil_mode
        padding, ceil_mode = 0, padding
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float)):
        raise TypeError(f"{fn}: norm_type must be a number, got {norm_type!r}")
    if norm_type == 0:
        raise ValueError(f"{fn}: norm_type cannot be 0")
    x = require_floating(as_tensor(x), fn)
    if x.ndim != nd + 2:
        raise ValueError(f"{fn}: x must be {nd + 2}-D ({FORMATS[nd][0]} or {FORMATS[nd][1]}), got shape {x.shape}")
    channel_last = check_format(data_format, nd, fn)
    to_first = [0, nd + 1] + list(range(1, nd + 1))
    if channel_last:
        x = transpose(x, to_first)
    x, = placed("_lp_pool", x, axes=tuple(range(2, nd + 2)))  # auto-parallel: batch and channel splits stay
    kernel, stride, _, grown = _geometry(x._array, kernel_size, stride, padding, ceil_mode, channel_last, nd, fn)
    average, maximum = _POOLS[nd]
    if math.isinf(norm_type) and norm_type > 0:
        flat = [v for pair in grown for v in pair]
        out = maximum(x, kernel, stride, flat)
    else:
        p = float(norm_type)
        widths = [v for pair in reversed(grown) for v in pair]  # pad's order: the last axis first
        summed = average(pad(pow(x, p), widths), kernel, stride, 0) * math.prod(kernel)
        out = pow(summed, 1.0 / p)
    if channel_last:
        out = transpose(out, [0] + list(range(2, nd + 2)) + [1])
    return out
