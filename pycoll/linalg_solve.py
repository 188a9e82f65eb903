"""paddle.linalg's solvers and the LU factorization, on the last two dimensions (batch dimensions
broadcast): ``triangular_solve``, ``cholesky_solve``, ``lstsq``, ``lu`` and ``lu_unpack``, with
paddle's output conventions and gradients.

``lu_solve`` and ``cholesky_inverse`` are compositions of the ops here (lu_unpack,
triangular_solve) and of matmul / inv, which give them their gradients.

``lstsq`` is solved through the SVD whatever the ``driver``; the driver only picks which of
paddle's outputs are filled (see ``lstsq``). Its solution has a gradient (the pseudo-inverse's
derivative at constant rank), which paddle's lacks. ``lu`` is partial pivoting written on the
array module (NumPy and CuPy have no batched LU), with LAPACK's 1-based pivots.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

import numpy as np
import scipy.linalg.lapack

from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module, to_module
from pycoll.dtypes import is_floating
from pycoll.linalg_decomp import _mH, _matrices, outputs
from pycoll.math_ops import matmul
from pycoll.matrix_ops import _mT, _square, inv, nonsingular
from pycoll.shape_ops import unbroadcast
from pycoll.tensor import Tensor, wrap

__all__ = ["triangular_solve", "cholesky_solve", "lstsq", "lu", "lu_unpack", "lu_solve", "cholesky_inverse"]


def _right_side(y: Any, x: Tensor, fn: str, arg: str = "y", of: str = "x") -> Tensor:
    """y (argument ``arg``) as matrices [..., M, K] with as many rows as x's (argument ``of``), on
    x's device and of x's dtype."""
    y = as_tensor(y)
    if y.ndim < 2 or y.shape[-2] != x.shape[-2]:
        raise ValueError(f"{fn}: {arg} must be matrices [..., {x.shape[-2]}, K] ({x.shape[-2]}: {of}'s rows), got "
                         f"shape {y.shape}")
    if y.dtype != x.dtype:
        raise TypeError(f"{fn}: {arg} must have {of}'s dtype {x.dtype}, got {y.dtype}")
    return y


def _batched(a: Any, b: Any) -> Tuple[Any, Any]:
    """a [..., M, M] and b [..., M, K] with their batch dimensions broadcast to one shape."""
    xp = array_module(a)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:])


@accumulates_in_float32
def triangular_solve(x: Tensor, y: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, name: Optional[str] = None) -> Tensor:
    """The solution X of op(A) @ X = y, A the upper (``upper=True``) or lower triangle of x (its
    diagonal taken as ones with ``unitriangular``), op(A) = A^T with ``transpose``; the gradient
    of x lies in that triangle."""
    x = _square(x, "triangular_solve")
    y = _right_side(y, x, "triangular_solve")
    a_full, b = x._array, to_module(y._array, array_module(x._array))
    out = nonsingular("triangular_solve", lambda: _triangle_solved(a_full, b, upper, transpose, unitriangular),
                      "x's triangle is singular (a zero on its diagonal)")
    a_shape, b_shape = a_full.shape, b.shape

    def backward(g: Any) -> tuple:
        gb = _triangle_solved(a_full, g, upper, not transpose, unitriangular)
        g_op = -(gb @ _mT(out))
        ga = _triangle(_mT(g_op) if transpose else g_op, upper, unitriangular, diagonal=0)
        return unbroadcast(ga, a_shape), unbroadcast(gb, b_shape)
    return outputs((out,), lambda g: backward(g[0]), x, y)[0]


# On the host, matrices of at least this size go to LAPACK's triangular solve (trtrs, O(M^2 K)) one
# at a time, as do batches of at most _TRIANGLE_LOOP_MAX smaller ones; larger batches of small
# matrices are cheaper as one batched general solve (each call costs ~2 us: measured, 64 of 16 x 16
# break even).
_TRIANGLE_LAPACK_SIZE = 16
_TRIANGLE_LOOP_MAX = 16


def _triangle_solved(a: Any, b: Any, upper: bool, transpose: bool, unit: bool) -> Any:
    """X with op(A) @ X = b, A the upper (or lower) triangle of a [..., M, M] (its diagonal ones
    with `unit`), op the transpose with `transpose`; batch dimensions broadcast. LAPACK reads the
    triangle in place (a C-ordered matrix is its transpose in LAPACK's column order, so it is
    passed as that: the other triangle, the other op); the batched general solve takes it
    masked. A zero on the diagonal raises LinAlgError."""
    xp = array_module(a)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if xp is not np or (a.shape[-1] < _TRIANGLE_LAPACK_SIZE and math.prod(batch) > _TRIANGLE_LOOP_MAX):
        tri = _triangle(a, upper, unit)
        return xp.linalg.solve(*_batched(_mT(tri) if transpose else tri, b))
    a, rhs = _batched(a, b)
    out = np.empty(rhs.shape, np.result_type(a, rhs))
    if out.size == 0:
        return out
    trtrs, = scipy.linalg.lapack.get_lapack_funcs(("trtrs",), (a, rhs))
    for at in np.ndindex(batch):
        x, info = trtrs(a[at].T, rhs[at], lower=upper, trans=0 if transpose else 1, unitdiag=unit)
        if info > 0:
            raise np.linalg.LinAlgError(f"singular matrix: a zero at diagonal {info - 1}")
        out[at] = x
    return out


def _triangle(a: Any, upper: bool, unit: bool, diagonal: Any = 1) -> Any:
    """The upper or lower triangle of a; with `unit`, its diagonal replaced by `diagonal`."""
    xp = array_module(a)
    tri = xp.triu(a) if upper else xp.tril(a)
    if not unit:
        return tri
    eye = xp.eye(a.shape[-1], dtype=bool)
    return xp.where(eye, xp.asarray(diagonal, dtype=a.dtype), tri)


@accumulates_in_float32
def cholesky_solve(x: Tensor, y: Tensor, upper: bool = False, name: Optional[str] = None) -> Tensor:
    """The solution X of A @ X = x, where y is A's Cholesky factor: lower L with A = L @ L^T, or
    (``upper=True``) upper U with A = U^T @ U. Note paddle's order: x is the right-hand side."""
    y = _square(y, "cholesky_solve", "y")
    x = _right_side(x, y, "cholesky_solve", "x", of="y")
    def solved() -> Tensor:
        half = triangular_solve(y, x, upper=upper, transpose=upper)
        return triangular_solve(y, half, upper=upper, transpose=not upper)
    return nonsingular("cholesky_solve", solved, "y, the Cholesky factor, is singular (a zero on its diagonal)")


