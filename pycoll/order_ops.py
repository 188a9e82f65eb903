"""Order statistics: median, nanmedian, quantile, nanquantile, kthvalue and mode (also Tensor
methods).

Each sorts the reduced elements of every row (stably, NaNs last, as NumPy and CuPy sort) and
reads its result as a weighted sum of sorted positions chosen per row (`_Picks`), so the gradient
goes to the element(s) each result was read from. paddle's NaN rules: median and quantile give NaN
for a row holding a NaN (median's 'min' mode returns the first NaN and its index; median's gradient
is shared by the row's NaNs, quantile's goes to the last one), nanmedian and nanquantile leave the
NaNs out (NaN, and index -1, for a row of NaNs only). paddle's dtypes: indices int64, median of
anything but float64 float32, nanmedian x's own dtype (integers truncated), quantiles of integers
float32.
"""
from __future__ import annotations

import builtins as _builtins
import math
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._promotion import floating
from pycoll._tensor_ops import as_tensor, normalize_axes, op_output, placed, reduction_axes, value_output
from pycoll.device import array_module
from pycoll.dtypes import float32, float64, int64, is_bfloat16, is_floating
from pycoll.math_ops import kept_shape
from pycoll.search_ops import _leading
from pycoll.shape_ops import axis_arg, scatter_add
from pycoll.tensor import Tensor
from pycoll._scalar_axis import along_axis_of_scalar

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


class _Rows:
    """x's array with the reduced `axes` moved last and merged: ``rows`` is [lead..., n], sorted
    stably into ``sorted`` by ``order``; ``nans`` counts each row's NaNs; ``back`` returns a
    gradient of ``rows``' shape to x's."""

    def __init__(self, a: Any, axes: Optional[Tuple[int, ...]]):
        xp = array_module(a)
        axes = tuple(range(a.ndim)) if axes is None else axes
        rest = [i for i in range(a.ndim) if i not in axes]
        self.perm = rest + list(axes)
        moved = a.transpose(self.perm)
        self.lead = moved.shape[:len(rest)]
        self.moved_shape = moved.shape
        self.rows = moved.reshape(self.lead + (math.prod(moved.shape[len(rest):]),))
        self.n = self.rows.shape[-1]
        # ml_dtypes' bfloat16 sort leaves NaNs in place: sort by the (exact) float32 values
        key = self.rows.astype(float32) if is_bfloat16(self.rows.dtype) else self.rows
        self.order = xp.argsort(key, axis=-1, kind="stable")
        self.sorted = xp.take_along_axis(self.rows, self.order, axis=-1)
        self.kept = kept_shape(a.shape, axes)
        self.nans = (xp.isnan(self.rows).sum(-1) if is_floating(a.dtype) or a.dtype.kind == "c"
                     else xp.zeros(self.lead, dtype=int64))

    def shape(self, keepdim: bool) -> Tuple[int, ...]:
        return tuple(self.kept) if keepdim else self.lead

    def back(self, g_rows: Any) -> Any:
        inverse = [self.perm.index(i) for i in range(len(self.perm))]
        return g_rows.reshape(self.moved_shape).transpose(inverse)


def _picks(rows: _Rows, pos: Any, weights: Any, keepdim: bool, dtype: Any,
           nan_shared: bool = False) -> Tuple[Any, Any]:
    """The Q results ``sum_j weights[q, ..., j] * rows.sorted[..., pos[q, ..., j]]`` (pos and
    weights [Q, lead..., P], pos clipped into the row), stacked first, and the backward function
    that sends each picked element its weight times the gradient. `nan_shared` (median): a row
    holding NaNs gives NaN and shares its gradient evenly among them."""
    xp = array_module(rows.rows)
    q = pos.shape[0]
    if not rows.rows.size:  # no rows, or rows of nothing: NaN for each (paddle's median of nothing)
        return (xp.full((q,) + rows.shape(keepdim), xp.nan, dtype=dtype),
                lambda g: (xp.zeros(rows.moved_shape, g.dtype).transpose(
                    [rows.perm.index(i) for i in range(len(rows.perm))]),))
    pos = xp.clip(pos, 0, _builtins.max(rows.n - 1, 0)).astype(int64)
    weights = weights.astype(dtype)
    wide = xp.broadcast_to(rows.sorted[None], (q,) + rows.sorted.shape)
    with quiet():  # an infinite pick times a weight of 0: NaN, silently as paddle's
        out = (xp.take_along_axis(wide, pos, -1).astype(dtype, copy=False) * weights).sum(-1)  # [Q, lead...]
    src = xp.take_along_axis(xp.broadcast_to(rows.order[None], wide.shape), pos, -1)
    has_nan = rows.nans > 0
    if nan_shared:
        out = xp.where(has_nan, xp.nan, out).astype(dtype, copy=False)

    def backward(g: Any) -> tuple:
        g = g.reshape((q,) + rows.lead)
        lines = math.prod(rows.lead)
        g_rows = xp.zeros((lines, rows.n), dtype=g.dtype)
        contrib = (g[..., None] * weights.astype(g.dtype, copy=False))  # [Q, lead..., P]
        flat = (lambda t: xp.moveaxis(t.reshape((q, lines, -1)), 0, 1).reshape(lines, -1))
        scatter_add(g_rows, (xp.arange(lines)[:, None], flat(src)), flat(contrib))
        if nan_shared:
            nan = xp.isnan(rows.rows).reshape(lines, rows.n)
            count = xp.maximum(rows.nans.reshape(lines, 1), 1).astype(g.dtype)
            shared = nan * (g.sum(0).reshape(lines, 1) / count)
            g_rows = xp.where(has_nan.reshape(lines, 1), shared, g_rows).astype(g.dtype, copy=False)
        return (rows.back(g_rows),)
    return out.reshape((q,) + rows.shape(keepdim)), backward


