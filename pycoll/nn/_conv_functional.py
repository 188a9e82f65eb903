"""paddle.nn.functional.conv1d / conv2d: one fused op each (im2col through a strided view, one
batched matmul per group; the backward folds the column gradient back, col2im).

conv1d runs as conv2d over an axis of height 1, as paddle's does. Weights have paddle's layout
[out_channels, in_channels / groups, *kernel].
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from pycoll._tensor_ops import as_tensor, needs_grad, op_output
from pycoll.nn._sliding import (FORMATS, check_format, conv_operands, fold, from_nchw, int_list, pad_spatial,
                                parse_padding, same_pads, to_nchw, windows)
from pycoll.tensor import Tensor

PaddingArg = Union[str, int, Sequence[Any]]


def conv2d(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Union[int, Sequence[int]] = 1,
           padding: PaddingArg = 0, dilation: Union[int, Sequence[int]] = 1, groups: int = 1,
           data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """2-D convolution (cross-correlation) of x [N, C, H, W] (or NHWC) with weight
    [O, C / groups, kh, kw]. padding: 'SAME' (which, as paddle's, ignores dilation), 'VALID', an
    int, [ph, pw], [top, bottom, left, right] or four (before, after) pairs."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 2, "conv2d")


def conv1d(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Union[int, Sequence[int]] = 1,
           padding: PaddingArg = 0, dilation: Union[int, Sequence[int]] = 1, groups: int = 1,
           data_format: str = "NCL", name: Optional[str] = None) -> Tensor:
    """1-D convolution of x [N, C, L] (or NLC) with weight [O, C / groups, k]; padding as conv2d's
    for one axis ('SAME', 'VALID', an int, [p], [before, after] or three pairs)."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, 1, "conv1d")


def _conv(x: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Any, padding: PaddingArg, dilation: Any,
          groups: int, data_format: str, nd: int, fn: str) -> Tensor:
    x = as_tensor(x)
    channel_last = check_format(data_format, nd, fn)
    a, wa = conv_operands(x, weight, nd, channel_last, fn)
    n, c, h, w = a.shape
    o, cg, kh, kw = wa.shape
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or o % groups:
        raise ValueError(f"{fn}: groups={groups!r} must be an int >= 1 dividing the {o} output channels of the "
                         f"weight (shape {list(weight.shape)})")
    if cg * groups != c:
        raise ValueError(_channels_message(x.shape, cg * groups, c, weight.shape, groups, data_format, nd, fn))
    if bias is not None and list(bias.shape) != [o]:
        raise ValueError(f"{fn}: bias must have shape [{o}], got {list(bias.shape)}")
    stride = [1] + int_list(stride, 1, "stride", fn) if nd == 1 else int_list(stride, 2, "stride", fn)
    dilation = [1] + int_list(dilation, 1, "dilation", fn) if nd == 1 else int_list(dilation, 2, "dilation", fn)
    pads = parse_padding(padding, nd, channel_last, fn)
    if pads is None:  # SAME
        pads, dilation = same_pads((h, w)[2 - nd:], (kh, kw)[2 - nd:], stride[2 - nd:]), [1, 1]
    if nd == 1:
        pads = [(0, 0)] + pads
    padded = pad_spatial(a, pads)
    if padded.shape[2] < dilation[0] * (kh - 1) + 1 or padded.shape[3] < dilation[1] * (kw - 1) + 1:
        raise ValueError(f"{fn}: the (dilated) kernel {[kh, kw][2 - nd:]} is larger than the padded input "
                         f"{list(padded.shape[4 - nd:])}")
    win = windows(padded, (kh, kw), stride, dilation)
    oh, ow = win.shape[2:4]
    og, k = o // groups, cg * kh * kw
    cols = win.reshape(n, groups, cg, oh, ow, kh, kw).transpose(0, 1, 3, 4, 2, 5, 6).reshape(
        n, groups, oh * ow, k)
    wm = wa.reshape(groups, og, k)
    out = (cols @ wm.transpose(0, 2, 1)).transpose(0, 1, 3, 2).reshape(n, o, oh, ow)
    if bias is not None:
        out += bias._array.reshape(1, o, 1, 1)
    rx, rw, rb = needs_grad(x), needs_grad(weight), needs_grad(bias)

    def backward(g: Any) -> tuple:
        g4 = to_nchw(g, nd, channel_last, fn).reshape(n, groups, og, oh * ow)
        gb = g4.sum(axis=(0, 3)).reshape(o) if rb else None
        gw = (g4 @ cols).sum(axis=0).reshape(weight._array.shape) if rw else None
        gx = None
        if rx:
            gcols = (g4.transpose(0, 1, 3, 2) @ wm).reshape(n, groups, oh, ow, cg, kh, kw)
            gcols = gcols.transpose(0, 1, 4, 2, 3, 5, 6).reshape(n, c, oh, ow, kh, kw)
            gp = fold(gcols, padded.shape, stride, dilation)
            gx = from_nchw(gp[:, :, pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + w], nd, channel_last)
        return gx, gw, gb
    return op_output(from_nchw(out, nd, channel_last), backward, x, weight, bias)


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
