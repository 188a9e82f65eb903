"""paddle.linalg's randomized low-rank factorizations: ``svd_lowrank`` (Halko, Martinsson and
Tropp's range finder with `niter` subspace iterations, then the SVD of the small projected
matrix) and ``pca_lowrank`` (the same of the column-centred x).

Compositions of pycoll's differentiable ops (matmul, qr, svd), so the factors take gradients.
The random start is drawn from pycoll's generator (``pycoll.seed`` makes it repeatable); the
factors therefore differ from paddle's draw for draw, and agree where the result is determined:
for a matrix of rank <= q, U diag(S) V^T is x itself.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor, require_floating
from pycoll.complex_ops import conj
from pycoll.device import move, place_of
from pycoll.linalg_decomp import qr, svd
from pycoll.math_ops import matmul, mean, subtract
from pycoll.random import get_rng
from pycoll.reshape_ops import broadcast_to, matrix_transpose
from pycoll.tensor import Tensor, wrap

__all__ = ["svd_lowrank", "pca_lowrank"]


def _adjoint(x: Tensor) -> Tensor:
    t = matrix_transpose(x)
    return conj(t) if t.dtype.kind == "c" else t


def _minus(a: Tensor, m: Optional[Tensor]) -> Tensor:
    return a if m is None else subtract(a, m)


def _basis(x: Tensor, q: int, niter: int, m: Optional[Tensor]) -> Tensor:
    """An orthonormal basis [..., M, q] of the range of x - m, refined by `niter` power steps."""
    rows, cols = x.shape[-2:]
    start = get_rng().standard_normal((cols, q)).astype(x.dtype)
    r = wrap(move(start, place_of(x._array)))
    xh, mh = _adjoint(x), None if m is None else _adjoint(m)
    basis = qr(_minus(matmul(x, r), None if m is None else matmul(m, r)))[0]
    for _ in range(niter):
        basis = qr(_minus(matmul(xh, basis), None if mh is None else matmul(mh, basis)))[0]
        basis = qr(_minus(matmul(x, basis), None if m is None else matmul(m, basis)))[0]
    return basis


def _checked_rank(x: Tensor, q: Optional[int], niter: int, fn: str) -> int:
    """q (None: min(6, M, N)), checked as paddle checks it, as is niter."""
    rows, cols = x.shape[-2:]
    if isinstance(niter, bool) or not isinstance(niter, (int, np.integer)) or niter < 0:
        raise ValueError(f"{fn}: niter(={niter}) must be non-negative integer")
    if q is None:
        return min(6, rows, cols)
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or (min(rows, cols) and not 0 <= q <= min(rows, cols)):
        raise ValueError(f"{fn}: q(={q}) must be non-negative integer and not greater than min(m, n)={min(rows, cols)}")
    return int(q)


def svd_lowrank(x: Tensor, q: Optional[int] = None, niter: int = 2, M: Optional[Tensor] = None,  # noqa: N803
                name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """(U [..., M, q], S [..., q], V [..., N, q]) with x - M ~ U diag(S) V^H, the best rank-q
    approximation up to the random range finder's error (exact for rank <= q); q defaults to
    min(6, M, N); `M` (broadcast to x) is subtracted first."""
    x = require_floating(as_tensor(x), "svd_lowrank", complex_ok=True)
    if x.ndim < 2:
        raise ValueError(f"svd_lowrank: x must be matrices [..., M, N], got shape {x.shape}")
    q = _checked_rank(x, q, niter, "svd_lowrank")
    m = None if M is None else broadcast_to(as_tensor(M), x.shape)
    rows, cols = x.shape[-2:]
    if rows < cols or cols > q:  # the basis of x^H's range: x V-side first
        basis = _basis(_adjoint(x), q, niter, None if m is None else _adjoint(m))
        bt = _minus(matmul(x, basis), None if m is None else matmul(m, basis))
        u, s, vh = svd(bt, full_matrices=False)
        return u, s, matmul(basis, _adjoint(vh))
    basis = _basis(x, q, niter, m)
    b = _minus(matmul(_adjoint(x), basis), None if m is None else matmul(_adjoint(m), basis))
    u, s, vh = svd(_adjoint(b), full_matrices=False)
    return matmul(basis, u), s, _adjoint(vh)


def pca_lowrank(x: Tensor, q: Optional[int] = None, center: bool = True, niter: int = 2,
                name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """``svd_lowrank`` of x with each column's mean subtracted (``center``): the principal
    directions V, the singular values S and the scores' basis U."""
    x = require_floating(as_tensor(x), "pca_lowrank", complex_ok=True)
    if x.ndim < 2:
        raise ValueError(f"pca_lowrank: x must be matrices [..., M, N], got shape {x.shape}")
    q = _checked_rank(x, q, niter, "pca_lowrank")
    return svd_lowrank(subtract(x, mean(x, axis=-2, keepdim=True)) if center else x, q, niter=niter)


for _fn in (svd_lowrank, pca_lowrank):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
