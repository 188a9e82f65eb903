"""paddle.sparse's `sum`, `transpose`, `reshape` and `slice`: new index patterns computed on the
indices, the values carried along by pycoll's differentiable gathers, segment sums and
reductions. CSR inputs go through COO and come back as CSR."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

from pycoll import math_ops
from pycoll._param_aliases import param_aliases
from pycoll.device import array_module
from pycoll.dtypes import DTypeLike, convert_dtype
from pycoll.search_ops import gather
from pycoll.shape_ops import reshape as dense_reshape
from pycoll.shape_ops import transpose as dense_transpose
from pycoll.reshape_ops import slice as dense_slice
from pycoll.sparse.convert import coalesce, coo_to_csr, like_format, linear_index, prod, to_coo, unravel
from pycoll.sparse.tensor import CSR, SparseTensor, new_coo, sparse_arg
from pycoll.tensor import Tensor, wrap


def _axis(axis: Any, ndim: int, fn: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int) or not -ndim <= axis < ndim:
        raise ValueError(f"{fn}: axis must be an int in [{-ndim}, {ndim}), got {axis!r}")
    return axis % ndim


def _sum_dtype(dtype: DTypeLike, x: SparseTensor) -> Any:
    dt = convert_dtype(dtype)
    if dt is None and x.dtype.kind in "bi" and x.dtype.itemsize <= 4:
        dt = convert_dtype("int64")  # paddle's: bool and int32 sums are int64
    return dt


def _sum_axis(x: SparseTensor, axis: int, keepdim: bool) -> SparseTensor:
    """A COO x summed over one axis."""
    sd = x.sparse_dim()
    values = x.values()
    if axis >= sd:  # a dense dim: sum each stored row of values
        out = math_ops.sum(values, axis=axis - sd + 1, keepdim=keepdim)
        shape = list(x._dense_shape)
        if keepdim:
            shape[axis] = 1
        else:
            del shape[axis]
        return new_coo(x._indices, out, tuple(shape), x._coalesced)
    xp = array_module(x._indices)
    idx = x._indices
    keepdim = keepdim or sd == 1  # a COO tensor keeps a sparse dim: its last one stays, of size 1 (paddle's)
    if keepdim:
        idx = idx.copy()
        idx[axis] = 0
    else:
        idx = xp.concatenate([idx[:axis], idx[axis + 1:]])
    shape = list(x._dense_shape)
    if keepdim:
        shape[axis] = 1
    else:
        del shape[axis]
    return coalesce(new_coo(idx, values, tuple(shape)))


def sum(x: SparseTensor, axis: Union[int, Sequence[int], None] = None, dtype: DTypeLike = None,  # noqa: A001
        keepdim: bool = False, name: Optional[str] = None) -> SparseTensor:
    """The sum of x's entries over `axis` (an int or a list of them; None: all, a one-entry
    tensor of shape [1], or all ones with keepdim), a sparse tensor of x's format. bool and
    int32 sums are int64 (paddle's). A 2-D CSR x sums all or over its last axis (shape
    [rows, 1], rows with no entry not stored)."""
    x = sparse_arg(x, "sum")
    dt = _sum_dtype(dtype, x)
    src = x if dt is None else new_coo_like(x, math_ops.cast(x.values(), dt))
    if axis is None:
        n = x.ndim if keepdim or x._format == CSR else 1
        sd = min(n, to_coo(x).sparse_dim())  # keepdim keeps x's sparse and dense dims, all of size 1
        total = dense_reshape(math_ops.sum(src.values()), [1] * (n - sd + 1))
        xp = array_module(total._array)
        out = new_coo(xp.zeros((sd, 1), dtype=xp.int64), total, (1,) * n, coalesced=True)
        return coo_to_csr(out) if x._format == CSR else out
    axes = [axis] if isinstance(axis, int) and not isinstance(axis, bool) else list(axis)
    if x._format == CSR:
        if axes != [-1]:
            raise ValueError(f"sum: a CSR tensor sums over all axes (None) or its last one (-1), got axis={axis!r}")
        keepdim = True  # paddle's CSR row sums keep the axis
    axes = sorted({_axis(a, x.ndim, "sum") for a in axes}, reverse=True)
    out = to_coo(src)
    for a in axes:
        out = _sum_axis(out, a, keepdim)
    return like_format(x, out)


def new_coo_like(x: SparseTensor, values: Tensor) -> SparseTensor:
    """x (CSR made COO) holding `values`, in their graph."""
    c = to_coo(x)
    return new_coo(c._indices, values, c._dense_shape, c._coalesced)


def transpose(x: SparseTensor, perm: Sequence[int], name: Optional[str] = None) -> SparseTensor:
    """x with its dims permuted by `perm`; a COO x's sparse dims stay among themselves (and its
    dense dims among theirs), its indices rows permuted in place order (not re-sorted), as
    paddle's; a CSR x is re-sorted into CSR."""
    x = sparse_arg(x, "transpose")
    perm = [int(p) for p in perm]
    if sorted(p % x.ndim for p in perm) != list(range(x.ndim)) or len(perm) != x.ndim:
        raise ValueError(f"transpose: perm must be a permutation of the {x.ndim} dims, got {perm}")
    perm = [p % x.ndim for p in perm]
    c = to_coo(x)
    sd = c.sparse_dim()
    if sorted(perm[:sd]) != list(range(sd)):
        raise ValueError(f"transpose: perm must keep the {sd} sparse dims first (and the dense dims after), got {perm}")
    values = c.values()
    if sd < x.ndim:
        values = dense_transpose(values, [0] + [p - sd + 1 for p in perm[sd:]])
    shape = tuple(x._dense_shape[p] for p in perm)
    out = new_coo(c._indices[perm[:sd]], values, shape)
    return coo_to_csr(out) if x._format == CSR else out