_DRIVERS = (None, "gels", "gelsy", "gelsd", "gelss")


@accumulates_in_float32
def lstsq(x: Tensor, y: Tensor, rcond: Optional[float] = None, driver: Optional[str] = None,
          name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """(solution, residuals, rank, singular_values) of min ||x @ X - y|| for x [..., M, N] and y
    [..., M, K]: singular values at or below ``rcond`` (default max(M, N) * 1e-15 in float64,
    * 1e-7 in float32) times the largest count as zero. The driver picks paddle's outputs (None:
    'gelsy' on the CPU, 'gels' on the GPU): residuals, the squared residual norms [..., K], only for
    M > N and not 'gelsy' ('gelsd'/'gelss': also only at full rank), else empty; rank (int32 [...])
    except for 'gels' (empty int64); singular values [..., min(M, N)] for 'gelsd'/'gelss' only."""
    x = _matrices(x, "lstsq")
    if not is_floating(x.dtype):
        raise TypeError(f"lstsq: x must be float32 or float64, got {x.dtype}")
    y = _right_side(y, x, "lstsq")
    if driver not in _DRIVERS:
        raise ValueError(f"lstsq: driver must be one of {_DRIVERS}, got {driver!r}")
    a, b = x._array, to_module(y._array, array_module(x._array))
    xp = array_module(a)
    if driver is None:
        driver = "gelsy" if xp.__name__ == "numpy" else "gels"
    m, n = a.shape[-2:]
    if rcond is None:
        rcond = max(m, n) * (1e-7 if a.dtype.itemsize == 4 else 1e-15)
    a, b = _batched(a, b)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    kept = s > rcond * s[..., :1]
    inverse_s = xp.where(kept, 1 / xp.where(kept, s, 1), 0)
    pinv = _mT(vh) @ (inverse_s[..., :, None] * _mT(u))
    solution = pinv @ b
    rank = kept.sum(axis=-1).astype("int32")
    if m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all())):
        residual = b - a @ solution
        residuals = (residual * residual).sum(axis=-2)
    else:
        residuals = xp.zeros(0, a.dtype)
    a_shape, b_shape = x._array.shape, y._array.shape

    def backward(g: Any) -> tuple:
        ga = _pinv_grad(a, pinv, g @ _mT(b))
        return unbroadcast(ga, a_shape), unbroadcast(_mT(pinv) @ g, b_shape)
    result = outputs((solution,), lambda g: backward(g[0]), x, y)[0]
    if driver == "gels":
        rank = xp.zeros(0, "int64")
    return (result, wrap(residuals), wrap(rank),
            wrap(s if driver in ("gelsd", "gelss") else xp.zeros(0, a.dtype)))


