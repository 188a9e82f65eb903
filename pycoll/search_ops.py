"""Selecting and ordering: where, masked_fill, tril/triu, sort, argsort, topk and gather (also
Tensor methods).

Gradients flow back to the elements each op picked; indices (argsort, topk's second result,
where's one-argument form) take no gradient.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional, Tuple, Union

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._promotion import promoted
from pycoll._tensor_ops import as_tensor, check_broadcast, check_index_range, needs_grad, op_output, operand, placed, value_output
from pycoll.device import array_module, to_module
from pycoll.math_ops import grad_for, grad_meta
from pycoll.shape_ops import axis_arg, scatter_add
from pycoll.dtypes import int64, is_floating
from pycoll.tensor import Tensor, to_tensor
from pycoll._scalar_axis import along_axis_of_scalar


@param_aliases({"input": "x", "other": "y"})
def where(condition: Any, x: Any = None, y: Any = None,
          name: Optional[str] = None) -> Union[Tensor, Tuple[Tensor, ...]]:
    """x where `condition` (a bool tensor) holds, else y, broadcasting all three; with neither x
    nor y, the indices where it holds, one int64 tensor per dimension."""
    condition = as_tensor(condition)
    c = condition._array
    if c.dtype.kind != "b":
        raise ValueError(f"condition must be a bool tensor, got dtype {c.dtype}")
    xp = array_module(c)
    c_place = condition.place
    if x is None and y is None:
        return tuple(value_output(i.astype(int64), "nonzero", condition) for i in xp.nonzero(c))
    if x is None or y is None:
        raise ValueError("where needs both x and y, or neither")
    # paddle makes numbers tensors here (float32, int64; a NumPy scalar of its own dtype) and
    # mixes x and y strictly: an int64 tensor with 0.5 is refused, a float32 one with 0 too
    x, y = (as_tensor(v) if isinstance(v, Tensor) else
            to_tensor(v if isinstance(v, np.generic) else operand(v), place=c_place) for v in (x, y))
    condition, x, y = placed("where", condition, x, y)
    c = condition._array
    xa, ya = promoted(x, y, "where", strict=True)
    check_broadcast("where", "x", xa.shape, "y", ya.shape)
    check_broadcast("where", "condition", c.shape, "x", xa.shape)
    check_broadcast("where", "condition", c.shape, "y", ya.shape)
    mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)

    def backward(g: Any) -> tuple:
        zero = xp.zeros((), dtype=g.dtype)
        return (grad_for(xp.where(c, g, zero), mx) if mx else None,
                grad_for(xp.where(c, zero, g), my) if my else None)
    return op_output(xp.where(c, xa, ya), backward, x, y)


def masked_fill(x: Any, mask: Any, value: Any, name: Optional[str] = None) -> Tensor:
    """x with `value` where `mask` (broadcast with x; non-zero counts as True) holds. The value
    takes x's dtype (an integer x truncates it); a Tensor value (of one element) gets the sum of
    the gradient where it was filled in, as torch's (paddle 3.3.1 gives it zero)."""
    x, mask = placed("masked_fill", as_tensor(x), as_tensor(mask))  # auto-parallel: the mask cut as x
    a = x._array
    xp = array_module(a)
    m = to_module(mask._array, xp).astype(bool, copy=False)
    check_broadcast("masked_fill", "x", a.shape, "mask", m.shape)
    fill = xp.asarray(value.item() if isinstance(value, Tensor) else value).astype(a.dtype)
    out = xp.where(m, fill, a)
    meta = grad_meta(x)
    if isinstance(value, Tensor) and needs_grad(value):
        shape = value._array.shape

        def backward(g: Any) -> tuple:
            filled = xp.where(m, g, xp.zeros((), g.dtype)).sum()
            return (grad_for(xp.where(m, xp.zeros((), g.dtype), g), meta),
                    filled.reshape(shape).astype(value._array.dtype))
        return op_output(out, backward, x, value)
    return op_output(out, lambda g: (grad_for(xp.where(m, xp.zeros((), g.dtype), g), meta),), x)


