"""paddle.sparse's products: `matmul` (sparse @ dense -> dense, sparse @ sparse -> sparse),
`masked_matmul` (dense @ dense at a sparse pattern), `mv` and `addmm`, for 2-D and batched 3-D
operands. Paddle's CPU build has none of these kernels (its GPU one is cuSPARSE); these compute
on the stored entries only (a gather of y's rows, a multiply, a segment sum into x's rows), so
the work is nnz * N, and every gradient is the values' (x's sparse gradient keeps its pattern).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from pycoll import math_ops
from pycoll.device import array_module
from pycoll.index_ops import index_add
from pycoll.search_ops import gather
from pycoll.shape_ops import reshape, transpose
from pycoll.sparse.binary import add, multiply
from pycoll.sparse.convert import csr_rows, dense_to_coo, like_format, linear_index, to_coo, to_dense
from pycoll.sparse.tensor import CSR, SparseTensor, new_coo, pattern_like, sparse_arg, with_values
from pycoll.tensor import Tensor, wrap


def _matrix_dims(shape: Any, fn: str, arg: str) -> Tuple[int, int, int]:
    """(batches, rows, cols) of a 2-D or 3-D shape."""
    shape = list(shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"{fn}: {arg} must be 2-D or 3-D, got shape {shape}")
    return (1 if len(shape) == 2 else shape[0]), shape[-2], shape[-1]


def _entry_rows_cols(x: SparseTensor) -> Tuple[Any, Any]:
    """For each stored entry of a 2-D/3-D sparse x (no dense dims): its row and its column, each
    counted over all batches (batch * rows + row, batch * cols + col)."""
    if x._format == CSR:
        xp = array_module(x._crows)
        rows = csr_rows(x)
        _, m, k = _matrix_dims(x._dense_shape, "matmul", "x")
        cols = x._cols.astype(xp.int64) + (rows // m) * k
        return rows, cols
    if x.dense_dim():
        raise ValueError(f"matmul: a COO x must have no dense dims, got {x.dense_dim()}")
    idx = x._indices.astype(array_module(x._indices).int64)
    if x.ndim == 2:
        return idx[0], idx[1]
    _, m, k = _matrix_dims(x._dense_shape, "matmul", "x")
    return idx[0] * m + idx[1], idx[0] * k + idx[2]


def _sparse_dense(x: SparseTensor, y: Tensor) -> Tensor:
    b, m, k = _matrix_dims(x._dense_shape, "matmul", "x")
    yb, yk, n = _matrix_dims(y.shape, "matmul", "y")
    if len(y.shape) != x.ndim or yb != b or yk != k:
        raise ValueError(f"matmul: x of shape {list(x._dense_shape)} and y of shape {list(y.shape)} do not "
                         f"multiply (need y of shape {([b] if x.ndim == 3 else []) + [k, 'N']})")
    rows, cols = _entry_rows_cols(x)
    picked = gather(reshape(y, [b * k, n]), wrap(cols), 0)
    products = math_ops.multiply(picked, reshape(x.values(), [-1, 1]))
    xp = array_module(rows)
    out = index_add(wrap(xp.zeros((b * m, n), dtype=products.dtype)), wrap(rows), 0, products)
    return reshape(out, list(x._dense_shape[:-1]) + [n])


def matmul(x: SparseTensor, y: Any, name: Optional[str] = None) -> Any:
    """x @ y for a sparse x (COO or CSR, 2-D or 3-D): a dense y gives a dense result; a sparse y
    gives a sparse one of x's format, storing the entries some pair of stored entries reaches."""
    sparse_arg(x, "matmul")
    if not isinstance(y, Tensor):
        raise TypeError(f"matmul: y must be a Tensor (dense or sparse), got {type(y).__name__}")
    if not isinstance(y, SparseTensor):
        return _sparse_dense(x, y)
    if y._format != x._format:
        raise TypeError(f"matmul: x and y must both be COO or both CSR, got {x._format.upper()} and "
                        f"{y._format.upper()}")
    dense = _sparse_dense(x, to_dense(y))
    reach = _sparse_dense(_ones_like_pattern(x), to_dense(_ones_like_pattern(y)))  # which products exist
    pattern = dense_to_coo(reach, reach.ndim)
    values = gather(reshape(dense, [-1]), wrap(linear_index(pattern._indices, list(dense.shape))), 0)
    return like_format(x, new_coo(pattern._indices, values, tuple(dense.shape), coalesced=True))


