"""Reading and writing by index: argmin, nonzero, masked_select, index_select, index_add,
index_fill, gather_nd, scatter, scatter_nd_add, scatter_nd, take_along_axis and put_along_axis
(also Tensor methods, with paddle's in-place ``index_add_``, ``index_fill_``, ``scatter_`` and
``put_along_axis_``).

Reads send their gradient back to the elements they read (repeated indices add up); writes send
none to the elements they overwrite. Where an index repeats in an overwriting write, the last
write wins, on the GPU as on the CPU (`inplace_ops.last_writes`).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Tuple, Union

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, check_broadcast, check_index_range, needs_grad, op_output, placed, value_output
from pycoll.device import array_module, to_module
from pycoll.dtypes import DTypeLike, convert_dtype, int64
from pycoll.inplace_ops import assign_last, in_place, last_writes
from pycoll.kernels import host_math
from pycoll.math_ops import grad_for, grad_meta
from pycoll.search_ops import gather
from pycoll.shape_ops import axis_arg, scatter_add
from pycoll.tensor import Tensor, wrap


def _index(index: Any, xp: Any, fn: str, arg: str = "index") -> Any:
    """An integer index argument as an array of module xp."""
    a = to_module(as_tensor(index)._array, xp)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {arg} must hold integers (int32 or int64), got dtype {a.dtype}")
    return a


def _value(v: Any) -> Any:
    """A fill value: a number, or a Tensor read as its number (it takes no gradient)."""
    return v.item() if isinstance(v, Tensor) else v


@param_aliases({"input": "x", "dim": "axis"})
def argmin(x: Any, axis: Optional[int] = None, keepdim: bool = False, dtype: DTypeLike = "int64",
           name: Optional[str] = None) -> Tensor:
    """The index of the smallest element (of x flattened, or along `axis`), int64 unless `dtype`
    says int32; the first one at a tie."""
    x = as_tensor(x)
    axes = None if axis is None else (axis_arg(axis, x.ndim),)
    x, = placed("argmin", x, axes=axes)
    a = x._array
    out = a.argmin(axis=None if axis is None else axes[0])
    if keepdim:
        out = out.reshape([1] * a.ndim) if axis is None else array_module(a).expand_dims(out, axis)
    return value_output(out.astype(convert_dtype(dtype)), "argmin", x, axes=axes)


@param_aliases({"input": "x"})
def nonzero(x: Any, as_tuple: bool = False) -> Union[Tensor, Tuple[Tensor, ...]]:
    """The int64 indices of x's non-zero elements: an [N, x.ndim] tensor, or with `as_tuple` one
    [N] tensor per dimension."""
    x, = placed("_all_whole", as_tensor(x))  # auto-parallel: a data-dependent count of rows, found whole
    if x.ndim == 0:  # paddle refuses it too (NumPy's message names neither op nor argument)
        raise ValueError("nonzero: x must have at least 1 dimension, got a 0-d tensor; reshape it to [1] first")
    xp = array_module(x._array)
    found = xp.nonzero(x._array)
    if as_tuple:
        return tuple(value_output(i.astype(int64, copy=False), "nonzero", x) for i in found)
    return value_output(xp.stack(found, axis=1).astype(int64, copy=False), "nonzero", x)


def argwhere(input: Any) -> Tensor:  # noqa: A002 - paddle's name
    """The int64 indices of input's non-zero elements, one row each: [N, input.ndim] (``nonzero``)."""
    return nonzero(input)


@param_aliases({"input": "x"})
def masked_select(x: Any, mask: Any, name: Optional[str] = None) -> Tensor:
    """The elements of x where `mask` (a bool tensor, broadcast with x) holds, as a 1-D tensor."""
    x, mask = placed("_all_whole", as_tensor(x), as_tensor(mask))  # auto-parallel: a data-dependent length
    a = x._array
    xp = array_module(a)
    m = to_module(mask._array, xp)
    if m.dtype.kind != "b":
        raise TypeError(f"masked_select: mask must be a bool tensor, got dtype {m.dtype}")
    check_broadcast("masked_select", "x", a.shape, "mask", m.shape)
    shape = xp.broadcast_shapes(a.shape, m.shape)
    m = xp.broadcast_to(m, shape)
    meta = grad_meta(x)

    def backward(g: Any) -> tuple:
        z = xp.zeros(shape, g.dtype)
        z[m] = g
        return (grad_for(z, meta),)
    return op_output(xp.broadcast_to(a, shape)[m], backward, x)