def masked_scatter(x: Any, mask: Any, value: Any, name: Optional[str] = None) -> Tensor:
    """x with the elements where `mask` (broadcast to x's shape) holds replaced, in row-major
    order, by value's first elements (value needs at least as many as mask holds). Gradients:
    x's where mask does not hold, value's first elements those of the places they went to."""
    x, mask, v = placed("_all_whole", as_tensor(x), as_tensor(mask), as_tensor(value))  # auto-parallel: whole order
    a = x._array
    xp = array_module(a)
    m = xp.broadcast_to(to_module(mask._array, xp).astype(bool, copy=False), a.shape)
    flat_v = to_module(v._array, xp).reshape(-1)
    picked = int(m.sum())
    if picked > flat_v.size:
        raise ValueError(f"masked_scatter: mask holds {picked} places but value has only {flat_v.size} elements")
    where = xp.flatnonzero(m)
    out = a.copy().reshape(-1)
    out[where] = flat_v[:picked].astype(a.dtype, copy=False)
    meta = grad_meta(x)

    def backward(g: Any) -> tuple:
        gv = xp.zeros(flat_v.shape, g.dtype)
        gv[:picked] = g.reshape(-1)[where]
        return (grad_for(xp.where(m, xp.zeros((), g.dtype), g), meta), gv.reshape(v._array.shape))
    return op_output(out.reshape(a.shape), backward, x, v)


def _triangle(x: Any, diagonal: int, op: str) -> Tensor:
    x = as_tensor(x)
    a = x._array
    if a.ndim < 2:
        raise ValueError(f"{op}: x must have at least 2 dimensions, got shape {x.shape}")
    x, = placed("_triangle", x, axes=(a.ndim - 2, a.ndim - 1))  # auto-parallel: the matrices made whole
    a = x._array
    cut = getattr(array_module(a), op)
    return op_output(cut(a, diagonal), lambda g: (cut(g, diagonal),), x)


@param_aliases({"input": "x"})
def tril(x: Any, diagonal: int = 0, name: Optional[str] = None) -> Tensor:
    """The lower triangle of x's last two dimensions: elements above `diagonal` (0: the main
    diagonal, > 0 above it, < 0 below it) become 0."""
    return _triangle(x, diagonal, "tril")


@param_aliases({"input": "x"})
def triu(x: Any, diagonal: int = 0, name: Optional[str] = None) -> Tensor:
    """The upper triangle of x's last two dimensions: elements below `diagonal` become 0."""
    return _triangle(x, diagonal, "triu")


def _order(a: Any, axis: int, descending: bool) -> Any:
    """The stable argsort of `a` along `axis`; descending keeps equal elements in their original
    order too (as paddle's stable sort and its topk do)."""
    xp = array_module(a)
    if not descending:
        return xp.argsort(a, axis=axis, kind="stable")
    backwards = (slice(None),) * (axis % a.ndim) + (slice(None, None, -1),)  # reversed along axis (xp.flip: 4 us more)
    return (a.shape[axis] - 1) - xp.argsort(a[backwards], axis=axis, kind="stable")[backwards]


def inverse_order(order: Any, axis: int) -> Any:
    """The permutation that undoes `order` along `axis`."""
    return array_module(order).argsort(order, axis=axis, kind="stable")


# arrays this small are sorted whole: the partition's dozen array ops cost more (50 us) than the
# sort; beyond about 2000 elements the sort costs more
_SORTED_WHOLE_UP_TO = 1024


def _leading(a: Any, axis: int, k: int, descending: bool) -> Any:
    """A permutation along `axis` whose first k entries are those of `_order(a, axis, descending)`
    (the same indices in the same order: ties in their original order, NaNs largest), and whose
    other entries are the rest, found without sorting whole rows unless the array is small.

    The k-th value of each row comes from a partition; the rows' first k are the elements
    strictly before it plus, of those equal to it, the earliest; only those k are sorted.
    """
    xp = array_module(a)
    if a.dtype.kind not in "biuf" or a.ndim == 0:  # complex and the like (and a 0-d a's error): the sort's
        return _order(a, axis, descending)
    n = a.shape[axis]
    if a.size <= _SORTED_WHOLE_UP_TO:
        return _order(a, axis, descending)
    at = n - k if descending else k - 1
    kth = xp.take(xp.partition(a, at, axis=axis), [at], axis=axis)
    before = ~(a <= kth) if descending else a < kth  # descending: NaNs come first
    same = a == kth
    if is_floating(a.dtype):
        nan_kth = xp.isnan(kth)
        if bool(nan_kth.any()):  # a NaN k-th value: the NaNs are its equals
            nan_a = xp.isnan(a)
            same |= nan_a & nan_kth
            before = before & ~nan_kth if descending else before | (nan_kth & ~nan_a)
    wanted = k - before.sum(axis=axis, keepdims=True)
    if bool((same.sum(axis=axis, keepdims=True) != wanted).any()):  # ties beyond the k-th: the earliest
        same &= xp.cumsum(same, axis=axis) <= wanted
    chosen = xp.moveaxis(before | same, axis, -1)
    first, rest = _positions(chosen, k), _positions(~chosen, n - k)
    first = xp.take_along_axis(first, _order(xp.take_along_axis(xp.moveaxis(a, axis, -1), first, axis=-1),
                                             -1, descending), axis=-1)
    return xp.moveaxis(xp.concatenate([first, rest], axis=-1), -1, axis)


