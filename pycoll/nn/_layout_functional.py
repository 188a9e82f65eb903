"""Functions that rearrange or frame values (paddle.nn.functional names): unfold and fold (im2col
and col2im over `_sliding`'s windows), channel_shuffle, zeropad2d and sequence_mask."""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, op_output, placed, value_output
from pycoll.device import array_module
from pycoll.dtypes import DTypeLike, convert_dtype
from pycoll.nn._pad_functional import pad
from pycoll.nn._sliding import crop, fold as col2im, int_list, pad_spatial, windows
from pycoll.tensor import Tensor

__all__ = ["unfold", "fold", "channel_shuffle", "zeropad2d", "sequence_mask"]


def _paddings(paddings: Any, fn: str) -> List[tuple]:
    """paddle's unfold/fold paddings (an int, [h, w] or [top, left, bottom, right]) as
    (before, after) pairs for H and W."""
    if isinstance(paddings, (list, tuple)) and len(paddings) == 2:
        paddings = list(paddings) * 2
    p = int_list(paddings, 4, "paddings", fn, minimum=0)
    return [(p[0], p[2]), (p[1], p[3])]


def _window_args(fn: str, kernel_sizes: Any, strides: Any, paddings: Any, dilations: Any) -> tuple:
    return (int_list(kernel_sizes, 2, "kernel_sizes", fn), int_list(strides, 2, "strides", fn),
            _paddings(paddings, fn), int_list(dilations, 2, "dilations", fn))


def _to_cols(a: Any, kernel: List[int], stride: List[int], pads: List[tuple], dilation: List[int]) -> Any:
    """[N, C, H, W] `a` as [N, C * kh * kw, L]: every window, channel-major, L positions row-major."""
    win = windows(pad_spatial(a, pads), kernel, stride, dilation)  # [N, C, oh, ow, kh, kw]
    n, c, oh, ow = win.shape[:4]
    return array_module(a).ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kernel[0] * kernel[1],
                                                                                      oh * ow)


def _from_cols(cols: Any, sizes: List[int], out: List[int], kernel: List[int], stride: List[int],
               pads: List[tuple], dilation: List[int]) -> Any:
    """The adjoint of `_to_cols`: [N, C * kh * kw, L] summed back into [N, C, *sizes]."""
    n = cols.shape[0]
    c = cols.shape[1] // (kernel[0] * kernel[1])
    w = cols.reshape(n, c, kernel[0], kernel[1], out[0], out[1]).transpose(0, 1, 4, 5, 2, 3)
    full = [s + b + e for s, (b, e) in zip(sizes, pads)]
    return crop(col2im(w, (n, w.shape[1], *full), stride, dilation), pads, sizes)


def _out_sizes(sizes: List[int], kernel: List[int], stride: List[int], pads: List[tuple],
               dilation: List[int], fn: str) -> List[int]:
    out = [(s + b + e - d * (k - 1) - 1) // st + 1
           for s, k, st, (b, e), d in zip(sizes, kernel, stride, pads, dilation)]
    if min(out) < 1:
        raise ValueError(f"{fn}: the padded input {sizes} is smaller than the dilated kernel {kernel} "
                         f"(dilations {dilation}): no window fits")
    return out


def unfold(x: Tensor, kernel_sizes: Any, strides: Any = 1, paddings: Any = 0, dilations: Any = 1,
           name: Optional[str] = None) -> Tensor:
    """im2col: x [N, C, H, W] as [N, C * kh * kw, L], column l holding the l-th window (row-major
    over the output positions), its rows ordered by channel, then kernel row and column."""
    fn = "unfold"
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"{fn}: x must be [N, C, H, W], got shape {x.shape}")
    kernel, stride, pads, dilation = _window_args(fn, kernel_sizes, strides, paddings, dilations)
    x, = placed(fn, x, axes=(1, 2, 3))  # auto-parallel: a batch split stays
    sizes = list(x.shape[2:])
    out = _out_sizes(sizes, kernel, stride, pads, dilation, fn)
    cols = _to_cols(x._array, kernel, stride, pads, dilation)
    return op_output(cols, lambda g: (_from_cols(g, sizes, out, kernel, stride, pads, dilation),), x)