def _quantile_picks(xp: Any, qs: List[float], count: Any, interpolation: str) -> Tuple[Any, Any]:
    """Positions and weights [Q, lead..., 2] of the q-th quantiles among the first `count`
    sorted elements of each row (`count` [lead...])."""
    pos = xp.stack([v * (count - 1.0) for v in qs])
    lo, hi = xp.floor(pos), xp.ceil(pos)
    frac = pos - lo
    ones, zeros = xp.ones_like(pos), xp.zeros_like(pos)
    if interpolation == "nearest":  # halves to even, as NumPy's and paddle's round
        lo = hi = xp.round(pos)
        w = (ones, zeros)
    else:
        w = {"linear": (1 - frac, frac), "midpoint": (0.5 * ones, 0.5 * ones), "lower": (ones, zeros),
             "higher": (zeros, ones)}[interpolation]
    return xp.stack([lo, hi], -1), xp.stack(w, -1)


def _quantile(op: str, x: Any, q: Any, axis: Any, keepdim: bool, interpolation: str, skip_nan: bool) -> Tensor:
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{op}: interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}")
    x, = placed("quantile", as_tensor(x), axes=None)  # auto-parallel: computed whole, as paddle's median is
    a = floating(x._array)
    xp = array_module(a)
    qs = q.tolist() if isinstance(q, Tensor) else q
    many = isinstance(qs, (list, tuple))
    qs = list(qs) if many else [qs]
    if not qs or _builtins.any(isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1
                               for v in qs):
        raise ValueError(f"{op}: q must be a number in [0, 1] or a non-empty list of them, got {q!r}")
    rows = _Rows(a, reduction_axes(axis, a.ndim, op))  # an empty axis list, or a 0-d x: all of x, as paddle's
    count = (rows.n - rows.nans).astype(np.float64)
    pos, weights = _quantile_picks(xp, [float(v) for v in qs], count, interpolation)
    if not skip_nan:  # paddle: a row with a NaN reads its last sorted element (a NaN)
        last = (rows.nans > 0)[None, ..., None]
        pos = xp.where(last, rows.n - 1, pos)
        weights = xp.where(last, xp.asarray([1.0, 0.0]), weights)
    out, backward = _picks(rows, pos, weights, keepdim, a.dtype)
    return op_output(out if many else out[0], backward, x)


@param_aliases({"input": "x", "dim": "axis"})
def quantile(x: Any, q: Any, axis: Any = None, keepdim: bool = False, interpolation: str = "linear",
             name: Optional[str] = None) -> Tensor:
    """The q-th quantile(s) over `axis` (None: all of x; an int or a list); a list of q stacks its
    results first. `interpolation` between the two nearest order statistics: linear, lower,
    higher, midpoint or nearest. A row holding a NaN gives NaN (paddle's)."""
    return _quantile("quantile", x, q, axis, keepdim, interpolation, skip_nan=False)


def nanquantile(x: Any, q: Any, axis: Any = None, keepdim: bool = False, interpolation: str = "linear") -> Tensor:
    """quantile over the elements that are not NaN (NaN for a row of NaNs only)."""
    return _quantile("nanquantile", x, q, axis, keepdim, interpolation, skip_nan=True)


