"""paddle.nn.functional.conv1d_transpose / conv2d_transpose / conv3d_transpose: the adjoint of
convolution, one fused op each. Every input pixel spreads its channels, mixed by the weight, over a
kernel window of the output (a batched matmul per group, then `fold`, col2im); the backward reads those windows back
(`windows`, im2col). Weights have paddle's layout [in_channels, out_channels / groups, *kernel].

The output has (in - 1) * stride - pad_before - pad_after + dilation * (k - 1) + 1 + output_padding
pixels per axis; `output_size` asks for a size in [that without output_padding, + stride) instead.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Union

from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, needs_grad, op_output, placed
from pycoll.nn._sliding import (channels_first, check_format, conv_operands, crop, fold, group_rows, int_list,
                                pad_spatial, parse_padding, restore_layout, same_pads, transposed, windows, windows_of_rows)
from pycoll.tensor import Tensor

__all__ = ["conv1d_transpose", "conv2d_transpose", "conv3d_transpose"]

PaddingArg = Union[str, int, Sequence[Any]]
IntOrList = Union[int, Sequence[int]]


def conv3d_transpose(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrList = 1,
                     padding: PaddingArg = 0, output_padding: IntOrList = 0, groups: int = 1, dilation: IntOrList = 1,
                     output_size: Optional[IntOrList] = None, data_format: str = "NCDHW",
                     name: Optional[str] = None) -> Tensor:
    """Transposed 3-D convolution of x [N, C, D, H, W] (or NDHWC) with weight
    [C, O / groups, kd, kh, kw] (paddle's argument order: groups before dilation)."""
    return _conv_transpose(x, weight, bias, stride, padding, output_padding, dilation, groups, output_size,
                           data_format, 3, "conv3d_transpose")


def conv2d_transpose(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrList = 1,
                     padding: PaddingArg = 0, output_padding: IntOrList = 0, dilation: IntOrList = 1, groups: int = 1,
                     output_size: Optional[IntOrList] = None, data_format: str = "NCHW",
                     name: Optional[str] = None) -> Tensor:
    """Transposed 2-D convolution of x [N, C, H, W] (or NHWC) with weight [C, O / groups, kh, kw].
    padding as conv2d's ('SAME': the pads a convolution of x would take, 'VALID': none, an int,
    [ph, pw], four ints or four pairs)."""
    return _conv_transpose(x, weight, bias, stride, padding, output_padding, dilation, groups, output_size,
                           data_format, 2, "conv2d_transpose")


def conv1d_transpose(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrList = 1,
                     padding: PaddingArg = 0, output_padding: IntOrList = 0, groups: int = 1, dilation: IntOrList = 1,
                     output_size: Optional[IntOrList] = None, data_format: str = "NCL",
                     name: Optional[str] = None) -> Tensor:
    """Transposed 1-D convolution of x [N, C, L] (or NLC) with weight [C, O / groups, k] (paddle's
    argument order: groups before dilation)."""
    return _conv_transpose(x, weight, bias, stride, padding, output_padding, dilation, groups, output_size,
                           data_format, 1, "conv1d_transpose")


@accumulates_in_float32
def _conv_transpose(x: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Any, padding: PaddingArg,
                    output_padding: Any, dilation: Any, groups: int, output_size: Any, data_format: str, nd: int,
                    fn: str) -> Tensor:
    x = as_tensor(x)
    x, = placed("_conv_transpose", x, axes=tuple(range(1, x.ndim)))  # auto-parallel: a batch split stays
    channel_last = check_format(data_format, nd, fn)
    a, wa = conv_operands(x, weight, nd, channel_last, fn)
    n, c, *sizes = a.shape
    cw, og, *kernel = wa.shape
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or c % groups:
        raise ValueError(f"{fn}: groups={groups!r} must be an int >= 1 dividing the {c} input channels")
    if cw != c:
        raise ValueError(f"{fn}: expects in_channels={cw} (weight shape {list(weight.shape)}), got x with {c} channels "
                         f"(shape {x.shape}, data_format={data_format!r})")
    o, cg = og * groups, c // groups
    if bias is not None and list(bias.shape) != [o]:
        raise ValueError(f"{fn}: bias must have shape [{o}], got {list(bias.shape)}")
    stride = int_list(stride, nd, "stride", fn)
    dilation = int_list(dilation, nd, "dilation", fn)
    pads = parse_padding(padding, nd, channel_last, fn)
    if pads is None:  # SAME: the pads a convolution of x would take, dilation 1
        pads, dilation = same_pads(sizes, kernel, stride), [1] * nd
    extra = _output_padding(output_padding, output_size, sizes, kernel, stride, dilation, pads, nd, fn)
    # the canvas: the output with its padding, every window of every input pixel inside it
    canvas = [(size - 1) * s + d * (k - 1) + 1 + e for size, s, d, k, e in zip(sizes, stride, dilation, kernel, extra)]
    out_sizes = [cv - b - e for cv, (b, e) in zip(canvas, pads)]
    if min(out_sizes) < 1:
        raise ValueError(f"{fn}: padding {padding!r} leaves no output (output size {out_sizes})")
    xm = a.reshape(n, groups, cg, math.prod(sizes))
    wm = wa.reshape(groups, cg, -1)
    full = fold(windows_of_rows(transposed(wm) @ xm, kernel, sizes),
                (n, o, *canvas), stride, dilation)
    out = crop(full, pads, out_sizes)
    if bias is not None:
        out = out + bias._array.reshape(1, o, *[1] * nd)
    rx, rw, rb = needs_grad(x), needs_grad(weight), needs_grad(bias)

    def backward(g: Any) -> tuple:
        gc = channels_first(g, nd, channel_last, fn)
        gb = gc.sum(axis=(0, *range(2, 2 + nd))) if rb else None
        gpad = pad_spatial(gc, [(b, cv - b - size) for (b, _), cv, size in zip(pads, canvas, out_sizes)])
        win = windows(gpad, kernel, stride, dilation)[(slice(None), slice(None)) + tuple(slice(0, s) for s in sizes)]
        wc = group_rows(win, groups)  # [n, groups, og * prod(kernel), prod(sizes)]
        gx = restore_layout((wm @ wc).reshape(n, c, *sizes), channel_last) if rx else None
        gw = (xm @ wc.transpose(0, 1, 3, 2)).sum(axis=0).reshape(wa.shape) if rw else None
        return gx, gw, gb
    return op_output(restore_layout(out, channel_last), backward, x, weight, bias)


def _output_padding(output_padding: Any, output_size: Any, sizes: Sequence[int], kernel: Sequence[int],
                    stride: List[int], dilation: List[int], pads: List[Any], nd: int, fn: str) -> List[int]:
    """The cells added after the last window on each spatial axis."""
    if output_size is None:
        extra = int_list(output_padding, nd, "output_padding", fn, minimum=0)
        for e, s, d in zip(extra, stride, dilation):
            if e >= max(s, d):
                raise ValueError(f"{fn}: output_padding {output_padding!r} must be smaller than stride or dilation")
        return extra
    if output_padding not in (0, [0] * nd, (0,) * nd):
        raise ValueError(f"{fn}: output_padding and output_size exclude each other, got both")
    if isinstance(output_size, Tensor):
        output_size = output_size.tolist()
    if isinstance(output_size, (list, tuple)):
        output_size = [int(v.item()) if isinstance(v, Tensor) else v for v in output_size]
        if len(output_size) == 1 and nd == 2:  # paddle's conv2d_transpose repeats one size
            output_size = output_size * 2
    wanted = int_list(output_size, nd, "output_size", fn)
    extra = []
    for want, size, k, s, d, (b, e) in zip(wanted, sizes, kernel, stride, dilation, pads):
        least = (size - 1) * s - b - e + d * (k - 1) + 1
        if not least <= want < least + s:
            raise ValueError(f"{fn}: output_size {output_size!r} must lie in [{least}, {least + s}) on each axis")
        extra.append(want - least)
    return extra
