"""paddle.nn.functional max_pool1d/2d/3d and avg_pool1d/2d/3d, each one op with a hand-written
backward, over the spatial axes of [N, C, *spatial] (or channels-last) inputs.

Window geometry is paddle 3.3.1's: with ceil_mode the last windows may run past the padded input.
An exclusive average divides by the window's cells inside the input; a non-exclusive one by its
cells from the first padded cell up to the input's end plus the *leading* padding (paddle's kernel
sees one padding per axis, so a window over an asymmetric trailing pad, as 'SAME' makes, is
divided as if that pad were the leading one's size). Those counts are per axis and not clipped at
zero, as in paddle's kernel: a window holding no cell to count (one of padding alone, or one past
the input's end) gives 0 / 0 = NaN. divisor_override rescales the result as paddle does
(out * prod(kernel) / divisor).
"""
from __future__ import annotations

import itertools
import math
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll._fp_quiet import quiet
from pycoll._graph import is_grad_enabled
from pycoll._tensor_ops import as_tensor, needs_grad, op_output, placed, require_floating, value_output
from pycoll.device import array_module
from pycoll.dtypes import is_floating, is_half
from pycoll.kernels import host_math
from pycoll.nn._sliding import (FORMATS, Pads, add_to_windows, channels_first, check_format, crop, int_list,
                                pad_spatial, parse_padding, restore_layout, same_pads, window_cells, windows)
from pycoll.tensor import Tensor
from pycoll.type_info import finfo

Size = Union[int, Sequence[int]]
MaskedResult = Union[Tensor, Tuple[Tensor, Tensor]]


