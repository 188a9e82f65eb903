"""paddle's ``histogramdd`` (counts of points in a D-dimensional grid of bins) and
``histogram_bin_edges`` (the edges ``histogram`` uses); also Tensor methods. Neither takes a
gradient.

Bins follow paddle's (and NumPy's) rule: [edge_i, edge_i+1), the last bin closed on the right,
points outside the edges left out; equal-width edges are ``linspace(min, max, bins + 1)`` in
x's dtype (histogram_bin_edges: the default float dtype, whatever the input's), with the data's
own range when none is given (histogram_bin_edges widens an empty one by 0.5 each way; histogramdd
keeps it, as paddle does).
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor, placed
from pycoll.device import array_module, to_module
from pycoll.dtypes import default_float
from pycoll.tensor import Tensor, wrap


def histogram_bin_edges(input: Tensor, bins: int = 100, min: float = 0.0, max: float = 0.0,  # noqa: A002
                        name: Optional[str] = None) -> Tensor:
    """The bins + 1 edges of ``histogram(input, bins, min, max)``: equal steps from min to max,
    or over the data's range when min == max == 0 (an empty range widened to +-0.5)."""
    x, = placed("_all_whole", as_tensor(input))  # auto-parallel: the range of the whole data
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"histogram_bin_edges: bins must be an int >= 1, got {bins!r}")
    lo, hi = float(min), float(max)
    if lo == hi == 0 and x.size:
        lo, hi = float(x._array.min()), float(x._array.max())
    elif hi < lo:
        raise ValueError(f"histogram_bin_edges: max must be larger than min in range parameter, got min={min} "
                         f"and max={max}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    xp = array_module(x._array)
    return wrap(xp.linspace(lo, hi, int(bins) + 1).astype(default_float()))


def _edges(xp: Any, points: Any, bins: Any, ranges: Optional[Sequence[float]]) -> List[Any]:
    """One 1-D edge array per dimension of `points` [N, D], in its dtype."""
    d, dtype = points.shape[1], points.dtype
    if isinstance(bins, (list, tuple)) and bins and all(isinstance(b, Tensor) for b in bins):
        if len(bins) != d:
            raise ValueError(f"histogramdd: bins must hold {d} edge tensors (one per dimension), got {len(bins)}")
        edges = [to_module(b._array, xp) for b in bins]
        if any(e.ndim != 1 or e.dtype != dtype for e in edges):
            raise ValueError(f"histogramdd: edge tensors in bins must be 1-D of x's dtype {dtype}")
        return edges
    counts = [bins] * d if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool) else bins
    if not isinstance(counts, (list, tuple)) or len(counts) != d:
        raise ValueError(f"histogramdd: bins must be an int, {d} ints or {d} edge tensors, got {bins!r}")
    for i, n in enumerate(counts):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"histogramdd: the {i}-th element of bins must be an int >= 1, got {n!r}")
    if ranges is None:
        low, high = points.min(axis=0), points.max(axis=0)
        bounds = [(low[i], high[i]) for i in range(d)]
    else:
        if not isinstance(ranges, (list, tuple)) or len(ranges) != 2 * d:
            raise ValueError(f"histogramdd: ranges must be a list of {2 * d} numbers (min, max per dimension), "
                             f"got {ranges!r}")
        bounds = [(float(ranges[2 * i]), float(ranges[2 * i + 1])) for i in range(d)]
    return [xp.linspace(float(lo), float(hi), int(n) + 1).astype(dtype) for (lo, hi), n in zip(bounds, counts)]


def histogramdd(x: Tensor, bins: Any = 10, ranges: Optional[Sequence[float]] = None, density: bool = False,
                weights: Optional[Tensor] = None, name: Optional[str] = None) -> Tuple[Tensor, List[Tensor]]:
    """The histogram of the points x[..., :] (the last dimension D holds each point's
    coordinates): a D-dimensional tensor of counts (or summed `weights`; with `density`, divided
    by the total and by each bin's volume) and the D edge tensors. `bins`: an int or D ints
    (equal-width bins over `ranges`, [min0, max0, min1, max1, ...], else the data's range), or
    D 1-D edge tensors."""
    x = as_tensor(x)
    if x.ndim < 2 or x.dtype not in (np.float32, np.float64):
        raise ValueError(f"histogramdd: x must be a float32/float64 tensor of at least 2 dimensions, got "
                         f"{x.dtype} of shape {x.shape}")
    a = x._array
    xp = array_module(a)
    points = a.reshape(-1, a.shape[-1])
    w = None
    if weights is not None:
        weights = as_tensor(weights)
        if weights.shape != x.shape[:-1] or weights.dtype != x.dtype:
            raise ValueError(f"histogramdd: weights must have x's shape without its last dimension "
                             f"({x.shape[:-1]}) and x's dtype, got {weights.dtype} of shape {weights.shape}")
        w = to_module(weights._array, xp).reshape(-1)
    edges = _edges(xp, points, bins, ranges)
    sizes = [e.shape[0] - 1 for e in edges]
    flat = xp.zeros(points.shape[0], dtype=np.int64)
    inside = xp.ones(points.shape[0], dtype=bool)
    for i, e in enumerate(edges):
        v = points[:, i]
        b = xp.searchsorted(e, v, side="right") - 1
        b = xp.where(v == e[-1], sizes[i] - 1, b)  # the last bin is closed on the right
        inside &= (b >= 0) & (b < sizes[i])
        flat = flat * sizes[i] + xp.clip(b, 0, max(sizes[i] - 1, 0))
    total = math.prod(sizes)
    counts = xp.bincount(flat[inside], weights=None if w is None else w[inside], minlength=total)
    hist = counts[:total].astype(a.dtype).reshape(sizes)
    if density:
        volume = xp.ones((), dtype=a.dtype)
        for i, e in enumerate(edges):
            volume = volume[..., None] * xp.diff(e)
        hist = hist / hist.sum() / volume
    return wrap(hist.astype(a.dtype, copy=False)), [wrap(e) for e in edges]


Tensor.histogramdd, Tensor.histogram_bin_edges = histogramdd, histogram_bin_edges
