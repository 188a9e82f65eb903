"""The modified Bessel functions of the first kind: ``i0``, ``i1`` and their exponentially scaled
forms ``i0e`` = exp(-|x|) i0, ``i1e`` = exp(-|x|) i1 (paddle's names, also Tensor methods, with
paddle's in-place ``i0_``).

Values are computed in float64 and rounded to x's dtype (integers give float32): by SciPy's
i0e / i1e on the host, and on CuPy arrays by array formulas: the power series for |x| <= 30,
where its terms are all positive, and Hankel's asymptotic series above, whose smallest term at 30
is below 1e-20.
Gradients: i0' = i1, i1' = i0 - i1 / x (1/2 at 0), i0e' = i1e - sign(x) i0e, i1e' = i0e -
i1e (sign(x) + 1 / x), with paddle's sign(0) = 1; each is also a create_graph rule, so every
order of derivative works (paddle 3.3.1 stops at the first).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pycoll._higher_order.saved import Saved, rule
from pycoll.device import array_module
from pycoll.inplace_ops import in_place_form
from pycoll.math_ops import cast
from pycoll.search_ops import where
from pycoll.tensor import Tensor
from pycoll.unary_ops import _float_op

_SERIES_UP_TO = 30.0
_SERIES_TERMS = 80  # at |x| = 30 the terms fall below 1e-17 of the sum after about 50
_ASYMPTOTIC_TERMS = 30


def _scaled(order: int, a: Any) -> Any:
    """exp(-|a|) I_order(|a|) for a float64 array a (order 0 or 1): SciPy's i0e / i1e for a host
    array (7x faster than the series), the series for a CuPy one."""
    if isinstance(a, np.ndarray):
        import scipy.special
        return np.asarray((scipy.special.i0e if order == 0 else scipy.special.i1e)(np.abs(a)))
    return scaled_series(order, a)


def scaled_series(order: int, a: Any) -> Any:
    """`_scaled` by the power and asymptotic series (CuPy arrays; NumPy's too, in tests)."""
    xp = array_module(a)
    z = xp.abs(a)
    small = xp.minimum(z, _SERIES_UP_TO)
    q = small * small / 4
    term = xp.ones_like(z) if order == 0 else small / 2
    total = term
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        total = total + term
    series = total * xp.exp(-small)
    big = xp.maximum(z, _SERIES_UP_TO)
    nu4 = 4.0 * order * order
    term = xp.ones_like(z)
    total = term
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = term * ((2 * k - 1) ** 2 - nu4) / (8 * k * big)
        total = total + term
    asymptotic = total / xp.sqrt(2 * math.pi * big)
    return xp.where(z <= _SERIES_UP_TO, series, asymptotic)


def _sign(xp: Any, a: Any) -> Any:
    """paddle's sign in the scaled functions' derivatives: 1 at 0."""
    return xp.where(a < 0, -1.0, 1.0)


def _i0e(xp: Any, a: Any) -> Any:
    return _scaled(0, a.astype(np.float64))


def _i1e(xp: Any, a: Any) -> Any:
    return _sign(xp, a) * _scaled(1, a.astype(np.float64))


def _unscaled(scaled: Any) -> Any:
    def fn(xp: Any, a: Any) -> Any:
        return scaled(xp, a) * xp.exp(xp.abs(a.astype(np.float64)))  # inf past ~713, as paddle's
    return fn


def _i1_slope(xp: Any, a: Any, i0v: Any, i1v: Any) -> Any:
    """d i1 / dx from i0 and i1 at a: i0 - i1 / a, 1/2 at 0."""
    return xp.where(a == 0, 0.5, i0v - i1v / xp.where(a == 0, 1, a))


i0 = _float_op("i0", _unscaled(_i0e), lambda xp, a, o: _unscaled(_i1e)(xp, a).astype(a.dtype),
               "The modified Bessel function of the first kind of order 0.")
i1 = _float_op("i1", _unscaled(_i1e),
               lambda xp, a, o: _i1_slope(xp, a, _unscaled(_i0e)(xp, a), o).astype(a.dtype),
               "The modified Bessel function of the first kind of order 1.", keeps="both")
i0e = _float_op("i0e", _i0e, lambda xp, a, o: (_i1e(xp, a) - _sign(xp, a) * o).astype(a.dtype),
                "exp(-|x|) i0(x): i0 without its exponential growth.", keeps="both")
i1e = _float_op("i1e", _i1e,
                lambda xp, a, o: (_i1_slope(xp, a, _i0e(xp, a), o) - _sign(xp, a) * o).astype(a.dtype),
                "exp(-|x|) i1(x): i1 without its exponential growth.", keeps="both")
i0_ = in_place_form("i0", i0)


def _tensor_sign(x: Tensor) -> Tensor:
    return where(x < 0, -1.0, 1.0)


# d out / d x as graph Tensors, from the input x and the output o (see rules_math's _float_op rules)
_DERIVATIVES = {
    "i0": lambda x, o: i1(x),
    "i1": lambda x, o: where(x == 0, 0.5, i0(x) - o / where(x == 0, 1.0, x)),
    "i0e": lambda x, o: i1e(x) - _tensor_sign(x) * o,
    "i1e": lambda x, o: where(x == 0, 0.5, i0e(x) - o / where(x == 0, 1.0, x)) - _tensor_sign(x) * o,
}


def _rule_for(name: str) -> Any:
    derivative = _DERIVATIVES[name]

    def bessel(s: Saved, g: Tensor) -> tuple:
        x = s.operand(0, s["held_x"])
        o = s.output(s["held_out"]) if s["held_out"] is not None else None
        d = derivative(x, o)
        return (g * (d if d.dtype == g.dtype else cast(d, g.dtype)),)
    return bessel


for _name in _DERIVATIVES:
    rule(f"{_name}.<locals>.backward")(_rule_for(_name))
for _name, _fn in (("i0", i0), ("i1", i1), ("i0e", i0e), ("i1e", i1e), ("i0_", i0_)):
    setattr(Tensor, _name, _fn)
del _name, _fn
