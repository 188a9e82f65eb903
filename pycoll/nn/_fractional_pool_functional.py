"""paddle.nn.functional fractional_max_pool2d and fractional_max_pool3d (Graham's fractional
max-pooling), paddle 3.3.1's window sequence.

Along an axis of n inputs and m outputs, alpha = (n - k) / (m - (1 if k else 0)) and u is scaled
into its admissible range when no kernel_size k is given; window i covers
[int((i + u) alpha) - int(u alpha), that + k) with a kernel, [same, int((i + 1 + u) alpha) -
int(u alpha)) without, clipped to the input. The arithmetic is float32, as the kernel's, so the
windows are paddle's to the cell. random_u=None draws u from pycoll's generator (`pycoll.seed`).

The maxima are located on the arrays (the first maximum of a window in row-major order, as
paddle's kernel); the output is then gathered from x at those places with a differentiable
take_along_axis, so the gradient goes to them and create_graph works.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll._tensor_ops import as_tensor, placed, require_floating, value_output
from pycoll.device import array_module
from pycoll.index_ops import take_along_axis
from pycoll.nn._sliding import int_list
from pycoll.random import get_rng
from pycoll.tensor import Tensor, wrap

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d"]

Size = Union[int, Sequence[Optional[int]]]
MaskedResult = Union[Tensor, Tuple[Tensor, Tensor]]


def fractional_max_pool2d(x: Tensor, output_size: Size, kernel_size: Optional[Size] = None,
                          random_u: Optional[float] = None, return_mask: bool = False,
                          name: Optional[str] = None) -> MaskedResult:
    """The maximum of each fractional window over H and W of x [N, C, H, W]; output_size an int or
    (H, W) whose None entries keep the input's size; kernel_size None: disjoint windows. With
    return_mask also the int32 flat index h * W + w of each maximum."""
    return _fractional_max_pool(x, output_size, kernel_size, random_u, return_mask, 2, "fractional_max_pool2d")


def fractional_max_pool3d(x: Tensor, output_size: Size, kernel_size: Optional[Size] = None,
                          random_u: Optional[float] = None, return_mask: bool = False,
                          name: Optional[str] = None) -> MaskedResult:
    """fractional_max_pool2d's rule over D, H and W of x [N, C, D, H, W]; the mask holds
    d * H * W + h * W + w."""
    return _fractional_max_pool(x, output_size, kernel_size, random_u, return_mask, 3, "fractional_max_pool3d")


def _windows(n: int, m: int, k: int, u: np.float32) -> Tuple[List[int], List[int]]:
    """(starts, ends) of the m windows along an axis of n inputs (see the module's notes)."""
    f = np.float32
    alpha = f(n - k) / f(m - (1 if k > 0 else 0))
    if k == 0:  # scale u into the range where every window holds base or base + 1 inputs
        base = n // m
        u = u * min(f(base + 2) / alpha - f(1), f(n + 1 - base) / alpha - f(m - 1))
    offset = int(u * alpha)
    starts, ends = [], []
    for i in range(m):
        start = int((f(i) + u) * alpha) - offset
        end = start + k if k > 0 else int((f(i + 1) + u) * alpha) - offset
        starts.append(max(start, 0))
        ends.append(min(end, n))
    return starts, ends


def _sizes(output_size: Any, kernel_size: Any, spatial: Sequence[int], nd: int, fn: str) -> Tuple[List[int], List[int]]:
    if isinstance(output_size, int) and not isinstance(output_size, bool):
        out = [output_size] * nd
    elif isinstance(output_size, (list, tuple)) and len(output_size) == nd:
        out = [n if o is None else o for o, n in zip(output_size, spatial)]
    else:
        raise ValueError(f"{fn}: output_size must be an int or {nd} ints (None keeps the input's size), "
                         f"got {output_size!r}")
    out = int_list(out, nd, "output_size", fn)
    kernel = [0] * nd if kernel_size is None else int_list(kernel_size, nd, "kernel_size", fn)
    for n, m, k in zip(spatial, out, kernel):
        if n < m - 1 + k or (k > 0 and m < 2) or (k == 0 and m > n):
            raise ValueError(f"{fn}: an input of size {list(spatial)} is too small for output_size {out} "
                             f"with kernel_size {kernel_size}")
    return out, kernel


def _fractional_max_pool(x: Tensor, output_size: Any, kernel_size: Any, random_u: Optional[float], return_mask: bool,
                         nd: int, fn: str) -> MaskedResult:
    x, = placed("_all_whole", require_floating(as_tensor(x), fn))  # auto-parallel: pooled whole
    if x.ndim != nd + 2:
        raise ValueError(f"{fn}: x must be {nd + 2}-D [N, C, {'D, ' if nd == 3 else ''}H, W], got shape {x.shape}")
    if random_u is None:
        u = np.float32(get_rng().uniform(0.0, 1.0))
    elif isinstance(random_u, bool) or not isinstance(random_u, (int, float)) or not 0 < random_u < 1:
        raise ValueError(f"{fn}: random_u must be a float in (0, 1), got {random_u!r}")
    else:
        u = np.float32(random_u)
    a = x._array
    xp = array_module(a)
    spatial = list(a.shape[2:])
    out, kernel = _sizes(output_size, kernel_size, spatial, nd, fn)
    cells: List[Any] = []  # per axis, [out, widest window] input positions (the last one repeated)
    for n, m, k in zip(spatial, out, kernel):
        starts, ends = _windows(n, m, k, u)
        widest = max(e - s for s, e in zip(starts, ends))
        pos = np.minimum(np.array(starts)[:, None] + np.arange(widest), np.array(ends)[:, None] - 1)
        cells.append(xp.asarray(pos))
    index = tuple(c.reshape([1] * (2 * i) + list(c.shape) + [1] * (2 * (nd - 1 - i))) for i, c in enumerate(cells))
    picked = a[(slice(None), slice(None)) + index]  # [N, C, o1, k1, o2, k2, ...]
    order = [0, 1] + [2 + 2 * i for i in range(nd)] + [3 + 2 * i for i in range(nd)]
    flat_windows = picked.transpose(order).reshape(a.shape[:2] + tuple(out) + (-1,))
    best = xp.unravel_index(flat_windows.argmax(axis=-1), tuple(c.shape[1] for c in cells))
    where = 0
    for i, (c, b) in enumerate(zip(cells, best)):
        grid = [1] * nd
        grid[i] = out[i]
        axis_pos = c[xp.arange(out[i]).reshape(grid), b]  # the input position of each maximum along axis i
        where = where * spatial[i] + axis_pos
    mask = where.astype(np.int64)
    result = take_along_axis(x.reshape(list(a.shape[:2]) + [-1]), wrap(mask.reshape(a.shape[0], a.shape[1], -1)),
                             axis=2).reshape(list(a.shape[:2]) + out)
    if not return_mask:
        return result
    return result, value_output(mask.astype(np.int32), f"{fn}_mask", x)
