"""Counting and NaN-skipping sums: nanmean, nansum, count_nonzero, bincount, unique,
searchsorted and bucketize (also Tensor methods). The order statistics are in order_ops."""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple, Union

import numpy as np

from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._promotion import accumulates_in_float32, floating, sum_dtype
from pycoll._tensor_ops import as_tensor, op_output, placed, reduction_axes, value_output
from pycoll.device import array_module, to_module
from pycoll.dtypes import DTypeLike, convert_dtype, int32, int64, is_floating
from pycoll.index_ops import take_along_axis
from pycoll.math_ops import kept_shape
from pycoll.shape_ops import axis_arg
from pycoll.tensor import Tensor


@accumulates_in_float32
def nansum(x: Any, axis: Any = None, dtype: DTypeLike = None, keepdim: bool = False,
           name: Optional[str] = None) -> Tensor:
    """The sum over `axis`, NaNs counted as zero (and taking no gradient)."""
    x = as_tensor(x)
    axes = reduction_axes(axis, x.ndim, "nansum")
    x, = placed("nansum", x, axes=axes)  # auto-parallel: tells its axes
    a = x._array
    xp = array_module(a)
    ok = ~xp.isnan(a) if is_floating(a.dtype) else xp.ones(a.shape, bool)
    with quiet():  # inf + -inf: NaN, a sum past the range inf, silently as paddle's
        out = xp.where(ok, a, 0).sum(axis=axes, keepdims=keepdim, dtype=convert_dtype(dtype) or sum_dtype(a.dtype))
    kept = kept_shape(a.shape, axes)
    return op_output(out, lambda g: (xp.where(ok, g.reshape(kept), 0).astype(g.dtype, copy=False),), x)


@accumulates_in_float32
def nanmean(x: Any, axis: Any = None, keepdim: bool = False, name: Optional[str] = None) -> Tensor:
    """The mean over `axis` of the elements that are not NaN (NaN where all are); integers give
    float32, as paddle's."""
    x = as_tensor(x)
    axes = reduction_axes(axis, x.ndim, "nanmean")
    x, = placed("nanmean", x, axes=axes)  # auto-parallel: a split there made whole
    a = floating(x._array)
    xp = array_module(a)
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
    axes = reduction_axes(axis, x.ndim, "count_nonzero")
    x, = placed("count_nonzero", x, axes=axes)  # auto-parallel: tells its axes
    out = (x._array != 0).sum(axis=axes, keepdims=keepdim).astype(int64)
    return value_output(array_module(x._array).asarray(out), "count_nonzero", x)


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
    if w is not None and w.shape != a.shape:
        raise ValueError(f"bincount: weights must have x's shape {list(a.shape)}, got {list(w.shape)}")
    out = xp.bincount(a, weights=w, minlength=int(minlength))
    # paddle's dtypes: counts int64, sums of float32 weights float32, of any other weights float64
    out = out.astype(int64) if w is None else out.astype(w.dtype if w.dtype == np.float32 else np.float64, copy=False)
    return value_output(out, "bincount", x)


def _run_starts(xp: Any, s: Any) -> Any:
    """Where each run of equal values of sorted ``s`` starts (each NaN one of its own: NaN != NaN)."""
    return xp.concatenate([xp.ones(min(s.size, 1), dtype=bool), s[1:] != s[:-1]])


def _unique_flat(xp: Any, flat: Any) -> Tuple[Any, Any, Any, Any]:
    """np.unique(flat) with its index, inverse and counts, each NaN kept as a value of its own
    (paddle's; NaN != NaN starts a new run in the sorted values)."""
    order = xp.argsort(flat, kind="stable")
    s = flat[order]
    starts = _run_starts(xp, s)
    group = xp.cumsum(starts) - 1
    inverse = xp.empty(flat.size, dtype=int64)
    inverse[order] = group
    first = xp.flatnonzero(starts)
    counts = xp.diff(xp.concatenate([first, xp.asarray([flat.size])]))
    return s[starts], order[starts], inverse, counts


def unique(x: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: Optional[int] = None, dtype: DTypeLike = "int64", sorted: bool = True,  # noqa: A002
           name: Optional[str] = None) -> Union[Tensor, Tuple[Tensor, ...]]:
    """The sorted unique elements of x (each NaN one of its own, as paddle's), or unique slices
    along `axis`, then, as asked, the index of each one's first occurrence, the index of every
    element's unique value and the counts, in `dtype` (int64 or int32)."""
    x, = placed("_all_whole", as_tensor(x))  # auto-parallel: a data-dependent length, found whole
    a = x._array
    xp = array_module(a)
    dt = convert_dtype(dtype)
    if dt not in (int32, int64):
        raise ValueError(f"unique: dtype must be int32 or int64, got {dtype!r}")
    if axis is None and not (return_index or return_inverse or return_counts):
        s = xp.sort(a.reshape(-1))  # the values alone: no stable order, index, inverse or counts to find
        return value_output(s[_run_starts(xp, s)], "unique", x)
    if axis is None:
        values, index, inverse, counts = _unique_flat(xp, a.reshape(-1))
    else:
        values, index, inverse, counts = xp.unique(a, return_index=True, return_inverse=True, return_counts=True,
                                                   axis=axis_arg(axis, a.ndim))
    outs = [value_output(values, "unique", x)]
    for want, arr in ((return_index, index), (return_inverse, inverse.reshape(-1)), (return_counts, counts)):
        if want:
            outs.append(value_output(arr.astype(dt), "unique", x))
    return outs[0] if len(outs) == 1 else tuple(outs)


