"""paddle.nn.functional.conv1d / conv2d / conv3d: one fused op each (im2col through a strided
view, one batched matmul per group; the backward folds the column gradient back, col2im).

Weights have paddle's layout [out_channels, in_channels / groups, *kernel].
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

from pycoll._param_aliases import param_aliases
from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, needs_grad, op_output, placed
from pycoll.nn._sliding import (FORMATS, channels_first, check_format, conv_operands, crop, fold, group_rows,
                                int_list, pad_spatial, parse_padding, restore_layout, same_pads, transposed, windows_of_rows,
                                windows)
from pycoll.tensor import Tensor

PaddingArg = Union[str, int, Sequence[Any]]
IntOrList = Union[int, Sequence[int]]


@param_aliases({"input": "x"})
def conv3d(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrList = 1,
           padding: PaddingArg = 0, dilation: IntOrList = 1, groups: int = 1,
           data_format: str = "NCDHW", name: Optional[str] = None) -> Tensor:
    """3-D convolution of x [N, C, D, H, W] (or NDHWC) with weight [O, C / groups, kd, kh, kw];
    padding as conv2d's for three axes ('SAME', 'VALID', an int, 3 ints, 6 ints or five pairs)."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 3, "conv3d")


@param_aliases({"input": "x"})
def conv2d(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrList = 1,
           padding: PaddingArg = 0, dilation: IntOrList = 1, groups: int = 1,
           data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """2-D convolution (cross-correlation) of x [N, C, H, W] (or NHWC) with weight
    [O, C / groups, kh, kw]. padding: 'SAME' (which, as paddle's, ignores dilation), 'VALID', an
    int, [ph, pw], [top, bottom, left, right] or four (before, after) pairs."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 2, "conv2d")


@param_aliases({"input": "x"})
def conv1d(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrList = 1,
           padding: PaddingArg = 0, dilation: IntOrList = 1, groups: int = 1,
           data_format: str = "NCL", name: Optional[str] = None) -> Tensor:
    """1-D convolution of x [N, C, L] (or NLC) with weight [O, C / groups, k]; padding as conv2d's
    for one axis ('SAME', 'VALID', an int, [p], [before, after] or three pairs)."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 1, "conv1d")


@accumulates_in_float32
def _conv(x: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Any, padding: PaddingArg, dilation: Any,
          groups: int, data_format: str, nd: int, fn: str) -> Tensor:
    x = as_tensor(x)
    x, = placed("_conv", x, axes=tuple(range(1, x.ndim)))  # auto-parallel: a batch split stays
    channel_last = check_format(data_format, nd, fn)
    a, wa = conv_operands(x, weight, nd, channel_last, fn)
    n, c, *sizes = a.shape
    o, cg, *kernel = wa.shape
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or o % groups:
        raise ValueError(f"{fn}: groups={groups!r} must be an int >= 1 dividing the {o} output channels of the "
                         f"weight (shape {list(weight.shape)})")
    if cg * groups != c:
        raise ValueError(_channels_message(x.shape, cg * groups, c, weight.shape, groups, data_format, nd, fn))
    if bias is not None and list(bias.shape) != [o]:
        raise ValueError(f"{fn}: bias must have shape [{o}], got {list(bias.shape)}")
    stride = int_list(stride, nd, "stride", fn)
    dilation = int_list(dilation, nd, "dilation", fn)
    pads = parse_padding(padding, nd, channel_last, fn)
    if pads is None:  # SAME
        pads, dilation = same_pads(sizes, kernel, stride), [1] * nd
    padded = pad_spatial(a, pads)
    if any(p < d * (k - 1) + 1 for p, d, k in zip(padded.shape[2:], dilation, kernel)):
        raise ValueError(f"{fn}: the (dilated) kernel {kernel} is larger than the padded input "
                         f"{list(padded.shape[2:])}")
    win = windows(padded, kernel, stride, dilation)
    out_sizes = win.shape[2:2 + nd]
    og = o // groups
    cols = group_rows(win, groups)  # [n, groups, cg * prod(kernel), prod(out)]
    wm = wa.reshape(groups, og, -1)
    # (as window rows times the weight's columns: the orientation whose sums paddle's trained
    # nets were checked against; the other one moves a deep net's gradients by ~1e-5, rounding)
    out = (cols.transpose(0, 1, 3, 2) @ wm.transpose(0, 2, 1)).transpose(0, 1, 3, 2).reshape(n, o, *out_sizes)
    if bias is not None:
        out += bias._array.reshape(1, o, *[1] * nd)
    rx, rw, rb = needs_grad(x), needs_grad(weight), needs_grad(bias)

    def backward(g: Any) -> tuple:
        gm = channels_first(g, nd, channel_last, fn).reshape(n, groups, og, math.prod(out_sizes))
        gb = gm.sum(axis=(0, 3)).reshape(o) if rb else None
        gw = (gm @ cols.transpose(0, 1, 3, 2)).sum(axis=0).reshape(wa.shape) if rw else None
        gx = None
        if rx:
            gcols = windows_of_rows(transposed(wm) @ gm, kernel, out_sizes)
            gx = restore_layout(crop(fold(gcols, padded.shape, stride, dilation), pads, sizes), channel_last)
        return gx, gw, gb
    return op_output(restore_layout(out, channel_last), backward, x, weight, bias)


def _channels_message(shape: Sequence[int], expected: int, got: int, weight_shape: Sequence[int], groups: int,
                      data_format: str, nd: int, fn: str) -> str:
    """What a conv says of an x whose channels do not fit its weight, naming the layout that would fit."""
    first, last = FORMATS[nd]
    other = last if data_format == first else first
    other_channels = shape[-1] if other == last else shape[1]
    hint = f"; with data_format={other!r} x would have {expected}" if other_channels == expected else ""
    per_group = f", groups={groups}" if groups != 1 else ""
    return (f"{fn}: expects in_channels={expected} (weight shape {list(weight_shape)}{per_group}), got x with {got} "
            f"channels (shape {list(shape)}, data_format={data_format!r}){hint}")
