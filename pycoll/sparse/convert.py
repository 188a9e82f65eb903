"""Conversions between dense, COO and CSR, and `coalesce`: index arithmetic on the patterns,
with the values moved by pycoll's differentiable gathers and segment sums (so gradients reach
whatever the values came from, as paddle's do)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from pycoll.device import array_module
from pycoll.geometric.segment import segment_reduce
from pycoll.index_ops import index_add
from pycoll.search_ops import gather
from pycoll.shape_ops import reshape
from pycoll.sparse.tensor import COO, CSR, SparseTensor, new_coo, new_csr, sparse_arg
from pycoll.tensor import Tensor, wrap


def prod(dims: Sequence[int]) -> int:
    """The number of positions in a grid of `dims` (1 for none)."""
    n = 1
    for d in dims:
        n *= int(d)
    return n


def linear_index(indices: Any, dims: Sequence[int]) -> Any:
    """The row-major position of each column of `indices` ([len(dims), nnz]) in a `dims` grid."""
    xp = array_module(indices)
    lin = xp.zeros(indices.shape[1], dtype=xp.int64)
    for d, size in enumerate(dims):
        lin = lin * int(size) + indices[d].astype(xp.int64)
    return lin


def unravel(lin: Any, dims: Sequence[int]) -> Any:
    """`linear_index`'s inverse: the [len(dims), n] int64 indices of positions `lin`."""
    xp = array_module(lin)
    rows = []
    for size in reversed([int(s) for s in dims]):
        rows.append(lin % size)
        lin = lin // size
    return xp.stack(rows[::-1]) if rows else xp.zeros((0, lin.shape[0]), dtype=xp.int64)