def _pinv_grad(a: Any, pinv: Any, g: Any) -> Any:
    """The gradient of a from that of its pseudo-inverse `pinv` (the rank held fixed):
    -P^H g P^H + (I - a P) g^H P P^H + P^H P g^H (I - P a), P = pinv, with (I - a P) and (I - P a)
    applied as differences; in the complex-gradient convention (its caller marks its backward
    ``conjugate_grads``: the pseudo-inverse is not holomorphic)."""
    pt = _mH(pinv)
    gt = _mH(g)
    left = gt @ pinv @ pt  # g^H P P^H
    right = pt @ pinv @ gt  # P^H P g^H
    return -(pt @ g @ pt) + (left - a @ (pinv @ left)) + (right - (right @ pinv) @ a)


@accumulates_in_float32
def lu(x: Tensor, pivot: bool = True, get_infos: bool = False, name: Optional[str] = None) -> Any:
    """(LU, pivots) or, with ``get_infos``, (LU, pivots, infos) of x [..., M, N] factored as
    P @ L @ U with partial pivoting: L (unit diagonal, not stored) and U packed in LU; pivots
    int32 [..., min(M, N)], 1-based, row i swapped with row pivots[i] in turn; infos int32 [...],
    0 or the 1-based index of U's first zero pivot. ``pivot=False`` is not supported (nor is it
    on paddle's CPU)."""
    x = _matrices(x, "lu")
    if not pivot:
        raise ValueError("lu: pivot=False (LU without pivoting) is not supported, got pivot=False")
    a = x._array
    xp = array_module(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    packed = a.reshape(-1, m, n).copy()
    count = packed.shape[0]
    pivots = xp.zeros((count, k), "int32")
    infos = xp.zeros(count, "int32")
    every = xp.arange(count)
    for j in range(k):
        column = packed[:, j:, j]  # LAPACK's pivot: the largest |re| + |im| (its cabs1)
        p = j + xp.argmax(xp.abs(column.real) + xp.abs(column.imag) if column.dtype.kind == "c" else xp.abs(column),
                          axis=1)
        pivots[:, j] = p + 1
        row = packed[every, j].copy()
        packed[every, j] = packed[every, p]
        packed[every, p] = row
        top = packed[:, j, j]
        zero = top == 0
        infos = xp.where(zero & (infos == 0), j + 1, infos).astype("int32")
        packed[:, j + 1:, j] /= xp.where(zero, 1, top)[:, None]
        packed[:, j + 1:, j + 1:] -= packed[:, j + 1:, j, None] * packed[:, j, None, j + 1:]
    batch = a.shape[:-2]
    packed = packed.reshape(a.shape)
    pivots = pivots.reshape(batch + (k,))
    perm = _row_order(pivots, m)

    def backward(g: Any) -> tuple:
        return (_lu_grad(packed, perm, g),)
    result = outputs((packed,), lambda g: backward(g[0]), x)[0]
    out = (result, wrap(pivots))
    return out + (wrap(infos.reshape(batch)),) if get_infos else out


def _row_order(pivots: Any, m: int) -> Any:
    """perm [..., M] with (P^T A)[i] = A[perm[i]] for 1-based LAPACK `pivots` [..., K]."""
    xp = array_module(pivots)
    flat = pivots.reshape(-1, pivots.shape[-1]).astype("int64") - 1
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    every = xp.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        here = perm[:, j].copy()
        perm[:, j] = perm[every, flat[:, j]]
        perm[every, flat[:, j]] = here
    return perm.reshape(pivots.shape[:-1] + (m,))


def _unpacked(packed: Any) -> Tuple[Any, Any]:
    """L [..., M, K] (unit diagonal) and U [..., K, N] from the packed LU."""
    xp = array_module(packed)
    m, n = packed.shape[-2:]
    k = min(m, n)
    low = xp.tril(packed[..., :, :k], -1) + xp.eye(m, k, dtype=packed.dtype)
    return low, xp.triu(packed[..., :k, :])


def _lu_grad(packed: Any, perm: Any, g: Any) -> Any:
    """The gradient of A = P L U from that of the packed LU (its strict lower part is L's, the
    rest U's). For M > N (N < M) the extra rows of L (columns of U) are solved for from the square
    part and pass their gradient on to it."""
    xp = array_module(packed)
    m, n = packed.shape[-2:]
    k = min(m, n)
    low, up = _unpacked(packed)
    gl, gu = xp.tril(g[..., :, :k], -1), xp.triu(g[..., :k, :])
    l1, u1 = low[..., :k, :], up[..., :, :k]
    gl1, gu1 = gl[..., :k, :], gu[..., :, :k]
    if n > m:  # U = [U1 | U2], U2 = L^-1 (P^T A)_2
        g2 = xp.linalg.solve(_mT(l1), gu[..., :, k:])
        gl1 = gl1 - xp.tril(g2 @ _mT(up[..., :, k:]), -1)
    if m > n:  # L = [L1; L2], L2 = (P^T A)_2 U^-1
        g2 = _mT(xp.linalg.solve(u1, _mT(gl[..., k:, :])))
        gu1 = gu1 - xp.triu(_mT(low[..., k:, :]) @ g2)
    phi = xp.tril(_mT(l1) @ gl1, -1) + xp.triu(gu1 @ _mT(u1))
    permuted = _mT(xp.linalg.solve(u1, _mT(xp.linalg.solve(_mT(l1), phi))))  # L^-T phi U^-T
    if m != n:
        permuted = xp.concatenate([permuted, g2], axis=-1 if n > m else -2)
    rows = xp.broadcast_to(xp.argsort(perm, axis=-1)[..., :, None], permuted.shape)
    return xp.take_along_axis(permuted, rows, axis=-2)  # rows back in A's order


def lu_unpack(x: Tensor, y: Tensor, unpack_ludata: bool = True, unpack_pivots: bool = True,
              name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """(P, L, U) from ``lu``'s packed x [..., M, N] and pivots y, with x's matrix = P @ L @ U: P
    [..., M, M], L [..., M, K] and U [..., K, N]; what ``unpack_pivots`` / ``unpack_ludata`` turn
    off comes back empty (shape [0])."""
    x = _matrices(x, "lu_unpack")
    y = as_tensor(y)
    m, n = x.shape[-2:]
    if y.dtype.kind not in "iu" or y.shape[-1:] != [min(m, n)]:
        raise ValueError(f"lu_unpack: y must be lu's integer pivots [..., {min(m, n)}], got shape {y.shape} and "
                         f"dtype {y.dtype}")
    if y.size and (int(y._array.min()) < 1 or int(y._array.max()) > m):
        raise ValueError(f"lu_unpack: y, lu's pivots, must be row numbers in [1, {m}] (1-based, as lu gives them), "
                         f"got values in [{int(y._array.min())}, {int(y._array.max())}]")
    packed = x._array
    xp = array_module(packed)
    empty = xp.zeros(0, packed.dtype)
    if unpack_pivots:
        perm = _row_order(to_module(y._array, xp), m)
        eye = xp.eye(m, dtype=packed.dtype)
        p = xp.swapaxes(eye[perm], -1, -2)  # P[perm[i], i] = 1
    else:
        p = empty
    if not unpack_ludata:
        return wrap(p), wrap(empty), wrap(xp.zeros(0, packed.dtype))
    k = min(m, n)
    shape, dtype = packed.shape, packed.dtype  # what backward needs of x: not its values

    def backward(grads: Any) -> tuple:
        gl, gu = grads
        g = xp.zeros(shape, dtype)
        if gl is not None:
            g[..., :, :k] += xp.tril(gl, -1)
        if gu is not None:
            g[..., :k, :] += xp.triu(gu)
        return (g,)
    low, up = outputs(_unpacked(packed), backward, x)
    return wrap(p), low, up


@accumulates_in_float32
def lu_solve(b: Tensor, lu: Tensor, pivots: Tensor, trans: str = "N", name: Optional[str] = None) -> Tensor:
    """The solution X of A @ X = b (``trans='N'``) or A^T @ X = b ('T', or 'C': the same for real
    A), A given by ``lu``'s factors: the packed `lu` [..., M, M] and its `pivots` [..., M]; batch
    dimensions broadcast. The gradient reaches b and lu."""
    if trans not in ("N", "T", "C"):
        raise ValueError(f"lu_solve: trans must be 'N', 'T' or 'C', got {trans!r}")
    lu = _square(lu, "lu_solve", "lu")
    b = _right_side(b, lu, "lu_solve", "b", of="lu")
    pivots = as_tensor(pivots)
    if pivots.ndim < 1 or pivots.shape[-1] != lu.shape[-1]:
        raise ValueError(f"lu_solve: pivots must be [..., {lu.shape[-1]}] (lu's size), got shape {pivots.shape}")
    perm, low, up = lu_unpack(lu, pivots)

    def solved() -> Tensor:
        if trans == "N":  # L U X = P^T b
            return triangular_solve(up, triangular_solve(low, matmul(perm, b, transpose_x=True), upper=False,
                                                         unitriangular=True), upper=True)
        inner = triangular_solve(up, b, upper=True, transpose=True)  # U^T L^T (P^T X) = b
        return matmul(perm, triangular_solve(low, inner, upper=False, transpose=True, unitriangular=True))
    return nonsingular("lu_solve", solved, "lu's U factor is singular (a zero on its diagonal): A has no inverse")


@accumulates_in_float32
def cholesky_inverse(x: Tensor, upper: bool = False, name: Optional[str] = None) -> Tensor:
    """The inverse of A from its Cholesky factor x (2-D): A = x @ x^T for a lower x, x^T @ x with
    ``upper``."""
    x = _square(x, "cholesky_inverse")
    if x.ndim != 2:
        raise ValueError(f"cholesky_inverse: x must be a 2-D matrix, got shape {x.shape}")
    return inv(matmul(x, x, transpose_x=upper, transpose_y=not upper))


for _name, _fn in (("cholesky_solve", cholesky_solve), ("lstsq", lstsq), ("lu", lu), ("lu_unpack", lu_unpack),
                   ("cholesky_inverse", cholesky_inverse)):
    setattr(Tensor, _name, _fn)
del _name, _fn
