"""Order statistics and counting: kthvalue, mode, median, quantile, nanmean, nansum,
count_nonzero, bincount, unique, searchsorted and bucketize (also Tensor methods).

The order statistics sort along the reduced axes (stably) and send each result's gradient to
the element(s) it was read from (`_picked`); paddle's dtypes: indices int64, the median and the
quantiles of integers float32.
"""
from __future__ import annotations

import builtins as _builtins
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll._promotion import INT_TO_FLOAT, floating
from pycoll._tensor_ops import as_tensor, normalize_axes, op_output, value_output
from pycoll.device import array_module, to_module
from pycoll.dtypes import DTypeLike, convert_dtype, int32, int64
from pycoll.math_ops import kept_shape
from pycoll.shape_ops import axis_arg, scatter_add
from pycoll.tensor import Tensor


class _Rows:
    """x's array with the reduced `axes` moved last and merged: ``rows`` is [lead..., n], sorted
    stably into ``sorted`` by ``order``; ``back`` returns a gradient of ``rows``' shape to x's."""

    def __init__(self, a: Any, axes: Optional[Tuple[int, ...]]):
        xp = array_module(a)
        axes = tuple(range(a.ndim)) if axes is None else axes
        self.rest = [i for i in range(a.ndim) if i not in axes]
        self.perm = self.rest + list(axes)
        moved = a.transpose(self.perm)
        self.lead = moved.shape[:len(self.rest)]
        self.moved_shape = moved.shape
        self.rows = moved.reshape(self.lead + (-1,))
        self.n = self.rows.shape[-1]
        self.order = xp.argsort(self.rows, axis=-1, kind="stable")
        self.sorted = xp.take_along_axis(self.rows, self.order, axis=-1)
        self.kept = kept_shape(a.shape, axes)

    def back(self, g_rows: Any) -> Any:
        inverse = [self.perm.index(i) for i in range(len(self.perm))]
        return g_rows.reshape(self.moved_shape).transpose(inverse)


def _picked(rows: _Rows, positions: Sequence[int], weights: Any, keepdim: bool,
            dtype: Any) -> Any:
    """The Q weighted sums ``sum_j weights[q, j] * rows.sorted[..., positions[j]]`` (``weights``
    is [Q, len(positions)]), stacked first, and the backward function that sends each picked
    element its weight times the gradient."""
    xp = array_module(rows.rows)
    pos = xp.asarray(list(positions), dtype=int64)
    w = xp.asarray(weights, dtype=dtype)  # [Q, P]
    vals = rows.sorted[..., pos].astype(dtype, copy=False)  # [lead..., P]
    out = (vals[None] * w.reshape((w.shape[0],) + (1,) * len(rows.lead) + (w.shape[1],))).sum(-1)  # [Q, lead...]
    src = rows.order[..., pos]  # where each picked value came from

    def backward(g: Any) -> tuple:
        g = g.reshape((w.shape[0],) + rows.lead)
        contrib = (g[..., None] * w.reshape((w.shape[0],) + (1,) * len(rows.lead) + (w.shape[1],))).sum(0)
        flat_rows = xp.zeros((int(np.prod(rows.lead, dtype=np.int64)), rows.n), dtype=g.dtype)
        line = xp.arange(flat_rows.shape[0])[:, None]
        scatter_add(flat_rows, (line, src.reshape(flat_rows.shape[0], -1)), contrib.reshape(flat_rows.shape[0], -1))
        return (rows.back(flat_rows),)
    shape = (w.shape[0],) + (tuple(rows.kept) if keepdim else rows.lead)
    return out.reshape(shape), backward


def _quantile_weights(q: float, n: int, interpolation: str) -> Tuple[List[int], List[float]]:
    pos = q * (n - 1)
    lo, hi = int(np.floor(pos)), int(np.ceil(pos))
    frac = pos - lo
    if interpolation == "linear":
        return [lo, hi], [1 - frac, frac]
    if interpolation == "midpoint":
        return [lo, hi], [0.5, 0.5]
    if interpolation == "lower":
        return [lo, hi], [1.0, 0.0]
    if interpolation == "higher":
        return [lo, hi], [0.0, 1.0]
    near = int(np.round(pos))  # nearest: halves to even, as NumPy's and paddle's
    return [near, near], [1.0, 0.0]


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(x: Any, q: Any, axis: Any = None, keepdim: bool = False, interpolation: str = "linear",
             name: Optional[str] = None) -> Tensor:
    """The q-th quantile(s) over `axis` (None: all of x); a list of q stacks its results first.
    `interpolation` between the two nearest order statistics: linear, lower, higher, midpoint or
    nearest."""
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"quantile: interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}")
    x = as_tensor(x)
    a = floating(x._array)
    qs = q.tolist() if isinstance(q, Tensor) else q
    many = isinstance(qs, (list, tuple))
    qs = list(qs) if many else [qs]
    if not qs or _builtins.any(not 0 <= float(v) <= 1 for v in qs):
        raise ValueError(f"quantile: q must be in [0, 1], got {q!r}")
    rows = _Rows(a, normalize_axes(axis, a.ndim))
    picks = [_quantile_weights(float(v), rows.n, interpolation) for v in qs]
    positions = sorted({p for ps, _ in picks for p in ps})
    weights = np.zeros((len(qs), len(positions)))
    for i, (ps, ws) in enumerate(picks):
        for p, wt in zip(ps, ws):
            weights[i, positions.index(p)] += wt
    out, backward = _picked(rows, positions, weights, keepdim, a.dtype)
    return op_output(out if many else out[0], backward, x)