@param_aliases({"input": "x", "dim": "axis"})
def index_select(x: Any, index: Any, axis: int = 0, name: Optional[str] = None) -> Tensor:
    """The slices of x at the 1-D integer `index` along `axis`; repeats add up their gradients."""
    x = as_tensor(x)
    idx = _index(index, array_module(x._array), "index_select")
    if idx.ndim != 1:
        raise ValueError(f"index_select: index must be 1-D, got shape {as_tensor(index).shape}")
    ax = axis_arg(axis, x.ndim)
    check_index_range("index_select", "index", idx, x.shape[ax], ax)  # its own name: gather's check names gather
    return gather(x, index, axis)


def _along(x: Tensor, index: Any, axis: int, fn: str, column_ok: bool = False) -> Tuple[Any, Any, int, tuple]:
    """x's array, its module, the axis and the key that picks the 1-D `index` along it
    (``column_ok``: an [N, 1] index, as ``nonzero`` gives it, counts as 1-D, as paddle's scatter
    and index_fill take it)."""
    a = x._array
    xp = array_module(a)
    ax = axis_arg(axis, a.ndim)
    idx = _index(index, xp, fn)
    if column_ok and idx.ndim == 2 and idx.shape[1] == 1:
        idx = idx.reshape(-1)
    if idx.ndim != 1:
        raise ValueError(f"{fn}: index must be 1-D, got shape {list(idx.shape)}")
    check_index_range(fn, "index", idx, a.shape[ax], ax)
    return a, xp, ax, (slice(None),) * ax + (idx,)


@param_aliases({"input": "x", "dim": "axis", "source": "value"})
def index_add(x: Any, index: Any, axis: int, value: Any, alpha: float = 1, name: Optional[str] = None) -> Tensor:
    """x with alpha * `value` added to its slices at `index` along `axis` (repeats add up);
    `value` has x's shape with index's length along `axis`."""
    x, index, value = placed("_all_whole", as_tensor(x), index, as_tensor(value))  # auto-parallel: written or read anywhere, so whole
    a, xp, ax, key = _along(x, index, axis, "index_add")
    expected = a.shape[:ax] + (key[-1].size,) + a.shape[ax + 1:]
    if value._array.shape != expected:
        raise ValueError(f"index_add: value must have shape {list(expected)}, got {value.shape}")
    out = a.copy()
    scatter_add(out, key, (alpha * value._array).astype(a.dtype, copy=False))
    return op_output(out, lambda g: (g, (alpha * g[key]).astype(g.dtype, copy=False)), x, value)


def index_fill(x: Any, index: Any, axis: int, value: Any, name: Optional[str] = None) -> Tensor:
    """x with its slices at `index` along `axis` set to the number `value` (no gradient there)."""
    x, index = placed("_all_whole", as_tensor(x), index)  # auto-parallel: written anywhere, so whole
    a, xp, ax, key = _along(x, index, axis, "index_fill", column_ok=True)
    out = a.copy()
    out[key] = _value(value)

    def backward(g: Any) -> tuple:
        g = g.copy()
        g[key] = 0
        return (g,)
    return op_output(out, backward, x)


def _nd_key(index: Any, shape: tuple, fn: str) -> tuple:
    """gather_nd's key: the last dimension of `index` addresses x's first index.shape[-1] dims."""
    k = index.shape[-1] if index.ndim else 0
    if k > len(shape):
        raise ValueError(f"{fn}: index's last dimension ({k}) exceeds x's rank {len(shape)}")
    key = tuple(index[..., i] for i in range(k))
    for i, part in enumerate(key):
        check_index_range(fn, "index", part, shape[i], i, ValueError)
    return key


def gather_nd(x: Any, index: Any, name: Optional[str] = None) -> Tensor:
    """The elements (or slices) of x addressed by the last dimension of `index`: the result has
    shape index.shape[:-1] + x.shape[index.shape[-1]:]."""
    x, index = placed("_all_whole", as_tensor(x), index)  # auto-parallel: read anywhere, so whole
    a = x._array
    xp = array_module(a)
    idx = _index(index, xp, "gather_nd")
    key = _nd_key(idx, a.shape, "gather_nd")
    shape = a.shape  # the backward keeps no values of x (see pycoll._graph)
    if not key and idx.ndim > 1:  # an index of depth 0: every row of it picks the whole of x
        lead = tuple(range(idx.ndim - 1))
        return op_output(xp.broadcast_to(a, idx.shape[:-1] + shape).copy(), lambda g: (g.sum(axis=lead),), x)

    def backward(g: Any) -> tuple:
        z = xp.zeros(shape, g.dtype)
        scatter_add(z, key, g)
        return (z,)
    return op_output(a[key], backward, x)


