"""Elementwise activations beyond relu/tanh/sigmoid/gelu (leaky_relu, rrelu (random slopes; a
composite), silu/swish, elu, softplus,
hardswish, relu6, mish, softsign, tanhshrink, log_sigmoid, hardsigmoid, hardshrink, softshrink,
hardtanh, thresholded_relu, celu, selu), each one op with paddle's values and gradients, including
at the kinks (leaky_relu's gradient at 0 is 1, elu's is alpha, hardswish's is 0 at -3 and 1 at 3,
selu's at 0 is scale * alpha, hardshrink keeps x at |x| == threshold, the clipping ones' are 0
at their bounds), and softmax and log_softmax along an axis. Their forward arithmetic runs with
NumPy's floating-point warnings off (pycoll._fp_quiet): inf and NaN inputs or parameters give
inf/NaN silently, as paddle's; the backward walk is silent already."""
from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np

from pycoll._fp_quiet import SILENT, quiet, restore, silence
from pycoll._param_aliases import param_aliases
from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, normalize_axes, op_output, paired, placed, require_floating
from pycoll.device import array_module, move, place_of
from pycoll.dtypes import DTypeLike
from pycoll.math_ops import cast, sigmoid_array
from pycoll.inplace_ops import in_place
from pycoll.random import get_rng
from pycoll.search_ops import where
from pycoll.tensor import Tensor, wrap

__all__ = ["leaky_relu", "rrelu", "silu", "elu", "softplus", "hardswish", "relu6", "swish", "mish", "softsign",
           "tanhshrink", "log_sigmoid", "logsigmoid", "hardsigmoid", "hardshrink", "softshrink", "hardtanh",
           "thresholded_relu", "celu", "selu"]


def _sigmoid(xp: Any, a: Any) -> Any:
    """sigmoid of an array, or of a Tensor inside a create_graph rule (its namespace has no divide
    of arrays: exp(-logaddexp(0, -a)), which does not overflow)."""
    return xp.exp(-xp.logaddexp(0, -a)) if isinstance(a, Tensor) else sigmoid_array(xp, a)


