"""paddle.linalg's functions of a matrix: ``pinv``, ``matrix_exp``, ``matrix_rank``, ``cond`` and
``vecdot``, with gradients (``matrix_rank`` has none, as in paddle).

``matrix_exp`` is scaling and squaring around a Taylor polynomial (no SciPy); its gradient is the
upper-right block of the exponential of [[x^H, g], [0, x^H]]. ``cond`` and ``vecdot`` are
compositions of recorded ops, so their gradients come from those.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Union

from pycoll import math_ops
from pycoll._complex_grads import conjugate_grads
from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, check_broadcast, op_output
from pycoll.device import array_module
from pycoll.linalg_decomp import _mH, _matrices, svdvals
from pycoll.linalg_solve import _pinv_grad
from pycoll.matrix_ops import _square, inv
from pycoll.tensor import Tensor, wrap

__all__ = ["pinv", "matrix_exp", "matrix_rank", "cond", "vecdot"]


@accumulates_in_float32
def pinv(x: Tensor, rcond: Union[float, Tensor] = 1e-15, hermitian: bool = False,
         name: Optional[str] = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of x [..., M, N] ([..., N, M]) through its SVD (with
    ``hermitian``: its eigendecomposition, read from the lower triangle); singular values at or
    below ``rcond`` times the largest count as zero; a Tensor ``rcond`` holds one such bound per
    matrix (broadcast against x's batch dimensions, as torch's rtol; paddle documents the Tensor).
    """
    x = _matrices(x, "pinv")
    a = x._array
    xp = array_module(a)
    if isinstance(rcond, Tensor):
        check_broadcast("pinv", "rcond", tuple(rcond.shape), "x's batch", tuple(x.shape[:-2]))
    rcond = _bound(rcond)
    if hermitian:
        if a.shape[-1] != a.shape[-2]:
            raise ValueError(f"pinv: with hermitian=True x must be square matrices, got shape {x.shape}")
        w, v = xp.linalg.eigh(a, UPLO="L")
        kept = xp.abs(w) > rcond * xp.abs(w).max(axis=-1, keepdims=True)
        out = (v * xp.where(kept, 1 / xp.where(kept, w, 1), 0)[..., None, :]) @ _mH(v)
    else:
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
        kept = s > rcond * s[..., :1]
        out = _mH(vh) @ (xp.where(kept, 1 / xp.where(kept, s, 1), 0)[..., :, None] * _mH(u))

    @conjugate_grads  # written for complex tensors (see _pinv_grad)
    def backward(g: Any) -> tuple:
        ga = _pinv_grad(a, out, g)
        return ((ga + _mH(ga)) / 2 if hermitian else ga,)
    return op_output(out, backward, x)


def matrix_exp(x: Tensor, name: Optional[str] = None) -> Tensor:
    """The matrix exponential of each square matrix of x."""
    x = _square(x, "matrix_exp")
    a = x._array
    out = _expm(a)

    @conjugate_grads  # the adjoint, exp's derivative along g, taken with a^H: the convention's form
    def backward(g: Any) -> tuple:
        xp = array_module(g)
        m = a.shape[-1]
        at = _mH(a)
        block = xp.concatenate([xp.concatenate([at, g], axis=-1),
                                xp.concatenate([xp.zeros_like(at), at], axis=-1)], axis=-2)
        return (_expm(block)[..., :m, m:],)
    return op_output(out, backward, x)


_TAYLOR_TERMS = 18  # after scaling to norm <= 1/2 the remainder is below 0.5^19 / 19!, under 1e-22


def _expm(a: Any) -> Any:
    """exp(a) by scaling a to a 1-norm of at most 1/2, a Taylor polynomial and squaring back."""
    xp = array_module(a)
    norm = float(xp.abs(a).sum(axis=-2).max()) if a.size else 0.0
    squarings = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    scaled = a / (2 ** squarings)
    eye = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    result = eye
    for k in range(_TAYLOR_TERMS, 0, -1):  # Horner: I + a/1 (I + a/2 (I + ...))
        result = eye + (scaled @ result) / k
    for _ in range(squarings):
        result = result @ result
    return result


