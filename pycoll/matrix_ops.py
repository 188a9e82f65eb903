"""paddle.linalg's square-matrix ops, on the last two dimensions of x (any batch before them):
``inv`` (also ``pycoll.inverse``), ``det``, ``slogdet``, ``solve``, ``matrix_power`` and
``multi_dot``, and the statistics ``cov`` and ``corrcoef``; with gradients. The decompositions
are NumPy's / CuPy's ``linalg``; matrix_power, multi_dot, cov and corrcoef are compositions of
recorded ops, so their gradients come from those."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from pycoll import complex_ops, math_ops, shape_ops
from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, delivered, op_output, placed, require_floating
from pycoll.device import array_module, to_module
from pycoll.diag_ops import diagonal
from pycoll.dtypes import default_float
from pycoll.tensor import Tensor


def _square(x: Any, fn: str, arg: str = "x") -> Tensor:
    """x as a floating Tensor of square matrices (TypeError / ValueError naming it, ``arg``, otherwise)."""
    x = require_floating(as_tensor(x), fn, arg, complex_ok=True)
    a = x._array
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{fn}: {arg} must be square matrices [..., M, M], got shape {list(a.shape)}")
    return x


def _mT(a: Any) -> Any:
    return a.swapaxes(-1, -2)


def nonsingular(fn: str, call: Callable[[], Any],
                problem: str = "x holds a singular matrix, which has no inverse") -> Any:
    """``call()``, a NumPy solve or inverse, with a singular matrix's LinAlgError (a ValueError)
    saying which op and argument (``problem``): NumPy's says 'Singular matrix' alone."""
    try:
        return call()
    except np.linalg.LinAlgError as err:
        raise np.linalg.LinAlgError(f"{fn}: {problem} ({err})") from None


@accumulates_in_float32
def inv(x: Tensor, name: Optional[str] = None) -> Tensor:
    """The inverse of each matrix of x; a singular one raises ValueError (NumPy's LinAlgError,
    naming the op)."""
    x = _square(x, "inv")
    out = nonsingular("inv", lambda: array_module(x._array).linalg.inv(x._array))
    return op_output(out, lambda g: (-(_mT(out) @ g @ _mT(out)),), x)


@accumulates_in_float32
def det(x: Tensor, name: Optional[str] = None) -> Tensor:
    """The determinant of each matrix of x (shape x.shape[:-2]); NaN for a matrix holding NaN
    (LAPACK's pivoting can give 0 there), inf past the dtype's range, unwarned as paddle's."""
    x = _square(x, "det")
    a = x._array
    xp = array_module(a)
    with quiet():
        d = xp.where(_holds_nan(xp, a), xp.nan, xp.linalg.det(a)).astype(a.dtype, copy=False)

    def backward(g: Any) -> tuple:  # d det / dA = adj(A)^T = det * A^-T where A is invertible
        try:
            return ((g * d)[..., None, None] * _mT(xp.linalg.inv(a)),)
        except np.linalg.LinAlgError:  # a singular matrix: its adjugate is still there (paddle gives 0)
            return (g[..., None, None] * _adjugate_t(xp, a),)
    return op_output(d, backward, x)


def _holds_nan(xp: Any, a: Any) -> Any:
    """Per matrix of a (batched), whether it holds a NaN."""
    return xp.isnan(a).any(axis=(-2, -1))


def _adjugate_t(xp: Any, a: Any) -> Any:
    """adj(A)^T, singular A included, through the SVD A = U diag(s) Vh: adj(A)^T = det(U) det(Vh)
    U diag(c) Vh, c_i the product of the singular values but s_i."""
    u, s, vh = xp.linalg.svd(a)
    ones = xp.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(s, -1)[..., :-1]], axis=-1), axis=-1), -1)
    signs = xp.linalg.det(u) * xp.linalg.det(vh)
    return signs[..., None, None] * (u * (before * after)[..., None, :]) @ vh