def _geometry(a: Any, kernel_size: Size, stride: Optional[Size], padding: Any, ceil_mode: bool,
              channel_last: bool, nd: int, fn: str) -> Tuple[List[int], List[int], Pads, Pads]:
    """(kernel, stride, explicit pads, pads with the ceil-mode overflow added) over the spatial
    axes of [N, C, *spatial] `a`."""
    kernel = int_list(kernel_size, nd, "kernel_size", fn)
    stride = list(kernel) if stride is None else int_list(stride, nd, "stride", fn)
    if ceil_mode and isinstance(padding, str) and padding.upper() == "VALID":
        raise ValueError(f"{fn}: ceil_mode must be False with padding='VALID'")
    pads = parse_padding(padding, nd, channel_last, fn)
    if pads is None:
        pads = same_pads(a.shape[2:], kernel, stride)
    grown = []
    for n, k, s, (b, e) in zip(a.shape[2:], kernel, stride, pads):
        span = n + b + e - k
        reach = span + (s - 1 if ceil_mode else 0)
        # paddle's count divides in C, rounding toward zero: a kernel up to a stride longer than
        # the padded input still gives one window, over what the input holds
        out = (reach // s if reach >= 0 else -(-reach // s)) + 1
        if out < 1:
            raise ValueError(f"{fn}: kernel_size {kernel} at stride {stride} leaves no window over the padded "
                             f"input {[m + p + q for m, (p, q) in zip(a.shape[2:], pads)]}")
        grown.append((b, e + max((out - 1) * s - span, 0)))
    return kernel, stride, pads, grown


def _along(values: Any, axis: int, nd: int) -> Any:
    """A 1-D array shaped to broadcast along spatial axis `axis` of [..., *spatial] arrays."""
    shape = [1] * nd
    shape[axis] = -1
    return values.reshape(shape)


def _lowest(dtype: Any) -> Any:
    """Where paddle's max starts, so what a window of padding alone gives: float32's lowest
    value for float32 and float64 (paddle 3.3.1's kernel), the dtype's own below that."""
    if is_floating(dtype):
        return max(float(np.finfo(np.float32).min), finfo(dtype).min)  # (as Python floats: no cast overflows)
    return np.iinfo(dtype).min


def _window_max(win: Any) -> Any:
    """The maximum of each window of [N, C, *out, *kernel] `win`, a running maximum over its
    kernel positions (NaN wins, as in paddle's kernel). Of a +0 and a -0 tying for the maximum,
    the sign kept is NumPy's (CuPy's) choice, where paddle keeps the first; `_first_hit`, hence the
    gradient and the mask, follow paddle."""
    xp = array_module(win)
    cells = window_cells(win)
    out = next(cells).copy()
    for cell in cells:
        xp.maximum(out, cell, out=out)
    return out


def _first_hit(win: Any, top: Any) -> Any:
    """The window (row-major) position of the first cell of each window equal to `top` (its
    maximum; where that is NaN, of the first NaN), as paddle's max pool picks the cell that takes
    the gradient. Counts, per window, the positions before that cell."""
    xp = array_module(win)
    nan = is_floating(top.dtype) and bool(xp.isnan(top).any())
    k = math.prod(win.shape[(win.ndim + 2) // 2:])
    pick = xp.zeros(top.shape, dtype=xp.int8 if k <= 127 else xp.int32)
    before = xp.ones(top.shape, dtype=bool)  # no hit yet
    for cell in itertools.islice(window_cells(win), k - 1):  # the last position is where the count stops
        before &= cell != top
        if nan:
            before &= cell == cell  # NaN != NaN: a NaN cell is a hit where the maximum is NaN
        pick += before
    return pick


def max_pool3d(x: Tensor, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
               return_mask: bool = False, ceil_mode: bool = False, data_format: str = "NCDHW",
               name: Optional[str] = None) -> MaskedResult:
    """max_pool2d's rules over D, H and W of x [N, C, D, H, W] (or NDHWC); the mask holds the flat
    index d * H * W + h * W + w of each maximum."""
    return _max_pool(x, kernel_size, stride, padding, return_mask, ceil_mode, data_format, 3, "max_pool3d")


def max_pool2d(x: Tensor, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
               return_mask: bool = False, ceil_mode: bool = False, data_format: str = "NCHW",
               name: Optional[str] = None) -> MaskedResult:
    """The maximum of each window (padding never wins). return_mask (channels first only) also
    gives the int32 flat index h * W + w of each maximum in its input plane; the gradient goes to
    the first maximum of a window, as paddle's."""
    return _max_pool(x, kernel_size, stride, padding, return_mask, ceil_mode, data_format, 2, "max_pool2d")


def max_pool1d(x: Tensor, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
               return_mask: bool = False, ceil_mode: bool = False, name: Optional[str] = None) -> MaskedResult:
    """max_pool2d's rules along the last axis of x [N, C, L]; the mask holds indices into L."""
    return _max_pool(x, kernel_size, stride, padding, return_mask, ceil_mode, "NCL", 1, "max_pool1d")


def _max_pool(x: Tensor, kernel_size: Any, stride: Any, padding: Any, return_mask: bool, ceil_mode: bool,
              data_format: str, nd: int, fn: str) -> MaskedResult:
    x = as_tensor(x)
    channel_last = check_format(data_format, nd, fn)
    x, = placed("_max_pool", x, axes=tuple(range(1, x.ndim - 1)) if channel_last else tuple(range(2, x.ndim)))  # auto-parallel: batch and channel splits stay
    if return_mask and channel_last:
        raise ValueError(f"{fn}: return_mask needs data_format={FORMATS[nd][0]!r}")
    a = channels_first(x._array, nd, channel_last, fn)
    xp = array_module(a)
    kernel, stride, pads, grown = _geometry(a, kernel_size, stride, padding, ceil_mode, channel_last, nd, fn)
    padded = pad_spatial(a, grown, _lowest(a.dtype))
    fast = _host_max_pool(padded, kernel, stride)
    if fast is not None:  # the host kernel: the maxima, their positions and how a gradient goes back
        out, pick, route = fast
        win_shape = out.shape + tuple(kernel)
    else:
        win = windows(padded, kernel, stride)
        win_shape = win.shape
        out = _window_max(win)
        # the window position of each maximum, which the gradient and the mask need (and nothing else)
        pick = _first_hit(win, out) if return_mask or (is_grad_enabled() and needs_grad(x)) else None
    out_sizes, k = win_shape[2:2 + nd], math.prod(kernel)

    def backward(g: Any) -> tuple:
        g = channels_first(g, nd, channel_last, fn)
        ga = route(g) if fast is not None else None
        if ga is None:
            ga = xp.zeros(padded.shape, dtype=g.dtype)
            add_to_windows(ga, ((pick == j) * g for j in range(k)), win_shape, stride)
        return (restore_layout(crop(ga, grown, a.shape[2:]), channel_last),)
    result = op_output(restore_layout(out, channel_last), backward, x)
    if not return_mask:
        return result
    # the flat index into the input of each pick: its window's first cell's, plus the pick's
    # offset from there (a table over the window's positions)
    steps = [math.prod(a.shape[3 + i:]) for i in range(nd)]  # the flat index's step along each axis
    table = sum(xp.asarray(position * step) for position, step in zip(np.indices(kernel), steps)).reshape(-1)
    flat = table.astype(np.int32)[pick]
    for i, (o, s, (b, _), step) in enumerate(zip(out_sizes, stride, grown, steps)):
        flat += _along(((xp.arange(o) * s - b) * step).astype(np.int32), i, nd)
    return result, value_output(flat, f"{fn}_mask", x)


def _host_max_pool(padded: Any, kernel: List[int], stride: List[int]) -> Optional[Tuple[Any, Any, Any]]:
    """(out, pick, route) of a 1-D to 3-D max pool of ``padded`` by the host kernel, where it
    serves it, else None: ``route(g)`` is the gradient over ``padded`` (or None: the general path)."""
    fast = host_math.max_pool(padded, kernel, stride)
    if fast is None:
        return None
    out, pick = fast
    return out, pick, lambda g: host_math.max_pool_grad(g, pick, padded.shape[2:], kernel, stride)


def avg_pool3d(x: Tensor, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
               ceil_mode: bool = False, exclusive: bool = True, divisor_override: Optional[float] = None,
               data_format: str = "NCDHW", name: Optional[str] = None) -> Tensor:
    """The mean of each window over D, H and W (see the module's notes for the divisor)."""
    return _avg_pool(x, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format, 3,
                     "avg_pool3d")


def avg_pool2d(x: Tensor, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
               ceil_mode: bool = False, exclusive: bool = True, divisor_override: Optional[float] = None,
               data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """The mean of each window (see the module's notes for the divisor)."""
    return _avg_pool(x, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format, 2,
                     "avg_pool2d")


def avg_pool1d(x: Tensor, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
               exclusive: bool = True, ceil_mode: bool = False, name: Optional[str] = None) -> Tensor:
    """avg_pool2d's rules along the last axis of x [N, C, L] (paddle's argument order: exclusive
    before ceil_mode)."""
    return _avg_pool(x, kernel_size, stride, padding, ceil_mode, exclusive, None, "NCL", 1, "avg_pool1d")


def _avg_pool(x: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, exclusive: bool,
              divisor_override: Optional[float], data_format: str, nd: int, fn: str) -> Tensor:
    if divisor_override is not None and (isinstance(divisor_override, bool) or not isinstance(
            divisor_override, (int, float)) or divisor_override <= 0):
        raise ValueError(f"{fn}: divisor_override must be a number > 0, got {divisor_override!r}")
    x = require_floating(as_tensor(x), fn)  # an average of integers would be truncated (paddle has no kernel)
    channel_last = check_format(data_format, nd, fn)
    x, = placed("_avg_pool", x, axes=tuple(range(1, x.ndim - 1)) if channel_last else tuple(range(2, x.ndim)))  # auto-parallel: batch and channel splits stay
    a = channels_first(x._array, nd, channel_last, fn)
    xp = array_module(a)
    kernel, stride, pads, grown = _geometry(a, kernel_size, stride, padding, ceil_mode, channel_last, nd, fn)
    padded = pad_spatial(a, grown)
    sums = host_math.sum_pool(padded, kernel, stride)  # the host kernel's, where it serves them
    win = windows(padded, kernel, stride)
    cells = 1  # per axis, in padded coordinates (the input at [b, b + n)): see the module's notes
    for i, (n, k, s, o, (b, _)) in enumerate(zip(a.shape[2:], kernel, stride, win.shape[2:2 + nd], pads)):
        lo, hi = (b, b + n) if exclusive else (0, n + 2 * b)
        start = xp.arange(o) * s
        cells = cells * _along(xp.minimum(start + k, hi) - xp.maximum(start, lo), i, nd)
    with quiet():  # a count of 0 gives NaN, a sum past the dtype's range inf, as paddle's
        scale = 1.0 / cells
        if divisor_override is not None:
            scale = scale * (math.prod(kernel) / divisor_override)
        scale = scale.astype(a.dtype)
        out = (_window_sum(win) if sums is None else sums).astype(a.dtype) * scale

    def backward(g: Any) -> tuple:
        with quiet():  # NaN windows hold padding alone: cropped away below
            g = channels_first(g, nd, channel_last, fn) * scale
        ga = host_math.sum_pool_grad(g, padded.shape[2:], kernel, stride)
        if ga is None:
            ga = xp.zeros(padded.shape, dtype=g.dtype)
            add_to_windows(ga, itertools.repeat(g), win.shape, stride)
        return (restore_layout(crop(ga, grown, a.shape[2:]), channel_last),)
    return op_output(restore_layout(out, channel_last), backward, x)


def _window_sum(win: Any) -> Any:
    """The sum of each window of [N, C, *out, *kernel] `win`, cell by cell in window order as
    paddle's kernel adds them; 16-bit floats add up in float32 (paddle's too), rounded by the caller."""
    cells = window_cells(win)
    first = next(cells)
    total = first.astype(array_module(win).float32 if is_half(first.dtype) else first.dtype)  # a copy
    for cell in cells:
        total += cell
    return total