@param_aliases({"input": "x", "dim": "axis"})
def unique_consecutive(x: Any, return_inverse: bool = False, return_counts: bool = False, axis: Optional[int] = None,
                       dtype: DTypeLike = "int64", name: Optional[str] = None) -> Union[Tensor, Tuple[Tensor, ...]]:
    """x with each run of equal consecutive elements (of x flattened, or slices along `axis`)
    kept once, then, as asked, each element's run number and each run's length, in `dtype`."""
    x, = placed("_all_whole", as_tensor(x))  # auto-parallel: a data-dependent length, found whole
    a = x._array
    xp = array_module(a)
    dt = convert_dtype(dtype)
    if dt not in (int32, int64):
        raise ValueError(f"unique_consecutive: dtype must be int32 or int64, got {dtype!r}")
    ax = 0 if axis is None else axis_arg(axis, a.ndim)
    rows = xp.moveaxis(a.reshape(-1) if axis is None else a, ax, 0)
    n = rows.shape[0]
    width = math.prod(rows.shape[1:])
    differs = (rows[1:] != rows[:-1]).reshape(n - 1 if n else 0, width).any(axis=1)
    starts = xp.concatenate([xp.ones(min(n, 1), dtype=bool), differs])
    first = xp.flatnonzero(starts)
    outs = [value_output(xp.moveaxis(rows[first], 0, ax), "unique_consecutive", x)]
    if return_inverse:
        outs.append(value_output((xp.cumsum(starts) - 1).astype(dt), "unique_consecutive", x))
    if return_counts:
        counts = xp.diff(xp.concatenate([first, xp.asarray([n])]))
        outs.append(value_output(counts.astype(dt), "unique_consecutive", x))
    return outs[0] if len(outs) == 1 else tuple(outs)


@param_aliases({"elements": "x", "test_elements": "test_x"})
def isin(x: Any, test_x: Any, assume_unique: bool = False, invert: bool = False,
         name: Optional[str] = None) -> Tensor:
    """Whether each element of x is among test_x's (with `invert`: is not), a bool tensor."""
    x, test_x = placed("isin", as_tensor(x), as_tensor(test_x))  # auto-parallel: x's split stays, test_x whole
    a = x._array
    xp = array_module(a)
    test = to_module(test_x._array, xp).reshape(-1)
    found = xp.isin(a, test, assume_unique=assume_unique, invert=invert)
    return value_output(found, "isin", x)


def histogram(input: Any, bins: int = 100, min: float = 0.0, max: float = 0.0,  # noqa: A002 - paddle's names
              weight: Any = None, density: bool = False, name: Optional[str] = None) -> Tensor:
    """Counts of input's elements in `bins` equal bins over [min, max] (min == max == 0: the data's
    own range; elements outside are left out), int64; with `weight` the sums of the weights, and
    with `density` the counts over (total * bin width), in the weights' (or input's) float dtype."""
    x, = placed("_all_whole", as_tensor(input))  # auto-parallel: counts of the whole data
    a = x._array
    xp = array_module(a)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"histogram: bins must be an int >= 1, got {bins!r}")
    lo, hi = float(min), float(max)
    if lo == hi == 0 and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo > hi:
        raise ValueError(f"histogram: min must be <= max, got min={min} and max={max}")
    if lo == hi:
        lo, hi = lo - 1, hi + 1  # paddle's and torch's widening of an empty range
    w = None if weight is None else to_module(placed("_all_whole", as_tensor(weight))[0]._array, xp).reshape(-1)
    counts, _ = xp.histogram(a.reshape(-1), bins=int(bins), range=(lo, hi), weights=w, density=density)
    if weight is None and not density:
        return value_output(counts.astype(int64), "histogram", x)
    float_dtype = w.dtype if w is not None else (a.dtype if is_floating(a.dtype) else np.dtype(np.float32))
    return value_output(counts.astype(float_dtype), "histogram", x)


@param_aliases({"input": "values"})
def searchsorted(sorted_sequence: Any, values: Any, out_int32: bool = False, right: bool = False,
                 name: Optional[str] = None, *, side: Optional[str] = None, sorter: Any = None) -> Tensor:
    """Where each of `values` would go in `sorted_sequence` (its last dimension sorted) to keep
    it sorted: the first such place, or with `right` the last. An N-d sequence searches row by
    row: its leading dimensions match values'. paddle 3.3's ``side`` ('left' / 'right') says it
    instead of ``right``; ``sorter`` holds the indices that sort an unsorted sequence's last
    dimension (places are counted in the sorted order, as torch's)."""
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ValueError("searchsorted: right=True and side='left' contradict each other")
        right = side == "right"
    if sorter is not None:
        sorted_sequence = take_along_axis(as_tensor(sorted_sequence), as_tensor(sorter), -1)
    seq, v = placed("_all_whole", as_tensor(sorted_sequence), as_tensor(values))  # auto-parallel: searched whole
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


@param_aliases({"input": "x", "boundaries": "sorted_sequence"})
def bucketize(x: Any, sorted_sequence: Any, out_int32: bool = False, right: bool = False,
              name: Optional[str] = None) -> Tensor:
    """searchsorted of every element of x in the 1-D `sorted_sequence`."""
    seq = as_tensor(sorted_sequence)
    if seq.ndim != 1:
        raise ValueError(f"bucketize: sorted_sequence must be 1-D, got shape {seq.shape}")
    return searchsorted(seq, x, out_int32, right)


for _fn in (unique_consecutive, isin, histogram, nansum, nanmean, count_nonzero, bincount, unique, bucketize):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
