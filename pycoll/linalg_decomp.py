"""paddle.linalg's decompositions, on the last two dimensions of x (any batch before them):
``svd``, ``svdvals``, ``qr``, ``eigh``, ``eigvalsh``, ``eig``, ``eigvals`` and ``cholesky``, with
paddle's output conventions and gradients (``eigvals`` has none, as in paddle).

The factorizations are NumPy's / CuPy's ``linalg`` (LAPACK's sign conventions, which paddle's CPU
kernels share). The gradients are the standard formulas: those of svd and eigh divide by the gaps
between singular values / eigenvalues, so they are not defined where two coincide (as in paddle);
qr's is defined where R's diagonal has no zero; cholesky's is symmetric, as paddle's is.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from pycoll import _graph
from pycoll._complex_grads import conjugate_grads
from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, placed, require_floating
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.matrix_ops import _mT, _square
from pycoll.tensor import Tensor, wrap

__all__ = ["svd", "svdvals", "qr", "eigh", "eigvalsh", "eig", "eigvals", "cholesky"]


def _matrices(x: Any, fn: str) -> Tensor:
    """x as a floating Tensor of matrices [..., M, N] (TypeError / ValueError naming x otherwise)."""
    x = require_floating(as_tensor(x), fn, complex_ok=True)
    if x.ndim < 2:
        raise ValueError(f"{fn}: x must be matrices [..., M, N], got shape {x.shape}")
    x, = placed("_matrices", x, axes=(x.ndim - 2, x.ndim - 1))  # auto-parallel: each matrix whole
    return x


def outputs(arrays: Sequence[Any], backward: Callable, *inputs: Tensor) -> List[Tensor]:
    """The op's result `arrays` as Tensors, recorded as one node: `backward` gets one gradient
    (or None) per output and returns one per input. A `backward` marked `conjugate_grads` (written
    in the complex-gradient convention, as the decompositions' are) keeps its mark."""
    outs = [wrap(a) for a in arrays]
    n = len(outs)
    recorded = backward if n > 1 else lambda g: backward([g])
    if getattr(backward, "conjugate_grads", False):
        conjugate_grads(recorded)
    _graph.record(outs, recorded, list(inputs))
    return outs


def _zero_or(g: Optional[Any], like: Any) -> Any:
    return array_module(like).zeros_like(like) if g is None else g


def _gap_inverse(values: Any) -> Any:
    """1 / (values_j - values_i) off the diagonal, 0 on it ([..., K, K])."""
    xp = array_module(values)
    gaps = values[..., None, :] - values[..., :, None]
    eye = xp.eye(values.shape[-1], dtype=bool)
    return xp.where(eye, 0, 1 / xp.where(eye, 1, gaps))


def _mH(a: Any) -> Any:
    """The conjugate transpose of each matrix of a (the transpose of a real one)."""
    t = _mT(a)
    return t.conj() if a.dtype.kind == "c" else t


def _diag(v: Any) -> Any:
    """Diagonal matrices [..., K, K] with v [..., K] on their diagonal."""
    xp = array_module(v)
    return v[..., :, None] * xp.eye(v.shape[-1], dtype=v.dtype)


@accumulates_in_float32
def svd(x: Tensor, full_matrices: bool = False, name: Optional[str] = None, *,
        out: Optional[Sequence[Tensor]] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """(U, S, VH) with x = U @ diag(S) @ VH, S in descending order; U [..., M, K] and VH
    [..., K, N] for K = min(M, N), or square U and VH with ``full_matrices=True`` (the gradient
    flows through their first K vectors; the extra ones, any basis of the rest, take none, as
    paddle's and torch's)."""
    x = _matrices(x, "svd")
    a = x._array
    u, s, vh = array_module(a).linalg.svd(a, full_matrices=bool(full_matrices))
    k = s.shape[-1]

    def backward(grads: Sequence[Any]) -> tuple:
        gu, gs, gvh = grads
        return (_svd_grad(u[..., :k], s, vh[..., :k, :], None if gu is None else gu[..., :k],
                          gs, None if gvh is None else gvh[..., :k, :]),)
    results = outputs((u, s, vh), conjugate_grads(backward), x)
    if out is not None:
        for target, result in zip(out, results):
            target.set_value(result.detach())
    return tuple(results)


def _svd_grad(u: Any, s: Any, vh: Any, gu: Optional[Any], gs: Optional[Any], gvh: Optional[Any]) -> Any:
    """The gradient of x = u diag(s) vh (reduced) from those of u, s and vh (for complex x,
    the derivative along its real part plus i times that along its imaginary part: paddle's)."""
    inner = _diag(_zero_or(gs, s)).astype(u.dtype, copy=False)
    extra = 0
    if gu is not None or gvh is not None:
        f = _gap_inverse(s * s)  # 1 / (s_j^2 - s_i^2)
    if gu is not None:
        uhgu = _mH(u) @ gu
        inner = inner + f * (uhgu - _mH(uhgu)) * s[..., None, :]
        if u.dtype.kind == "c":  # a column's phase, which u and v share, moves with Im(u^H gu)'s diagonal
            inner = inner + _diag(1j * array_module(u).diagonal(uhgu, axis1=-2, axis2=-1).imag / s)
        if u.shape[-2] > u.shape[-1]:  # the part of gu outside u's columns
            extra = ((gu - u @ uhgu) / s[..., None, :]) @ vh
    if gvh is not None:
        gv, v = _mH(gvh), _mH(vh)
        vhgv = vh @ gv
        inner = inner + s[..., :, None] * (f * (vhgv - _mH(vhgv)))
        if vh.shape[-1] > vh.shape[-2]:
            extra = extra + u @ (_mH(gv - v @ vhgv) / s[..., :, None])
    return u @ inner @ vh + extra


@accumulates_in_float32
def svdvals(x: Tensor, name: Optional[str] = None) -> Tensor:
    """The singular values of x, in descending order ([..., min(M, N)])."""
    return svd(x)[1]


_QR_MODES = ("reduced", "complete", "r")


@accumulates_in_float32
def qr(x: Tensor, mode: str = "reduced", name: Optional[str] = None) -> Any:
    """(Q, R) with x = Q @ R, Q's columns orthonormal and R upper triangular: Q [..., M, K] and R
    [..., K, N] (K = min(M, N)) for mode 'reduced', Q [..., M, M] and R [..., M, N] for 'complete';
    mode 'r' returns R alone (as 'reduced' makes it)."""
    x = _matrices(x, "qr")
    if mode not in _QR_MODES:
        raise ValueError(f"qr: mode must be one of {_QR_MODES}, got {mode!r}")
    a = x._array
    xp = array_module(a)
    q, r = xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    shape = list(a.shape)
    m, n = shape[-2:]

    def backward(grads: Sequence[Any]) -> tuple:
        gq, gr = grads if mode != "r" else (None, grads[0])
        if mode == "complete" and m > n and gq is not None:
            raise ValueError(f"qr: the gradient through Q with mode='complete' needs M <= N, got x of shape "
                             f"{shape}; use mode='reduced'")
        return (_qr_grad(q, r, _zero_or(gq, q), _zero_or(gr, r)),)
    results = outputs((r,) if mode == "r" else (q, r), conjugate_grads(backward), x)
    return results[0] if mode == "r" else tuple(results)


def _qr_grad(q: Any, r: Any, gq: Any, gr: Any) -> Any:
    """The gradient of x = q r (reduced) from those of q and r; a wide x [X | Y] with
    R = [U | V] is X's square case, with Y = Q V contributing through Q."""
    xp = array_module(q)
    m = q.shape[-2]
    if r.shape[-1] <= m:
        return _qr_grad_tall(q, r, gq, gr)
    u, v = r[..., :, :m], r[..., :, m:]
    gx = _qr_grad_tall(q, u, gq + (q @ v) @ _mH(gr[..., :, m:]), gr[..., :, :m])
    return xp.concatenate([gx, q @ gr[..., :, m:]], axis=-1)


def _qr_grad_tall(q: Any, r: Any, gq: Any, gr: Any) -> Any:
    """(gq + q sym(tril(r gr^H - gq^H q))) r^-H, sym(L) = L + L^H with the diagonal once and real
    (LAPACK's R has a real diagonal)."""
    xp = array_module(q)
    mm = r @ _mH(gr) - _mH(gq) @ q
    lower = xp.tril(mm, -1)
    b = gq + q @ (lower + _mH(lower) + _diag(xp.diagonal(mm, axis1=-2, axis2=-1).real))
    return _mH(xp.linalg.solve(r, _mH(b)))  # b @ R^-H


def _uplo(UPLO: str, fn: str) -> str:
    if UPLO not in ("L", "U"):
        raise ValueError(f"{fn}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO


@accumulates_in_float32
def eigh(x: Tensor, UPLO: str = "L", name: Optional[str] = None) -> Tuple[Tensor, Tensor]:  # noqa: N803 - paddle's name
    """(eigenvalues [..., M] ascending, eigenvectors [..., M, M] as columns) of the symmetric
    (Hermitian) matrices x, read from their lower (``UPLO='L'``) or upper ('U') triangle."""
    x = _square(x, "eigh")
    a = x._array
    w, v = array_module(a).linalg.eigh(a, UPLO=_uplo(UPLO, "eigh"))

    def backward(grads: Sequence[Any]) -> tuple:
        gw, gv = grads
        inner = _diag(_zero_or(gw, w)).astype(v.dtype, copy=False)
        if gv is not None:
            inner = inner + _gap_inverse(w) * (_mH(v) @ gv)
        ga = v @ inner @ _mH(v)
        return ((ga + _mH(ga)) / 2,)  # symmetric, as paddle's: x's two triangles are one entry
    w_t, v_t = outputs((w, v), conjugate_grads(backward), x)
    return w_t, v_t


@accumulates_in_float32
def eigvalsh(x: Tensor, UPLO: str = "L", name: Optional[str] = None) -> Tensor:  # noqa: N803 - paddle's name
    """The eigenvalues of the symmetric (Hermitian) matrices x, ascending ([..., M]); see ``eigh``."""
    return eigh(x, UPLO)[0]


def _general_eig(a: Any, fn: str) -> Any:
    xp = array_module(a)
    solver = getattr(xp.linalg, "eig", None)
    if solver is None:
        raise NotImplementedError(f"{fn}: {xp.__name__}.linalg has no general eigendecomposition (eig); "
                                  "move x to the CPU (x.cpu()) first")
    return solver


def _complex_dtype(a: Any) -> Any:
    return array_module(a).result_type(a.dtype, 1j)


@accumulates_in_float32
def eig(x: Tensor, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """(eigenvalues [..., M], eigenvectors [..., M, M] as unit-norm columns) of the square
    matrices x, both complex as in paddle (LAPACK's geev; on the CPU only where CuPy lacks one)."""
    x = _square(x, "eig")
    a = x._array
    xp = array_module(a)
    w, v = _general_eig(a, "eig")(a)
    w, v = w.astype(_complex_dtype(a), copy=False), v.astype(_complex_dtype(a), copy=False)
    real_dtype = a.dtype if is_floating(a.dtype) else None

    def backward(grads: Sequence[Any]) -> tuple:
        gw, gv = grads
        vh = _mH(v)
        inner = xp.zeros(v.shape, v.dtype)
        if gv is not None:  # unit-norm columns: the change along each eigenvector itself drops out
            vhgv = vh @ gv
            inner = vhgv - vh @ (v * xp.diagonal(vhgv, axis1=-2, axis2=-1).real[..., None, :])
            inner = inner * _gap_inverse(w.conj())
        if gw is not None:
            inner = inner + _diag(gw)
        ga = xp.linalg.solve(vh, inner @ vh)  # V^-H inner V^H
        return (ga if real_dtype is None else ga.real.astype(real_dtype),)
    w_t, v_t = outputs((w, v), conjugate_grads(backward), x)
    return w_t, v_t


@accumulates_in_float32
def eigvals(x: Tensor, name: Optional[str] = None) -> Tensor:
    """The eigenvalues of the square matrices x (complex, [..., M]; no gradient, as in paddle)."""
    x = _square(x, "eigvals")
    a = x._array
    w = _general_eig(a, "eigvals")(a)[0].astype(_complex_dtype(a), copy=False)
    return wrap(w)


@accumulates_in_float32
def cholesky(x: Tensor, upper: bool = False, name: Optional[str] = None) -> Tensor:
    """The Cholesky factor of the symmetric positive-definite matrices x, read from their lower
    triangle: L with x = L @ L^H, or (``upper=True``) U = L^H with x = U^H @ U. A matrix that is
    not positive definite raises ValueError (paddle's error kind)."""
    x = _square(x, "cholesky")
    a = x._array
    xp = array_module(a)
    try:
        low = xp.linalg.cholesky(a)
        failed = None if xp.__name__ == "numpy" else xp.isnan(low.reshape(-1, *a.shape[-2:])).any(axis=(1, 2))
    except np.linalg.LinAlgError as err:  # CuPy raises NumPy's too
        raise ValueError(f"cholesky: x must be positive definite matrices, and one of x's is not ({err})") from None
    if failed is not None and bool(failed.any()):  # CuPy returns NaNs unless configured to raise
        raise ValueError(f"cholesky: x must be positive definite matrices; matrix {int(failed.argmax())} of x "
                         "is not")

    def backward(g: Any) -> tuple:
        gl = _mT(g) if upper else g
        phi = xp.tril(_mH(low) @ gl)
        phi = phi - _diag(xp.diagonal(phi, axis1=-2, axis2=-1)) / 2
        lh = _mH(low)
        inner = xp.linalg.solve(lh, phi)  # L^-H phi
        ga = _mH(xp.linalg.solve(lh, _mH(inner)))  # L^-H phi L^-1
        return ((ga + _mH(ga)) / 2,)
    return outputs((_mH(low) if upper else low,), conjugate_grads(lambda g: backward(g[0])), x)[0]


for _name, _fn in (("qr", qr), ("eig", eig), ("eigvals", eigvals), ("eigvalsh", eigvalsh), ("cholesky", cholesky)):
    setattr(Tensor, _name, _fn)
del _name, _fn