def _number(fn: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")
    return float(value)


def leaky_relu(x: Tensor, negative_slope: float = 0.01, name: Optional[str] = None) -> Tensor:
    """x where x >= 0, negative_slope * x below; the gradient 0 at NaN, as paddle's."""
    slope = _number("leaky_relu", "negative_slope", negative_slope)
    x = require_floating(as_tensor(x), "leaky_relu")  # paddle refuses integers (they would truncate)
    a = x._array
    xp = array_module(a)
    nonneg, below = a >= 0, a < 0  # NaN is neither
    saved = silence(SILENT)
    try:
        out = xp.where(nonneg, a, a * slope).astype(a.dtype, copy=False)
    finally:
        restore(saved)
    return op_output(out, lambda g: (xp.where(nonneg, g, xp.where(below, g * slope, 0)),), x)


def rrelu(x: Tensor, lower: float = 0.125, upper: float = 1.0 / 3.0, training: bool = True,
          name: Optional[str] = None) -> Tensor:
    """Randomized leaky relu: x where x >= 0, slope * x below, the slope drawn per element from
    U(lower, upper) while training (pycoll's generator, ``pycoll.seed``) and (lower + upper) / 2
    otherwise; 0 <= lower <= upper <= 1. A product with a constant, so differentiable to any order."""
    lower, upper = _number("rrelu", "lower", lower), _number("rrelu", "upper", upper)
    if not 0.0 <= lower <= 1.0:
        raise ValueError(f"rrelu: lower must be in [0, 1], got {lower}")
    if not 0.0 <= upper <= 1.0:
        raise ValueError(f"rrelu: upper must be in [0, 1], got {upper}")
    if upper < lower:
        raise ValueError(f"rrelu: upper must be >= lower, got lower={lower}, upper={upper}")
    if not training:
        return leaky_relu(x, (lower + upper) / 2.0)
    x = require_floating(as_tensor(x), "rrelu")
    a = x._array
    drawn = move(np.asarray(lower + (upper - lower) * get_rng().random(tuple(x.shape)), a.dtype), place_of(a))
    slopes = paired(x, wrap(drawn))[1]  # auto-parallel: this rank's piece of the whole draw, laid as x
    return x * where(x >= 0, wrap(array_module(a).ones((), a.dtype)), slopes)


@param_aliases({"input": "x"})
def silu(x: Tensor, inplace: bool = False, name: Optional[str] = None) -> Tensor:
    """x * sigmoid(x); with `inplace` x takes the result and is returned (paddle's in-place rules,
    see pycoll.inplace_ops)."""
    if inplace:
        return in_place(x, "silu", lambda: silu(x))
    x = require_floating(as_tensor(x), "silu")
    a = x._array
    xp = array_module(a)
    saved = silence(SILENT)
    try:
        s = _sigmoid(xp, a)
        out = (a * s).astype(a.dtype, copy=False)
    finally:
        restore(saved)
    return op_output(out, lambda g: (g * (s * (1 + a * (1 - s))).astype(a.dtype, copy=False),), x)


def elu(x: Tensor, alpha: float = 1.0, name: Optional[str] = None) -> Tensor:
    """x where x > 0, alpha * (exp(x) - 1) elsewhere."""
    alpha = _number("elu", "alpha", alpha)
    x = require_floating(as_tensor(x), "elu")
    a = x._array
    xp = array_module(a)
    pos = a > 0
    saved = silence(SILENT)
    try:
        e = xp.exp(xp.minimum(a, 0))
        out = xp.where(pos, a, alpha * (e - 1)).astype(a.dtype, copy=False)
    finally:
        restore(saved)
    return op_output(out, lambda g: (g * xp.where(pos, 1, alpha * e).astype(a.dtype, copy=False),), x)


@param_aliases({"input": "x"})
def softplus(x: Tensor, beta: float = 1, threshold: float = 20, name: Optional[str] = None) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    beta = _number("softplus", "beta", beta)
    threshold = _number("softplus", "threshold", threshold)
    if beta == 0:
        raise ValueError("softplus: beta must not be 0")
    x = require_floating(as_tensor(x), "softplus")
    a = x._array
    xp = array_module(a)
    saved = silence(SILENT)
    try:
        bx = a * beta
        out = xp.where(bx > threshold, a, xp.log1p(xp.exp(xp.minimum(bx, threshold))) / beta)
    finally:
        restore(saved)

    def backward(g: Any) -> tuple:
        bx = a * beta
        return (g * xp.where(bx > threshold, 1, _sigmoid(xp, bx)).astype(a.dtype, copy=False),)
    return op_output(out.astype(a.dtype, copy=False), backward, x)


def hardswish(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _pointwise(x, lambda xp, a: a * xp.clip(a + 3, 0, 6) / 6,
                      lambda xp, a: xp.where(a < 3, xp.where(a > -3, (2 * a + 3) / 6, 0.0), 1.0))


def _pointwise(x: Tensor, fn: Any, derivative: Any = None) -> Tensor:
    """An elementwise op. A piecewise-linear one gives ``fn(xp, a) -> (out, slope)`` and its
    backward keeps the slope, g * slope (a constant: all its create_graph rule needs). A smooth one
    gives ``fn(xp, a) -> out`` and ``derivative(xp, a) -> slope``: its backward keeps the input
    instead (no more memory) and computes the slope when it runs, and its create_graph rule
    (`pycoll._higher_order.rules_extra`) runs the same `derivative` on Tensors, so it can be
    differentiated again. `derivative` may call only xp.exp, tanh, log1p, abs, minimum, logaddexp
    and where (with float numbers)."""
    x = as_tensor(x)
    a = x._array
    if a.dtype.kind in "biu":  # named by the activation that called (relu6, hardswish, ...)
        raise TypeError(f"{sys._getframe(1).f_code.co_name}: x must hold floating-point numbers, got dtype "
                        f"{a.dtype}")
    xp = array_module(a)
    saved = silence(SILENT)
    try:
        if derivative is None:
            out, slope = fn(xp, a)
            slope = slope.astype(a.dtype, copy=False)
        else:
            out = fn(xp, a)
    finally:
        restore(saved)
    if derivative is None:
        def backward(g: Any) -> tuple:
            return (g * slope,)
    else:

        def backward(g: Any) -> tuple:
            return (g * derivative(xp, a).astype(a.dtype, copy=False),)
    # named after the op (relu6's fn is 'relu6.<locals>.<lambda>'): errors and create_graph rules name it
    backward.__qualname__ = fn.__qualname__.split(".<locals>")[0] + ".<locals>.backward"
    return op_output(out.astype(a.dtype, copy=False), backward, x)


def relu6(x: Tensor, name: Optional[str] = None) -> Tensor:
    """min(max(x, 0), 6); the gradient is 1 strictly between 0 and 6."""
    return _pointwise(x, lambda xp, a: (xp.clip(a, 0, 6), (a > 0) & (a < 6)))


def swish(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x * sigmoid(x) (paddle's swish has no beta: it is silu)."""
    return silu(x)


def mish(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x * tanh(softplus(x)), softplus taken as x above 20 (paddle's threshold)."""
    def tanh_softplus(xp: Any, a: Any) -> Any:
        return xp.tanh(xp.where(a > 20, a, xp.log1p(xp.exp(xp.minimum(a, 20)))))

    def derivative(xp: Any, a: Any) -> Any:
        t = tanh_softplus(xp, a)
        return t + a * (1 - t * t) * _sigmoid(xp, a)
    return _pointwise(x, lambda xp, a: a * tanh_softplus(xp, a), derivative)


def softsign(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x / (1 + |x|)."""
    def derivative(xp: Any, a: Any) -> Any:
        d = 1 + xp.abs(a)
        return 1 / (d * d)
    return _pointwise(x, lambda xp, a: a / (1 + xp.abs(a)), derivative)


def tanhshrink(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x - tanh(x)."""
    def derivative(xp: Any, a: Any) -> Any:
        t = xp.tanh(a)
        return t * t
    return _pointwise(x, lambda xp, a: a - xp.tanh(a), derivative)


@param_aliases({"input": "x"})
def log_sigmoid(x: Tensor, name: Optional[str] = None) -> Tensor:
    """log(sigmoid(x)) = -log(1 + exp(-x)), without overflow: min(x, 0) - log1p(exp(-|x|)) (NumPy's
    logaddexp, the same value, takes 7x as long)."""
    return _pointwise(x, lambda xp, a: xp.minimum(a, 0) - xp.log1p(xp.exp(-xp.abs(a))),
                      lambda xp, a: _sigmoid(xp, -a))


logsigmoid = log_sigmoid


def hardsigmoid(x: Tensor, slope: float = 0.1666667, offset: float = 0.5, name: Optional[str] = None) -> Tensor:
    """clip(slope * x + offset, 0, 1); the gradient is slope where that lies strictly inside (0, 1)."""
    slope = _number("hardsigmoid", "slope", slope)
    offset = _number("hardsigmoid", "offset", offset)

    def f(xp: Any, a: Any) -> tuple:
        v = a * slope + offset
        return xp.clip(v, 0, 1), ((v > 0) & (v < 1)) * slope
    return _pointwise(x, f)


@param_aliases({"input": "x", "lambd": "threshold"})
def hardshrink(x: Tensor, threshold: float = 0.5, name: Optional[str] = None) -> Tensor:
    """0 where -threshold < x < threshold, x elsewhere (x itself at |x| == threshold, as paddle's)."""
    t = _number("hardshrink", "threshold", threshold)

    def f(xp: Any, a: Any) -> tuple:  # NaN kept, with no gradient, as paddle's
        return xp.where((a > -t) & (a < t), 0, a), (a <= -t) | (a >= t)
    return _pointwise(x, f)


@param_aliases({"input": "x", "lambd": "threshold"})
def softshrink(x: Tensor, threshold: float = 0.5, name: Optional[str] = None) -> Tensor:
    """x - threshold above threshold, x + threshold below -threshold, 0 between (threshold >= 0)."""
    t = _number("softshrink", "threshold", threshold)
    if t < 0:
        raise ValueError(f"softshrink: threshold must be >= 0, got {threshold}")
    def f(xp: Any, a: Any) -> tuple:  # NaN stays NaN, with no gradient, as paddle's
        return xp.where((a >= -t) & (a <= t), 0, a - xp.copysign(a.dtype.type(t), a)), (a < -t) | (a > t)
    return _pointwise(x, f)


def hardtanh(x: Tensor, min: float = -1.0, max: float = 1.0, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """clip(x, min, max); the gradient is 1 strictly between them."""
    lo, hi = _number("hardtanh", "min", min), _number("hardtanh", "max", max)
    return _pointwise(x, lambda xp, a: (xp.clip(a, lo, hi), (a > lo) & (a < hi)))


def thresholded_relu(x: Tensor, threshold: float = 1.0, value: float = 0.0, name: Optional[str] = None) -> Tensor:
    """x where x > threshold, else `value` (NaN stays NaN, as paddle's)."""
    t = _number("thresholded_relu", "threshold", threshold)
    v = _number("thresholded_relu", "value", value)
    return _pointwise(x, lambda xp, a: (xp.where(a <= t, v, a), a > t))  # NaN: no gradient, as paddle's


def celu(x: Tensor, alpha: float = 1.0, name: Optional[str] = None) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha must not be 0."""
    alpha = _number("celu", "alpha", alpha)
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0")

    def value(xp: Any, a: Any) -> Any:
        return xp.maximum(a, 0) + xp.minimum(alpha * (xp.exp(xp.minimum(a, 0) / alpha) - 1), 0)
    return _pointwise(x, value, lambda xp, a: xp.where(a > 0, 1.0, xp.exp(xp.minimum(a, 0) / alpha)))


def selu(x: Tensor, scale: float = 1.0507009873554805, alpha: float = 1.6732632423543772,
         name: Optional[str] = None) -> Tensor:
    """scale * (x where x > 0, else alpha * (exp(x) - 1)); scale > 1 and alpha >= 0, as paddle
    requires."""
    scale = _number("selu", "scale", scale)
    alpha = _number("selu", "alpha", alpha)
    if scale <= 1.0:
        raise ValueError(f"selu: scale must be > 1.0, got {scale}")
    if alpha < 0:
        raise ValueError(f"selu: alpha must be >= 0, got {alpha}")

    def value(xp: Any, a: Any) -> Any:
        return scale * xp.where(a > 0, a, alpha * xp.exp(xp.minimum(a, 0)) - alpha)
    return _pointwise(x, value, lambda xp, a: scale * xp.where(a > 0, 1.0, alpha * xp.exp(xp.minimum(a, 0))))


def _less_max(a: Any, axis: int) -> Any:
    """``a`` minus its maximum along ``axis`` (the stable exponent); an x of no elements stays as it
    is (no maximum to take: paddle gives the empty result). A row of -inf only (attention masked
    everywhere) gives NaN, silently as paddle's."""
    if not a.size:
        return a
    with quiet():
        return a - a.max(axis=axis, keepdims=True)


@param_aliases({"input": "x", "dim": "axis"})
@accumulates_in_float32
def softmax(x: Tensor, axis: int = -1, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `axis`, of x cast to `dtype` first when given (paddle's)."""
    x = as_tensor(x) if dtype is None else cast(x, dtype)
    x, = placed("softmax", x, axes=normalize_axes(axis, x.ndim))  # auto-parallel: a split axis made whole
    a = require_floating(x, "softmax", complex_ok=True)._array
    e = array_module(a).exp(_less_max(a, axis))
    out = e / e.sum(axis=axis, keepdims=True)
    return op_output(out, lambda g: (out * (g - (g * out).sum(axis=axis, keepdims=True)),), x)


@accumulates_in_float32
def log_softmax(x: Tensor, axis: int = -1, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """log(softmax(x)) along `axis`, of x cast to `dtype` first when given (paddle's)."""
    x = as_tensor(x) if dtype is None else cast(x, dtype)
    x, = placed("log_softmax", x, axes=normalize_axes(axis, x.ndim))  # auto-parallel: a split axis made whole
    a = require_floating(x, "log_softmax", complex_ok=True)._array
    xp = array_module(a)
    shifted = _less_max(a, axis)
    with quiet():  # along an empty axis: log(0), for no element
        out = shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))
    return op_output(out, lambda g: (g - xp.exp(out) * g.sum(axis=axis, keepdims=True),), x)
