"""paddle.sparse's elementwise binary ops on two sparse tensors of one shape and format:
`add`, `subtract`, `multiply`, `divide`, plus `is_same_shape` and `mask_as`.

Two tensors of one pattern combine their values directly. Otherwise add, subtract and
multiply work on the union of the two patterns (each side's values placed on it, 0 where it has
none). divide stores every position (0 / 0 is NaN there), whatever the patterns, as paddle's CPU
kernel does.
`multiply` and `divide` also take a number for y.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from pycoll import math_ops
from pycoll.device import array_module
from pycoll.geometric.segment import segment_reduce
from pycoll.search_ops import gather
from pycoll.shape_ops import reshape
from pycoll.sparse.convert import coalesced, like_format, linear_index, prod, to_coo, to_dense, unravel
from pycoll.sparse.tensor import COO, CSR, SparseTensor, new_coo, sparse_arg, with_values
from pycoll.tensor import Tensor, wrap


def _same_pattern(x: SparseTensor, y: SparseTensor) -> bool:
    if x._format == COO:
        a, b = (x._indices,), (y._indices,)
    else:
        a, b = (x._crows, x._cols), (y._crows, y._cols)
    return all(p is q or (p.shape == q.shape and bool((p == q).all())) for p, q in zip(a, b))


def _pair(x: Any, y: Any, fn: str) -> None:
    sparse_arg(x, fn)
    sparse_arg(y, fn, "y")
    if x._format != y._format:
        raise TypeError(f"{fn}: x and y must both be COO or both CSR, got {x._format.upper()} and "
                        f"{y._format.upper()}")
    if x._dense_shape != y._dense_shape:
        raise ValueError(f"{fn}: x and y must have the same shape, got {list(x._dense_shape)} and "
                         f"{list(y._dense_shape)}")
    if x._format == COO and x.sparse_dim() != y.sparse_dim():
        raise ValueError(f"{fn}: x and y must have the same sparse_dim, got {x.sparse_dim()} and {y.sparse_dim()}")


def _on_union(x: SparseTensor, y: SparseTensor, op: Callable[[Tensor, Tensor], Tensor]) -> SparseTensor:
    """op on x's and y's values placed on the union of their (COO) patterns."""
    x, y = coalesced(x), coalesced(y)
    xp = array_module(x._indices)
    sparse_shape = x._dense_shape[:x.sparse_dim()]
    lx, ly = linear_index(x._indices, sparse_shape), linear_index(y._indices, sparse_shape)
    uniq, inverse = xp.unique(xp.concatenate([lx, ly]), return_inverse=True)
    inverse = inverse.reshape(-1)
    n = int(uniq.shape[0])
    xv = segment_reduce(x.values(), inverse[:lx.shape[0]], n, "sum", "sparse")
    yv = segment_reduce(y.values(), inverse[lx.shape[0]:], n, "sum", "sparse")
    return new_coo(unravel(uniq, sparse_shape), op(xv, yv), x._dense_shape, coalesced=True)


def _everywhere(x: SparseTensor, y: SparseTensor, op: Callable[[Tensor, Tensor], Tensor]) -> SparseTensor:
    """op on the dense forms, every position stored."""
    xp = array_module(x._values)
    sd = x.sparse_dim()
    sparse_shape = x._dense_shape[:sd]
    dense = op(to_dense(x), to_dense(y))
    values = reshape(dense, [prod(sparse_shape)] + list(x._dense_shape[sd:]))
    return new_coo(unravel(xp.arange(prod(sparse_shape)), sparse_shape), values, x._dense_shape, coalesced=True)


def _binary(x: Any, y: Any, op: Callable[[Tensor, Tensor], Tensor], fn: str, everywhere: bool = False) -> SparseTensor:
    _pair(x, y, fn)
    if everywhere:
        return like_format(x, _everywhere(x, y, op))
    if x.is_coalesced() and _same_pattern(x, y):  # (repeated positions: their sums combine, below)
        return with_values(x, op(x.values(), y.values()))
    return like_format(x, _on_union(to_coo(x), to_coo(y), op))


def _scalar(y: Any) -> bool:
    return isinstance(y, (int, float)) and not isinstance(y, bool)


def add(x: SparseTensor, y: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """x + y for two sparse tensors of one shape and format."""
    return _binary(x, y, math_ops.add, "add")


def subtract(x: SparseTensor, y: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """x - y for two sparse tensors of one shape and format."""
    return _binary(x, y, math_ops.subtract, "subtract")


def multiply(x: SparseTensor, y: Any, name: Optional[str] = None) -> SparseTensor:
    """x * y: y a sparse tensor of x's shape and format (on the union of the patterns), or a number."""
    if _scalar(y):
        return with_values(sparse_arg(x, "multiply"), math_ops.multiply(x.values(), y))
    return _binary(x, y, math_ops.multiply, "multiply")


def divide(x: SparseTensor, y: Any, name: Optional[str] = None) -> SparseTensor:
    """x / y: y a sparse tensor of x's shape and format (every position stored), or a number
    (x's pattern kept)."""
    if _scalar(y):
        return with_values(sparse_arg(x, "divide"), math_ops.divide(x.values(), y))
    return _binary(x, y, math_ops.divide, "divide", everywhere=True)


def is_same_shape(x: Tensor, y: Tensor) -> bool:
    """Whether x and y (dense or sparse) have the same shape."""
    for arg, v in (("x", x), ("y", y)):
        if not isinstance(v, Tensor):
            raise TypeError(f"is_same_shape: {arg} must be a Tensor, got {type(v).__name__}")
    return list(x.shape) == list(y.shape)


def mask_as(x: Tensor, mask: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """The entries of dense x at the stored positions of `mask`, in mask's pattern and format;
    x's gradient is the sparse gradient scattered back."""
    sparse_arg(mask, "mask_as", "mask")
    if not isinstance(x, Tensor) or isinstance(x, SparseTensor):
        raise TypeError(f"mask_as: x must be a dense Tensor, got {type(x).__name__}")
    if list(x.shape) != list(mask.shape):
        raise ValueError(f"mask_as: x and mask must have the same shape, got {list(x.shape)} and {list(mask.shape)}")
    m = to_coo(mask)
    sd = m.sparse_dim()
    sparse_shape = m._dense_shape[:sd]
    flat = reshape(x, [prod(sparse_shape)] + list(m._dense_shape[sd:]))
    values = gather(flat, wrap(linear_index(m._indices, sparse_shape)), 0)
    return with_values(mask if mask._format == CSR else m, values)