def scatter(x: Any, index: Any, updates: Any, overwrite: bool = True, name: Optional[str] = None) -> Tensor:
    """x with its rows at the 1-D `index` replaced by the rows of `updates` (a repeated index
    takes its last row), or with ``overwrite=False`` set to the sum of the rows sent to them.
    As paddle's, every row of `updates` gets the gradient of the row it was sent to."""
    x, index, updates = placed("_all_whole", as_tensor(x), index, as_tensor(updates))  # auto-parallel: written or read anywhere, so whole
    a, xp, _, key = _along(x, index, 0, "scatter", column_ok=True)
    check_index_range("scatter", "index", key[0], a.shape[0], 0)
    u = to_module(updates._array, xp).astype(a.dtype, copy=False)
    if u.shape != key[0].shape + a.shape[1:]:
        raise ValueError(f"scatter: updates must have shape {[key[0].size] + list(a.shape[1:])}, got {updates.shape}")
    out = a.copy()
    if overwrite:
        assign_last(out, key[0], u)
    else:
        out[key] = 0
        scatter_add(out, key, u)

    def backward(g: Any) -> tuple:
        gx = g.copy()
        gx[key] = 0
        return gx, g[key]
    return op_output(out, backward, x, updates)


def scatter_nd_add(x: Any, index: Any, updates: Any, name: Optional[str] = None) -> Tensor:
    """x with `updates` added at the places the last dimension of `index` addresses (as in
    gather_nd; repeats add up)."""
    x, index, updates = placed("_all_whole", as_tensor(x), index, as_tensor(updates))  # auto-parallel: written or read anywhere, so whole
    a = x._array
    xp = array_module(a)
    idx = _index(index, xp, "scatter_nd_add")
    key = _nd_key(idx, a.shape, "scatter_nd_add")
    want = tuple(idx.shape[:-1]) + tuple(a.shape[idx.shape[-1]:])
    if tuple(updates.shape) != want:
        raise ValueError(f"scatter_nd_add: updates must have shape index.shape[:-1] + x.shape[index.shape[-1]:] "
                         f"= {list(want)}, got {list(updates.shape)}")
    out = a.copy()
    scatter_add(out, key, to_module(updates._array, xp).astype(a.dtype, copy=False))
    return op_output(out, lambda g: (g, g[key]), x, updates)


def scatter_nd(index: Any, updates: Any, shape: Any, name: Optional[str] = None) -> Tensor:
    """scatter_nd_add into zeros of `shape` (updates' dtype)."""
    updates = as_tensor(updates)
    zeros = wrap(array_module(updates._array).zeros(tuple(int(s) for s in shape), updates.dtype))
    return scatter_nd_add(zeros, index, updates)


def _along_key(a: Any, idx: Any, ax: int, broadcast: bool, fn: str) -> tuple:
    """The key that reads `idx` (of a's rank) along axis `ax` of `a`: open ranges elsewhere."""
    xp = array_module(a)
    if idx.ndim != a.ndim:
        raise ValueError(f"{fn}: indices must have x's rank {a.ndim}, got shape {list(idx.shape)}")
    check_index_range(fn, "indices", idx, a.shape[ax], ax)
    if broadcast:
        for d, (n, m) in enumerate(zip(idx.shape, a.shape)):
            if d != ax and n not in (1, m):
                raise ValueError(f"{fn}: indices has shape {list(idx.shape)}; away from axis {ax} each of its "
                                 f"dimensions must be 1 or x's ({list(a.shape)}) to broadcast, dimension {d} is {n}")
        idx = xp.broadcast_to(idx, tuple(n if d == ax else max(n, m) for d, (n, m) in
                                         enumerate(zip(idx.shape, a.shape))))
    key = []
    for d in range(a.ndim):
        if d == ax:
            key.append(idx)
        else:
            shape = [1] * a.ndim
            shape[d] = idx.shape[d]
            key.append(xp.arange(idx.shape[d]).reshape(shape))
    return tuple(key)