def _median_axes(op: str, axis: Any, ndim: int, lists: bool) -> Optional[Tuple[int, ...]]:
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        if not lists:
            raise ValueError(f"{op}: axis must be an int or None, got {axis!r}")
        if not axis:
            raise ValueError(f"{op}: axis must not be an empty list")
        axes = normalize_axes(list(axis), ndim)
        return None if ndim == 0 else axes  # a 0-d x's axis 0 is x itself
    if ndim == 0 and axis in (0, -1):
        return None
    return (axis_arg(axis, ndim),)


def _shared_among_equals(rows: _Rows, median: Any, picked: Callable[[Any], tuple]) -> Callable[[Any], tuple]:
    """The median's backward as paddle's in mode 'avg', and in mode 'min' where no index is
    returned (no single axis): the elements of a row equal to its median (an odd count, or two
    equal middles; a NaN median: the row's NaNs) share its gradient evenly; a row whose two
    middles differ (no element equals their mean) sends it where ``picked`` does (half to each
    middle)."""
    xp = array_module(rows.rows)
    med = median.reshape(rows.lead + (1,))
    with quiet():  # NaN compared: unequal, silently; a NaN median is its row's NaNs' (paddle's)
        equal = (rows.rows == med) | (xp.isnan(rows.rows) & xp.isnan(med))
    count = equal.sum(-1, keepdims=True)
    shares = count > 0

    def backward(g: Any) -> tuple:
        shared = equal * (g.reshape(rows.lead + (1,)) / xp.maximum(count, 1).astype(g.dtype))
        (elsewhere,) = picked(g)
        where = rows.back(xp.broadcast_to(shares, rows.rows.shape))
        return (xp.where(where, rows.back(shared.astype(g.dtype, copy=False)), elsewhere),)
    return backward


def _median(op: str, x: Any, axis: Any, keepdim: bool, mode: str, skip_nan: bool) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    if mode not in ("avg", "min"):
        raise ValueError(f"{op}: mode must be 'avg' or 'min', got {mode!r}")
    x, = placed("median", as_tensor(x), axes=None)  # auto-parallel: computed whole, as paddle's is
    a = x._array
    xp = array_module(a)
    axes = _median_axes(op, axis, a.ndim, lists=skip_nan)
    rows = _Rows(a, axes)
    count = rows.n - rows.nans if skip_nan else xp.full(rows.lead, rows.n, dtype=int64)
    lo, hi = (count - 1) // 2, count // 2
    if mode == "avg":
        exact = a.dtype.kind in "biu" and skip_nan  # nanmedian of integers: averaged, then truncated
        dtype = float64 if exact or a.dtype == float64 else (a.dtype if skip_nan else float32)
        halves = xp.where((lo == hi)[None, ..., None], xp.asarray([1.0, 0.0]), 0.5)
        out, backward = _picks(rows, xp.stack([lo, hi], -1)[None], halves, keepdim, dtype, nan_shared=not skip_nan)
        if exact:
            return value_output(out[0].astype(a.dtype), op, x)
        return op_output(out[0], _shared_among_equals(rows, out[0], backward), x)
    at = lo if skip_nan else xp.where(rows.nans > 0, rows.n - rows.nans, lo)  # min mode: the first NaN
    # nanmedian's row of NaNs only: NaN, index -1, and no gradient (paddle's)
    weight = (count > 0)[..., None].astype(np.float64) if skip_nan else xp.ones(at.shape + (1,))
    out, backward = _picks(rows, at[None, ..., None], weight, keepdim, a.dtype)
    if axis is None or isinstance(axis, (list, tuple)):  # paddle returns the index with a single axis only,
        return op_output(out[0], _shared_among_equals(rows, out[0], backward), x)  # and shares it without
    value = op_output(out[0], backward, x)
    index = xp.take_along_axis(rows.order, xp.clip(at, 0, None)[..., None], -1)[..., 0]
    index = xp.where(count > 0, index, -1).reshape(rows.shape(keepdim)).astype(int64)
    return value, value_output(index, op, x)


@param_aliases({"input": "x", "dim": "axis"}, when_aliased={"mode": "min"})
def median(x: Any, axis: Optional[int] = None, keepdim: bool = False, mode: str = "avg",
           name: Optional[str] = None) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """The median over `axis` (None: all of x). mode 'avg' averages the two middle values of an
    even count (float32, or float64 for float64 x); mode 'min' takes the lower one, in x's dtype,
    and with an axis also returns its int64 index along it. A row holding a NaN gives NaN (in
    'min' mode the first NaN and its index), as paddle's."""
    return _median("median", x, axis, keepdim, mode, skip_nan=False)


