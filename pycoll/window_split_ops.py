"""``unfold`` (sliding windows along one axis; ``pycoll.unfold`` and ``Tensor.unfold``, not
``nn.functional.unfold``'s image patches) and ``Tensor.split_with_sizes``.

Both are compositions of pycoll's differentiable ops (advanced indexing, moveaxis, split), which
give them their gradients. unfold's windows are copies, where paddle's are a strided view of x;
and where windows overlap an element's gradient is the sum over every window holding it (paddle
3.3.1 keeps one window's share only: for x of length 5, windows of 2, step 1 and upstream
gradient [[0, 1], [2, 3], [4, 5], [6, 7]], it gives [0, 2, 4, 6, 7] where the sum is
[0, 3, 7, 11, 7]).
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, needs_grad
from pycoll.device import array_module
from pycoll.reshape_ops import moveaxis
from pycoll.shape_ops import axis_arg, reshape, split
from pycoll.tensor import Tensor, wrap


def _count(value: Any, fn: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}: {name} must be an int, got {value!r}")
    return int(value)


@param_aliases({"dimension": "axis"})
def unfold(x: Tensor, axis: int, size: int, step: int, name: Optional[str] = None) -> Tensor:
    """The windows of `size` elements of x along `axis`, `step` apart: dimension `axis` becomes the
    window count (len - size) // step + 1 and a last dimension of `size` holds each window. On the
    host the result views x's memory, as paddle's (a GPU's is a copy)."""
    x = as_tensor(x)
    size, step = _count(size, "unfold", "size"), _count(step, "unfold", "step")
    if step <= 0:
        raise ValueError(f"unfold: step must be greater than 0, got {step}")
    if x.ndim == 0:
        if size != 1:
            raise ValueError(f"unfold: size must be 1 for a 0-d x, got {size}")
        return reshape(x, [1])
    ax = axis_arg(axis, x.ndim)
    length = x.shape[ax]
    if not 0 <= size <= length:
        raise ValueError(f"unfold: size must be in [0, {length}] (x's size along axis {axis}), got {size}")
    xp = array_module(x._array)
    count = (length - size) // step + 1
    a = x._array
    strided = None
    if isinstance(a, np.ndarray) and getattr(x, "placements", None) is None:
        # paddle's unfold is a view of x's memory (windows overlap where step < size), so that
        # writes reach x outside the graph
        shape = a.shape[:ax] + (count,) + a.shape[ax + 1:] + (size,)
        strides = a.strides[:ax] + (a.strides[ax] * step,) + a.strides[ax + 1:] + (a.strides[ax],)
        strided = np.lib.stride_tricks.as_strided(a, shape, strides, writeable=a.flags.writeable)
        if not needs_grad(x):
            return wrap(strided)
    index = (xp.arange(count) * step)[:, None] + xp.arange(size)[None, :]
    windows = moveaxis(x[(slice(None),) * ax + (index,)], ax + 1, -1)  # the gradient's path
    if strided is not None:
        windows._array = strided  # the same values, in x's memory
    return windows


def split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0) -> List[Tensor]:
    """x cut along `dim` into pieces of the given sizes (non-negative, adding up to x's size there)."""
    x = as_tensor(self)
    sizes = [_count(s, "split_with_sizes", "split_sizes") for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise ValueError(f"split_with_sizes expects split_sizes have only non-negative entries, got {sizes}")
    ax = axis_arg(dim, x.ndim)
    if sum(sizes) != x.shape[ax]:
        raise ValueError(f"Split sizes add up to {sum(sizes)} but got the tensor's size of {x.shape[ax]}")
    return split(x, sizes, axis=ax)


Tensor.unfold, Tensor.split_with_sizes = unfold, split_with_sizes