@accumulates_in_float32
def slogdet(x: Tensor, name: Optional[str] = None) -> Tensor:
    """The sign and the log of the absolute value of each determinant, stacked: shape
    [2] + x.shape[:-2] (paddle's); the gradient flows through the log only."""
    x = _square(x, "slogdet")
    a = x._array
    xp = array_module(a)
    with quiet():
        sign, logabs = xp.linalg.slogdet(a)
    nan = _holds_nan(xp, a)  # sign 0 and log NaN there, as paddle's (LAPACK's pivoting can give -inf)
    sign, logabs = xp.where(nan, 0, sign), xp.where(nan, xp.nan, logabs)
    out = xp.stack([sign.astype(a.dtype), logabs.astype(a.dtype)])
    return op_output(out, lambda g: (g[1][..., None, None] * _mT(xp.linalg.inv(a)),), x)


def _solve_left(x: Tensor, y: Tensor) -> Tensor:
    a, b = x._array, to_module(y._array, array_module(x._array))
    xp = array_module(a)
    vector = b.ndim == 1
    rhs = b[:, None] if vector else b
    if rhs.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve: y must have {a.shape[-1]} rows (x's size), got shape {list(b.shape)}")
    out = nonsingular("solve", lambda: xp.linalg.solve(a, rhs))

    def backward(g: Any) -> tuple:
        gb = xp.linalg.solve(_mT(a), g[:, None] if vector else g)
        ga = -(gb @ _mT(out))
        return (shape_ops.unbroadcast(ga, a.shape),
                gb[:, 0] if vector else shape_ops.unbroadcast(gb, b.shape))
    return op_output(out[:, 0] if vector else out, backward, x, y)


@param_aliases({"A": "x", "B": "y"})
@accumulates_in_float32
def solve(x: Tensor, y: Tensor, left: bool = True, name: Optional[str] = None, *,
          out: Optional[Tensor] = None) -> Tensor:
    """The solution of x @ X = y (``left=False``: X @ x = y) for square x; y is [..., M, K] or a
    vector [M] (left only); batch dimensions broadcast. `out` receives a copy when given."""
    x = _square(x, "solve")
    y = as_tensor(y)
    if left:
        result = _solve_left(x, y)
    else:
        if y.ndim < 2:
            raise ValueError(f"solve: with left=False y must be matrices [..., K, M], got shape {y.shape}")
        result = _swap(_solve_left(_swap(x), _swap(y)))
    delivered(result, out, "solve")
    return result if out is None else out


def _swap(t: Tensor) -> Tensor:
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return shape_ops.transpose(t, perm)


def matrix_power(x: Tensor, n: int, name: Optional[str] = None) -> Tensor:
    """x multiplied by itself n times (n = 0: the identity; n < 0: the inverse's power)."""
    x = _square(x, "matrix_power")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"matrix_power: n must be an int, got {type(n).__name__}")
    if n == 0:
        a = x._array
        xp = array_module(a)
        eye = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
        return op_output(eye, lambda g: (xp.zeros_like(g),), x)
    base = inv(x) if n < 0 else x
    result = None
    n = abs(n)
    while n:  # square-and-multiply
        if n & 1:
            result = base if result is None else math_ops.matmul(result, base)
        n >>= 1
        if n:
            base = math_ops.matmul(base, base)
    return result


def multi_dot(x: Sequence[Tensor], name: Optional[str] = None) -> Tensor:
    """The product x[0] @ x[1] @ ... of two or more matrices; the first may be a row vector and
    the last a column vector (1-D), whose dimension the result then lacks."""
    if not isinstance(x, (list, tuple)) or len(x) < 2:
        got = f"a list of {len(x)}" if isinstance(x, (list, tuple)) else type(x).__name__
        raise ValueError(f"multi_dot: x must be a list of at least 2 tensors, got {got}")
    tensors = [as_tensor(t) for t in x]
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise ValueError(f"multi_dot: x[{i}] must be {' or '.join(f'{d}-D' for d in allowed)}, got shape {t.shape}")
    result = tensors[0]
    for t in tensors[1:]:
        result = math_ops.matmul(result, t)
    return result


