"""paddle's index reads and writes that pycoll.index_ops lacks: ``take``, ``index_sample``,
``index_put`` / ``index_put_``, ``scatter_reduce``, ``scatter_add`` / ``scatter_add_``,
``fill_diagonal_``, ``diagonal_scatter``, ``slice_scatter`` and ``select_scatter`` (also Tensor
methods). The writes are `inplace_ops.written` (x with values at an index: the overwritten
elements get no gradient, the values the gradient of the places they reach; where an index
repeats, the last value written wins and alone gets its gradient; paddle 3.3.1's index_put
credits every repeated value) or
`index_ops.put_along_axis`; the reads are gathers whose gradient adds up over repeats.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, check_device_index, needs_grad, normalize_axes, op_output, placed
from pycoll.device import array_module, to_module
from pycoll.index_ops import put_along_axis, take_along_axis
from pycoll.inplace_ops import in_place, written
from pycoll import shape_ops as _shape
from pycoll.shape_ops import axis_arg, int_list
from pycoll.tensor import Tensor


def _int_index(index: Any, xp: Any, fn: str, arg: str = "index") -> Any:
    a = to_module(as_tensor(index)._array, xp)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {arg} must hold int32 or int64 values, got dtype {a.dtype}")
    return a


def take(x: Tensor, index: Tensor, mode: str = "raise", name: Optional[str] = None) -> Tensor:
    """x's elements at `index` in x flattened (the result has index's shape). mode 'raise':
    indices in [-n, n) (negative ones count from the end), else ValueError; 'wrap': taken modulo
    n; 'clip': clamped to [0, n - 1]."""
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    x, index = placed("_all_whole", as_tensor(x), index)  # auto-parallel: flat indices address the whole
    a = x._array
    xp = array_module(a)
    idx = _int_index(index, xp, "take")
    n = a.size
    if mode == "raise":
        if idx.size and (int(idx.min()) < -n or int(idx.max()) >= n):
            raise ValueError(f"take: index must lie in [-{n}, {n}) (x has {n} elements), got values from "
                             f"{int(idx.min())} to {int(idx.max())}")
        flat = idx % n if n else idx
    else:
        flat = idx % n if mode == "wrap" else xp.clip(idx, 0, n - 1)

    def backward(g: Any) -> tuple:
        z = xp.zeros(n, g.dtype)
        _shape.scatter_add(z, flat.reshape(-1), g.reshape(-1))
        return (z.reshape(a.shape),)
    return op_output(a.reshape(-1)[flat], backward, x)


def index_sample(x: Tensor, index: Tensor) -> Tensor:
    """Row i of the result holds x[i, index[i, j]] for each j: x is [N, M], index [N, K]."""
    x, index = placed("_all_whole", as_tensor(x), index)  # auto-parallel: written or read anywhere, so whole
    idx = _int_index(index, array_module(x._array), "index_sample")
    if x.ndim != 2 or idx.ndim != 2 or idx.shape[0] != x.shape[0]:
        raise ValueError(f"index_sample: x must be [N, M] and index [N, K], got shapes {x.shape} and "
                         f"{list(idx.shape)}")
    return take_along_axis(x, index, 1, broadcast=False)


@param_aliases({"input": "x", "values": "value"})
def index_put(x: Tensor, indices: Sequence[Tensor], value: Any, accumulate: bool = False,
              name: Optional[str] = None) -> Tensor:
    """x with `value` (broadcast) written at ``x[indices]`` (a tuple of integer or bool index
    tensors, one per leading dimension), or added there with ``accumulate=True`` (repeats add up)."""
    x = as_tensor(x)
    if not isinstance(indices, (list, tuple)) or not indices:
        raise TypeError(f"index_put: indices must be a non-empty tuple or list of Tensors, got {indices!r}")
    x, value, *indices = placed("_all_whole", x, value, *indices)  # auto-parallel: written anywhere, so whole
    xp = array_module(x._array)
    key = tuple(to_module(as_tensor(i)._array, xp) for i in indices)
    for i, k in enumerate(key):
        if k.dtype.kind not in "biu":
            raise TypeError(f"index_put: indices[{i}] must hold integers or bools, got dtype {k.dtype}")
    check_device_index("index_put", key, x._array.shape)
    v = as_tensor(value)
    values = to_module(v._array, xp)
    try:
        if not accumulate:
            return written(x, key, values, v if needs_grad(v) else None)
        target = x._array[key]
        broadcast = xp.broadcast_to(values.astype(x._array.dtype, copy=False), target.shape)
    except IndexError as exc:  # NumPy's out-of-range message names neither the op nor the argument
        raise IndexError(f"index_put: indices address a place outside x (shape {x.shape}): {exc}") from None
    except ValueError as exc:  # NumPy's message names neither the op nor the argument
        if "broadcast" not in str(exc):
            raise
        raise ValueError(f"index_put: value of shape {list(values.shape)} does not broadcast to x[indices], "
                         f"of shape {list(x._array[key].shape)}") from None
    out = x._array.copy()
    _shape.scatter_add(out, key, broadcast)

    def backward(g: Any) -> tuple:
        return g, _shape.unbroadcast(g[key], v._array.shape).astype(v.dtype, copy=False)
    return op_output(out, backward, x, v)


@param_aliases({"input": "x", "values": "value"})
def index_put_(x: Tensor, indices: Sequence[Tensor], value: Any, accumulate: bool = False,
               name: Optional[str] = None) -> Tensor:
    """In place: x = index_put(x, indices, value, accumulate)."""
    return in_place(x, "index_put_", lambda: index_put(x, indices, value, accumulate))


_SCATTER_REDUCES = {"sum": "add", "prod": "mul", "mean": "mean", "amin": "amin", "amax": "amax"}


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,  # noqa: A002
                   include_self: bool = True) -> Tensor:
    """input with src[i][j] combined into input[index[i][j]][j] (dim 0; likewise along `dim`) by
    `reduce`: 'sum', 'prod', 'mean', 'amin' or 'amax' (``include_self=False``: without input's
    own element where something is sent). index has input's rank; src is read over index's
    extent. Gradients for 'sum' and 'mean'."""
    if reduce not in _SCATTER_REDUCES:
        raise ValueError(f"scatter_reduce: reduce must be one of {sorted(_SCATTER_REDUCES)}, got {reduce!r}")
    input, src = as_tensor(input), as_tensor(src)
    idx = _int_index(index, array_module(input._array), "scatter_reduce")
    if idx.ndim != src.ndim or any(i > s for i, s in zip(idx.shape, src.shape)):
        raise ValueError(f"scatter_reduce: index must have src's rank and fit inside it, got shapes "
                         f"{list(idx.shape)} and {src.shape}")
    if list(idx.shape) != src.shape:
        src = src[tuple(slice(0, n) for n in idx.shape)]
    return put_along_axis(input, index, src, dim, _SCATTER_REDUCES[reduce], include_self, broadcast=False)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """scatter_reduce(input, dim, index, src, 'sum'): src added at index along `dim`."""
    return scatter_reduce(input, dim, index, src, "sum")


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """In place: input = scatter_add(input, dim, index, src)."""
    return in_place(input, "scatter_add_", lambda: scatter_add(input, dim, index, src))


def fill_diagonal_(x: Tensor, value: float, offset: int = 0, wrap: bool = False,
                   name: Optional[str] = None) -> Tensor:
    """Set x's diagonal x[i, i + offset] (x[i, i, ..., i] for more dimensions) to `value`, in
    place. A tall matrix is filled down to its square part, or with ``wrap=True`` again every
    cols + 1 rows (NumPy's fill_diagonal); as in paddle, an offset diagonal never wraps across a
    row's end."""
    if x.ndim < 2:
        raise ValueError(f"fill_diagonal_: x must have at least 2 dimensions, got shape {x.shape}")
    whole, = placed("_all_whole", x)  # auto-parallel: global diagonal positions
    a = whole._array
    xp = array_module(a)
    cols = a.shape[1]
    step = sum(int(s) for s in xp.cumprod(xp.asarray((1,) + a.shape[:0:-1]))) if a.ndim > 2 else cols + 1
    size = min(a.shape[0], cols) * cols if a.ndim == 2 and not wrap else a.size
    starts = xp.arange(0, size, step)
    inside = (starts % cols + offset >= 0) & (starts % cols + offset < cols)
    places = xp.unravel_index(starts[inside] + offset, a.shape)
    return in_place(x, "fill_diagonal_", lambda: written(whole, places, value, None))


def diagonal_scatter(x: Tensor, y: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1,
                     name: Optional[str] = None) -> Tensor:
    """x with its diagonal (see ``pycoll.diagonal``: the other dimensions first, the diagonal last)
    replaced by y."""
    x, y = placed("_all_whole", as_tensor(x), as_tensor(y))  # auto-parallel: written or read anywhere, so whole
    a1, a2 = axis_arg(axis1, x.ndim), axis_arg(axis2, x.ndim)
    if a1 == a2:
        raise ValueError(f"diagonal_scatter: axis1 and axis2 must differ, got {axis1} and {axis2}")
    perm = [d for d in range(x.ndim) if d not in (a1, a2)] + [a1, a2]
    moved = _shape.transpose(x, perm)
    xp = array_module(x._array)
    rows, cols = moved.shape[-2:]
    length = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    r = xp.arange(length) + max(0, -offset)
    key = (Ellipsis, r, r + offset)
    if y.shape != moved.shape[:-2] + [length]:
        raise ValueError(f"diagonal_scatter: y must have shape {moved.shape[:-2] + [length]} (the diagonal's), "
                         f"got {y.shape}")
    out = written(moved, key, to_module(y._array, xp), y if needs_grad(y) else None)
    inverse = [perm.index(d) for d in range(x.ndim)]
    return _shape.transpose(out, inverse)


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def slice_scatter(x: Tensor, value: Tensor, axes: Sequence[int], starts: Sequence[int], ends: Sequence[int],
                  strides: Sequence[int], name: Optional[str] = None) -> Tensor:
    """x with ``x[starts:ends:strides]`` along `axes` (as ``strided_slice`` reads it) replaced by
    `value`, which has that slice's shape or broadcasts to it (as in paddle's examples)."""
    x, value = placed("_all_whole", as_tensor(x), as_tensor(value))  # auto-parallel: written or read anywhere, so whole
    axes = list(normalize_axes(int_list(axes, "axes"), x.ndim))
    starts, ends, strides = int_list(starts, "starts"), int_list(ends, "ends"), int_list(strides, "strides")
    if not len(axes) == len(starts) == len(ends) == len(strides) or 0 in strides:
        raise ValueError(f"slice_scatter: axes, starts, ends and strides must have one length and strides no 0, "
                         f"got {axes}, {starts}, {ends}, {strides}")
    key = [slice(None)] * x.ndim
    for ax, lo, hi, step in zip(axes, starts, ends, strides):
        key[ax] = slice(lo, hi, step)
    key = tuple(key)
    target = x._array[key].shape
    if not _broadcasts_to(value._array.shape, target):
        raise ValueError(f"slice_scatter: value must have the slice's shape {list(target)} or one that "
                         f"broadcasts to it, got {list(value.shape)}")
    xp = array_module(x._array)
    return written(x, key, to_module(value._array, xp), value if needs_grad(value) else None)


def select_scatter(x: Tensor, values: Tensor, axis: int, index: int, name: Optional[str] = None) -> Tensor:
    """x with its slice at `index` along `axis` replaced by `values` (x's shape without `axis`)."""
    x, values = placed("_all_whole", as_tensor(x), as_tensor(values))  # auto-parallel: written or read anywhere, so whole
    ax = axis_arg(axis, x.ndim)
    if isinstance(index, bool) or not isinstance(index, int) or not -x.shape[ax] <= index < x.shape[ax]:
        raise ValueError(f"select_scatter: index must be an int in [-{x.shape[ax]}, {x.shape[ax]}), got {index!r}")
    key = (slice(None),) * ax + (index,)
    if tuple(values._array.shape) != x._array[key].shape:
        raise ValueError(f"select_scatter: values must have shape {list(x._array[key].shape)}, got {values.shape}")
    xp = array_module(x._array)
    return written(x, key, to_module(values._array, xp), values if needs_grad(values) else None)


for _fn in (take, index_sample, index_put, index_put_, scatter_reduce, scatter_add, scatter_add_, fill_diagonal_,
            diagonal_scatter, slice_scatter, select_scatter):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
