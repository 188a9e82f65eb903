"""paddle.nn.functional.affine_grid and grid_sample (4-D: [N, C, H, W] inputs, [N, H, W, 2] grids
of (x, y) in [-1, 1]; 5-D: [N, C, D, H, W] inputs, [N, D, H, W, 3] grids of (x, y, z), 'bilinear'
then being trilinear), with paddle's coordinate rules: align_corners maps -1 and 1 to the centres
of the corner pixels, otherwise to their outer edges; padding_mode 'zeros' reads 0 outside,
'border' clamps the coordinate, 'reflection' mirrors it at the edges (then clamps). 'nearest'
rounds half to even, as paddle's kernel (std::nearbyint).

grid_sample is one op: its backward scatters the gradient into x's pixels and gives the grid the
derivative of the (bi/tri)linear weights (none for 'nearest', as in paddle), through the padding's
clamp or mirror."""
from __future__ import annotations

import functools
import itertools
import math
import operator
from typing import Any, List, Optional, Tuple

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, op_output
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.math_ops import matmul
from pycoll.shape_ops import scatter_add
from pycoll.tensor import Tensor, wrap

__all__ = ["affine_grid", "grid_sample"]


def _base_coords(xp: Any, n: int, align_corners: bool, dtype: Any) -> Any:
    """The normalised coordinates of n pixel centres along one axis."""
    if align_corners:
        return xp.linspace(-1.0, 1.0, n).astype(dtype) if n > 1 else xp.zeros(1, dtype)
    return ((xp.arange(n) * 2 + 1) / n - 1).astype(dtype)


def affine_grid(theta: Tensor, out_shape: Any, align_corners: bool = True, name: Optional[str] = None) -> Tensor:
    """The sampling grid of the affine maps theta ([N, 2, 3] for out_shape [N, C, H, W], giving
    [N, H, W, 2]; or [N, 3, 4] for [N, C, D, H, W], giving [N, D, H, W, 3]): each output pixel's
    normalised (x, y[, z], 1) times theta transposed. Differentiable in theta."""
    theta = as_tensor(theta)
    if isinstance(out_shape, Tensor):
        out_shape = [int(v) for v in out_shape.numpy().reshape(-1)]
    if not isinstance(out_shape, (list, tuple)) or len(out_shape) not in (4, 5) \
            or not all(isinstance(v, (int, np.integer)) and v > (0 if i else -1) for i, v in enumerate(out_shape)):
        raise ValueError(f"affine_grid: out_shape must be 4 or 5 ints ([N, C, H, W] or [N, C, D, H, W]), N >= 0 and "
                         f"the others positive, got {out_shape!r}")
    nd = len(out_shape) - 2
    if not is_floating(theta.dtype) or theta.shape != [out_shape[0], nd, nd + 1]:
        raise ValueError(f"affine_grid: theta must be a floating [N, {nd}, {nd + 1}] tensor with N = out_shape[0] = "
                         f"{out_shape[0]}, got shape {theta.shape} dtype {theta.dtype}")
    xp = array_module(theta._array)
    spatial = list(out_shape[2:])
    axes = [_base_coords(xp, s, align_corners, theta.dtype) for s in spatial]
    mesh = xp.meshgrid(*axes, indexing="ij")  # per axis (d, h, w order), of shape spatial
    coords = [*reversed(mesh), xp.ones(spatial, theta.dtype)]  # x, y[, z], 1
    base = wrap(xp.stack(coords, axis=-1).reshape(1, -1, nd + 1))
    grid = matmul(base, theta, transpose_y=True)  # [N, prod(spatial), nd]
    return grid.reshape([out_shape[0], *spatial, nd])