def median(x: Any, axis: Optional[int] = None, keepdim: bool = False, mode: str = "avg",
           name: Optional[str] = None) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """The median over `axis` (None: all of x). mode 'avg' averages the two middle values of an
    even count (integers give float32); mode 'min' takes the lower one and also returns its
    int64 index (along `axis`)."""
    if mode not in ("avg", "min"):
        raise ValueError(f"median: mode must be 'avg' or 'min', got {mode!r}")
    x = as_tensor(x)
    a = x._array
    ax = None if axis is None else axis_arg(axis, a.ndim)
    rows = _Rows(a, None if ax is None else (ax,))
    lo, hi = (rows.n - 1) // 2, rows.n // 2
    if mode == "avg":
        dtype = INT_TO_FLOAT if a.dtype.kind in "biu" else a.dtype
        out, backward = _picked(rows, [lo, hi] if hi != lo else [lo], [[0.5, 0.5] if hi != lo else [1.0]],
                                keepdim, dtype)
        return op_output(out[0], backward, x)
    out, backward = _picked(rows, [lo], [[1]], keepdim, a.dtype)
    index = rows.order[..., lo]
    shape = tuple(rows.kept) if keepdim else rows.lead
    return op_output(out[0], backward, x), value_output(index.reshape(shape).astype(int64), "median", x)


