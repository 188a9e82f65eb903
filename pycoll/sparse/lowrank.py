"""paddle.sparse.pca_lowrank: a randomized PCA of a 2-D sparse matrix that never forms the
dense (or the centred) matrix: the centred product (x - 1 c) @ Y is x @ Y - 1 (c @ Y), with c
the column means, and x is only ever multiplied by dense blocks of q columns."""
from __future__ import annotations

from typing import Callable, Optional, Tuple

from pycoll import math_ops
from pycoll.device import move, place_of
from pycoll.dtypes import is_floating
from pycoll.linalg_decomp import qr, svd
from pycoll.linalg_lowrank import _checked_rank
from pycoll.random import get_rng
from pycoll.reshape_ops import matrix_transpose
from pycoll.sparse.convert import to_coo, to_dense
from pycoll.sparse.matmul import matmul
from pycoll.sparse.shape import sum as sparse_sum
from pycoll.sparse.shape import transpose
from pycoll.sparse.tensor import SparseTensor, sparse_arg
from pycoll.tensor import Tensor, wrap

Product = Callable[[Tensor], Tensor]


def _range_basis(apply: Product, apply_t: Product, cols: int, q: int, niter: int, like: Tensor) -> Tensor:
    """An orthonormal basis [rows, q] of the range of the operator `apply`, from a random start
    refined by `niter` power steps (through `apply_t`, its transpose)."""
    start = get_rng().standard_normal((cols, q)).astype(like.dtype)
    basis = qr(apply(wrap(move(start, place_of(like._array)))))[0]
    for _ in range(niter):
        basis = qr(apply_t(basis))[0]
        basis = qr(apply(basis))[0]
    return basis


def pca_lowrank(x: SparseTensor, q: Optional[int] = None, center: bool = True, niter: int = 2,
                name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """(U [M, q], S [q], V [N, q]) with x - mean ~ U diag(S) V^T (``center``: each column's mean
    over the rows subtracted), exact up to the random range finder's error (exact for rank <= q);
    q defaults to min(6, M, N)."""
    x = sparse_arg(x, "pca_lowrank")
    if x.ndim != 2 or x.dense_dim():
        raise ValueError(f"pca_lowrank: x must be a 2-D sparse matrix, got shape {list(x.shape)}")
    if not is_floating(x.dtype):
        raise TypeError(f"pca_lowrank: x must hold floats, got {x.dtype}")
    q = _checked_rank(x, q, niter, "pca_lowrank")
    m, n = (int(s) for s in x.shape)
    xt = transpose(x, [1, 0])
    means = math_ops.divide(to_dense(sparse_sum(to_coo(x), axis=0, keepdim=True)), float(m))  # c, [1, N]

    def apply(y: Tensor) -> Tensor:  # (x - 1 c) @ y
        out = matmul(x, y)
        return math_ops.subtract(out, math_ops.matmul(means, y)) if center else out

    def apply_t(y: Tensor) -> Tensor:  # (x - 1 c)^T @ y
        out = matmul(xt, y)
        if not center:
            return out
        return math_ops.subtract(out, math_ops.matmul(matrix_transpose(means), math_ops.sum(y, axis=0, keepdim=True)))

    if m < n or n > q:
        basis = _range_basis(apply_t, apply, m, q, niter, means)
        u, s, vh = svd(apply(basis), full_matrices=False)
        return u, s, math_ops.matmul(basis, matrix_transpose(vh))
    basis = _range_basis(apply, apply_t, n, q, niter, means)
    u, s, vh = svd(matrix_transpose(apply_t(basis)), full_matrices=False)
    return math_ops.matmul(basis, u), s, matrix_transpose(vh)