@param_aliases({"input": "arr", "dim": "axis"})
def take_along_axis(arr: Any, indices: Any, axis: int, broadcast: bool = True) -> Tensor:
    """arr's elements at `indices` along `axis` (indices broadcast to arr's shape elsewhere)."""
    arr, indices = placed("_all_whole", as_tensor(arr), indices)  # auto-parallel: written or read anywhere, so whole
    a = arr._array
    xp = array_module(a)
    ax = axis_arg(axis, a.ndim, "take_along_axis")
    key = _along_key(a, _index(indices, xp, "take_along_axis", "indices"), ax, broadcast, "take_along_axis")
    shape = a.shape  # the backward keeps no values of arr (see pycoll._graph)

    def backward(g: Any) -> tuple:
        z = xp.zeros(shape, g.dtype)
        scatter_add(z, key, g)
        return (z,)
    return op_output(a[key], backward, arr)


_REDUCES = ("assign", "add", "mul", "multiply", "mean", "amin", "amax")


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int, reduce: str = "assign",
                   include_self: bool = True, broadcast: bool = True) -> Tensor:
    """arr with `values` (a number or a tensor broadcast to the indices) written at `indices`
    along `axis`: 'assign' (a repeated index takes the last value), or combined with what is
    there by 'add', 'mul'/'multiply', 'mean', 'amin' or 'amax' (``include_self=False``: without
    arr's own element). Gradients as paddle's for every reduce (see `_factor_grads` for 'mul',
    'amin' and 'amax')."""
    if reduce not in _REDUCES:
        raise ValueError(f"put_along_axis: reduce must be one of {_REDUCES}, got {reduce!r}")
    arr, indices, values = placed("_all_whole", as_tensor(arr), indices, values)  # auto-parallel: written or read anywhere, so whole
    a = arr._array
    xp = array_module(a)
    ax = axis_arg(axis, a.ndim, "put_along_axis")
    key = _along_key(a, _index(indices, xp, "put_along_axis", "indices"), ax, broadcast, "put_along_axis")
    shape = key[ax].shape
    vt = values if isinstance(values, Tensor) else None
    if (not broadcast and vt is not None and vt.ndim == len(shape) and tuple(vt.shape) != shape
            and all(n >= m for n, m in zip(vt.shape, shape))):
        vt = vt[tuple(slice(0, m) for m in shape)]  # torch's scatter: the block of src the index covers
    v = xp.broadcast_to(to_module(vt._array, xp) if vt is not None else xp.asarray(values), shape).astype(a.dtype)
    flat = xp.ravel_multi_index(tuple(xp.broadcast_to(k, shape).reshape(-1) for k in key), a.shape)
    vflat = v.reshape(-1)
    out = a.copy().reshape(-1)
    count = xp.zeros(a.size, a.dtype)
    scatter_add(count, flat, xp.ones(flat.size, a.dtype))
    win = last_writes(flat) if reduce == "assign" else None
    if reduce == "assign":
        out[flat[win]] = vflat[win]
    else:
        if not include_self:  # start from the reduction's identity (for amin/amax: any value sent there)
            out[flat] = {"amin": vflat.max(), "amax": vflat.min(), "mul": 1, "multiply": 1}.get(reduce, 0)
        ufunc = {"add": "add", "mean": "add", "mul": "multiply", "multiply": "multiply", "amin": "minimum",
                 "amax": "maximum"}[reduce]
        _ufunc_at(xp, ufunc, out, flat, vflat)
        if reduce == "mean":  # untouched places (count 0 without self) keep out: their 0/0 is never used
            divisor = xp.maximum(count + include_self, 1).astype(a.dtype)
            averaged = out // divisor if a.dtype.kind in "iu" else out / divisor  # integers: floored, as paddle's
            out = xp.where(count > 0, averaged, out).astype(a.dtype)
    mean_scale = 1 / xp.maximum(count + include_self, 1) if reduce == "mean" else None
    factors = reduce in ("mul", "multiply", "amin", "amax") and (needs_grad(arr) or needs_grad(vt))
    if factors:
        scale_a, scale_v = _factor_grads(reduce, a.reshape(-1), out, flat, vflat, count > 0, include_self)

    def backward(g: Any) -> tuple:
        gf = g.reshape(-1)
        if factors:
            return (gf * scale_a).reshape(a.shape), _unbroadcast_to((gf[flat] * scale_v).reshape(shape), vt)
        ga = gf.copy()
        if reduce == "mean":
            ga = xp.where(count > 0, ga * mean_scale if include_self else 0, ga)
        elif reduce == "assign" or not include_self:
            ga[flat] = 0
        gv = gf[flat] * (mean_scale[flat] if reduce == "mean" else win if reduce == "assign" else 1)
        return ga.reshape(a.shape).astype(g.dtype, copy=False), _unbroadcast_to(gv.reshape(shape), vt)
    return op_output(out.reshape(a.shape), backward, arr, vt)


