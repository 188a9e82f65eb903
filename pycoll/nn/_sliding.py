"""What convolution and pooling share, for 1, 2 or 3 spatial axes: paddle's size and padding
arguments, the move between channel-last and channel-first layouts, sliding windows over the
spatial axes of an [N, C, *spatial] array (a strided view, no copy), whole or one kernel position
at a time, with their adjoint (`fold`, `add_to_windows`), the regrouping of windows into per-group
matrices that convolutions multiply, and per-axis linear maps (adaptive average pooling, resampling).
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll.device import array_module
from pycoll.math_ops import same_dtype

Pads = List[Tuple[int, int]]  # (before, after) per spatial axis

FORMATS = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}  # (channels first, last)


def int_list(value: Any, n: int, name: str, fn: str, minimum: int = 1) -> List[int]:
    """paddle's convert_to_list: an int repeated n times, or a list/tuple of n ints (>= minimum)."""
    items = [value] * n if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(items, (list, tuple)) or len(items) != n \
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= minimum for v in items):
        raise ValueError(f"{fn}: {name} must be an int >= {minimum} or a list of {n} of them, got {value!r}")
    return list(items)


def parse_padding(padding: Union[str, int, Sequence[Any]], nd: int, channel_last: bool, fn: str
                  ) -> Optional[Pads]:
    """paddle's padding argument for `nd` spatial axes as (before, after) pairs; None for 'SAME'
    (whose pairs depend on the input size, see `same_pads`). Accepted: 'SAME', 'VALID', an int, nd
    ints, 2*nd ints (before, after, before, after...) or nd+2 pairs including the zero pairs of the
    batch and channel axes."""
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"{fn}: padding must be 'SAME', 'VALID', an int or a list, got {padding!r}")
        return None if padding.upper() == "SAME" else [(0, 0)] * nd
    if isinstance(padding, (list, tuple)) and len(padding) == nd + 2 \
            and all(isinstance(p, (list, tuple)) for p in padding):
        outer = [padding[0], padding[-1]] if channel_last else list(padding[:2])
        if any(list(p) != [0, 0] for p in outer):
            raise ValueError(f"{fn}: padding of the batch and channel axes must be 0, got {padding!r}")
        inner = padding[1:-1] if channel_last else padding[2:]
        flat = int_list([v for p in inner for v in p], 2 * nd, "padding", fn, minimum=0)
    elif isinstance(padding, (list, tuple)) and len(padding) == 2 * nd:
        flat = int_list(padding, 2 * nd, "padding", fn, minimum=0)
    else:
        flat = [v for v in int_list(padding, nd, "padding", fn, minimum=0) for _ in (0, 1)]
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(nd)]


def same_pads(sizes: Sequence[int], kernel: Sequence[int], stride: Sequence[int]) -> Pads:
    """paddle's 'SAME' padding: ceil(size / stride) outputs, the extra half (rounded up) after."""
    pads = []
    for n, k, s in zip(sizes, kernel, stride):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def check_format(data_format: str, nd: int, fn: str) -> bool:
    """Whether `data_format` puts the channels last; ValueError unless it is paddle's for nd axes."""
    first, last = FORMATS[nd]
    if data_format not in (first, last):
        raise ValueError(f"{fn}: data_format must be {first!r} or {last!r}, got {data_format!r}")
    return data_format == last


def channels_first(a: Any, nd: int, channel_last: bool, fn: str, name: str = "x") -> Any:
    """An input of nd spatial axes (channels first or last) as [N, C, *spatial] (a view)."""
    if a.ndim != nd + 2:
        raise ValueError(f"{fn}: {name} must have {nd + 2} dimensions, got shape {list(a.shape)}")
    return array_module(a).moveaxis(a, -1, 1) if channel_last else a


def restore_layout(a: Any, channel_last: bool) -> Any:
    """The inverse of `channels_first` (on results and gradients), contiguous."""
    xp = array_module(a)
    return xp.ascontiguousarray(xp.moveaxis(a, 1, -1) if channel_last else a)


