"""paddle.linalg's ``householder_product`` (the Q that QR's packed Householder reflectors stand
for, as LAPACK's orgqr) and ``ormqr`` (that Q, or its transpose, times a matrix).

Both are compositions of pycoll's differentiable ops (masks, matmul, conj), so x, tau and y get
their gradients (paddle 3.3.1's householder_product cannot be differentiated: it writes 1 into
x's diagonal in place, which also changes the caller's x; pycoll's leaves x as it was).
"""
from __future__ import annotations

from typing import Optional

from pycoll._tensor_ops import as_tensor, require_floating
from pycoll.complex_ops import conj
from pycoll.device import array_module
from pycoll.math_ops import add, matmul, multiply, subtract
from pycoll.reshape_ops import matrix_transpose
from pycoll.shape_ops import unsqueeze
from pycoll.tensor import Tensor, wrap

__all__ = ["householder_product", "ormqr"]


def householder_product(x: Tensor, tau: Tensor, name: Optional[str] = None) -> Tensor:
    """The first N columns of Q = H_1 H_2 ... H_k for x [..., M, N] (M >= N) and tau [..., k]
    (k <= N): H_i = I - tau_i v_i v_i^H, v_i being column i of x below the diagonal, 1 on it and
    0 above."""
    x = require_floating(as_tensor(x), "householder_product", complex_ok=True)
    tau = require_floating(as_tensor(tau), "householder_product", "tau", complex_ok=True)
    if x.dtype != tau.dtype:
        raise TypeError(f"householder_product: x and tau must have one dtype, got {x.dtype} and {tau.dtype}")
    if x.ndim < 2 or tau.ndim != x.ndim - 1 or tau.shape[:-1] != x.shape[:-2]:
        raise ValueError(f"householder_product: x must be [..., M, N] and tau [..., k] with the same batch "
                         f"dimensions, got shapes {x.shape} and {tau.shape}")
    m, n = x.shape[-2:]
    if m < n or tau.shape[-1] > n:
        raise ValueError(f"householder_product: x [..., M, N] needs M >= N and tau at most N values, got shapes "
                         f"{x.shape} and {tau.shape}")
    xp = array_module(x._array)
    rows = xp.arange(m)
    q = wrap(xp.broadcast_to(xp.eye(m, dtype=x.dtype), tuple(x.shape[:-2]) + (m, m)))
    for i in range(tau.shape[-1]):
        below = wrap((rows > i).astype(x.dtype))
        v = add(multiply(x[..., :, i], below), wrap((rows == i).astype(x.dtype)))  # [..., M]
        vh = conj(v) if x.dtype.kind == "c" else v
        qv = matmul(q, unsqueeze(v, -1))  # [..., M, 1]
        q = subtract(q, multiply(matmul(qv, unsqueeze(vh, -2)), unsqueeze(unsqueeze(tau[..., i], -1), -1)))
    return q[..., :, :n]


def ormqr(x: Tensor, tau: Tensor, y: Tensor, left: bool = True, transpose: bool = False,
          name: Optional[str] = None) -> Tensor:
    """op(Q) @ y (``left``) or y @ op(Q), with Q = ``householder_product(x, tau)`` and op(Q) its
    (conjugate) transpose when `transpose`; x, tau and y share one dtype."""
    for value, label in ((left, "left"), (transpose, "transpose")):
        if not isinstance(value, bool):
            raise TypeError(f"ormqr: {label} must be a bool, got {value!r}")
    y = require_floating(as_tensor(y), "ormqr", "y", complex_ok=True)
    if y.dtype != x.dtype:
        raise TypeError(f"ormqr: y must have x's dtype {x.dtype}, got {y.dtype}")
    q = householder_product(x, tau)
    if transpose:
        q = matrix_transpose(conj(q) if q.dtype.kind == "c" else q)
    inner = (q.shape[-1], y.shape[-2]) if left else (y.shape[-1], q.shape[-2])
    if y.ndim < 2 or inner[0] != inner[1]:
        raise ValueError(f"ormqr: op(Q) of shape {q.shape} cannot multiply y of shape {y.shape} "
                         f"({'on the left' if left else 'on the right'})")
    return matmul(q, y) if left else matmul(y, q)


for _fn in (householder_product, ormqr):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