def _factor_grads(reduce: str, own: Any, out: Any, flat: Any, values: Any, written: Any,
                  include_self: bool) -> Tuple[Any, Any]:
    """d out / d arr and d out / d values (flat, per element) of a 'mul', 'amin' or 'amax'
    put_along_axis whose `values` went to the flat places `flat` of `own` (giving `out`).

    'mul': the product of the place's other factors (computed without dividing by a zero, where
    paddle's out / factor gives NaN; elsewhere they agree). 'amin' / 'amax': the place's winners
    share its gradient evenly (paddle's rule for ties). A place nothing was written to passes its
    gradient on to arr."""
    xp = array_module(own)
    dtype = own.dtype
    self_counts = written & include_self
    if reduce in ("amin", "amax"):
        self_wins = self_counts & (own == out)
        value_wins = values == out[flat]
        winners = self_wins.astype(dtype)
        scatter_add(winners, flat, value_wins.astype(dtype))
        share = 1 / xp.where(written, winners, 1)
        return xp.where(written, self_wins * share, 1).astype(dtype), (value_wins * share[flat]).astype(dtype)
    zeros = (self_counts & (own == 0)).astype(dtype)
    scatter_add(zeros, flat, (values == 0).astype(dtype))
    nonzero_product = xp.where(self_counts & (own != 0), own, 1).astype(dtype)
    _ufunc_at(xp, "multiply", nonzero_product, flat, xp.where(values == 0, 1, values).astype(dtype))

    def others(factor: Any, zero_count: Any, product: Any) -> Any:
        alone = xp.where((zero_count == 1) & (factor == 0), product, 0)
        return xp.where(zero_count == 0, product / xp.where(factor == 0, 1, factor), alone).astype(dtype)
    grad_own = others(own, zeros, nonzero_product) if include_self else xp.zeros_like(own)
    return xp.where(written, grad_own, 1).astype(dtype), others(values, zeros[flat], nonzero_product[flat])


def _unbroadcast_to(g: Any, v: Optional[Tensor]) -> Any:
    return None if v is None else grad_for(g, grad_meta(v))


def _ufunc_at(xp: Any, ufunc: str, target: Any, flat: Any, values: Any) -> None:
    """target[flat] = ufunc(target[flat], values), combining repeated positions (whole rows of
    float arrays by a 1-D index in pycoll._C's loops: ufunc.at's order and values, 15-30x faster)."""
    if xp.__name__ == "numpy":
        if ufunc == "add" and host_math.scatter_add_rows(target, flat, values):
            return
        if ufunc in ("maximum", "minimum") and host_math.scatter_extreme_rows(target, flat, values,
                                                                               ufunc == "maximum"):
            return
        getattr(xp, ufunc).at(target, flat, values)
        return
    import cupyx
    {"add": cupyx.scatter_add, "maximum": cupyx.scatter_max, "minimum": cupyx.scatter_min,
     "multiply": _cupy_multiply_at}[ufunc](target, flat, values)


def _cupy_multiply_at(target: Any, flat: Any, values: Any) -> None:
    """CuPy has no scatter_multiply: multiply in rounds, each writing every position at most once."""
    while flat.size:
        win = last_writes(flat)
        target[flat[win]] *= values[win]
        flat, values = flat[~win], values[~win]


@param_aliases({"input": "x", "dim": "axis", "source": "value"})
def index_add_(x: Tensor, index: Any, axis: int, value: Any, alpha: float = 1, name: Optional[str] = None) -> Tensor:
    """In place: x = index_add(x, index, axis, value, alpha)."""
    return in_place(x, "index_add_", lambda: index_add(x, index, axis, value, alpha))