def kthvalue(x: Any, k: int, axis: Optional[int] = None, keepdim: bool = False,
             name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """The k-th smallest value along `axis` (default: the last) and its int64 index."""
    x = as_tensor(x)
    a = x._array
    ax = axis_arg(-1 if axis is None else axis, a.ndim)
    n = a.shape[ax] if a.ndim else 1
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ValueError(f"kthvalue: k must be an int in [1, {n}], got {k!r}")
    rows = _Rows(a, (ax,))
    out, backward = _picked(rows, [k - 1], [[1]], keepdim, a.dtype)
    index = rows.order[..., k - 1].reshape(tuple(rows.kept) if keepdim else rows.lead)
    return op_output(out[0], backward, x), value_output(index.astype(int64), "kthvalue", x)


def mode(x: Any, axis: int = -1, keepdim: bool = False, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """The most frequent value along `axis` (the smallest of equally frequent ones) and the int64
    index of its last occurrence (paddle's); the gradient goes to that element."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    ax = axis_arg(axis, a.ndim)
    rows = _Rows(a, (ax,))
    s = rows.sorted
    counts = (s[..., :, None] == s[..., None, :]).sum(-1)
    value = xp.take_along_axis(s, counts.argmax(-1)[..., None], -1)  # [lead..., 1]
    hits = rows.rows == value
    last = rows.n - 1 - xp.flip(hits, -1).argmax(-1)  # [lead...]
    shape = tuple(rows.kept) if keepdim else rows.lead

    def backward(g: Any) -> tuple:
        z = xp.zeros(rows.rows.shape, g.dtype)
        xp.put_along_axis(z, last[..., None], g.reshape(rows.lead + (1,)), -1)
        return (rows.back(z),)
    return (op_output(value.reshape(shape), backward, x),
            value_output(last.reshape(shape).astype(int64), "mode", x))


def nansum(x: Any, axis: Any = None, dtype: DTypeLike = None, keepdim: bool = False,
           name: Optional[str] = None) -> Tensor:
    """The sum over `axis`, NaNs counted as zero (and taking no gradient)."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    axes = normalize_axes(axis, a.ndim)
    ok = ~xp.isnan(a) if a.dtype.kind == "f" else xp.ones(a.shape, bool)
    out = xp.where(ok, a, 0).sum(axis=axes, keepdims=keepdim, dtype=convert_dtype(dtype))
    kept = kept_shape(a.shape, axes)
    return op_output(out, lambda g: (xp.where(ok, g.reshape(kept), 0).astype(g.dtype, copy=False),), x)


def nanmean(x: Any, axis: Any = None, keepdim: bool = False, name: Optional[str] = None) -> Tensor:
    """The mean over `axis` of the elements that are not NaN (NaN where all are)."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    axes = normalize_axes(axis, a.ndim)
    ok = ~xp.isnan(a)
    count = ok.sum(axis=axes, keepdims=True).astype(a.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        full = xp.where(ok, a, 0).sum(axis=axes, keepdims=True) / count
    kept = kept_shape(a.shape, axes)
    out = full if keepdim else full.reshape([n for i, n in enumerate(a.shape) if axes is not None and i not in axes])
    return op_output(out.astype(a.dtype, copy=False),
                     lambda g: (xp.where(ok, g.reshape(kept) / count, 0).astype(g.dtype, copy=False),), x)


def count_nonzero(x: Any, axis: Any = None, keepdim: bool = False, name: Optional[str] = None) -> Tensor:
    """How many elements over `axis` are non-zero, int64."""
    x = as_tensor(x)
    a = x._array
    out = (a != 0).sum(axis=normalize_axes(axis, a.ndim), keepdims=keepdim).astype(int64)
    return value_output(array_module(a).asarray(out), "count_nonzero", x)


def bincount(x: Any, weights: Any = None, minlength: int = 0, name: Optional[str] = None) -> Tensor:
    """How often each value 0..max(x) occurs in the 1-D non-negative integer tensor x (int64), or
    the sums of `weights` per value; at least `minlength` bins."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise ValueError(f"bincount: x must be a 1-D integer tensor, got shape {x.shape} and dtype {x.dtype}")
    if a.size and int(a.min()) < 0:
        raise ValueError(f"bincount: x must be non-negative, got a minimum of {int(a.min())}")
    w = None if weights is None else to_module(as_tensor(weights)._array, xp)
    out = xp.bincount(a, weights=w, minlength=int(minlength))
    out = out.astype(int64) if w is None else out.astype(w.dtype, copy=False)
    return value_output(out, "bincount", x)


def unique(x: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: Optional[int] = None, dtype: DTypeLike = "int64", sorted: bool = True,  # noqa: A002
           name: Optional[str] = None) -> Union[Tensor, Tuple[Tensor, ...]]:
    """The sorted unique elements of x (or unique slices along `axis`), then, as asked, the index
    of each one's first occurrence, the index of every element's unique value and the counts, in
    `dtype` (int64 or int32)."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    dt = convert_dtype(dtype)
    if dt not in (int32, int64):
        raise ValueError(f"unique: dtype must be int32 or int64, got {dtype!r}")
    found = xp.unique(a if axis is not None else a.reshape(-1), return_index=True, return_inverse=True,
                      return_counts=True, axis=None if axis is None else axis_arg(axis, a.ndim))
    values, index, inverse, counts = found
    outs = [value_output(values, "unique", x)]
    for want, arr in ((return_index, index), (return_inverse, inverse.reshape(-1)), (return_counts, counts)):
        if want:
            outs.append(value_output(arr.astype(dt), "unique", x))
    return outs[0] if len(outs) == 1 else tuple(outs)


def searchsorted(sorted_sequence: Any, values: Any, out_int32: bool = False, right: bool = False,
                 name: Optional[str] = None) -> Tensor:
    """Where each of `values` would go in `sorted_sequence` (its last dimension sorted) to keep
    it sorted: the first such place, or with `right` the last. An N-d sequence searches row by
    row: its leading dimensions match values'."""
    seq = as_tensor(sorted_sequence)
    v = as_tensor(values)
    s = seq._array
    xp = array_module(s)
    va = to_module(v._array, xp)
    if s.ndim == 1:
        out = xp.searchsorted(s, va, side="right" if right else "left")
    else:
        if s.shape[:-1] != va.shape[:-1]:
            raise ValueError(f"searchsorted: sorted_sequence's leading dimensions {seq.shape[:-1]} must match "
                             f"values' {v.shape[:-1]}")
        before = s[..., None, :] <= va[..., :, None] if right else s[..., None, :] < va[..., :, None]
        out = before.sum(-1)
    return value_output(out.astype(int32 if out_int32 else int64), "searchsorted", seq, v)


def bucketize(x: Any, sorted_sequence: Any, out_int32: bool = False, right: bool = False,
              name: Optional[str] = None) -> Tensor:
    """searchsorted of every element of x in the 1-D `sorted_sequence`."""
    seq = as_tensor(sorted_sequence)
    if seq.ndim != 1:
        raise ValueError(f"bucketize: sorted_sequence must be 1-D, got shape {seq.shape}")
    return searchsorted(seq, x, out_int32, right)


for _fn in (quantile, median, kthvalue, mode, nansum, nanmean, count_nonzero, bincount, unique, bucketize):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
