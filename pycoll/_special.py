"""Special functions NumPy lacks (erf, erfinv, lgamma, digamma, trigamma) as array formulas that
run unchanged on NumPy and CuPy arrays; erf of host float32/float64 arrays runs in pycoll's
compiled kernel instead (one pass, not ~25), erfinv and lgamma of host arrays in SciPy's (faster,
and as accurate; SciPy's digamma and polygamma are 8x slower than the formulas here).

Accuracy: lgamma, digamma and trigamma to about 1e-14 relative in float64 (Lanczos' series,
then the asymptotic series after shifting the argument past 6, with the reflection formulas below
1/2); erf in float64 to about 5e-16 (series and a continued fraction, see _erf64), in float32
to rounding below |x| = 0.5 and to about 1.2e-7 above (Numerical Recipes' erfc fit); erfinv to
about 1e-7 (Giles' single-precision approximation, refined by one Newton step on erf). All but
erf compute in float64 and round to the input's dtype.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pycoll._fp_quiet import quiet
from pycoll.device import array_module
from pycoll.kernels import host_math

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
_SHIFT = 6  # digamma/trigamma add this many steps of their recurrences before the asymptotic series


# erf(x) = 2/sqrt(pi) x sum_n (-x^2)^n / (n! (2n+1)), the Taylor coefficients for |x| < 0.5
_TAYLOR64 = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(14))


def erf(a: Any) -> Any:
    """erf(a). float32 and float64 numpy arrays in one pass of pycoll's host kernel (float32
    correctly rounded but within 1e-10 of a rounding boundary, float64 the C library's erf);
    otherwise (CuPy arrays, 16-bit floats, a build without the kernel) by array formulas: float64
    to double precision (within ~5e-16 of the true value, see _erf64), other dtypes by Numerical
    Recipes' erfc fit (~1.2e-7 relative, float32's own rounding) above |a| = 0.5 and the Taylor
    series, exact to rounding, below."""
    fast = host_math.erf(a)
    if fast is not None:
        return fast
    xp = array_module(a)
    with quiet():  # each formula runs on every element: past its range it overflows, unused
        return _erf64(xp, a) if a.dtype == np.float64 else _erf_fit(xp, a)


def _erf_fit(xp: Any, a: Any) -> Any:
    """erf for dtypes below float64: the erfc fit, and the Taylor series below |a| = 0.5."""
    z = xp.abs(a)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    erfc = t * xp.exp(-z * z + poly)
    fit = xp.where(a >= 0, 1.0 - erfc, erfc - 1.0)
    small = xp.minimum(z, 0.5)  # the series where |a| < 0.5, by Horner's rule (8 terms reach float32's rounding)
    u = small * small
    series = _TAYLOR64[7]
    for c in _TAYLOR64[6::-1]:
        series = series * u + c
    series = xp.copysign(small, a) * series
    return xp.where(z < 0.5, series * (2 / math.sqrt(math.pi)), fit).astype(a.dtype, copy=False)


def _erf64(xp: Any, a: Any) -> Any:
    """erf in float64 from three expansions, each where it converges fast and sums without
    cancellation (checked against math.erf on 3.6e5 points in [-8, 8]: at most 5.6e-16 off):

    - |x| < 0.5: the Taylor series, by Horner's rule;
    - 0.5 <= |x| < 2: erf(x) = 2/sqrt(pi) exp(-x^2) x sum_n (2x^2)^n / (1*3*...*(2n+1)), whose
      terms are all positive (40 terms; summed from the last so rounding errors shrink);
    - |x| >= 2: erf = 1 - erfc, erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
      (Laplace's continued fraction, 50 levels evaluated from the bottom up).
    """
    z = xp.abs(a)
    small = xp.minimum(z, 0.5)
    u = small * small
    p = _TAYLOR64[-1]
    for c in _TAYLOR64[-2::-1]:
        p = p * u + c
    taylor = (2 / math.sqrt(math.pi)) * small * p
    mid = xp.minimum(z, 2.0)
    u = mid * mid
    s = 1.0
    for n in range(40, 0, -1):
        s = 1.0 + s * (2 * u) / (2 * n + 1)
    series = (2 / math.sqrt(math.pi)) * xp.exp(-u) * mid * s
    big = xp.maximum(z, 2.0)
    f = big
    for k in range(50, 0, -1):
        f = big + (k / 2) / f
    tail = 1.0 - xp.exp(-big * big) / (math.sqrt(math.pi) * f)
    return xp.copysign(xp.where(z < 0.5, taylor, xp.where(z < 2.0, series, tail)), a)


def erfinv(a: Any) -> Any:
    """The inverse of erf on (-1, 1); +-inf at +-1, NaN outside (host arrays: SciPy's, 2.6x
    faster than the formula below)."""
    if isinstance(a, np.ndarray):
        import scipy.special
        return np.asarray(scipy.special.erfinv(a.astype(np.float64))).astype(a.dtype, copy=False)
    return erfinv_formula(a)


def erfinv_formula(a: Any) -> Any:
    """erfinv by Giles' approximation and a Newton step (CuPy arrays; NumPy's too, in tests)."""
    # float32 would lose digits to cancellation; flat, as a 0-d array's arithmetic gives scalars
    dtype, shape, a = a.dtype, a.shape, a.astype(np.float64).reshape(-1)
    xp = array_module(a)
    with quiet():
        w = -xp.log((1.0 - a) * (1.0 + a))
        central = w - 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * central
        tail = xp.sqrt(w) - 3.0
        q = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            q = c + q * tail
        x = xp.where(w < 5.0, p, q) * a
        step = (erf(x) - a) / (2.0 / math.sqrt(math.pi) * xp.exp(-x * x))
        x = xp.where(xp.isfinite(step), x - step, x)
        x = xp.where(xp.abs(a) == 1, a * xp.inf, x)
    return x.astype(dtype, copy=False).reshape(shape)


def lgamma(a: Any) -> Any:
    """log |Gamma(a)|; +inf at 0, the negative integers and +-inf (host arrays: SciPy's gammaln,
    2x faster than the formula below, which CuPy arrays take)."""
    if isinstance(a, np.ndarray):
        import scipy.special
        out = np.asarray(scipy.special.gammaln(a.astype(np.float64)))
        return np.where(out == -np.inf, np.inf, out).astype(a.dtype, copy=False)  # gammaln(-inf) = -inf
    return lgamma_formula(a)


def lgamma_formula(a: Any) -> Any:
    """lgamma by Lanczos' series (CuPy arrays; NumPy's too, in tests)."""
    dtype, a = a.dtype, a.astype(np.float64)  # float32 would lose digits to cancellation
    xp = array_module(a)
    with quiet():
        reflect = a < 0.5
        x = xp.where(reflect, 1.0 - a, a) - 1.0  # the Lanczos sum wants x >= -0.5
        series = _LANCZOS[0]
        for k, c in enumerate(_LANCZOS[1:], 1):
            series = series + c / (x + k)
        t = x + _LANCZOS_G + 0.5
        right = 0.5 * math.log(2 * math.pi) + (x + 0.5) * xp.log(t) - t + xp.log(series)
        sin = xp.abs(xp.sin(math.pi * a))
        out = xp.where(reflect, xp.log(math.pi / sin) - right, right)
        out = xp.where(reflect & (a == xp.floor(a)), xp.inf, out)
    return out.astype(dtype, copy=False)


def digamma(a: Any) -> Any:
    """d/da log Gamma(a); -inf at 0 (+inf at -0) and NaN at the negative integers (paddle's)."""
    dtype, a = a.dtype, a.astype(np.float64)  # float32 would lose digits to cancellation
    xp = array_module(a)
    with quiet():
        reflect = a < 0.5
        x = xp.where(reflect, 1.0 - a, a)
        acc = xp.zeros_like(x)
        for k in range(_SHIFT):
            acc = acc - 1.0 / (x + k)
        y = x + _SHIFT
        inv2 = 1.0 / (y * y)
        tail = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
        right = acc + xp.log(y) - 0.5 / y - tail
        out = xp.where(reflect, right - math.pi / xp.tan(math.pi * a), right)
        # poles: -inf at +0 and +inf at -0 (the sides 0 is reached from, as paddle's), NaN at -1, -2, ...
        out = xp.where((a <= 0) & (a == xp.floor(a)), xp.where(a == 0, -xp.copysign(xp.inf, a), xp.nan), out)
    return out.astype(dtype, copy=False)


def trigamma(a: Any) -> Any:
    """d/da digamma(a) (paddle's polygamma(1, a))."""
    dtype, a = a.dtype, a.astype(np.float64)  # float32 would lose digits to cancellation
    xp = array_module(a)
    with quiet():
        reflect = a < 0.5
        x = xp.where(reflect, 1.0 - a, a)
        acc = xp.zeros_like(x)
        for k in range(_SHIFT):
            acc = acc + 1.0 / ((x + k) * (x + k))
        y = x + _SHIFT
        inv = 1.0 / y
        inv2 = inv * inv
        right = acc + inv + 0.5 * inv2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 / 30)))
        out = xp.where(reflect, (math.pi / xp.sin(math.pi * a)) ** 2 - right, right)
        out = xp.where((a <= 0) & (a == xp.floor(a)), xp.inf, out)  # the poles (sin(pi a) is not 0 there in floats)
    return out.astype(dtype, copy=False)