@accumulates_in_float32
def matrix_rank(x: Tensor, tol: Union[float, Tensor, None] = None, hermitian: bool = False,
                atol: Union[float, Tensor, None] = None, rtol: Union[float, Tensor, None] = None,
                name: Optional[str] = None) -> Tensor:
    """The number of singular values (``hermitian``: |eigenvalues|) of each matrix of x above the
    tolerance (int64 [...]): ``tol``, or max(atol, rtol * the largest), rtol defaulting to
    max(M, N) * eps (0 where atol > 0 is given), and with neither, the largest * max(M, N) * eps.
    ``tol`` goes alone or not at all with atol / rtol."""
    x = _matrices(x, "matrix_rank")
    if tol is not None and (atol is not None or rtol is not None):
        raise ValueError(f"matrix_rank: use tol alone or atol and rtol without tol, got tol={tol!r}, atol={atol!r}, "
                         f"rtol={rtol!r}")
    a = x._array
    xp = array_module(a)
    m, n = a.shape[-2:]
    if hermitian:
        if m != n:
            raise ValueError(f"matrix_rank: with hermitian=True x must be square matrices, got shape {x.shape}")
        s = xp.abs(xp.linalg.eigvalsh(a))
    else:
        s = xp.linalg.svd(a, compute_uv=False)
    largest = s.max(axis=-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), s.dtype)
    eps = xp.finfo(s.dtype).eps * max(m, n)
    if tol is not None:
        cutoff = _bound(tol)
    elif atol is None and rtol is None:
        cutoff = largest * eps
    else:
        atol_v = 0.0 if atol is None else _bound(atol)
        rtol_v = _bound(rtol) if rtol is not None else (0.0 if atol is not None and _positive(atol) else eps)
        cutoff = xp.maximum(atol_v, largest * rtol_v)
    return wrap((s > cutoff).sum(axis=-1).astype("int64"))


def _bound(v: Union[float, Tensor]) -> Any:
    """A tolerance: a number, or a Tensor broadcast against the batch ([...] -> [..., 1])."""
    return v._array[..., None] if isinstance(v, Tensor) else float(v)


def _positive(v: Union[float, Tensor]) -> bool:
    return bool((v._array > 0).all()) if isinstance(v, Tensor) else v > 0


_COND_P = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def cond(x: Tensor, p: Union[float, str, None] = None, name: Optional[str] = None) -> Tensor:
    """The condition number of each matrix of x for the matrix norm ``p`` (None: 2): the ratio of
    the extreme singular values for p = 2 / -2 (any [..., M, N]), else norm(x, p) * norm(x^-1, p)
    for square x."""
    x = _matrices(x, "cond")
    if p is None:
        p = 2
    if p not in _COND_P:
        raise ValueError(f"cond: p must be one of {_COND_P} or None, got {p!r}")
    if p in (2, -2):
        s = svdvals(x)
        largest, smallest = s[..., 0], s[..., -1]
        return math_ops.divide(largest, smallest) if p == 2 else math_ops.divide(smallest, largest)
    x = _square(x, "cond")
    return math_ops.multiply(_norm(x, p), _norm(inv(x), p))


def _norm(x: Tensor, p: Union[float, str]) -> Tensor:
    """The matrix norm p ('fro', 'nuc', +-1, +-inf) of each matrix of x, from recorded ops
    (pycoll.linalg.matrix_norm's, which this module cannot import: pycoll.linalg imports it)."""
    if p == "fro":
        return math_ops.sqrt(math_ops.sum(math_ops.multiply(x, x), axis=[-2, -1]))
    if p == "nuc":
        return math_ops.sum(svdvals(x), axis=-1)
    sums = math_ops.sum(math_ops.abs(x), axis=-2 if abs(p) == 1 else -1)  # 1: column sums, inf: row sums
    return (math_ops.max if p > 0 else math_ops.min)(sums, axis=-1)


def vecdot(x: Tensor, y: Tensor, axis: int = -1, name: Optional[str] = None) -> Tensor:
    """The dot products of x and y (conjugating x) along ``axis``, their other dimensions broadcast."""
    x, y = as_tensor(x), as_tensor(y)
    if x.dtype.kind == "c":
        x = op_output(x._array.conj(), lambda g: (g.conj(),), x)
    return math_ops.sum(math_ops.multiply(x, y), axis=axis)


Tensor.pinv = pinv
Tensor.cond = cond
