"""paddle.nn.functional max_unpool1d/2d/3d: the partial inverse of a max pool. Each value of x
goes to the place its mask (``return_mask=True``'s flat index into the pooled input's spatial
axes) names in a zero output; the gradient reads those places back.

The output has (in - 1) * stride - 2 * padding + kernel_size cells per axis unless output_size
asks for one in the open interval of stride around that, as paddle's. Where an index repeats, the
last value written (in x's order) stays, as in paddle's CPU kernel; each x still gets the
gradient of its place.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from pycoll._tensor_ops import as_tensor, op_output
from pycoll.device import array_module, to_module
from pycoll.inplace_ops import assign_last
from pycoll.nn._sliding import FORMATS, channels_first, int_list
from pycoll.tensor import Tensor

Size = Union[int, Sequence[int]]


def max_unpool3d(x: Tensor, indices: Tensor, kernel_size: Size, stride: Optional[Size] = None,
                 padding: Size = 0, data_format: str = "NCDHW", output_size: Optional[Sequence[int]] = None,
                 name: Optional[str] = None) -> Tensor:
    """Unpool x [N, C, D, H, W] by max_pool3d's mask (flat indices d * H * W + h * W + w)."""
    return _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, 3, "max_unpool3d")


def max_unpool2d(x: Tensor, indices: Tensor, kernel_size: Size, stride: Optional[Size] = None,
                 padding: Size = 0, data_format: str = "NCHW", output_size: Optional[Sequence[int]] = None,
                 name: Optional[str] = None) -> Tensor:
    """Unpool x [N, C, H, W] by max_pool2d's mask (flat indices h * W + w)."""
    return _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, 2, "max_unpool2d")


def max_unpool1d(x: Tensor, indices: Tensor, kernel_size: Size, stride: Optional[Size] = None,
                 padding: Size = 0, data_format: str = "NCL", output_size: Optional[Sequence[int]] = None,
                 name: Optional[str] = None) -> Tensor:
    """Unpool x [N, C, L] by max_pool1d's mask (indices into L)."""
    return _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, 1, "max_unpool1d")


def _output_sizes(output_size: Any, default: List[int], stride: List[int], fn: str) -> List[int]:
    """output_size (None, or one size per spatial axis, optionally after N and C) checked
    against the default sizes: each must lie strictly within a stride of its default."""
    if output_size is None:
        return default
    nd = len(default)
    if isinstance(output_size, Tensor):
        output_size = output_size.tolist()
    sizes = [int(v.item()) if isinstance(v, Tensor) else v for v in output_size] \
        if isinstance(output_size, (list, tuple)) else None
    if sizes is None or len(sizes) not in (nd, nd + 2):
        raise ValueError(f"{fn}: output_size must be a list of {nd} (or {nd + 2}, with N and C) ints, "
                         f"got {output_size!r}")
    sizes = int_list(sizes[-nd:], nd, "output_size", fn)
    for s, d, st in zip(sizes, default, stride):
        if not d - st < s < d + st:
            raise ValueError(f"{fn}: output_size {output_size!r} must lie strictly between default - stride and "
                             f"default + stride on each axis (default {default}, stride {stride})")
    return sizes


def _max_unpool(x: Tensor, indices: Any, kernel_size: Any, stride: Any, padding: Any, data_format: str,
                output_size: Any, nd: int, fn: str) -> Tensor:
    x = as_tensor(x)
    if data_format != FORMATS[nd][0]:
        raise ValueError(f"{fn}: data_format must be {FORMATS[nd][0]!r}, got {data_format!r}")
    a = channels_first(x._array, nd, False, fn)
    xp = array_module(a)
    idx = to_module(as_tensor(indices)._array, xp)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{fn}: indices must hold integers (int32 or int64), got dtype {idx.dtype}")
    if idx.shape != a.shape:
        raise ValueError(f"{fn}: indices must have x's shape {list(a.shape)}, got {list(idx.shape)}")
    kernel = int_list(kernel_size, nd, "kernel_size", fn)
    stride = list(kernel) if stride is None else int_list(stride, nd, "stride", fn)
    pads = int_list(padding, nd, "padding", fn, minimum=0)
    default = [(n - 1) * s + k - 2 * p for n, s, k, p in zip(a.shape[2:], stride, kernel, pads)]
    sizes = _output_sizes(output_size, default, stride, fn)
    n, c = a.shape[:2]
    plane = math.prod(sizes)
    where = idx.reshape(n * c, math.prod(idx.shape[2:])).astype(np.int64)
    if where.size and (int(where.min()) < 0 or int(where.max()) >= plane):
        raise ValueError(f"{fn}: indices must lie in [0, {plane}) (the output's spatial size {sizes}), got values "
                         f"in [{int(where.min())}, {int(where.max())}]")
    places = (xp.arange(n * c)[:, None] * plane + where).reshape(-1)
    out = xp.zeros(n * c * plane, dtype=a.dtype)
    assign_last(out, places, a.reshape(-1))  # a place written twice keeps the last value

    def backward(g: Any) -> tuple:
        return (xp.take_along_axis(g.reshape(n * c, plane), where, axis=1).reshape(a.shape),)
    return op_output(out.reshape(n, c, *sizes), backward, x)