def conv_operands(x: Any, weight: Any, nd: int, channel_last: bool, fn: str) -> Tuple[Any, Any]:
    """The arrays of a (transposed) convolution's ``x`` (channels first) and weight (Tensors),
    their ranks and dtypes checked."""
    a = channels_first(x._array, nd, channel_last, fn)
    wa = weight._array
    if wa.ndim != nd + 2:
        raise ValueError(f"{fn}: weight must have {nd + 2} dimensions, got shape {list(wa.shape)}")
    same_dtype(fn, a, wa, ("x", "the weight"))
    return a, wa


def windows(a: Any, kernel: Sequence[int], stride: Sequence[int], dilation: Optional[Sequence[int]] = None) -> Any:
    """The view [N, C, *out, *kernel] of every kernel window of [N, C, *spatial] `a` (already padded)."""
    xp = array_module(a)
    nd = len(kernel)
    dilation = dilation or [1] * nd
    out = [(n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(a.shape[2:], kernel, stride, dilation)]
    steps = a.strides[2:]
    return xp.lib.stride_tricks.as_strided(
        a, (*a.shape[:2], *out, *kernel),
        (*a.strides[:2], *(t * s for t, s in zip(steps, stride)), *(t * d for t, d in zip(steps, dilation))))


def window_cells(win: Any) -> Iterator[Any]:
    """The cells of windows [N, C, *out, *kernel] (see `windows`) one kernel position at a time,
    in window (row-major) order: [N, C, *out] views, each holding that position of every window."""
    nd = (win.ndim - 2) // 2
    for pos in itertools.product(*(range(k) for k in win.shape[2 + nd:])):
        yield win[(Ellipsis,) + pos]


def add_to_windows(target: Any, parts: Iterable[Any], shape: Sequence[int], stride: Sequence[int],
                   dilation: Optional[Sequence[int]] = None) -> None:
    """Add, in place and in window order, one [N, C, *out] part per kernel position to that
    position's cells of the windows of shape [N, C, *out, *kernel] over `target` [N, C, *spatial]
    (the adjoint of `windows`: cells that several windows share sum their parts)."""
    nd = len(stride)
    view = windows(target, shape[2 + nd:], stride, dilation)
    view = view[(slice(None), slice(None)) + tuple(slice(0, o) for o in shape[2:2 + nd])]
    for cell, part in zip(window_cells(view), parts):
        cell += part


def fold(cols: Any, shape: Sequence[int], stride: Sequence[int], dilation: Optional[Sequence[int]] = None) -> Any:
    """The adjoint of `windows`: an array of `shape` where each window adds up its entries of
    `cols` [N, C, *out, *kernel] (col2im; one strided slice per kernel position)."""
    out = array_module(cols).zeros(shape, dtype=cols.dtype)
    add_to_windows(out, window_cells(cols), cols.shape, stride, dilation)
    return out


def group_rows(win: Any, groups: int) -> Any:
    """Windows [N, C, *out, *kernel] as per-group matrices [N, groups, C / groups * prod(kernel),
    prod(out)]: a row per channel of the group and kernel cell, over every window position (the
    copy then reads each kernel position's cells a block at a time, and a product with the
    weight's rows comes out channels first, as the output lies)."""
    nd = (win.ndim - 2) // 2
    n, c = win.shape[:2]
    out = win.shape[2:2 + nd]
    w = win.reshape(n, groups, c // groups, *win.shape[2:])
    w = w.transpose(0, 1, 2, *range(3 + nd, 3 + 2 * nd), *range(3, 3 + nd))
    return w.reshape(n, groups, c // groups * math.prod(win.shape[2 + nd:]), math.prod(out))  # (no -1: n may be 0)


def transposed(w: Any) -> Any:
    """[groups, a, b] as [groups, b, a], contiguous: a broadcast operand of a batched product,
    which BLAS takes only so (a transposed view made it 3x slower, measured)."""
    return array_module(w).ascontiguousarray(w.transpose(0, 2, 1))


def windows_of_rows(rows: Any, kernel: Sequence[int], out: Sequence[int]) -> Any:
    """[N, groups, cg * prod(kernel), prod(out)] (a product with the kernel positions' rows
    outermost) as windows [N, groups * cg, *out, *kernel] (a view): each kernel position's cells
    lie together, so `fold` reads each as one block (a layout with the positions innermost made
    it gather them one element in prod(kernel) at a time, several times slower)."""
    nd = len(out)
    n, groups = rows.shape[:2]
    cg = rows.shape[2] // math.prod(kernel)
    w = rows.reshape(n, groups * cg, *kernel, *out)  # (no -1 anywhere: n may be 0)
    return w.transpose(0, 1, *range(2 + nd, 2 + 2 * nd), *range(2, 2 + nd))


def pad_spatial(a: Any, pads: Pads, value: float = 0.0) -> Any:
    """[N, C, *spatial] `a` with pads[i] on spatial axis i filled with `value` (a itself when no padding)."""
    if not any(b or e for b, e in pads):
        return a
    return array_module(a).pad(a, ((0, 0), (0, 0), *pads), constant_values=value)


def crop(a: Any, pads: Pads, sizes: Sequence[int]) -> Any:
    """The inverse of padding [N, C, *spatial] `a` by `pads` to hold `sizes` (a view)."""
    return a[(slice(None), slice(None)) + tuple(slice(b, b + n) for (b, _), n in zip(pads, sizes))]


def apply_axis_maps(a: Any, mats: Sequence[Any], axes: Sequence[int], transposed: bool = False) -> Any:
    """`a` with each axes[i] mapped by the [out, in] matrix mats[i] (by its transpose when
    `transposed`, as gradients are)."""
    xp = array_module(a)
    for mat, ax in zip(mats, axes):
        a = xp.moveaxis(xp.tensordot(a, mat, axes=([ax], [0 if transposed else 1])), -1, ax)
    return a


def apply_axis_taps(a: Any, taps: Sequence[Tuple[Any, Optional[Any]]], axes: Sequence[int]) -> Any:
    """`a` with each axes[i] mapped by taps[i] = (index, weight), both [out, T]: output cell k
    along the axis is sum over t of a[index[k, t]] * weight[k, t], summed in order of t (weight
    None: a gather, every weight 1). The sparse form of apply_axis_maps for maps with a few
    entries a row."""
    xp = array_module(a)
    for (index, weight), ax in zip(taps, axes):
        shape = [1] * a.ndim
        shape[ax] = -1
        out = None
        for t in range(index.shape[1]):
            term = xp.take(a, index[:, t], axis=ax)
            if weight is not None:
                term *= weight[:, t].reshape(shape)
            out = term if out is None else out + term
        a = out
    return a


def transpose_taps(index: np.ndarray, weight: Optional[np.ndarray], n_in: int) -> Tuple[np.ndarray, np.ndarray]:
    """The taps (index, weight) [n_out, T] of a map from n_in cells, transposed: [n_in, R] taps
    that gather, for each input cell, the output cells reading it and their weights (weight None:
    1), padded with weight 0 to the most any cell has. What apply_axis_taps needs to take a
    gradient back through the map."""
    rows = np.repeat(np.arange(index.shape[0]), index.shape[1])
    cells = index.reshape(-1)
    weights = np.ones(cells.size, np.float32) if weight is None else weight.reshape(-1)
    order = np.argsort(cells, kind="stable")
    cells, rows, weights = cells[order], rows[order], weights[order]
    counts = np.bincount(cells, minlength=n_in)
    slot = np.arange(cells.size) - np.repeat(np.cumsum(counts) - counts, counts)
    out_index = np.zeros((n_in, max(int(counts.max(initial=0)), 1)), np.int64)
    out_weight = np.zeros(out_index.shape, weights.dtype)
    out_index[cells, slot] = rows
    out_weight[cells, slot] = weights
    return out_index, out_weight