@accumulates_in_float32
def cov(x: Tensor, rowvar: bool = True, ddof: bool = True, fweights: Optional[Tensor] = None,
        aweights: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
    """The covariance matrix of the variables in x's rows (``rowvar=False``: columns), NumPy's
    ``cov``: frequency weights `fweights` (integers; paddle takes floats too) and observation
    weights `aweights` per observation, neither negative, ``ddof`` (True: divide by N - 1). A 1-D
    x is one variable (a 0-D result)."""
    x, = placed("_all_whole", as_tensor(x))  # auto-parallel: each variable against every other, whole
    if x.ndim > 2:
        raise ValueError(f"cov: x must be 1-D or 2-D, got shape {x.shape}")
    if x.dtype.kind not in "fc":
        x = math_ops.cast(x, default_float())
    if x.ndim < 2:
        x = shape_ops.reshape(x, [1, -1])
    if not rowvar and x.shape[0] != 1:
        x = _swap(x)
    n = x.shape[1]
    w = aw = None
    for arg, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        weights, = placed("_all_whole", as_tensor(weights))  # auto-parallel: beside a whole x
        if weights.shape != [n] or weights.dtype.kind not in "fiu":
            raise ValueError(f"cov: {arg} must be a 1-D real tensor of length {n} (the observations), got shape "
                             f"{weights.shape} and dtype {weights.dtype}")
        if bool((weights._array < 0).any()):
            raise ValueError(f"cov: {arg} must not be negative, got a smallest weight of {weights.min().item()}")
        weights = math_ops.cast(weights, x.dtype)
        if arg == "aweights":
            aw = weights
        w = weights if w is None else math_ops.multiply(w, weights)
    if w is None:
        avg = math_ops.mean(x, axis=1, keepdim=True)
        fact: Any = max(n - int(ddof), 0)  # as NumPy's: no degree of freedom left divides by 0 (NaN, paddle's)
    else:
        wsum = math_ops.sum(w)
        avg = math_ops.divide(math_ops.sum(math_ops.multiply(x, w), axis=1, keepdim=True), wsum)
        fact = wsum - (int(ddof) * math_ops.sum(math_ops.multiply(w, aw)) / wsum if aw is not None else int(ddof))
    centred = math_ops.subtract(x, avg)
    weighted = centred if w is None else math_ops.multiply(centred, w)
    paired = _swap(complex_ops.conj(centred) if centred.dtype.kind == "c" else centred)  # NumPy's: x times x^H
    return shape_ops.squeeze(math_ops.divide(math_ops.matmul(weighted, paired), fact))


@accumulates_in_float32
def corrcoef(x: Tensor, rowvar: bool = True, name: Optional[str] = None) -> Tensor:
    """Pearson's correlation coefficients of the variables in x's rows (``rowvar=False``:
    columns): cov(x) scaled by the standard deviations, clipped to [-1, 1] (complex x: left as
    computed, its diagonal real)."""
    c = cov(x, rowvar)
    if c.ndim == 0:
        return math_ops.divide(c, c)
    std = math_ops.sqrt(diagonal(c))
    c = math_ops.divide(math_ops.divide(c, shape_ops.reshape(std, [-1, 1])), shape_ops.reshape(std, [1, -1]))
    return c if c.dtype.kind == "c" else math_ops.clip(c, -1.0, 1.0)


inverse = inv

for _name, _fn in (("inverse", inv), ("slogdet", slogdet), ("solve", solve), ("matrix_power", matrix_power),
                   ("multi_dot", multi_dot), ("cov", cov), ("corrcoef", corrcoef)):
    setattr(Tensor, _name, _fn)
del _name, _fn
