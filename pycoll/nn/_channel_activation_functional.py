"""Activations that act along an axis or per channel: glu and swiglu (gated halves),
maxout (the largest of each group of channels) and prelu (a learnt slope below zero, one per channel or one in all)."""
from __future__ import annotations

from typing import Any, List, Optional

from pycoll._fp_quiet import SILENT, restore, silence
from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, needs_grad, op_output, placed
from pycoll.device import array_module
from pycoll.math_ops import sigmoid
from pycoll.shape_ops import chunk
from pycoll.tensor import Tensor

__all__ = ["glu", "swiglu", "maxout", "prelu"]


def _axis(axis: Any, ndim: int, fn: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int) or not -ndim <= axis < ndim:
        raise ValueError(f"{fn}: axis must be an int in [{-ndim}, {ndim}), got {axis!r}")
    return axis % ndim


@param_aliases({"input": "x", "dim": "axis"})
def glu(x: Tensor, axis: int = -1, name: Optional[str] = None) -> Tensor:
    """a * sigmoid(b), a and b the two halves of x along `axis` (whose size must be even)."""
    x = as_tensor(x)
    ax = _axis(axis, x.ndim, "glu")
    if x.shape[ax] % 2:
        raise ValueError(f"glu: x must have an even size along axis {axis}, got shape {x.shape}")
    a, b = chunk(x, 2, axis=ax)
    return a * sigmoid(b)


def swiglu(x: Tensor, y: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
    """silu(x) * y; with y None, silu(a) * b for a and b the two halves of x's last axis."""
    x = as_tensor(x)
    if y is None:
        if x.ndim == 0 or x.shape[-1] % 2:
            raise ValueError(f"swiglu: with y None, x's last axis must have an even size, got shape {x.shape}")
        x, y = chunk(x, 2, axis=-1)
    else:
        y = as_tensor(y)
        if y.shape != x.shape:
            raise ValueError(f"swiglu: y must have x's shape {x.shape}, got {y.shape}")
    return x * sigmoid(x) * y


def maxout(x: Tensor, groups: int, axis: int = 1, name: Optional[str] = None) -> Tensor:
    """The largest of each run of `groups` consecutive channels along `axis` (1 for NCHW, -1 or 3
    for NHWC): C channels become C / groups. The gradient goes to the first largest."""
    x = as_tensor(x)
    ax = _axis(axis, x.ndim, "maxout")
    x, = placed("maxout", x, axes=(ax,))  # auto-parallel: the channels grouped whole
    a = x._array
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or a.shape[ax] % groups:
        raise ValueError(f"maxout: groups must be an int >= 1 dividing the {a.shape[ax]} channels along axis "
                         f"{axis}, got {groups!r}")
    xp = array_module(a)
    grouped = a.reshape(a.shape[:ax] + (a.shape[ax] // groups, groups) + a.shape[ax + 1:])
    # one elementwise pass per member of a group: a max or argmax over the short group axis runs
    # NumPy's strided inner loop, 10x slower on NHWC feature maps
    members = [grouped[(slice(None),) * (ax + 1) + (j,)] for j in range(groups)]
    out = members[0]
    for member in members[1:]:
        out = xp.maximum(out, member)  # NaN spreads, as max does

    def backward(g: Any) -> tuple:
        return ((xp.expand_dims(g, ax + 1) * first_largest(xp, members, out, ax)).reshape(a.shape),)
    return op_output(xp.array(out, copy=True) if groups == 1 else out, backward, x)


def first_largest(xp: Any, members: List[Any], out: Any, ax: int) -> Any:
    """Where maxout's gradient goes: per group, the first of its ``members`` equal to the max
    ``out``, as a mask with the group axis at ``ax + 1`` (found when a backward asks)."""
    picks, taken = [], None
    for member in members:
        hit = member == out
        picks.append(hit if taken is None else hit & ~taken)
        taken = hit if taken is None else taken | hit
    return xp.stack(picks, axis=ax + 1)


def prelu(x: Tensor, weight: Tensor, data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """x where x > 0, weight * x elsewhere. weight holds one slope (shape [] or [1]) or one per
    channel, the channels being axis 1 ('NC', 'NCL', 'NCHW', 'NCDHW') or the last axis ('NLC',
    'NHWC', 'NDHWC')."""
    x = as_tensor(x)
    x, weight = placed("prelu", x, as_tensor(weight), channel=1 if str(data_format)[1:2] == "C" else x.ndim - 1)
    a, w = x._array, weight._array  # auto-parallel (placed): a per-channel weight cut as x's channels
    if w.ndim > 1:
        raise ValueError(f"prelu: weight must have 0 or 1 dimensions, got shape {list(w.shape)}")
    shape = [1] * a.ndim
    if w.size > 1:
        if data_format not in ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"):
            raise ValueError(f"prelu: data_format must be one of 'NC', 'NCL', 'NCHW', 'NCDHW', 'NLC', 'NHWC', "
                             f"'NDHWC', got {data_format!r}")
        channel = 1 if data_format[1] == "C" else a.ndim - 1
        if a.ndim < 2 or a.shape[channel] != w.size:
            raise ValueError(f"prelu: weight has {w.size} slopes, x (shape {list(a.shape)}, {data_format}) must have "
                             f"as many channels")
        shape[channel] = w.size
    slope = w.reshape(shape)
    xp = array_module(a)
    pos = a > 0
    saved = silence(SILENT)  # an inf or NaN slope or input gives NaN/inf silently, as paddle's
    try:
        out = xp.where(pos, a, a * slope).astype(a.dtype, copy=False)
    finally:
        restore(saved)
    rw = needs_grad(weight)

    def backward(g: Any) -> tuple:
        gw = None
        if rw:
            reduce_axes = tuple(i for i, n in enumerate(shape) if n == 1)
            gw = xp.where(pos, 0, a * g).sum(axis=reduce_axes).reshape(w.shape)
        return xp.where(pos, g, g * slope), gw
    return op_output(out, backward, x, weight)
