"""The regularized incomplete gamma functions ``gammainc`` (P, the lower one) and ``gammaincc``
(Q = 1 - P), and the multivariate log-gamma ``multigammaln`` (paddle's names, also Tensor
methods, with paddle's in-place ``gammainc_``, ``gammaincc_``, ``multigammaln_``).

``gammainc(x, y)`` is P(a=x, y), paddle's argument order. P and Q are computed in float64 as
array formulas that run on NumPy and CuPy (the series of P where y < x + 1, Lentz's continued
fraction of Q elsewhere, each iterated until every element has converged) and rounded to the
operands' dtype. As in paddle, only y takes a gradient, dP/dy = y^(x-1) e^-y / Gamma(x) (-dP/dy
for Q), and P = 0, Q = 1 where x or y is 0. ``multigammaln`` is a composition of lgamma, whose
gradient it has.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from pycoll import _special
from pycoll._tensor_ops import as_tensor
from pycoll.binary_ops import _binary
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.inplace_ops import in_place_form
from pycoll.math_ops import add, subtract, sum as sum_
from pycoll.shape_ops import unsqueeze
from pycoll.tensor import Tensor, wrap
from pycoll.unary_ops import lgamma

_EPS = 1e-16
_TINY = 1e-300
_MAX_STEPS = 2000


def _iterate(xp: Any, state: list, step: Any) -> list:
    """Run ``step(n, *state) -> (state, converged)`` for n = 1, 2, ... on the elements not yet
    converged only (each array in `state` is 1-D, one entry per element), until all have."""
    done = [v.copy() for v in state]
    active = xp.arange(state[0].shape[0])
    for n in range(1, _MAX_STEPS):
        state, converged = step(n, *state)
        if bool(xp.any(converged)):
            for out, v in zip(done, state):
                out[active[converged]] = v[converged]
            keep = ~converged
            active, state = active[keep], [v[keep] for v in state]
            if active.shape[0] == 0:
                break
    for out, v in zip(done, state):  # anything left after _MAX_STEPS keeps its last value
        out[active] = v
    return done


def _lower_series(xp: Any, a: Any, y: Any) -> Any:
    """P(a, y) by its series e^-y y^a / Gamma(a + 1) sum_n y^n / ((a + 1) ... (a + n)); good
    where y < a + 1 (1-D a and y)."""
    def step(n: int, a_: Any, y_: Any, term: Any, total: Any) -> tuple:
        term = term * y_ / (a_ + n)
        total = total + term
        return [a_, y_, term, total], xp.abs(term) <= xp.abs(total) * _EPS
    total = _iterate(xp, [a, y, 1 / a, 1 / a], step)[3]
    return total * xp.exp(-y + a * xp.log(y) - _special.lgamma(a))


def _upper_fraction(xp: Any, a: Any, y: Any) -> Any:
    """Q(a, y) by its continued fraction (modified Lentz); good where y >= a + 1 (1-D a and y)."""
    def step(n: int, a_: Any, b: Any, c: Any, d: Any, h: Any) -> tuple:
        an = -n * (n - a_)
        b = b + 2
        d = an * d + b
        d = 1 / xp.where(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < _TINY, _TINY, c)
        delta = d * c
        return [a_, b, c, d, h * delta], xp.abs(delta - 1) <= _EPS
    b = y + 1 - a
    h = _iterate(xp, [a, b, xp.full_like(y, 1 / _TINY), 1 / b, 1 / b], step)[4]
    return xp.exp(-y + a * xp.log(y) - _special.lgamma(a)) * h


def _regularized(xp: Any, a: Any, y: Any, upper: bool) -> Any:
    """P(a, y), or Q(a, y) if `upper`, in float64 (a, y >= 0; P = 0 and Q = 1 where either is 0,
    paddle's). Each is computed directly where its own method applies, and as 1 minus the other
    elsewhere (where it is not small, so nothing cancels)."""
    a, y = xp.broadcast_arrays(a.astype(np.float64), y.astype(np.float64))
    shape = a.shape
    a, y = a.reshape(-1), y.reshape(-1)
    out = xp.full_like(y, 1.0 if upper else 0.0)  # where a or y is 0
    series = (y < a + 1) & (a > 0) & (y > 0)
    fraction = (y >= a + 1) & (a > 0) & (y > 0)
    if bool(xp.any(series)):
        p = _lower_series(xp, a[series], y[series])
        out[series] = 1 - p if upper else p
    if bool(xp.any(fraction)):
        q = _upper_fraction(xp, a[fraction], y[fraction])
        out[fraction] = q if upper else 1 - q
    return out.reshape(shape)


def _density(xp: Any, a: Any, y: Any) -> Any:
    """dP(a, y) / dy = y^(a-1) e^-y / Gamma(a), 0 where a or y is 0."""
    a64, y64 = a.astype(np.float64), y.astype(np.float64)
    safe_a, safe_y = xp.where(a64 == 0, 1.0, a64), xp.where(y64 == 0, 1.0, y64)
    d = xp.exp((safe_a - 1) * xp.log(safe_y) - safe_y - _special.lgamma(safe_a))
    return xp.where((a64 == 0) | (y64 == 0), 0.0, d)


def _checked(fn: str, forward: Any) -> Any:
    def op(xp: Any, a: Any, y: Any) -> Any:
        for v, name in ((a, "x"), (y, "y")):
            if bool(xp.any(v < 0)):
                raise ValueError(f"{fn}: the input argument {name} must be greater than or equal to 0")
        dtype = xp.result_type(a, y)
        return forward(xp, a, y).astype(dtype if is_floating(dtype) else np.float32)
    return op


def _float_operands(x: Any, y: Any, fn: str) -> None:
    for v, name in ((x, "x"), (y, "y")):
        if not isinstance(v, Tensor) or v.dtype not in (np.float32, np.float64):
            raise TypeError(f"{fn}: {name} must be a float32 or float64 Tensor, got "
                            f"{v.dtype if isinstance(v, Tensor) else type(v).__name__}")


_lower = _binary("gammainc", _checked("gammainc", lambda xp, a, y: _regularized(xp, a, y, False)),
                 lambda xp, a, y, out: (xp.zeros((), out.dtype), _density(xp, a, y).astype(out.dtype)),
                 False, "")
_upper = _binary("gammaincc", _checked("gammaincc", lambda xp, a, y: _regularized(xp, a, y, True)),
                 lambda xp, a, y, out: (xp.zeros((), out.dtype), -_density(xp, a, y).astype(out.dtype)),
                 False, "")


def gammainc(x: Tensor, y: Tensor, name: Optional[str] = None) -> Tensor:
    """The regularized lower incomplete gamma function P(x, y) = gamma(x, y) / Gamma(x), for
    float32/float64 tensors x, y >= 0 (broadcast); the gradient reaches y only (paddle's)."""
    _float_operands(x, y, "gammainc")
    return _lower(x, y)


def gammaincc(x: Tensor, y: Tensor, name: Optional[str] = None) -> Tensor:
    """The regularized upper incomplete gamma function Q(x, y) = 1 - P(x, y), for float32/float64
    tensors x, y >= 0 (broadcast); the gradient reaches y only (paddle's)."""
    _float_operands(x, y, "gammaincc")
    return _upper(x, y)


def multigammaln(x: Tensor, p: int, name: Optional[str] = None) -> Tensor:
    """The log of the multivariate gamma function of dimension p:
    p (p - 1) / 4 log(pi) + sum_{j<p} lgamma(x - j / 2)."""
    x = as_tensor(x)
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
        raise ValueError(f"multigammaln: p must be an int >= 1, got {p!r}")
    dtype = x.dtype if is_floating(x.dtype) else np.dtype(np.float32)
    halves = wrap(array_module(x._array).arange(int(p), dtype=dtype) / 2)
    terms = lgamma(subtract(unsqueeze(x, -1), halves))
    return add(sum_(terms, axis=-1), p * (p - 1) / 4 * math.log(math.pi))


gammainc_ = in_place_form("gammainc", gammainc)
gammaincc_ = in_place_form("gammaincc", gammaincc)
multigammaln_ = in_place_form("multigammaln", multigammaln)
for _fn in (gammainc, gammaincc, multigammaln, gammainc_, gammaincc_, multigammaln_):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
