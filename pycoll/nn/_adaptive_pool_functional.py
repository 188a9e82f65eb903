"""paddle.nn.functional adaptive_avg_pool1d/2d/3d and adaptive_max_pool1d/2d/3d: pools whose
windows are set by the output size, each one op with a hand-written backward.

Along an axis of n cells pooled to o, window i spans [floor(i * n / o), ceil((i + 1) * n / o)).
"""
from __future__ import annotations

import itertools
import math
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, op_output, placed, require_floating, value_output
from pycoll.device import array_module, to_module
from pycoll.kernels import host_math
from pycoll.nn._sliding import apply_axis_maps, channels_first, check_format, restore_layout
from pycoll.shape_ops import scatter_add
from pycoll.tensor import Tensor

Size = Union[int, Sequence[Optional[int]]]
MaskedResult = Union[Tensor, Tuple[Tensor, Tensor]]


def _output_size(output_size: Any, sizes: Sequence[int], fn: str) -> List[int]:
    """An adaptive pool's output_size (an int or one per spatial axis, None keeping the input's
    size) as a list over the spatial `sizes`."""
    nd = len(sizes)
    wanted = [output_size] * nd if isinstance(output_size, int) else output_size
    if not isinstance(wanted, (list, tuple)) or len(wanted) != nd or not all(
            s is None or (isinstance(s, int) and not isinstance(s, bool) and s > 0) for s in wanted):
        raise ValueError(f"{fn}: output_size must be an int > 0 or {nd} of them (None keeps the input's), "
                         f"got {output_size!r}")
    return [n if s is None else s for s, n in zip(wanted, sizes)]


def _spans(n: int, o: int) -> List[Tuple[int, int]]:
    return [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]


@param_aliases({"input": "x"})
def adaptive_avg_pool3d(x: Tensor, output_size: Size, data_format: str = "NCDHW",
                        name: Optional[str] = None) -> Tensor:
    """Mean over adaptive windows of x [N, C, D, H, W] (or NDHWC)."""
    return _adaptive_avg_pool(x, output_size, data_format, 3, "adaptive_avg_pool3d")


@param_aliases({"input": "x"})
def adaptive_avg_pool2d(x: Tensor, output_size: Size, data_format: str = "NCHW",
                        name: Optional[str] = None) -> Tensor:
    """Mean over adaptive windows: as averaging matrices on each axis, out = A_h @ x @ A_w^T."""
    return _adaptive_avg_pool(x, output_size, data_format, 2, "adaptive_avg_pool2d")


@param_aliases({"input": "x"})
def adaptive_avg_pool1d(x: Tensor, output_size: int, name: Optional[str] = None) -> Tensor:
    """Mean over adaptive windows along the last axis of x [N, C, L]."""
    return _adaptive_avg_pool(x, output_size, "NCL", 1, "adaptive_avg_pool1d")


def _adaptive_avg_pool(x: Tensor, output_size: Any, data_format: str, nd: int, fn: str) -> Tensor:
    x = require_floating(as_tensor(x), fn)  # an average of integers would be truncated (paddle has no kernel)
    channel_last = check_format(data_format, nd, fn)
    x, = placed("_adaptive_avg_pool", x, axes=tuple(range(1, x.ndim - 1)) if channel_last else tuple(range(2, x.ndim)))  # auto-parallel: batch and channel splits stay
    a = channels_first(x._array, nd, channel_last, fn)
    xp = array_module(a)
    mats = []
    for n, o in zip(a.shape[2:], _output_size(output_size, a.shape[2:], fn)):
        m = np.zeros((o, n))
        for i, (s, e) in enumerate(_spans(n, o)):
            m[i, s:e] = 1.0 / (e - s)
        mats.append(to_module(m.astype(a.dtype), xp))
    axes = list(range(2, 2 + nd))
    out = apply_axis_maps(a, mats, axes)

    def backward(g: Any) -> tuple:
        g = channels_first(g, nd, channel_last, fn)
        return (restore_layout(apply_axis_maps(g, mats, axes, transposed=True), channel_last),)
    return op_output(restore_layout(out, channel_last), backward, x)


@param_aliases({"input": "x", "return_indices": "return_mask"})
def adaptive_max_pool3d(x: Tensor, output_size: Size, return_mask: bool = False,
                        name: Optional[str] = None) -> MaskedResult:
    """Maximum over adaptive windows of x [N, C, D, H, W]; the mask holds the flat index
    d * H * W + h * W + w of each maximum."""
    return _adaptive_max_pool(x, output_size, return_mask, 3, "adaptive_max_pool3d")