@param_aliases({"input": "x", "output_size": "output_sizes", "kernel_size": "kernel_sizes",
                "stride": "strides", "padding": "paddings", "dilation": "dilations"})
def fold(x: Tensor, output_sizes: Any, kernel_sizes: Any, strides: Any = 1, paddings: Any = 0, dilations: Any = 1,
         name: Optional[str] = None) -> Tensor:
    """col2im, unfold's adjoint: x [N, C * kh * kw, L] summed into [N, C, *output_sizes], each
    column added into its window (overlaps add up)."""
    fn = "fold"
    x = as_tensor(x)
    kernel, stride, pads, dilation = _window_args(fn, kernel_sizes, strides, paddings, dilations)
    sizes = int_list(output_sizes, 2, "output_sizes", fn)
    out = _out_sizes(sizes, kernel, stride, pads, dilation, fn)
    if x.ndim != 3 or x.shape[1] % (kernel[0] * kernel[1]) or x.shape[2] != out[0] * out[1]:
        raise ValueError(f"{fn}: x must be [N, C * {kernel[0]} * {kernel[1]}, {out[0] * out[1]}] for output_sizes "
                         f"{sizes} (blocks {out}), got shape {x.shape}")
    img = _from_cols(x._array, sizes, out, kernel, stride, pads, dilation)
    return op_output(img, lambda g: (_to_cols(g, kernel, stride, pads, dilation),), x)


def channel_shuffle(x: Tensor, groups: int, data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """x [N, C, H, W] (or NHWC) with its channels, seen as [groups, C / groups], transposed."""
    fn = "channel_shuffle"
    x = as_tensor(x)
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{fn}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if x.ndim != 4:
        raise ValueError(f"{fn}: x must have 4 dimensions, got shape {x.shape}")
    axis = 1 if data_format == "NCHW" else 3
    c = x.shape[axis]
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or c % groups:
        raise ValueError(f"{fn}: groups must be a positive int dividing the {c} channels, got {groups!r}")
    split = x.shape[:axis] + [groups, c // groups] + x.shape[axis + 1:]
    perm = list(range(5))
    perm[axis], perm[axis + 1] = axis + 1, axis
    return x.reshape(split).transpose(perm).reshape(x.shape)


def zeropad2d(x: Tensor, padding: Any, data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """x [N, C, H, W] (or NHWC) padded with zeros: padding [left, right, top, bottom] (or one int)."""
    if isinstance(padding, Tensor):
        padding = [int(v) for v in padding.numpy().reshape(-1)]
    pads = int_list(padding, 4, "padding", "zeropad2d", minimum=0)
    return pad(x, pads, mode="constant", value=0.0, data_format=data_format)


def sequence_mask(x: Tensor, maxlen: Optional[int] = None, dtype: DTypeLike = "int64",
                  name: Optional[str] = None) -> Tensor:
    """out[..., j] = j < x[...] for the lengths x, j in [0, maxlen) (maxlen None: the largest
    length, truncated), in `dtype`. Lengths are integers, or floats as paddle takes them (2.5
    covers j = 0, 1, 2). Takes no gradient."""
    x = as_tensor(x)
    a = x._array
    if a.dtype.kind not in "iuf":
        raise TypeError(f"sequence_mask: x must hold lengths (integers or floats), got dtype {a.dtype}")
    if isinstance(maxlen, Tensor):
        maxlen = int(maxlen.item())
    if maxlen is None or maxlen < 0:  # paddle's -1 means "the largest length" as well
        maxlen = int(a.max()) if a.size else 0
    xp = array_module(a)
    out = (xp.arange(maxlen) < a[..., None]).astype(np.dtype(convert_dtype(dtype)))
    return value_output(out, "sequence_mask", x)
