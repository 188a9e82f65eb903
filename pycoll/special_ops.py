"""Paddle's smaller elementwise and shape functions: copysign, signbit, sinc, gcd, lcm, polygamma,
gammaln, stanh, unflatten, vander, renorm and cumulative_trapezoid (also Tensor methods, with
paddle's in-place ``copysign_``, ``sinc_``, ``gcd_``, ``lcm_``, ``polygamma_``, ``gammaln_`` and
``renorm_``).

Dtypes are paddle's: floating maths (sinc, polygamma, stanh) turns integer tensors into float32;
copysign, gcd, lcm and vander keep an integer dtype; signbit gives bool. Checked against paddle
3.3.1 in tests/test_ops_special.py.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from pycoll import _special, math_ops, unary_ops
from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._promotion import floating
from pycoll._tensor_ops import as_tensor, op_output, placed, value_output
from pycoll.binary_ops import _binary
from pycoll.device import array_module
from pycoll.inplace_ops import in_place_form
from pycoll.math_ops import binary_operands
from pycoll.dtypes import is_floating
from pycoll.reduce_ops import cumsum, trapezoid_terms
from pycoll.shape_ops import axis_arg, plain_ints, reshape
from pycoll.tensor import Tensor
from pycoll.unary_ops import _float_op


def _sign_bit(xp: Any, a: Any) -> Any:
    """Whether each element's sign bit is set (-0.0 and -nan included); integers: a < 0. `a` is
    an array or a Python number (copysign's y)."""
    return xp.signbit(a) if isinstance(a, float) or is_floating(getattr(a, "dtype", np.dtype(int))) else a < 0


def _copysign(xp: Any, a: Any, b: Any) -> Any:
    if is_floating(a.dtype):
        return xp.copysign(a, b)
    if a.dtype == np.bool_:  # no sign to give: x itself, as paddle's
        return a.copy()
    return xp.where(_sign_bit(xp, a) != _sign_bit(xp, b), -a, a)  # integers keep their dtype


def _copysign_partials(xp: Any, a: Any, b: Any, out: Any) -> tuple:
    flip = xp.where(_sign_bit(xp, a) != _sign_bit(xp, b), -1, 1).astype(out.dtype)
    return xp.where(a == 0, xp.zeros((), out.dtype), flip), xp.zeros((), out.dtype)


copysign = _binary("copysign", _copysign, _copysign_partials, False,
                   "x's magnitude with y's sign (y's sign bit, so -0.0 counts as negative); integers keep "
                   "their dtype. The gradient reaches x only (zero where x is zero), as paddle's.")


def signbit(x: Any, name: Optional[str] = None) -> Tensor:
    """Whether each element's sign bit is set (True for -0.0), a bool tensor."""
    x = as_tensor(x)
    return value_output(_sign_bit(array_module(x._array), x._array), "signbit", x)


def _sinc(xp: Any, a: Any) -> Any:
    pa = math.pi * a
    return xp.where(a == 0, xp.ones((), a.dtype), xp.sin(pa) / xp.where(a == 0, 1, pa))


sinc = _float_op("sinc", _sinc,
                 lambda xp, a, o: xp.where(a == 0, 0, (xp.cos(math.pi * a) - o) / xp.where(a == 0, 1, a)),
                 "sin(pi x) / (pi x), 1 at 0 (the normalised sinc).", keeps="both")


def _integer_op(fn_name: str, ufunc: str, doc: str) -> Any:
    def op(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
        x, y, xa, ya = binary_operands(x, y, fn_name)
        if xa.dtype.kind not in "iu":
            raise TypeError(f"{fn_name}: x and y must be integer tensors (int8/16/32/64, uint8), got {xa.dtype}")
        xp = array_module(xa if isinstance(x, Tensor) else ya)
        return value_output(getattr(xp, ufunc)(xa, ya).astype(xa.dtype, copy=False), fn_name, x, y)
    op.__name__ = op.__qualname__ = fn_name
    op.__doc__ = doc
    return param_aliases({"input": "x", "other": "y"})(op)


gcd = _integer_op("gcd", "gcd", "The greatest common divisor of |x| and |y| elementwise (gcd(0, 0) = 0).")
lcm = _integer_op("lcm", "lcm", "The least common multiple of |x| and |y| elementwise (0 where either is 0).")

_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)  # B_2 ... B_16
_ZETA_SHIFT = 12  # terms summed directly before Euler-Maclaurin's tail


def _hurwitz_zeta(xp: Any, s: int, x: Any) -> Any:
    """zeta(s, x) = sum_k (x + k)^-s for integer s >= 2 and x >= 1/2 (float64): the first
    _ZETA_SHIFT terms, then the Euler-Maclaurin tail with the Bernoulli numbers B_2..B_16."""
    acc = xp.zeros_like(x)
    for k in range(_ZETA_SHIFT):
        acc = acc + (x + k) ** -s
    y = x + _ZETA_SHIFT
    acc = acc + y ** (1 - s) / (s - 1) + 0.5 * y ** -s
    rising = float(s)  # s (s+1) ... (s+2j-2)
    for j, b in enumerate(_BERNOULLI, 1):
        acc = acc + b / math.factorial(2 * j) * rising * y ** (-s - 2 * j + 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return acc


def _cot_derivative(n: int) -> list:
    """Coefficients (by power of c) of P_n with d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x)):
    P_0 = c, P_{k+1} = -(1 + c^2) P_k'."""
    p = [0.0, 1.0]
    for _ in range(n):
        d = [i * c for i, c in enumerate(p)][1:] + [0.0, 0.0]
        p = [-(d[i] + (d[i - 2] if i >= 2 else 0.0)) for i in range(len(d))]
    return p


def _polygamma(n: int, a: Any) -> Any:
    """The n-th derivative of digamma, in float64 rounded to a's dtype: (-1)^(n+1) n! zeta(n+1, x)
    for x >= 1/2, the reflection formula psi_n(x) = (-1)^n psi_n(1-x) - pi^(n+1) P_n(cot(pi x))
    below; (-1)^(n+1) inf at 0 and the negative integers (paddle's)."""
    if n == 0:
        return _special.digamma(a)
    dtype, a = a.dtype, a.astype(np.float64)
    xp = array_module(a)
    with quiet():
        reflect = a < 0.5
        right = (-1) ** (n + 1) * math.factorial(n) * _hurwitz_zeta(xp, n + 1, xp.where(reflect, 1.0 - a, a))
        c = 1.0 / xp.tan(math.pi * a)
        poly = xp.zeros_like(a)
        for coef in reversed(_cot_derivative(n)):
            poly = poly * c + coef
        out = xp.where(reflect, (-1) ** n * right - math.pi ** (n + 1) * poly, right)
        out = xp.where(reflect & (a == xp.floor(a)), (-1) ** (n + 1) * xp.inf, out)
    return out.astype(dtype, copy=False)


def polygamma(x: Any, n: int, name: Optional[str] = None) -> Tensor:
    """The n-th derivative of digamma (n = 0: digamma itself); its gradient is polygamma(x, n + 1)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma: n must be an int, got {n!r}")
    if n < 0:
        raise ValueError(f"polygamma: n must be >= 0, got {n}")
    n = int(n)
    return _float_op("polygamma", lambda xp, a: _polygamma(n, a), lambda xp, a, o: _polygamma(n + 1, a), "")(x)


def gammaln(x: Any, name: Optional[str] = None) -> Tensor:
    """log |Gamma(x)|, paddle's other name for lgamma."""
    return unary_ops.lgamma(x)


def stanh(x: Any, scale_a: float = 0.67, scale_b: float = 1.7159, name: Optional[str] = None) -> Tensor:
    """scale_b * tanh(scale_a * x)."""
    return _float_op("stanh", lambda xp, a: scale_b * xp.tanh(scale_a * a),
                     lambda xp, a, o: scale_a * scale_b * (1 - xp.tanh(scale_a * a) ** 2), "")(x)


@param_aliases({"input": "x", "dim": "axis", "sizes": "shape"})
def unflatten(x: Any, axis: int, shape: Any, name: Optional[str] = None) -> Tensor:
    """x with dimension `axis` split into `shape` (a list, tuple or Tensor; one entry may be -1)."""
    x = as_tensor(x)
    ax = axis_arg(axis, x.ndim)
    sizes = plain_ints(shape)
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise ValueError(f"unflatten: shape must be a non-empty list, tuple or Tensor, got {shape!r}")
    sizes = [int(s) for s in sizes]
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1 or (-1 in sizes and (known == 0 or x.shape[ax] % known)) or \
            (-1 not in sizes and known != x.shape[ax]):
        raise ValueError(f"unflatten: shape {sizes} cannot split dimension {axis} of size {x.shape[ax]}")
    return reshape(x, list(x.shape[:ax]) + sizes + list(x.shape[ax + 1:]))


def vander(x: Any, n: Optional[int] = None, increasing: bool = False, name: Optional[str] = None) -> Tensor:
    """The Vandermonde matrix of the 1-D x: column j is x ** (n-1-j), or x ** j if `increasing`."""
    x = as_tensor(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be a 1-D tensor, got {x.ndim} dimensions")
    n = x.shape[0] if n is None else n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"vander: n must be an int >= 0, got {n!r}")
    a = x._array
    xp = array_module(a)
    powers = xp.arange(int(n), dtype=a.dtype)
    powers = powers if increasing else powers[::-1]
    with quiet():  # a power past the dtype's range: inf, unwarned as paddle's
        out = (a[:, None] ** powers).astype(a.dtype, copy=False)

    def backward(g: Any) -> tuple:
        with quiet():
            return ((g * powers * a[:, None] ** xp.maximum(powers - 1, 0)).sum(axis=1).astype(g.dtype, copy=False),)
    return op_output(out, backward, x)


def renorm(x: Any, p: float, axis: int, max_norm: float) -> Tensor:
    """x with each slice along `axis` whose p-norm exceeds `max_norm` scaled down to that norm
    (by max_norm / norm, as paddle 3.3.1's; torch adds 1e-7 to the norm); the gradient includes
    the scale's dependence on x."""
    x = as_tensor(x)
    ax = axis_arg(axis, x.ndim)
    x, = placed("renorm", x, axes=tuple(i for i in range(x.ndim) if i != ax))  # auto-parallel: a split of axis stays
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p <= 0:
        raise ValueError(f"renorm: p must be a number > 0, got {p!r}")
    a = floating(x._array)
    xp = array_module(a)
    others = tuple(i for i in range(a.ndim) if i != ax)
    with quiet():  # a norm past the dtype's range: inf, unwarned
        norm = (xp.abs(a) ** p).sum(axis=others, keepdims=True) ** (1.0 / p)
    over = norm > max_norm
    scale = xp.where(over, max_norm / norm, 1).astype(a.dtype, copy=False)

    def backward(g: Any) -> tuple:
        with quiet():
            d_norm = xp.sign(a) * xp.abs(a) ** (p - 1) * norm ** (1 - p)
            d_scale = xp.where(over, -max_norm / norm ** 2, 0)
            return ((g * scale + (g * a).sum(axis=others, keepdims=True) * d_scale * d_norm).astype(g.dtype),)
    return op_output(a * scale, backward, x)


def cumulative_trapezoid(y: Tensor, x: Optional[Tensor] = None, dx: Optional[float] = None, axis: int = -1,
                         name: Optional[str] = None) -> Tensor:
    """The running trapezoidal integral of y along `axis` (one element shorter there): at the
    sample points `x` (1-D of y's length there, or y's shape), or `dx` apart (default 1)."""
    if not is_floating(as_tensor(y).dtype):
        raise TypeError(f"cumulative_trapezoid: y must be a floating-point tensor, got {as_tensor(y).dtype}")
    terms, ax, factor = trapezoid_terms(y, x, dx, axis, "cumulative_trapezoid")
    return math_ops.multiply(cumsum(terms, axis=ax), factor)


_OPS = {"copysign": copysign, "signbit": signbit, "sinc": sinc, "gcd": gcd, "lcm": lcm, "polygamma": polygamma,
        "gammaln": gammaln, "stanh": stanh, "unflatten": unflatten, "vander": vander, "renorm": renorm,
        "cumulative_trapezoid": cumulative_trapezoid}


_IN_PLACE_OPS = {n + "_": in_place_form(n, _OPS[n]) for n in "copysign sinc gcd lcm polygamma gammaln renorm".split()}
_IN_PLACE_OPS.update({n: param_aliases({"input": "x", "other": "y"})(_IN_PLACE_OPS[n]) for n in ("gcd_", "lcm_")})
copysign_, sinc_, gcd_, lcm_, polygamma_, gammaln_, renorm_ = _IN_PLACE_OPS.values()
for _name, _fn in {**_OPS, **_IN_PLACE_OPS}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
