"""Rules for convolutions (`pycoll.nn._conv_functional._conv`, 1-D to 3-D, any stride, dilation,
padding and groups), `normalize` and `layer_norm`: their forwards computed again from indexing,
matmul and reductions, whose rules then give every order (`saved.recomputed`)."""
from __future__ import annotations

import math
from typing import Optional

from pycoll._higher_order.rules_shape import scattered
from pycoll._higher_order.saved import Saved, recomputed, rule
from pycoll.math_ops import abs as abs_, matmul, max as max_, mean, sqrt, sum as sum_
from pycoll.elementwise_ops import maximum
from pycoll.reshape_ops import moveaxis
from pycoll.shape_ops import reshape, transpose
from pycoll.tensor import Tensor
from pycoll.device import array_module


@rule("_conv.<locals>.backward")
def _conv(s: Saved, g: Tensor) -> tuple:
    nd, channel_last, groups, o = s["nd"], s["channel_last"], s["groups"], s["o"]
    padded, pads, sizes = s["padded"], s["pads"], s["sizes"]
    kernel, stride, dilation, out_sizes = s["kernel"], s["stride"], s["dilation"], s["out_sizes"]
    xp = array_module(padded)
    n, c = padded.shape[:2]
    inner = (slice(None), slice(None)) + tuple(slice(b, b + size) for (b, _), size in zip(pads, sizes))
    x_value = xp.moveaxis(padded[inner], 1, -1) if channel_last else padded[inner]
    # along spatial axis d, output position i reads i * stride + j * dilation for kernel offset j:
    # integer index arrays shaped to broadcast over [*out, *kernel]
    picks = []
    for d in range(nd):
        pos = xp.arange(out_sizes[d])[:, None] * stride[d] + xp.arange(kernel[d])[None, :] * dilation[d]
        shape = [1] * (2 * nd)
        shape[d], shape[nd + d] = out_sizes[d], kernel[d]
        picks.append(pos.reshape(shape))
    window_index = (slice(None), slice(None)) + tuple(picks)

    def forward(x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
        if channel_last:
            x = moveaxis(x, -1, 1)
        win = scattered(x, padded.shape, inner, False)[window_index]  # zero padding, then every window
        win = reshape(win, [n, groups, c // groups] + list(out_sizes) + list(kernel))
        perm = [0, 1] + list(range(3, 3 + nd)) + [2] + list(range(3 + nd, 3 + 2 * nd))
        cols = reshape(transpose(win, perm), [n, groups, math.prod(out_sizes), -1])
        out = matmul(cols, reshape(weight, [groups, o // groups, -1]), transpose_y=True)
        out = reshape(transpose(out, [0, 1, 3, 2]), [n, o] + list(out_sizes))
        if bias is not None:
            out = out + reshape(bias, [1, o] + [1] * nd)
        return moveaxis(out, 1, -1) if channel_last else out
    # no gradient depends on the bias's value: zeros stand in for it
    bias_value = None if s.node.inputs[2] is None else xp.zeros(o, padded.dtype)
    return recomputed(s, g, forward, [x_value, s["wa"], bias_value])


@rule("normalize.<locals>.backward")
def _normalize(s: Saved, g: Tensor) -> tuple:
    p, axis, epsilon = s["p"], s["axis"], s["epsilon"]

    def forward(x: Tensor) -> Tensor:
        if math.isinf(p):
            norm = max_(abs_(x), axis=axis, keepdim=True)
        elif p == 2:
            norm = sqrt(sum_(x * x, axis=axis, keepdim=True))
        else:
            norm = sum_(abs_(x) ** p, axis=axis, keepdim=True) ** (1.0 / p)
        return x / maximum(norm, epsilon)
    return recomputed(s, g, forward, [s["a"]])


@rule("layer_norm.<locals>.backward")
def _layer_norm(s: Saved, g: Tensor) -> tuple:
    axes, epsilon, var, xhat = list(s["axes"]), s["epsilon"], s["var"], s["xhat"]
    weight, bias = s["weight"], s["bias"]
    shape = [xhat.shape[a] for a in axes]

    def forward(x: Tensor, w: Optional[Tensor], b: Optional[Tensor]) -> Tensor:
        centered = x - mean(x, axis=axes, keepdim=True)
        out = centered / sqrt(mean(centered * centered, axis=axes, keepdim=True) + epsilon)
        if w is not None:
            out = out * reshape(w, shape)
        return out if b is None else out + reshape(b, shape)
    # layer_norm is unchanged by a shift of each normalised block: x's centred values stand in for x
    x_value = xhat * s["xp"].sqrt(var + epsilon)
    return recomputed(s, g, forward, [x_value, None if weight is None else weight._array,
                                      None if bias is None else bias._array])
