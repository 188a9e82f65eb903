"""Elementwise activations beyond relu/tanh/sigmoid/gelu: leaky_relu, silu, elu, softplus and
hardswish, each one op with paddle's values and gradients (including at the kinks: leaky_relu's
gradient at 0 is 1, elu's is alpha, hardswish's is 0 at -3 and 1 at 3)."""
from __future__ import annotations

from typing import Any, Optional

from pycoll._tensor_ops import as_tensor, op_output
from pycoll.device import array_module
from pycoll.tensor import Tensor

__all__ = ["leaky_relu", "silu", "elu", "softplus", "hardswish"]


def _sigmoid(xp: Any, a: Any) -> Any:
    return xp.exp(-xp.logaddexp(0, -a))  # no overflow for large |a|


def _number(fn: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")
    return float(value)


def leaky_relu(x: Tensor, negative_slope: float = 0.01, name: Optional[str] = None) -> Tensor:
    """x where x >= 0, negative_slope * x below."""
    slope = _number("leaky_relu", "negative_slope", negative_slope)
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    nonneg = a >= 0
    out = xp.where(nonneg, a, a * slope).astype(a.dtype, copy=False)
    return op_output(out, lambda g: (xp.where(nonneg, g, g * slope),), x)


def silu(x: Tensor, inplace: bool = False, name: Optional[str] = None) -> Tensor:
    """x * sigmoid(x). `inplace` is accepted for paddle compatibility; the result is new."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    s = _sigmoid(xp, a)
    out = (a * s).astype(a.dtype, copy=False)
    return op_output(out, lambda g: (g * (s * (1 + a * (1 - s))).astype(a.dtype, copy=False),), x)


def elu(x: Tensor, alpha: float = 1.0, name: Optional[str] = None) -> Tensor:
    """x where x > 0, alpha * (exp(x) - 1) elsewhere."""
    alpha = _number("elu", "alpha", alpha)
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    pos = a > 0
    e = xp.exp(xp.minimum(a, 0))
    out = xp.where(pos, a, alpha * (e - 1)).astype(a.dtype, copy=False)
    return op_output(out, lambda g: (g * xp.where(pos, 1, alpha * e).astype(a.dtype, copy=False),), x)


def softplus(x: Tensor, beta: float = 1, threshold: float = 20, name: Optional[str] = None) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    beta = _number("softplus", "beta", beta)
    threshold = _number("softplus", "threshold", threshold)
    if beta == 0:
        raise ValueError("softplus: beta must not be 0")
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    bx = a * beta
    linear = bx > threshold
    out = xp.where(linear, a, xp.log1p(xp.exp(xp.minimum(bx, threshold))) / beta)
    slope = xp.where(linear, 1, _sigmoid(xp, bx)).astype(a.dtype, copy=False)
    return op_output(out.astype(a.dtype, copy=False), lambda g: (g * slope,), x)


def hardswish(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x * relu6(x + 3) / 6."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    out = (a * xp.clip(a + 3, 0, 6) / 6).astype(a.dtype, copy=False)
    slope = xp.where(a < 3, xp.where(a > -3, (2 * a + 3) / 6, 0), 1).astype(a.dtype, copy=False)
    return op_output(out, lambda g: (g * slope,), x)