def index_fill_(x: Tensor, index: Any, axis: int, value: Any, name: Optional[str] = None) -> Tensor:
    """In place: x = index_fill(x, index, axis, value)."""
    return in_place(x, "index_fill_", lambda: index_fill(x, index, axis, value))


def scatter_(x: Tensor, index: Any, updates: Any, overwrite: bool = True, name: Optional[str] = None) -> Tensor:
    """In place: x = scatter(x, index, updates, overwrite)."""
    return in_place(x, "scatter_", lambda: scatter(x, index, updates, overwrite))


def put_along_axis_(arr: Tensor, indices: Any, values: Any, axis: int, reduce: str = "assign",
                    include_self: bool = True, broadcast: bool = True) -> Tensor:
    """In place: arr = put_along_axis(arr, ...)."""
    return in_place(arr, "put_along_axis_",
                    lambda: put_along_axis(arr, indices, values, axis, reduce, include_self, broadcast))


# -- paddle 3.3's torch-compatible forms: (input, dim, index, ...) ------------------------------

def _dim_second(torch_form: Callable[..., Tensor],
                by_keyword: bool = True) -> Callable[[Callable[..., Tensor]], Callable[..., Tensor]]:
    """Give an op paddle 3.3's second, torch-compatible form, chosen as paddle chooses it: an int
    second positional argument (torch's dim: an index is never an int), or (``by_keyword``) ``dim=``
    by keyword without one (index_select takes dim= as an alias of its axis)."""
    def wrap(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Tensor:
            second = args[1] if len(args) >= 2 else None
            if (isinstance(second, int) and not isinstance(second, bool)) or (
                    by_keyword and len(args) < 2 and "dim" in kwargs):
                return torch_form(*args, **kwargs)
            return fn(*args, **kwargs)
        return call
    return wrap


def _into(result: Tensor, out: Optional[Tensor]) -> Tensor:
    if out is None:
        return result
    out.set_value(result)
    return out


def _gather_along(input: Any, dim: int, index: Any, out: Optional[Tensor] = None) -> Tensor:  # noqa: A002
    """torch.gather: take_along_axis without broadcasting."""
    return _into(take_along_axis(input, index, dim, broadcast=False), out)


def _scatter_along(input: Any, dim: int, index: Any, src: Any = None, reduce: Optional[str] = None,  # noqa: A002
                   out: Optional[Tensor] = None, value: Any = None) -> Tensor:
    """torch.scatter: put_along_axis without broadcasting, of ``src`` or else ``value``."""
    if (src is None) == (value is None):
        raise TypeError("scatter(input, dim, index, ...): give src or value (one of them)")
    return _into(put_along_axis(input, index, value if src is None else src, dim, reduce or "assign",
                                broadcast=False), out)


def _scatter_along_(input: Tensor, dim: int, index: Any, src: Any = None, reduce: Optional[str] = None,  # noqa: A002
                    value: Any = None) -> Tensor:
    """torch's Tensor.scatter_: in place, ``_scatter_along``."""
    return in_place(input, "scatter_", lambda: _scatter_along(input, dim, index, src, reduce, value=value))


def _index_select_along(input: Any, dim: int, index: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    return index_select(input, index, dim)


def _index_add_along(input: Any, dim: int, index: Any, source: Any, alpha: float = 1,  # noqa: A002
                     name: Optional[str] = None) -> Tensor:
    return index_add(input, index, dim, source, alpha)


def _index_add_along_(input: Tensor, dim: int, index: Any, source: Any, alpha: float = 1,  # noqa: A002
                      name: Optional[str] = None) -> Tensor:
    return index_add_(input, index, dim, source, alpha)


gather = _dim_second(_gather_along)(gather)
scatter = _dim_second(_scatter_along)(scatter)
scatter_ = _dim_second(_scatter_along_)(scatter_)
index_select = _dim_second(_index_select_along, by_keyword=False)(index_select)
index_add = _dim_second(_index_add_along, by_keyword=False)(index_add)
index_add_ = _dim_second(_index_add_along_, by_keyword=False)(index_add_)

for _fn in (argmin, nonzero, masked_select, gather, index_select, index_add, index_fill, gather_nd, scatter, scatter_nd_add,
            scatter_nd, take_along_axis, put_along_axis, index_add_, index_fill_, scatter_, put_along_axis_):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