@param_aliases({"input": "x", "return_indices": "return_mask"})
def adaptive_max_pool2d(x: Tensor, output_size: Size, return_mask: bool = False,
                        name: Optional[str] = None) -> MaskedResult:
    """Maximum over adaptive windows of NCHW x (one vectorised step per output cell); return_mask
    also gives the int32 flat index h * W + w of each maximum."""
    return _adaptive_max_pool(x, output_size, return_mask, 2, "adaptive_max_pool2d")


@param_aliases({"input": "x", "return_indices": "return_mask"})
def adaptive_max_pool1d(x: Tensor, output_size: Union[int, Sequence[int]], return_mask: bool = False,
                        name: Optional[str] = None) -> MaskedResult:
    """Maximum over adaptive windows along the last axis of x [N, C, L]; the mask holds indices into L."""
    return _adaptive_max_pool(x, output_size, return_mask, 1, "adaptive_max_pool1d")


def _adaptive_max_pool(x: Tensor, output_size: Any, return_mask: bool, nd: int, fn: str) -> MaskedResult:
    x = as_tensor(x)
    x, = placed("_adaptive_max_pool", x, axes=tuple(range(2, x.ndim)))  # auto-parallel: batch and channel splits stay
    a = channels_first(x._array, nd, False, fn)
    xp = array_module(a)
    n, c, *sizes = a.shape
    out_sizes = _output_size(output_size, sizes, fn)
    spans = [_spans(s, o) for s, o in zip(sizes, out_sizes)]
    out = where = None
    # equal bins are max pooling's windows: the kernel's, where its rows of outputs are wide enough
    # to pay (a bin of 1 x 1, 2 x 2 outputs is one argmax over a contiguous block: faster as it is)
    if nd == 2 and out_sizes[1] >= 4 and all(s % o == 0 for s, o in zip(sizes, out_sizes)):
        (kh, kw), width = (s // o for s, o in zip(sizes, out_sizes)), sizes[1]
        fast = host_math.max_pool(a, (kh, kw), (kh, kw))
        if fast is not None:
            out, pick = fast
            rows = xp.arange(out_sizes[0])[:, None] * kh + pick // kw
            where = rows.astype(np.int64) * width + xp.arange(out_sizes[1]) * kw + pick % kw
    if out is None:
        out, where = _bin_maxima(a, sizes, out_sizes, spans)

    def backward(g: Any) -> tuple:
        ga = xp.zeros((n * c, math.prod(sizes)), dtype=g.dtype)
        cells = math.prod(out_sizes)
        scatter_add(ga, (xp.arange(n * c)[:, None], where.reshape(n * c, cells)), g.reshape(n * c, cells))
        return (ga.reshape(a.shape),)
    result = op_output(out, backward, x)
    if not return_mask:
        return result
    return result, value_output(where.astype(np.int32), f"{fn}_mask", x)


def _bin_maxima(a: Any, sizes: Sequence[int], out_sizes: Sequence[int],
                spans: List[List[Tuple[int, int]]]) -> Tuple[Any, Any]:
    """(maxima, where) of adaptive max pooling, bin by bin: each bin's maximum and the flat index
    in its plane of the first cell holding it (np.argmax's: a NaN wins)."""
    xp = array_module(a)
    n, c = a.shape[:2]
    out = xp.empty((n, c, *out_sizes), dtype=a.dtype)
    where = xp.empty((n, c, *out_sizes), dtype=np.int64)
    for cell in itertools.product(*(range(o) for o in out_sizes)):
        bounds = [axis_spans[i] for axis_spans, i in zip(spans, cell)]
        block = a[(Ellipsis,) + tuple(slice(s, e) for s, e in bounds)]
        block = block.reshape(n, c, math.prod(e - s for s, e in bounds))
        k = block.argmax(axis=-1)
        out[(Ellipsis,) + cell] = xp.take_along_axis(block, k[..., None], axis=-1)[..., 0]
        flat = 0
        for (s, e), off, size in zip(bounds, xp.unravel_index(k, [e - s for s, e in bounds]), sizes):
            flat = flat * size + s + off
        where[(Ellipsis,) + cell] = flat
    return out, where
