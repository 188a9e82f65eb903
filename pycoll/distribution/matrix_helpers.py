"""The matrix helpers paddle 3.3.1 defines beside its LKJCholesky (``mvlgamma``, ``tril_indices``,
``matrix_to_tril``, ``vec_to_tril_matrix``, ``tril_matrix_to_vec``) and its MultivariateNormal
(``precision_to_scale_tril``, ``batch_mahalanobis``), made of pycoll ops (differentiable where
they move values)."""
from __future__ import annotations

import math
from typing import Sequence, Tuple

from pycoll.creation import arange, ones_like, zeros
from pycoll.diag_ops import tril_indices as _tril_indices
from pycoll.distribution.multivariate import _mahalanobis
from pycoll.incomplete_gamma import multigammaln
from pycoll.index_ops import masked_select, scatter_nd_add
from pycoll.linalg import cholesky, inv
from pycoll.search_ops import tril
from pycoll.shape_ops import stack
from pycoll.tensor import Tensor

__all__ = ["mvlgamma", "tril_indices", "matrix_to_tril", "vec_to_tril_matrix", "tril_matrix_to_vec",
           "precision_to_scale_tril", "batch_mahalanobis"]


def _tensor(x: object, name: str, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def mvlgamma(a: Tensor, p: int) -> Tensor:
    """log of the multivariate gamma function of dimension p, elementwise."""
    return multigammaln(_tensor(a, "a", "mvlgamma"), p)


def tril_indices(n: int, k: int = 0) -> Tuple[Tensor, Tensor]:
    """(rows, cols), int64, of the entries of an n x n matrix on or below diagonal k, row by row."""
    both = _tril_indices(n, n, k)
    return both[0], both[1]


def matrix_to_tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The entries of every matrix of ``x`` on or below ``diagonal``, flattened into one vector."""
    x = _tensor(x, "x", "matrix_to_tril")
    return masked_select(x, tril(ones_like(x), diagonal).astype("bool"))


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """[..., n, n] -> [..., (n + diag)(n + diag + 1) / 2]: each matrix's entries on or below
    diagonal ``diag``, row by row."""
    mat = _tensor(mat, "mat", "tril_matrix_to_vec")
    n = int(mat.shape[-1])
    if diag < -n or diag >= n:
        raise ValueError(f"tril_matrix_to_vec: diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_indices(n, n, diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(p_flatten: Tensor, dim: int, last_dim: int, flatten_shape: int, sample_shape: Sequence[int] = (),
                       diag: int = 0) -> Tensor:
    """The inverse of the strictly-lower part of ``tril_matrix_to_vec``: ``p_flatten`` (``flatten_shape``
    values, ``last_dim = dim (dim - 1) / 2`` per matrix) into the entries below the diagonal of
    dim x dim zero matrices, row by row, shaped [*sample_shape, rest, dim, dim]. ``diag`` is taken
    for paddle's signature and unused there too."""
    p_flatten = _tensor(p_flatten, "p_flatten", "vec_to_tril_matrix")
    if last_dim != dim * (dim - 1) // 2 or flatten_shape % last_dim:
        raise ValueError(f"vec_to_tril_matrix: last_dim must be dim * (dim - 1) / 2 = {dim * (dim - 1) // 2} and "
                         f"divide flatten_shape, got last_dim={last_dim}, flatten_shape={flatten_shape}")
    count = flatten_shape // last_dim
    rows, cols = _tril_indices(dim, dim, -1)
    shape = [count, last_dim]
    index = stack([arange(count).unsqueeze(-1).broadcast_to(shape), rows.broadcast_to(shape),
                   cols.broadcast_to(shape)], -1)
    matrix = scatter_nd_add(zeros([count, dim, dim], p_flatten.dtype), index.reshape([-1, 3]),
                            p_flatten.reshape([-1]))
    outer = math.prod(sample_shape)
    return matrix.reshape(list(sample_shape) + [count // outer, dim, dim])


def precision_to_scale_tril(P: Tensor) -> Tensor:  # noqa: N803 - paddle's name
    """The lower Cholesky factor L of P^-1 (L L^T = P^-1)."""
    return cholesky(inv(_tensor(P, "P", "precision_to_scale_tril")))


def batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:  # noqa: N803 - paddle's names
    """|bL^-1 bx|^2 over the last axis (bL lower triangular, batch axes broadcast): bx's batch shape."""
    return _mahalanobis(_tensor(bL, "bL", "batch_mahalanobis"), _tensor(bx, "bx", "batch_mahalanobis"))
