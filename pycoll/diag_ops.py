"""Diagonals and grids: diagonal, trace, diag, diagflat, diag_embed, tril_indices, triu_indices
and meshgrid (also Tensor methods where paddle has them)."""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, normalize_axes, op_output, placed
from pycoll.device import array_module, module_for
from pycoll.dtypes import DTypeLike, convert_dtype
from pycoll.math_ops import sum as _sum
from pycoll.shape_ops import expand, flatten, reshape, transpose
from pycoll.tensor import Tensor, wrap


def _diagonal_index(xp: Any, rows: int, cols: int, offset: int) -> tuple:
    """The (row, column) indices of diagonal `offset` of a rows x cols matrix."""
    n = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    i = xp.arange(n)
    return i + max(-offset, 0), i + max(offset, 0)


@param_aliases({"input": "x", "dim1": "axis1", "dim2": "axis2"})
def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, name: Optional[str] = None) -> Tensor:
    """The diagonal `offset` of the matrices in axes `axis1`, `axis2`, as the last dimension."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal: x must have at least 2 dimensions (matrices), got shape {list(x.shape)}")
    a1, a2 = normalize_axes([axis1, axis2], x.ndim)
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, got {axis1} and {axis2}")
    x, = placed("diagonal", x, axes=(a1, a2))  # auto-parallel: the matrices made whole
    a = x._array
    xp = array_module(a)

    def backward(g: Any) -> tuple:
        z = xp.zeros(a.shape, dtype=g.dtype)
        _diagonal_view(z, offset, a1, a2)[...] = g
        return (z,)
    return op_output(_diagonal_view(a, offset, a1, a2), backward, x)


def _diagonal_view(a: Any, offset: int, axis1: int, axis2: int) -> Any:
    """The diagonal of ``a`` as a writable view of its memory, as paddle's ``diagonal`` is (so
    ``x.diagonal().fill_(1)`` changes x): NumPy's is a read-only view of a writable array, made
    writable; CuPy's is writable."""
    view = array_module(a).diagonal(a, offset, axis1, axis2)
    if isinstance(view, np.ndarray) and a.flags.writeable:
        view.flags.writeable = True
    return view


@param_aliases({"input": "x"})
def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, name: Optional[str] = None) -> Tensor:
    """The sum of the diagonal `offset` of the matrices in axes `axis1`, `axis2`."""
    return _sum(diagonal(x, offset, axis1, axis2), axis=-1)


def _embed(x: Tensor, offset: int, fill: Any) -> Tensor:
    """x's last dimension put on diagonal `offset` of new last-two-dimension matrices filled
    with `fill`."""
    x, = placed("_embed", x, axes=None)  # auto-parallel: computed whole
    a = x._array
    xp = array_module(a)
    n = a.shape[-1] + abs(offset)
    i, j = _diagonal_index(xp, n, n, offset)
    out = xp.full(a.shape[:-1] + (n, n), fill, dtype=a.dtype)
    out[..., i, j] = a
    return op_output(out, lambda g: (g[..., i, j],), x)


def diag(x: Any, offset: int = 0, padding_value: Any = 0, name: Optional[str] = None) -> Tensor:
    """For a 1-D x, the square matrix with x on diagonal `offset` and `padding_value` elsewhere;
    for a 2-D x, its diagonal `offset`."""
    x = as_tensor(x)
    if x.ndim == 1:
        return _embed(x, offset, padding_value)
    if x.ndim == 2:
        return diagonal(x, offset)
    raise ValueError(f"diag: x must be 1-D or 2-D, got shape {x.shape}")


def diagflat(x: Any, offset: int = 0, name: Optional[str] = None) -> Tensor:
    """x flattened, on diagonal `offset` of a square matrix of zeros."""
    return _embed(flatten(as_tensor(x)), offset, 0)


def diag_embed(input: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: A002
    """input's last dimension on diagonal `offset` of new matrices of zeros, whose two dimensions
    are `dim1` and `dim2` of the result."""
    x = as_tensor(input)
    out = _embed(x, offset, 0)
    d1, d2 = normalize_axes([dim1, dim2], out.ndim)
    if d1 == d2:
        raise ValueError(f"diag_embed: dim1 and dim2 must differ, got {dim1} and {dim2}")
    perm: List[int] = [0] * out.ndim
    rest = iter(range(out.ndim - 2))
    for pos in range(out.ndim):
        perm[pos] = out.ndim - 2 if pos == d1 else out.ndim - 1 if pos == d2 else next(rest)
    return transpose(out, perm)


def _triangle_indices(row: int, col: int, offset: int, dtype: DTypeLike, upper: bool) -> Tensor:
    for v, arg in ((row, "row"), (col, "col")):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{'triu' if upper else 'tril'}_indices: {arg} must be an int >= 0, got {v!r}")
    xp = module_for()
    rows, cols = (xp.triu_indices if upper else xp.tril_indices)(row, offset, col)
    return wrap(xp.stack([rows, cols]).astype(convert_dtype(dtype)))


def tril_indices(row: int, col: int, offset: int = 0, dtype: DTypeLike = "int64") -> Tensor:
    """The [2, N] (row, column) indices of the lower triangle (up to diagonal `offset`) of a
    row x col matrix, row by row."""
    return _triangle_indices(row, col, offset, dtype, False)


def triu_indices(row: int, col: Optional[int] = None, offset: int = 0, dtype: DTypeLike = "int64") -> Tensor:
    """The [2, N] (row, column) indices of the upper triangle (from diagonal `offset`) of a
    row x col matrix (square without col), row by row."""
    return _triangle_indices(row, row if col is None else col, offset, dtype, True)


def meshgrid(*args: Any, **kwargs: Any) -> List[Tensor]:
    """The grids of N 1-D tensors (given one by one or as one list). ``indexing`` 'ij' (the
    default): result k varies along dimension k; 'xy' (torch's and NumPy's Cartesian form): the
    first two dimensions swap places."""
    if kwargs.keys() - {"name", "indexing"}:
        raise TypeError(f"meshgrid: unexpected keyword arguments {sorted(kwargs.keys() - {'name', 'indexing'})}")
    indexing = kwargs.get("indexing", "ij")
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    tensors = [as_tensor(t) for t in tensors]
    for k, t in enumerate(tensors):
        if t.ndim > 1:
            raise ValueError(f"meshgrid: input {k} must be 0-d or 1-D, got shape {t.shape}")
    shape = [t.size for t in tensors]
    dims = list(range(len(shape)))
    if indexing == "xy" and len(shape) > 1:
        dims[0], dims[1] = 1, 0  # tensor k varies along dims[k]
    grid = [shape[dims.index(d)] for d in range(len(shape))]
    outs = []
    for k, t in enumerate(tensors):
        lined = [1] * len(shape)
        lined[dims[k]] = shape[k]
        outs.append(expand(reshape(t, lined), grid))
    return outs


for _fn in (diagonal, trace, diag, diagflat, diag_embed):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