def _ones_like_pattern(x: SparseTensor) -> SparseTensor:
    """x's pattern with every stored value 1 (outside the graph)."""
    return pattern_like(x, array_module(x._values).ones_like(x._values))


def masked_matmul(x: Tensor, y: Tensor, mask: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """(x @ y) at the stored positions of `mask` only (dense x and y, 2-D or 3-D), in mask's
    pattern and format: each entry is one row of x times one column of y."""
    sparse_arg(mask, "masked_matmul", "mask")
    for arg, v in (("x", x), ("y", y)):
        if not isinstance(v, Tensor) or isinstance(v, SparseTensor):
            raise TypeError(f"masked_matmul: {arg} must be a dense Tensor, got {type(v).__name__}")
    b, m, k = _matrix_dims(x.shape, "masked_matmul", "x")
    yb, yk, n = _matrix_dims(y.shape, "masked_matmul", "y")
    if x.ndim != y.ndim or yb != b or yk != k or list(mask.shape) != list(x.shape[:-1]) + [n]:
        raise ValueError(f"masked_matmul: x {list(x.shape)} @ y {list(y.shape)} must have mask's shape "
                         f"{list(mask.shape)}")
    rows, cols = _entry_rows_cols(mask if mask._format == CSR else to_coo(mask))
    perm = [0, 2, 1] if y.ndim == 3 else [1, 0]
    xr = gather(reshape(x, [b * m, k]), wrap(rows), 0)
    yc = gather(reshape(transpose(y, perm), [b * n, k]), wrap(cols), 0)
    return with_values(mask, math_ops.sum(math_ops.multiply(xr, yc), axis=-1))


def mv(x: SparseTensor, vec: Tensor, name: Optional[str] = None) -> Tensor:
    """x @ vec for a 2-D sparse x and a dense 1-D vec: a dense 1-D tensor."""
    sparse_arg(x, "mv")
    if x.ndim != 2:
        raise ValueError(f"mv: x must be 2-D, got shape {list(x.shape)}")
    if not isinstance(vec, Tensor) or isinstance(vec, SparseTensor) or vec.ndim != 1 or vec.shape[0] != x.shape[1]:
        raise ValueError(f"mv: vec must be a dense 1-D Tensor of {x.shape[1]} entries, got "
                         f"{list(vec.shape) if isinstance(vec, Tensor) else type(vec).__name__}")
    return reshape(_sparse_dense(x, reshape(vec, [-1, 1])), [-1])


def addmm(input: Any, x: SparseTensor, y: Any, beta: float = 1.0, alpha: float = 1.0,  # noqa: A002
          name: Optional[str] = None) -> Any:
    """beta * input + alpha * (x @ y): dense when y and input are dense, sparse (of x's format)
    when all three are sparse."""
    for arg, v in (("beta", beta), ("alpha", alpha)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"addmm: {arg} must be a number, got {type(v).__name__}")
    product = matmul(x, y)
    if isinstance(product, SparseTensor):
        if not isinstance(input, SparseTensor):
            raise TypeError("addmm: input must be sparse when x and y are")
        return add(multiply(input, float(beta)), multiply(product, float(alpha)))
    if isinstance(input, SparseTensor) or not isinstance(input, Tensor):
        raise TypeError(f"addmm: input must be a dense Tensor when y is dense, got {type(input).__name__}")
    return math_ops.add(math_ops.multiply(input, float(beta)), math_ops.multiply(product, float(alpha)))