def nanmedian(x: Any, axis: Union[int, Sequence[int], None] = None, keepdim: bool = False, mode: str = "avg",
              name: Optional[str] = None) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """median over the elements that are not NaN (`axis` an int, a list or None), in x's dtype
    (integers averaged and truncated, as paddle's); a row of NaNs gives NaN and, in 'min' mode,
    index -1. The index comes back in 'min' mode with a single int axis only (paddle's)."""
    return _median("nanmedian", x, axis, keepdim, mode, skip_nan=True)


@along_axis_of_scalar("axis")
def kthvalue(x: Any, k: int, axis: Optional[int] = None, keepdim: bool = False,
             name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """The k-th smallest value along `axis` (default: the last) and its int64 index."""
    x, = placed("kthvalue", as_tensor(x), axes=None)  # auto-parallel: computed whole, as paddle's is
    a = x._array
    xp = array_module(a)
    ax = axis_arg(-1 if axis is None else axis, a.ndim)
    n = a.shape[ax] if a.ndim else 1
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ValueError(f"kthvalue: k must be an int in [1, {n}], got {k!r}")
    if a.ndim == 0 or a.dtype.kind not in "biuf":  # 0-d, and dtypes the partition does not order: a full sort
        rows = _Rows(a, (ax,))
        out, backward = _picks(rows, xp.full((1,) + rows.lead + (1,), k - 1), xp.ones((1,) + rows.lead + (1,)),
                               keepdim, a.dtype)
        index = rows.order[..., k - 1].reshape(rows.shape(keepdim))
        return op_output(out[0], backward, x), value_output(index.astype(int64), "kthvalue", x)
    # the k smallest in the stable sort's order (ties by position, NaNs largest), found by a partition
    picked = xp.take(_leading(a, ax, k, False), [k - 1], axis=ax)  # [..., 1, ...]
    value = xp.take_along_axis(a, picked, axis=ax)
    shape = a.shape

    def backward(g: Any) -> tuple:
        z = xp.zeros(shape, dtype=g.dtype)
        xp.put_along_axis(z, picked, g.reshape(picked.shape), axis=ax)
        return (z,)
    index = picked if keepdim else picked.squeeze(ax)
    return (op_output(value if keepdim else value.squeeze(ax), backward, x),
            value_output(index.astype(int64), "kthvalue", x))


def _longest_run(s: Any) -> Any:
    """Where the longest run of equal values of each sorted row of ``s`` starts (the first such
    run of a row, its smallest value, where runs tie), from the runs' lengths: O(n) a row, where
    comparing every pair of a row's values took O(n^2) time and memory. A NaN is a run of its own
    (NaN != NaN), sorted last."""
    xp = array_module(s)
    n = s.shape[-1]
    starts_here = xp.ones(s.shape, dtype=bool)
    starts_here[..., 1:] = s[..., 1:] != s[..., :-1]
    flat_starts = xp.flatnonzero(starts_here)  # every row's first place starts a run
    lengths = xp.diff(xp.concatenate([flat_starts, xp.asarray([s.size], dtype=flat_starts.dtype)]))
    score = xp.full(s.size, -1, dtype=np.int64)  # longer first, then earlier: length * (n + 1) + n - position
    score[flat_starts] = lengths * (n + 1) + n - flat_starts % n
    return score.reshape(s.shape).argmax(-1)


@along_axis_of_scalar("axis")
def mode(x: Any, axis: int = -1, keepdim: bool = False, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """The most frequent value along `axis` (the smallest of equally frequent ones) and the int64
    index of its last occurrence (paddle's); the gradient goes to that element."""
    x, = placed("mode", as_tensor(x), axes=None)  # auto-parallel: computed whole, as paddle's is
    a = x._array
    xp = array_module(a)
    ax = axis_arg(axis, a.ndim)
    rows = _Rows(a, (ax,))
    s = rows.sorted
    value = xp.take_along_axis(s, _longest_run(s)[..., None], -1)  # [lead..., 1]
    hits = rows.rows == value
    last = rows.n - 1 - xp.flip(hits, -1).argmax(-1)  # [lead...]
    shape = rows.shape(keepdim)

    def backward(g: Any) -> tuple:
        z = xp.zeros(rows.rows.shape, g.dtype)
        xp.put_along_axis(z, last[..., None], g.reshape(rows.lead + (1,)), -1)
        return (rows.back(z),)
    return (op_output(value.reshape(shape), backward, x),
            value_output(last.reshape(shape).astype(int64), "mode", x))


for _fn in (quantile, nanquantile, median, nanmedian, kthvalue, mode):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