def _target_shape(shape: Any, old: Sequence[int], fn: str) -> List[int]:
    shape = [int(s) for s in (shape.tolist() if isinstance(shape, Tensor) else shape)]
    if shape.count(-1) > 1:
        raise ValueError(f"{fn}: only one dim of shape may be -1, got {shape}")
    shape = [old[i] if s == 0 else s for i, s in enumerate(shape)]
    total = prod(old)
    if -1 in shape:
        known = prod([s for s in shape if s != -1])
        if known == 0 or total % known:
            raise ValueError(f"{fn}: cannot reshape a tensor of shape {list(old)} to {shape}")
        shape[shape.index(-1)] = total // known
    if prod(shape) != total or any(s < 0 for s in shape):
        raise ValueError(f"{fn}: cannot reshape a tensor of shape {list(old)} to {shape}")
    return shape


@param_aliases({"input": "x"})  # paddle 3.3's sparse.reshape(input=...)
def reshape(x: SparseTensor, shape: Sequence[int], name: Optional[str] = None) -> SparseTensor:
    """x with shape `shape` (0 copies x's dim there, one -1 is inferred); the dense dims of a
    COO x stay its last dims, unchanged."""
    x = sparse_arg(x, "reshape")
    new = _target_shape(shape, x._dense_shape, "reshape")
    c = to_coo(x)
    sd = c.sparse_dim()
    dense = list(x._dense_shape[sd:])
    new_sd = len(new) - len(dense)
    if new_sd < 1 or new[new_sd:] != dense:
        raise ValueError(f"reshape: the dense dims {dense} of x must stay the last dims of shape, got {new}")
    lin = linear_index(c._indices, x._dense_shape[:sd])
    out = new_coo(unravel(lin, new[:new_sd]), c.values(), tuple(new), c._coalesced)
    return coo_to_csr(out) if x._format == CSR else out


def slice(x: SparseTensor, axes: Sequence[int], starts: Sequence[int], ends: Sequence[int],  # noqa: A001
          name: Optional[str] = None) -> SparseTensor:
    """x[starts:ends] along each of `axes` (negative bounds count from the end; bounds past a
    dim are clipped), indices counted from each slice's start, as paddle's."""
    x = sparse_arg(x, "slice")
    axes, starts, ends = ([int(v) for v in (a.tolist() if isinstance(a, Tensor) else a)]
                          for a in (axes, starts, ends))
    if not len(axes) == len(starts) == len(ends):
        raise ValueError(f"slice: axes, starts and ends must have the same length, got {len(axes)}, {len(starts)} "
                         f"and {len(ends)}")
    c = to_coo(x)
    sd = c.sparse_dim()
    xp = array_module(c._indices)
    keep = xp.ones(c._indices.shape[1], dtype=bool)
    shape = list(x._dense_shape)
    lows = [0] * sd
    dense_axes, dense_starts, dense_ends = [], [], []
    for a, s, e in zip(axes, starts, ends):
        a = _axis(a, x.ndim, "slice")
        n = shape[a]
        s = min(max(s + n if s < 0 else s, 0), n)
        e = min(max(e + n if e < 0 else e, 0), n)
        e = max(e, s)
        if a >= sd:
            dense_axes.append(a - sd + 1)
            dense_starts.append(s)
            dense_ends.append(e)
        else:
            keep &= (c._indices[a] >= s) & (c._indices[a] < e)
            lows[a] = s
        shape[a] = e - s
    picked = xp.nonzero(keep)[0]
    values = gather(c.values(), wrap(picked), 0)
    if dense_axes:
        values = dense_slice(values, dense_axes, dense_starts, dense_ends)
    idx = c._indices[:, picked] - xp.asarray(lows, dtype=c._indices.dtype)[:, None]
    out = new_coo(idx, values, tuple(shape), c._coalesced)
    return coo_to_csr(out) if x._format == CSR else out

