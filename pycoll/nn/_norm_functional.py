"""paddle.nn.functional.batch_norm, and `normalize_batch`, the op under it that SyncBatchNorm
(pycoll.parallel) drives with an all-reduce; group_norm, instance_norm and rms_norm (a composite of
differentiable ops, so differentiable to any order).

paddle 3.3.1's conventions: running = momentum * running + (1 - momentum) * batch statistic, the
variance in both the normalisation and the running statistic being the biased (population) one.
Where the batch statistics would rest on one value per channel (x of shape [1, C] or [1, C, 1, 1];
for SyncBatchNorm one value in the whole group) paddle's kernel skips the normalisation: y = x,
the running statistics stay, and in training the input gradient is the output's while weight and
bias get zeros.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._promotion import accumulates_in_float32, normalized_in_float32
from pycoll._tensor_ops import as_tensor, needs_grad, op_output, placed
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.kernels import host_math
from pycoll.math_ops import cast, mean, multiply, sqrt
from pycoll.shape_ops import reshape
from pycoll.tensor import Tensor

_FORMATS = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")


def batch_norm(x: Tensor, running_mean: Tensor, running_var: Tensor, weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, training: bool = False, momentum: float = 0.9,
               epsilon: float = 1e-5, data_format: str = "NCHW", use_global_stats: Optional[bool] = None,
               name: Optional[str] = None) -> Tensor:
    """Normalise x per channel (axis 1, or the last axis for channel-last formats).

    use_global_stats None: the batch's statistics when training (updating the running ones), the
    running ones otherwise. True: always the running ones (no update). False: always the batch's,
    updating the running ones even outside training (paddle's rule).
    """
    if data_format not in _FORMATS:
        raise ValueError(f"batch_norm: data_format must be one of {list(_FORMATS)}, got {data_format!r}")
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"batch_norm: x must have at least 2 dimensions, got shape {x.shape}")
    batch_stats = training if use_global_stats is None else not use_global_stats
    return normalize_batch(x, running_mean, running_var, weight, bias, batch_stats, momentum, epsilon,
                           1 if data_format[1] == "C" else x.ndim - 1, is_test=not training)


def normalize_batch(x: Tensor, running_mean: Tensor, running_var: Tensor, weight: Optional[Tensor],
                    bias: Optional[Tensor], batch_stats: bool, momentum: float, epsilon: float,
                    channel_axis: int, all_reduce: Optional[Callable[[Any], None]] = None,
                    is_test: bool = False) -> Tensor:
    """Batch normalisation over every axis of x but `channel_axis`, one op.

    batch_stats: normalise with the batch's mean and variance and fold them into running_mean and
    running_var (in place), else with the running ones. `all_reduce(array)`, when given, sums a
    float64 array in place over the ranks that each hold part of the batch: the statistics are
    then those of the whole batch (two reductions: the sums with the element count, then the
    squared deviations), and the backward sums the two per-channel gradient sums the input
    gradient needs. Weight and bias gradients stay this rank's own sums (a data-parallel
    reducer adds them up).

    is_test (paddle's, outside training): the backward treats the statistics as constants, the
    running ones after this step's update, even where the forward used the batch's.
    """
    x = as_tensor(x)
    # auto-parallel: the batch's statistics from the whole batch; running ones keep every split but the channels'
    x, = placed("normalize_batch", x, axes=None if batch_stats else (channel_axis % x.ndim,))
    a = x._array
    dtype = a.dtype
    if not is_floating(dtype):  # paddle has no such kernel; an int output would round every value to 0
        raise TypeError(f"batch_norm: x must be a floating-point Tensor (float16, bfloat16, float32 or "
                        f"float64), got {x.dtype}; cast it first, e.g. x.astype('float32')")
    if _low_precision(a):  # 16-bit floats: computed in float32 and rounded once, as paddle's kernels do
        a = a.astype(np.float32)
    xp = array_module(a)
    c = a.shape[channel_axis]
    _check_channels(a.shape, channel_axis, running_mean, running_var, weight, bias)
    axes = tuple(i for i in range(a.ndim) if i != channel_axis)
    shape = [1] * a.ndim
    shape[channel_axis] = c
    count, centered = 0, None
    if batch_stats:
        mean, var, count, centered = _moments(a, axes, channel_axis, all_reduce)
        if count == 0 or (count == 1 and not is_test):  # an empty batch (every rank's): no statistics to take
            return _passed_through(x, weight, bias)
        if count > 1:
            for running, value in ((running_mean._array, mean), (running_var._array, var)):
                running *= momentum
                running += (1 - momentum) * value.astype(running.dtype)
    else:
        mean, var = running_mean._array.astype(a.dtype), running_var._array.astype(a.dtype)
    rstd = (1.0 / xp.sqrt(var + epsilon)).astype(a.dtype)
    fused = None if count == 1 else host_math.normalize(  # host float32/64: (xhat, out) in one pass
        a, mean, rstd, None if weight is None else weight._array, None if bias is None else bias._array,
        channel_axis)
    if fused is not None:
        xhat, out = fused
    else:
        xhat = a - mean.reshape(shape) if centered is None else centered  # a fresh array: scaled in place
        xhat *= rstd.reshape(shape)
        if count == 1:  # outside training one value passes through too; the backward below is the usual one
            out = a.copy()
        else:
            out = xhat * weight._array.reshape(shape) if weight is not None else xhat.copy()
            if bias is not None:
                out += bias._array.reshape(shape)
    through_stats = batch_stats and not is_test  # else the backward holds the statistics constant
    if batch_stats and is_test:
        rstd = (1.0 / xp.sqrt(running_var._array.astype(a.dtype) + epsilon)).astype(a.dtype)
        xhat = (a - running_mean._array.astype(a.dtype).reshape(shape)) * rstd.reshape(shape)
    scale = (rstd if weight is None else rstd * weight._array).reshape(shape)
    rx, rw, rb = needs_grad(x), needs_grad(weight), needs_grad(bias)

    def backward(g: Any) -> tuple:
        incoming = g
        g = host_math.contiguous(g.astype(a.dtype, copy=False))  # read by two kernels (a copy is ours)
        sums = host_math.channel_sums_and_dots(g, xhat, channel_axis)  # float64, one pass
        g_sum, gxhat_sum = sums if sums is not None else (g.sum(axis=axes, dtype=np.float64),
                                                          (g * xhat).sum(axis=axes, dtype=np.float64))
        gx = None
        if rx and through_stats:
            g_mean, gxhat_mean = (g_sum / count).astype(g.dtype), (gxhat_sum / count).astype(g.dtype)
            if all_reduce is not None:
                buf = xp.concatenate([g_sum, gxhat_sum]).astype(np.float64)
                all_reduce(buf)
                g_mean, gxhat_mean = (buf[:c] / count).astype(g.dtype), (buf[c:] / count).astype(g.dtype)
            gx = host_math.normalize_grad(g, xhat, g_mean, gxhat_mean, scale.reshape(-1), channel_axis,
                                          overwrite_g=g is not incoming)
            if gx is None:
                gx = g - g_mean.reshape(shape)  # scale * (g - g_mean - xhat * gxhat_mean), in place
                gx -= xhat * gxhat_mean.reshape(shape)
                gx *= scale
        elif rx:
            gx = g * scale
        return (None if gx is None else gx.astype(dtype, copy=False),
                gxhat_sum.astype(weight._array.dtype) if rw else None,
                g_sum.astype(bias._array.dtype) if rb else None)
    backward.normalization = (rstd, epsilon)  # type: ignore[attr-defined]  # for create_graph (pycoll._higher_order)
    return op_output(out.astype(dtype, copy=False), backward, x, weight, bias)


def _check_channels(shape: Sequence[int], channel_axis: int, running_mean: Tensor, running_var: Tensor,
                    weight: Optional[Tensor], bias: Optional[Tensor]) -> None:
    """ValueError unless x's channels are the layer's num_features (running_mean's length) and
    every per-channel tensor has that length."""
    features = running_mean.shape[0] if running_mean.ndim == 1 else None
    c = shape[channel_axis]
    if features is not None and features != c:
        other = len(shape) - 1 if channel_axis == 1 else 1
        hint = f"; axis {other} has {features}: is data_format right?" if shape[other] == features else ""
        raise ValueError(f"batch_norm: expects num_features={features} channels, got x with {c} on axis "
                         f"{channel_axis} (shape {list(shape)}){hint}")
    for what, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and list(t.shape) != [c]:
            raise ValueError(f"batch_norm: {what} must have shape [{c}] (the channels of x, shape "
                             f"{list(shape)}), got {list(t.shape)}")


def _passed_through(x: Tensor, weight: Optional[Tensor], bias: Optional[Tensor]) -> Tensor:
    """Training-mode batch norm of one value per channel, as paddle's kernel does it: y = x."""
    xp = array_module(x._array)

    def backward(g: Any) -> tuple:
        return (g, xp.zeros_like(weight._array) if needs_grad(weight) else None,
                xp.zeros_like(bias._array) if needs_grad(bias) else None)
    return op_output(x._array.copy(), backward, x, weight, bias)


def _moments(a: Any, axes: tuple, channel_axis: int,
             all_reduce: Optional[Callable[[Any], None]]) -> Tuple[Any, Any, Any, Any]:
    """(mean, biased variance, element count) per channel, over the ranks when all_reduce is
    given, and a less its mean (a fresh array, for the caller to reuse) or, where pycoll's host
    kernels summed the squared deviations without keeping them, None."""
    xp = array_module(a)
    c = a.shape[channel_axis]
    total = host_math.channel_sums(a, channel_axis)  # float64, one pass
    if total is None:  # device arrays: summed in float64 too, so that a GPU's statistics are the CPU's
        total = a.sum(axis=axes, dtype=np.float64)
    count: Any = a.size // c if c else 0
    if all_reduce is not None:
        buf = xp.concatenate([total.astype(np.float64), xp.asarray([count], dtype=np.float64)])
        all_reduce(buf)
        total, count = buf[:c], buf[c].item()
    if count == 0:  # an empty batch: the caller passes it through and leaves the running statistics
        return None, None, 0, None
    mean = (total / count).astype(a.dtype)
    squares, centered = host_math.channel_sums(a, channel_axis, less=mean), None
    if squares is None:
        centered = a - xp.expand_dims(mean, axes)
        squares = (centered * centered).sum(axis=axes, dtype=np.float64)
    if all_reduce is not None:
        squares = squares.astype(np.float64)
        all_reduce(squares)
    return mean, (squares / count).astype(a.dtype), count, centered


def _low_precision(a: Any) -> bool:
    """Whether ``a`` holds 16-bit floats, which batch_norm computes in float32 (paddle's rule: a
    float16 sum of a batch overflows past 65504, and x - mean in float16 loses ~10 ulps of the
    result when the mean is large against the spread)."""
    return a.dtype.kind in "fV" and a.dtype.itemsize < 4


GROUP_FORMATS = ("NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")
_INSTANCE_FORMATS = ("NC", "NCL", "NCHW", "NCDHW")


def _torch_group_norm_order(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """paddle 3.3's second form of group_norm, torch's ``(input, num_groups, weight, bias, eps)``:
    chosen, as paddle chooses it, when the third positional argument is not a number."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Tensor:
        if len(args) >= 3 and not isinstance(args[2], (int, float)):
            for name, value in zip(("weight", "bias", "epsilon"), args[2:5]):
                if name in kwargs:
                    raise TypeError(f"group_norm() got multiple values for argument {name!r}")
                kwargs[name] = value
            if len(args) > 5:
                raise TypeError(f"group_norm(input, num_groups, weight, bias, eps) takes 5 positional arguments, "
                                f"got {len(args)}")
            args = args[:2]
        return fn(*args, **kwargs)
    return call


@_torch_group_norm_order
@param_aliases({"input": "x", "eps": "epsilon"})
@accumulates_in_float32
def group_norm(x: Tensor, num_groups: int, epsilon: float = 1e-05, weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """Normalise each sample over groups of C / num_groups consecutive channels (with all their
    positions), then scale and shift per channel by weight and bias ([C] each, optional). A 2-D
    x is [N, C] (features after a Linear layer), as paddle and torch take it. torch's positional
    order ``(input, num_groups, weight, bias, eps)`` works too (``_torch_group_norm_order``)."""
    if data_format not in GROUP_FORMATS:
        raise ValueError(f"group_norm: data_format must be one of {list(GROUP_FORMATS)}, got {data_format!r}")
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"group_norm: x must have at least 2 dimensions ([N, C, ...]), got shape {x.shape}")
    channel_axis = 1 if data_format[1] == "C" else x.ndim - 1
    c = x.shape[channel_axis]
    if isinstance(num_groups, bool) or not isinstance(num_groups, int) or num_groups < 1 or c % num_groups:
        raise ValueError(f"group_norm: num_groups must be an int >= 1 dividing the {c} channels of x (shape "
                         f"{x.shape}, data_format={data_format!r}), got {num_groups!r}")
    return _normalize_groups(x, num_groups, weight, bias, epsilon, channel_axis, "group_norm")


@accumulates_in_float32
def instance_norm(x: Tensor, running_mean: Optional[Tensor] = None, running_var: Optional[Tensor] = None,
                  weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, use_input_stats: bool = True,
                  momentum: float = 0.9, eps: float = 1e-05, data_format: str = "NCHW",
                  name: Optional[str] = None) -> Tensor:
    """Normalise every channel of every sample on its own (channels on axis 1), then scale and
    shift per channel. As in paddle's eager mode, running_mean, running_var, use_input_stats and
    momentum are accepted and unused: the statistics are always the input's."""
    if data_format not in _INSTANCE_FORMATS:
        raise ValueError(f"instance_norm: data_format must be one of {list(_INSTANCE_FORMATS)}, got {data_format!r}")
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"instance_norm: x must have at least 2 dimensions, got shape {x.shape}")
    return _normalize_groups(x, x.shape[1], weight, bias, eps, 1, "instance_norm")


def row_moments(a: Any, axes: Tuple[int, ...]) -> Optional[Tuple[Any, Any]]:
    """The (mean, biased variance) over the trailing ``axes`` of a host float32/64 array (layer
    norm's rows; group norm's groups), kept-dims and in a's dtype, each in one pass of pycoll's kernel summing in float64
    (NumPy's mean and its squared deviations made three passes and two 16 MB temporaries for a
    [4096, 1024] batch: 6x paddle's forward); None where the kernel does not serve a."""
    n = math.prod(a.shape[axes[0]:]) if axes else 1
    if not a.size or not n:
        return None
    rows = a.reshape(-1, n)
    total = host_math.channel_sums(rows, 0)
    if total is None:
        return None
    kept = a.shape[:axes[0]] + (1,) * len(axes)
    mean = (total / n).astype(a.dtype)
    squares = host_math.channel_sums(rows, 0, less=mean)
    return mean.reshape(kept), (squares / n).astype(a.dtype).reshape(kept)


def _normalize_groups(x: Tensor, groups: int, weight: Optional[Tensor], bias: Optional[Tensor], epsilon: float,
                      channel_axis: int, fn: str) -> Tensor:
    """The op under group_norm and instance_norm: per sample, mean and biased variance over each
    group of channels (and their positions), one graph node with layer_norm's backward per group."""
    widened = normalized_in_float32(
        lambda v: _normalize_groups(v, groups, weight, bias, epsilon, channel_axis, fn), x, weight, bias)
    if widened is not None:
        return widened
    x, = placed("_normalize_groups", x, axes=tuple(range(1, x.ndim)))  # auto-parallel: a batch split stays
    a = x._array
    xp = array_module(a)
    c = a.shape[channel_axis]
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != [c]:
            raise ValueError(f"{fn}: {what} must have shape [{c}] (the channels of x, shape {list(a.shape)}), "
                             f"got {list(t.shape)}")
    first = xp.moveaxis(a, channel_axis, 1)  # [N, C, *positions]
    grouped = first.reshape(a.shape[0], groups, c // groups * math.prod(first.shape[2:]))
    moments = row_moments(grouped, (2,))
    if moments is None:
        centered = grouped - grouped.mean(axis=2, keepdims=True)
        var = (centered * centered).mean(axis=2, keepdims=True)
    else:
        mean_, var = moments
        centered = grouped - mean_
    rstd = 1.0 / xp.sqrt(var + epsilon)
    xhat = centered
    xhat *= rstd  # (centered is a new array)
    per_channel = (1, c) + (1,) * (a.ndim - 2)
    w = None if weight is None else weight._array.reshape(per_channel)
    out = xhat.reshape(first.shape)
    out = out * w if w is not None else out.copy()
    if bias is not None:
        out += bias._array.reshape(per_channel)
    rx, rw, rb = needs_grad(x), needs_grad(weight), needs_grad(bias)
    summed = (0,) + tuple(range(2, a.ndim))  # every axis but the channels

    def backward(g: Any) -> tuple:
        g = xp.moveaxis(g, channel_axis, 1)
        gw = (g * xhat.reshape(first.shape)).sum(axis=summed) if rw else None
        gb = g.sum(axis=summed) if rb else None
        gx = None
        if rx:
            gh = (g * w if w is not None else g).reshape(grouped.shape)
            gx = rstd * (gh - gh.mean(axis=2, keepdims=True) - xhat * (gh * xhat).mean(axis=2, keepdims=True))
            gx = xp.ascontiguousarray(xp.moveaxis(gx.reshape(first.shape), 1, channel_axis))
        return gx, gw, gb
    backward.normalization = (rstd, epsilon)  # type: ignore[attr-defined]  # for create_graph (pycoll._higher_order)
    return op_output(xp.ascontiguousarray(xp.moveaxis(out, 1, channel_axis)), backward, x, weight, bias)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor] = None,  # noqa: A002
             eps: float = 1e-05, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """Root-mean-square normalisation over input's trailing `normalized_shape` axes:
    out = input / sqrt(mean(input ** 2) + eps) * weight (weight of shape normalized_shape, or
    None). Returns (out, invvar), invvar the float32 1 / sqrt(mean + eps) of each of the rows (the
    leading axes flattened), as paddle's."""
    x = as_tensor(input)
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    k = len(shape)
    if not k or any(isinstance(n, bool) or not isinstance(n, int) for n in shape) or x.shape[x.ndim - k:] != shape:
        raise ValueError(f"rms_norm: normalized_shape must be the trailing sizes of input's shape {x.shape}, "
                         f"got {normalized_shape!r}")
    if weight is not None and list(as_tensor(weight).shape) != shape:
        raise ValueError(f"rms_norm: weight must have shape {shape}, got {as_tensor(weight).shape}")
    inv = 1.0 / sqrt(mean(multiply(x, x), axis=list(range(x.ndim - k, x.ndim)), keepdim=True) + eps)
    out = multiply(x, inv)
    if weight is not None:
        out = multiply(out, weight)
    return out, cast(reshape(inv, [-1]), "float32")
