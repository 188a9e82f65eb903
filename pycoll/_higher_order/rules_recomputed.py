"""Rules for convolutions (`pycoll.nn._conv_functional._conv`, 1-D to 3-D, any stride, dilation,
padding and groups), max and average pooling, batch/group/instance/layer normalisation, local
response normalisation and `normalize`: their forwards computed again from indexing, matmul and
reductions, whose rules then give every order (`saved.recomputed`). Where an op's gradients do not depend on a shift of an
input (normalisations) or on a value at all (a bias), the rule feeds it values that stand in."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple

from pycoll._higher_order.rules_shape import scattered
from pycoll._higher_order.recompute import recomputed
from pycoll._higher_order.saved import Saved, const, rule
from pycoll.math_ops import abs as abs_, matmul, max as max_, mean, sqrt, sum as sum_
from pycoll.elementwise_ops import maximum
from pycoll.reshape_ops import moveaxis
from pycoll.nn._response_norm_functional import _window_sum as window_sum
from pycoll.shape_ops import reshape, stack, transpose
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
    windows = window_index(xp, out_sizes, kernel, stride, dilation)

    def forward(x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
        if channel_last:
            x = moveaxis(x, -1, 1)
        win = scattered(x, padded.shape, inner, False)[windows]  # zero padding, then every window
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


def window_index(xp: Any, out_sizes: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                  dilation: Sequence[int]) -> tuple:
    """The index of [N, C, *spatial] that gives every window, [N, C, *out, *kernel]: along spatial
    axis d, output position i reads i * stride + j * dilation for kernel offset j (integer arrays
    shaped to broadcast over [*out, *kernel])."""
    nd = len(kernel)
    picks = []
    for d in range(nd):
        pos = xp.arange(out_sizes[d])[:, None] * stride[d] + xp.arange(kernel[d])[None, :] * dilation[d]
        shape = [1] * (2 * nd)
        shape[d], shape[nd + d] = out_sizes[d], kernel[d]
        picks.append(pos.reshape(shape))
    return (slice(None), slice(None)) + tuple(picks)


def _pool_windows(s: Saved, x: Tensor, win_shape: Tuple[int, ...]) -> Tensor:
    """A pool's input x padded as it was (zeros: the picks never read the padding) and cut into
    windows [N, C, *out, *kernel] (``win_shape``), channels first."""
    nd, padded, a = s["nd"], s["padded"], s["a"]
    if s["channel_last"]:
        x = moveaxis(x, -1, 1)
    inner = (slice(None), slice(None)) + tuple(slice(b, b + n) for (b, _), n in zip(s["grown"], a.shape[2:]))
    index = window_index(array_module(a), win_shape[2:2 + nd], win_shape[2 + nd:], s["stride"], [1] * nd)
    return scattered(x, padded.shape, inner, False)[index]


def _pool_input(s: Saved) -> Any:
    a = s["a"]
    return array_module(a).moveaxis(a, 1, -1) if s["channel_last"] else a


@rule("_max_pool.<locals>.backward")
def _max_pool(s: Saved, g: Tensor) -> tuple:
    nd, win_shape, pick, k = s["nd"], s["win_shape"], s["pick"], s["k"]
    chosen = (pick[..., None] == array_module(pick).arange(k)).astype(s["padded"].dtype)  # one-hot over the window

    def forward(x: Tensor) -> Tensor:
        cols = reshape(_pool_windows(s, x, win_shape), list(win_shape[:2 + nd]) + [k])
        out = sum_(cols * const(chosen), axis=-1)
        return moveaxis(out, 1, -1) if s["channel_last"] else out
    return recomputed(s, g, forward, [_pool_input(s)])


@rule("_avg_pool.<locals>.backward")
def _avg_pool(s: Saved, g: Tensor) -> tuple:
    nd = s["nd"]

    def forward(x: Tensor) -> Tensor:
        out = sum_(_pool_windows(s, x, s["win"].shape), axis=list(range(2 + nd, 2 + 2 * nd))) * const(s["scale"])
        return moveaxis(out, 1, -1) if s["channel_last"] else out
    return recomputed(s, g, forward, [_pool_input(s)])


@rule("normalize_batch.<locals>.backward")
def _batch_norm(s: Saved, g: Tensor) -> tuple:
    if s["through_stats"] and s["all_reduce"] is not None:
        raise NotImplementedError("grad(create_graph=True) through SyncBatchNorm's batch statistics")
    rstd, epsilon = s.attached("normalization")
    axes, shape, xhat = list(s["axes"]), s["shape"], s["xhat"]
    through = s["through_stats"]
    rstd = rstd.reshape(shape)

    def forward(x: Tensor, w: Optional[Tensor], b: Optional[Tensor]) -> Tensor:
        if through:
            centered = x - mean(x, axis=axes, keepdim=True)
            out = centered / sqrt(mean(centered * centered, axis=axes, keepdim=True) + epsilon)
        else:  # the statistics are constants: x less the mean it was normalised with
            out = (x - const(x._array - xhat / rstd)) * const(rstd)
        if w is not None:
            out = out * reshape(w, shape)
        return out if b is None else out + reshape(b, shape)
    inputs = s.node.inputs
    weight = None if inputs[1] is None else (s["scale"] / rstd).reshape(-1)
    bias = None if inputs[2] is None else array_module(xhat).zeros(s["c"], xhat.dtype)  # its value enters no gradient
    # x's per-channel shift changes no gradient: its centred values stand in for it
    return recomputed(s, g, forward, [xhat / rstd, weight, bias])


@rule("_normalize_groups.<locals>.backward")
def _group_norm(s: Saved, g: Tensor) -> tuple:
    rstd, epsilon = s.attached("normalization")
    axis, xhat, first, w = s["channel_axis"], s["xhat"], s["first"], s["w"]
    xp = array_module(xhat)
    n, groups = xhat.shape[:2]
    per_channel = [1, first.shape[1]] + [1] * (first.ndim - 2)

    def forward(x: Tensor, wt: Optional[Tensor], bt: Optional[Tensor]) -> Tensor:
        grouped = reshape(moveaxis(x, axis, 1), [n, groups, -1])
        centered = grouped - mean(grouped, axis=2, keepdim=True)
        out = reshape(centered / sqrt(mean(centered * centered, axis=2, keepdim=True) + epsilon), list(first.shape))
        if wt is not None:
            out = out * reshape(wt, per_channel)
        if bt is not None:
            out = out + reshape(bt, per_channel)
        return moveaxis(out, 1, axis)
    inputs = s.node.inputs
    x_value = xp.moveaxis((xhat / rstd).reshape(first.shape), 1, axis)  # centred per group: same gradients
    weight = None if inputs[1] is None else w.reshape(-1)
    bias = None if inputs[2] is None else xp.zeros(first.shape[1], xhat.dtype)
    return recomputed(s, g, forward, [x_value, weight, bias])


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
    rstd, epsilon = s.attached("normalization")
    axes, xhat = list(s["axes"]), s["xhat"]
    weight, bias = s["weight"], s["bias"]
    shape = [xhat.shape[a] for a in axes]

    def forward(x: Tensor, w: Optional[Tensor], b: Optional[Tensor]) -> Tensor:
        centered = x - mean(x, axis=axes, keepdim=True)
        out = centered / sqrt(mean(centered * centered, axis=axes, keepdim=True) + epsilon)
        if w is not None:
            out = out * reshape(w, shape)
        return out if b is None else out + reshape(b, shape)
    # layer_norm is unchanged by a shift of each normalised block: x's centred values stand in for x
    x_value = xhat / rstd
    return recomputed(s, g, forward, [x_value, None if weight is None else weight._array,
                                      None if bias is None else bias._array])


@rule("_adaptive_avg_pool.<locals>.backward")
def _adaptive_avg_pool(s: Saved, g: Tensor) -> tuple:
    # each spatial axis goes through a fixed averaging matrix [out, in]: g goes back through its transpose
    channel_last, mats, axes = s["channel_last"], s["mats"], s["axes"]
    if channel_last:
        g = moveaxis(g, -1, 1)
    for mat, ax in zip(mats, axes):
        g = moveaxis(matmul(moveaxis(g, ax, -1), const(mat)), -1, ax)
    return (moveaxis(g, 1, -1) if channel_last else g,)


@rule("_adaptive_max_pool.<locals>.backward")
def _adaptive_max_pool(s: Saved, g: Tensor) -> tuple:
    n, c, where, a = s["n"], s["c"], s["where"], s["a"]
    xp = array_module(where)
    picks = (xp.arange(n * c)[:, None], where.reshape(n * c, -1))

    def forward(x: Tensor) -> Tensor:
        return reshape(reshape(x, [n * c, -1])[picks], list(where.shape))
    return recomputed(s, g, forward, [a])


@rule("_spread.<locals>.backward")
def _var_std(s: Saved, g: Tensor) -> tuple:
    kept, scale, root = list(s["kept"]), s["scale"], s["root"]
    # the reduced axes are those kept as 1 (an axis of size 1 besides changes nothing)
    axes = [i for i, k in enumerate(kept) if k == 1]

    def forward(x: Tensor) -> Tensor:
        d = x - mean(x, axis=axes, keepdim=True)
        v = sum_(d * d, axis=axes, keepdim=True) * scale
        return reshape(sqrt(v) if root else v, list(g.shape))
    # the spread is unchanged by a shift: the centred values stand in for x
    return recomputed(s, g, forward, [s["d"]])


@rule("local_response_norm.<locals>.backward")
def _local_response_norm(s: Saved, g: Tensor) -> tuple:
    a, axis, before, after = s["a"], s["axis"], s["before"], s["after"]
    coef, beta = s["coef"], s["beta"]
    k = s["denom"] - coef * window_sum(a * a, axis, before, after)  # the constant part of the denominator
    size = before + after + 1

    def forward(x: Tensor) -> Tensor:
        squares = moveaxis(x * x, axis, -1)
        n = squares.shape[-1]
        padded = scattered(squares, tuple(squares.shape[:-1]) + (n + size - 1,),
                           (Ellipsis, slice(before, before + n)), False)
        total = sum_(stack([padded[..., i:i + n] for i in range(size)]), axis=0)
        return x * (const(k) + moveaxis(total, -1, axis) * coef) ** -beta
    return recomputed(s, g, forward, [a])