def _positions(mask: Any, count: int) -> Any:
    """The positions along the last axis of `mask`'s True elements, `count` in every row, in
    increasing order: shape mask.shape[:-1] + (count,)."""
    xp = array_module(mask)
    rows = mask.shape[:-1]
    starts = (xp.arange(math.prod(rows)) * mask.shape[-1]).reshape(rows + (1,))
    return xp.flatnonzero(mask).reshape(rows + (count,)) - starts


@param_aliases({"input": "x", "dim": "axis"})
@along_axis_of_scalar("axis")
def argsort(x: Tensor, axis: int = -1, descending: bool = False, stable: bool = False,
            name: Optional[str] = None) -> Tensor:
    """The int64 indices that sort x along `axis` (always stable here; ``stable`` is accepted)."""
    x = as_tensor(x)
    ax = axis_arg(axis, x.ndim)
    x, = placed("argsort", x, axes=(ax,))
    return value_output(_order(x._array, ax, descending).astype(int64), "argsort", x, axes=(ax,))


@along_axis_of_scalar("axis")
def sort(x: Tensor, axis: int = -1, descending: bool = False, stable: bool = False,
         name: Optional[str] = None) -> Tensor:
    """x sorted along `axis` (stably); the gradient goes back to where each value came from."""
    x = as_tensor(x)
    ax = axis_arg(axis, x.ndim)
    x, = placed("sort", x, axes=(ax,))
    a = x._array
    xp = array_module(a)
    order = _order(a, ax, descending)
    return op_output(xp.take_along_axis(a, order, axis=ax),
                     lambda g: (xp.take_along_axis(g, inverse_order(order, ax), axis=ax),), x)


class TopKRetType(NamedTuple):
    """topk's (values, indices), by name too (paddle's)."""
    values: Tensor
    indices: Tensor


@param_aliases({"input": "x", "dim": "axis"})
@along_axis_of_scalar("axis")
def topk(x: Tensor, k: Any, axis: Optional[int] = None, largest: bool = True,
         sorted: bool = True, name: Optional[str] = None) -> TopKRetType:  # noqa: A002 - paddle's name
    """The k largest (``largest=False``: smallest) values along `axis` (default: the last) and
    their int64 indices; equal values come in their original order. Always sorted."""
    x = as_tensor(x)
    ax = axis_arg(-1 if axis is None else axis, x.ndim)
    x, = placed("topk", x, axes=(ax,))
    a = x._array
    xp = array_module(a)
    k = int(k.item() if isinstance(k, Tensor) else k)
    n = a.shape[ax] if a.ndim else 1
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}] (the size of axis {ax}), got {k}")
    order = _leading(a, ax, k, largest)
    lead = (slice(None),) * ax
    picked = order[lead + (slice(0, k),)]

    def backward(g: Any) -> tuple:  # keeps order, n and k for create_graph's rule (pycoll._higher_order)
        shape = list(g.shape)
        shape[ax] = n
        z = xp.zeros(shape, dtype=g.dtype)
        xp.put_along_axis(z, order[lead + (slice(0, k),)], g, axis=ax)
        return (z,)
    values = op_output(xp.take_along_axis(a, picked, axis=ax), backward, x)
    return TopKRetType(values, value_output(picked.astype(int64), "topk", x, axes=(ax,)))


def gather(x: Tensor, index: Any, axis: Any = None, name: Optional[str] = None) -> Tensor:
    """The slices of x at `index` (integers; a 2-d [N, 1] index is read as 1-d) along `axis`
    (default 0); a 0-d index drops the axis. Repeated indices add up their gradients."""
    x = as_tensor(x)
    ax = 0 if axis is None else axis_arg(axis, x._array.ndim)
    x, = placed("gather", x, axis=ax)
    a = x._array
    xp = array_module(a)
    idx = to_module(as_tensor(index)._array, xp)
    if idx.dtype.kind not in "iu":
        raise ValueError(f"gather: index must hold integers (int32 or int64), got dtype {idx.dtype}")
    if idx.ndim > 1:
        idx = idx.reshape(-1)
    check_index_range("gather", "index", idx, a.shape[ax], ax)
    at = (slice(None),) * ax + (idx,)
    shape = a.shape  # the backward keeps no values of x (see pycoll._graph)

    def backward(g: Any) -> tuple:
        z = xp.zeros(shape, dtype=g.dtype)
        scatter_add(z, at, g)
        return (z,)
    return op_output(xp.take(a, idx, axis=ax), backward, x)


for _name, _fn in {"where": where, "masked_fill": masked_fill, "masked_scatter": masked_scatter, "tril": tril,
                   "triu": triu, "sort": sort, "argsort": argsort, "topk": topk, "gather": gather}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