def coalesce(x: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """x's COO entries sorted by position, repeated positions summed (paddle's ``coalesce``)."""
    x = sparse_arg(x, "coalesce", fmt=COO)
    xp = array_module(x._indices)
    sparse_shape = x._dense_shape[:x.sparse_dim()]
    lin = linear_index(x._indices, sparse_shape)
    uniq, inverse = xp.unique(lin, return_inverse=True)
    values = segment_reduce(x.values(), inverse.reshape(-1), int(uniq.shape[0]), "sum", "coalesce")
    return new_coo(unravel(uniq, sparse_shape), values, x._dense_shape, coalesced=True)


def coalesced(x: SparseTensor) -> SparseTensor:
    """x itself if it is known to be coalesced, else ``coalesce(x)``."""
    return x if x._coalesced else coalesce(x)


def coalesced_any(x: SparseTensor) -> SparseTensor:
    """x with one value per position: a COO x coalesced; a CSR x as it is (sparse_csr_tensor
    adds up a row's repeated columns when it builds one)."""
    return x if x._format == CSR else coalesced(x)


def coo_to_dense(x: SparseTensor) -> Tensor:
    """The dense tensor of a COO x (repeated positions add up)."""
    sd = x.sparse_dim()
    sparse_shape, dense_shape = x._dense_shape[:sd], x._dense_shape[sd:]
    xp = array_module(x._values)
    flat = wrap(xp.zeros((prod(sparse_shape),) + tuple(dense_shape), dtype=x._values.dtype))
    flat = index_add(flat, wrap(linear_index(x._indices, sparse_shape)), 0, x.values())
    return reshape(flat, list(x._dense_shape))


def dense_to_coo(x: Tensor, sparse_dim: int) -> SparseTensor:
    """The COO tensor of dense x over its first `sparse_dim` dims: the positions where any
    element is nonzero, in row-major order (paddle's ``to_sparse_coo``)."""
    if isinstance(x, SparseTensor):
        return x if x._format == COO else csr_to_coo(x)
    if not isinstance(sparse_dim, int) or isinstance(sparse_dim, bool) or not 0 < sparse_dim <= x.ndim:
        raise ValueError(f"to_sparse_coo: sparse_dim must be an int in [1, {x.ndim}] (x is {x.ndim}-D), "
                         f"got {sparse_dim!r}")
    a = x._array
    xp = array_module(a)
    mask = a != 0
    if sparse_dim < a.ndim:
        mask = mask.any(axis=tuple(range(sparse_dim, a.ndim)))
    indices = xp.stack([i.astype(xp.int64) for i in xp.nonzero(mask)])
    sparse_shape = a.shape[:sparse_dim]
    flat = reshape(x, [prod(sparse_shape)] + list(a.shape[sparse_dim:]))
    values = gather(flat, wrap(linear_index(indices, sparse_shape)), 0)
    return new_coo(indices, values, a.shape, coalesced=True)


def _csr_dims(shape: Tuple[int, ...]) -> Tuple[int, int]:
    """(batches, rows) of a 2-D or 3-D CSR shape."""
    return (1 if len(shape) == 2 else shape[0]), shape[-2]


def coo_to_csr(x: SparseTensor) -> SparseTensor:
    """The CSR tensor of a 2-D or 3-D COO x with no dense dims (paddle's ``to_sparse_csr``)."""
    if x.ndim not in (2, 3) or x.dense_dim() != 0:
        raise ValueError(f"to_sparse_csr: x must be 2-D or 3-D with every dim sparse, got shape "
                         f"{list(x._dense_shape)} with {x.dense_dim()} dense dims")
    x = coalesced(x)
    xp = array_module(x._indices)
    batches, rows = _csr_dims(x._dense_shape)
    idx = x._indices
    row_of = idx[-2] if x.ndim == 2 else idx[0] * rows + idx[-2]
    counts = xp.bincount(row_of, minlength=batches * rows).reshape(batches, rows)
    crows = xp.zeros((batches, rows + 1), dtype=xp.int64)
    crows[:, 1:] = xp.cumsum(counts, axis=1)
    return new_csr(crows.reshape(-1), idx[-1].astype(xp.int64), x.values(), x._dense_shape)


def csr_rows(x: SparseTensor) -> Any:
    """For each stored entry of CSR x, its row counted over all batches (batch * rows + row)."""
    xp = array_module(x._crows)
    batches, rows = _csr_dims(x._dense_shape)
    crows = x._crows.reshape(batches, rows + 1).astype(xp.int64)
    counts = (crows[:, 1:] - crows[:, :-1]).reshape(-1)  # each row's entries, stored in row order
    return xp.repeat(xp.arange(batches * rows), counts)


def csr_to_coo(x: SparseTensor) -> SparseTensor:
    """The COO tensor of CSR x (its entries in CSR's order)."""
    xp = array_module(x._crows)
    _, rows = _csr_dims(x._dense_shape)
    r = csr_rows(x)
    cols = x._cols.astype(xp.int64)
    idx = xp.stack([r, cols]) if x.ndim == 2 else xp.stack([r // rows, r % rows, cols])
    return new_coo(idx, x.values(), x._dense_shape, coalesced=True)


def to_dense(x: Any) -> Tensor:
    """The dense tensor of x (x itself when dense)."""
    if not isinstance(x, SparseTensor):
        return x
    return coo_to_dense(csr_to_coo(x) if x._format == CSR else x)


def to_coo(x: Any, sparse_dim: Optional[int] = None) -> SparseTensor:
    """x as COO (a dense x over `sparse_dim` dims, default all)."""
    if isinstance(x, SparseTensor):
        return x if x._format == COO else csr_to_coo(x)
    return dense_to_coo(x, x.ndim if sparse_dim is None else sparse_dim)


def to_csr(x: Any) -> SparseTensor:
    """x as CSR."""
    if isinstance(x, SparseTensor) and x._format == CSR:
        return x
    if not isinstance(x, SparseTensor) and x.ndim not in (2, 3):
        raise ValueError(f"to_sparse_csr: x must be 2-D or 3-D, got shape {list(x.shape)}")
    return coo_to_csr(to_coo(x))


def like_format(x: SparseTensor, coo: SparseTensor) -> SparseTensor:
    """A COO result in x's format (CSR when x is)."""
    return coo_to_csr(coo) if x._format == CSR else coo