def _unnormalize(coord: Any, size: int, align_corners: bool) -> Tuple[Any, float]:
    """Pixel coordinates of normalised `coord` along an axis of `size`, and d pixel / d coord."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2), (size - 1) / 2
    return (coord + 1) * (size / 2) - 0.5, size / 2


def _pad_coords(xp: Any, p: Any, size: int, mode: str, align_corners: bool) -> Tuple[Any, Any]:
    """`p` moved by the padding mode, and the derivative of that move (1, 0 or -1)."""
    if mode == "zeros":
        return p, None
    if mode == "reflection":
        if size == 1 and align_corners:
            return xp.zeros_like(p), xp.zeros_like(p)
        low, span = (0.0, 2.0 * (size - 1)) if align_corners else (-0.5, 2.0 * size)
        q = p - low
        sign = xp.where(q < 0, -1.0, 1.0)
        extra = xp.mod(xp.abs(q), span)
        flip = extra > span / 2
        p = xp.where(flip, span - extra, extra) + low
        sign = sign * xp.where(flip, -1.0, 1.0)
    else:
        sign = xp.ones_like(p)
    inside = (p >= 0) & (p <= size - 1)  # paddle: the clamp passes the slope on at the edges too
    return xp.clip(p, 0, size - 1), sign * inside


def _check(x: Tensor, grid: Tensor, mode: str, padding_mode: str) -> None:
    fn = "grid_sample"
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"{fn}: mode must be 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"{fn}: padding_mode must be 'zeros', 'border' or 'reflection', got {padding_mode!r}")
    if x.ndim not in (4, 5) or not is_floating(x.dtype):
        raise ValueError(f"{fn}: x must be a floating [N, C, H, W] or [N, C, D, H, W] tensor, got shape "
                         f"{x.shape} dtype {x.dtype}")
    nd = x.ndim - 2
    if grid.ndim != x.ndim or grid.shape[0] != x.shape[0] or grid.shape[-1] != nd:
        want = "[N, H_out, W_out, 2]" if nd == 2 else "[N, D_out, H_out, W_out, 3]"
        raise ValueError(f"{fn}: grid must be {want} with N = {x.shape[0]} for x of shape {x.shape}, got shape "
                         f"{grid.shape}")


def _gather(xp: Any, a: Any, index: List[Any]) -> Tuple[Any, Any, Any]:
    """a[n, :, *index] as [N, C, *out] (0 outside the volume), the flat voxel index, the mask;
    ``index`` holds one array of positions per spatial axis (in a's order), each [N, *out]."""
    n, c, *sizes = a.shape
    ok = xp.ones(index[0].shape, dtype=bool)
    flat = xp.zeros(index[0].shape, dtype=np.int64)
    for i, size in zip(index, sizes):
        ok &= (i >= 0) & (i <= size - 1)
        flat = flat * size + xp.clip(i, 0, size - 1).astype(np.int64)
    points = math.prod(flat.shape[1:])
    vals = xp.take_along_axis(a.reshape(n, c, math.prod(sizes)), flat.reshape(n, 1, points),
                              axis=2).reshape(n, c, *flat.shape[1:])
    return vals * ok[:, None], flat, ok


@param_aliases({"input": "x"})
def grid_sample(x: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool = True, name: Optional[str] = None) -> Tensor:
    """x [N, C, H, W] sampled at grid [N, Ho, Wo, 2] (x, y in [-1, 1]): [N, C, Ho, Wo]; or
    x [N, C, D, H, W] at grid [N, Do, Ho, Wo, 3] (x, y, z): [N, C, Do, Ho, Wo]."""
    x, grid = as_tensor(x), as_tensor(grid)
    _check(x, grid, mode, padding_mode)
    return _grid_sample(x, grid, mode, padding_mode, align_corners, in_pixels=False)


def sample_pixels(x: Tensor, positions: Tensor) -> Tensor:
    """x [N, C, H, W] read bilinearly at ``positions`` [N, Ho, Wo, 2] given in pixels (x, y; 0
    outside the image): grid_sample without the trip through [-1, 1], whose rounding moves a
    whole-pixel position off it (deformable convolution's gradient at a whole pixel is the
    difference towards the next one, paddle's, only if the position stays whole); as paddle's
    deformable sampling, a position at -1 or the size or beyond moves nothing (no slope)."""
    _check(x, positions, "bilinear", "zeros")
    return _grid_sample(x, positions, "bilinear", "zeros", False, in_pixels=True)


def _grid_sample(x: Tensor, grid: Tensor, mode: str, padding_mode: str, align_corners: bool,
                 in_pixels: bool) -> Tensor:
    a, g = x._array, grid._array.astype(x._array.dtype, copy=False)
    xp = array_module(a)
    n, c, *sizes = a.shape
    nd = len(sizes)
    pos, scale, dpad = [], [], []  # per spatial axis of a (d, h, w order); the grid holds (x, y, z)
    for axis, size in enumerate(sizes):
        coord = g[..., nd - 1 - axis]
        p, s = (coord, 1.0) if in_pixels else _unnormalize(coord, size, align_corners)
        p, dp = _pad_coords(xp, p, size, padding_mode, align_corners)
        pos.append(p), scale.append(s), dpad.append(dp)
    out = xp.zeros((n, c, *g.shape[1:-1]), dtype=a.dtype)
    picked = []
    if mode == "nearest":  # the sampled value does not move with the grid: no grid gradient
        vals, flat, ok = _gather(xp, a, [xp.rint(p) for p in pos])
        out += vals
        picked.append((flat, ok))
        slopes = None
    else:
        low = [xp.floor(p) for p in pos]
        frac = [p - lo for p, lo in zip(pos, low)]
        slopes = [xp.zeros_like(out) for _ in range(nd)]  # d out / d pos, per axis
        for corner in itertools.product((0, 1), repeat=nd):
            factors = [f if bit else 1 - f for bit, f in zip(corner, frac)]
            vals, flat, ok = _gather(xp, a, [lo + bit for lo, bit in zip(low, corner)])
            weight = factors[0]
            for f in factors[1:]:
                weight = weight * f
            out += vals * weight[:, None]
            picked.append((flat, ok * weight))
            for axis, bit in enumerate(corner):
                others = xp.ones_like(weight)
                for k, f in enumerate(factors):
                    if k != axis:
                        others = others * f
                slopes[axis] += vals * ((others if bit else -others)[:, None])
        for axis in range(nd):
            if dpad[axis] is not None:
                slopes[axis] *= dpad[axis][:, None]
            slopes[axis] *= scale[axis]
        if in_pixels:  # paddle's deformable sampling: no slope at or beyond a pixel outside the image
            inside = functools.reduce(operator.and_, [(p > -1) & (p < size) for p, size in zip(pos, sizes)])
            for axis in range(nd):
                slopes[axis] *= inside[:, None]
    shape, gshape = a.shape, g.shape  # the backward keeps no values of x or the grid

    def backward(gout: Any) -> tuple:
        gx = xp.zeros((n, c, int(np.prod(sizes))), dtype=gout.dtype)
        rows, chans = xp.arange(n)[:, None, None], xp.arange(c)[None, :, None]
        for flat, weight in picked:
            points = math.prod(flat.shape[1:])
            scatter_add(gx, (rows, chans, flat.reshape(n, 1, points)), (gout * weight[:, None]).reshape(n, c, points))
        if slopes is None:
            ggrid = xp.zeros(gshape, dtype=gout.dtype)
        else:  # the grid's last axis is (x, y[, z]): the spatial axes reversed
            ggrid = xp.stack([(gout * slopes[nd - 1 - k]).sum(axis=1) for k in range(nd)], axis=-1)
        return gx.reshape(shape), ggrid
    return op_output(out, backward, x, grid)
