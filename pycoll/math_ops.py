"""Elementwise arithmetic and comparisons, unary math and reductions (also Tensor methods).

Broadcasting ops reduce their gradients back to each input's shape.
"""
from __future__ import annotations

import builtins as _builtins
import math
from typing import Any, List, Optional

import numpy as np

from pycoll import shape_ops
from pycoll.device import array_module
from pycoll.tensor import (DTypeLike, Tensor, _axes, _needs, _new, _operand, _tensor, convert_dtype,
                           int64, record)


# ---- elementwise arithmetic ----------------------------------------------------------------

def _data(v: Any) -> Any:
    return v._array if isinstance(v, Tensor) else v


def _unbroadcast(g: Any, shape: tuple) -> Any:
    """Sum `g` over the dimensions that broadcasting added to reach it from `shape`."""
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def add(x: Any, y: Any) -> Tensor:
    x, y = _operand(x), _operand(y)
    rx, ry = _needs(x), _needs(y)
    xs, ys = np.shape(_data(x)), np.shape(_data(y))

    def backward(g: Any) -> tuple:
        return (_unbroadcast(g, xs) if rx else None, _unbroadcast(g, ys) if ry else None)
    return record(_data(x) + _data(y), backward, x, y)


def subtract(x: Any, y: Any) -> Tensor:
    x, y = _operand(x), _operand(y)
    rx, ry = _needs(x), _needs(y)
    xs, ys = np.shape(_data(x)), np.shape(_data(y))

    def backward(g: Any) -> tuple:
        return (_unbroadcast(g, xs) if rx else None, _unbroadcast(-g, ys) if ry else None)
    return record(_data(x) - _data(y), backward, x, y)


def multiply(x: Any, y: Any) -> Tensor:
    x, y = _operand(x), _operand(y)
    xa, ya = _data(x), _data(y)
    rx, ry = _needs(x), _needs(y)

    def backward(g: Any) -> tuple:
        return (_unbroadcast(g * ya, xa.shape) if rx else None,
                _unbroadcast(g * xa, ya.shape) if ry else None)
    return record(xa * ya, backward, x, y)


def divide(x: Any, y: Any) -> Tensor:
    x, y = _operand(x), _operand(y)
    xa, ya = _data(x), _data(y)
    rx, ry = _needs(x), _needs(y)

    def backward(g: Any) -> tuple:
        return (_unbroadcast(g / ya, xa.shape) if rx else None,
                _unbroadcast(-(g * xa) / (ya * ya), ya.shape) if ry else None)
    return record(xa / ya, backward, x, y)


def pow(x: Any, y: Any) -> Tensor:  # noqa: A001 - paddle's name
    """x ** y; either side may be a number."""
    x, y = _operand(x), _operand(y)
    xa, ya = _data(x), _data(y)
    rx, ry = _needs(x), _needs(y)
    out = xa ** ya

    def backward(g: Any) -> tuple:
        gx = _unbroadcast(g * ya * xa ** (ya - 1), xa.shape) if rx else None
        gy = None
        if ry:
            log_x = array_module(g).log(xa) if isinstance(x, Tensor) else math.log(xa)
            gy = _unbroadcast(g * out * log_x, ya.shape)
        return gx, gy
    return record(out, backward, x, y)


def neg(x: Tensor) -> Tensor:
    x = _tensor(x)
    return record(-x._array, lambda g: (-g,), x)


def matmul(x: Any, y: Any, transpose_x: bool = False, transpose_y: bool = False) -> Tensor:
    """Matrix product with NumPy's rules for 1-D and batched operands."""
    x, y = _operand(x), _operand(y)
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError(f"matmul needs tensors or arrays, got {type(x).__name__} and {type(y).__name__}")
    if transpose_x:
        x = shape_ops.transpose(x, _swap_last(x.ndim))
    if transpose_y:
        y = shape_ops.transpose(y, _swap_last(y.ndim))
    xa, ya = x._array, y._array
    rx, ry = _needs(x), _needs(y)
    if xa.ndim == 0 or ya.ndim == 0:
        raise ValueError(f"matmul needs operands of at least 1 dimension, got shapes {x.shape} "
                         f"and {y.shape}")

    def backward(g: Any) -> tuple:
        if xa.ndim == 2 and ya.ndim == 2:
            return (g @ ya.T if rx else None, xa.T @ g if ry else None)
        a = xa if xa.ndim > 1 else xa[None, :]
        b = ya if ya.ndim > 1 else ya[:, None]
        xp = array_module(g)
        if ya.ndim == 1:
            g = g[..., None]
        if xa.ndim == 1:
            g = g[..., None, :]
        gx = _unbroadcast(g @ xp.swapaxes(b, -1, -2), a.shape).reshape(xa.shape) if rx else None
        gy = _unbroadcast(xp.swapaxes(a, -1, -2) @ g, b.shape).reshape(ya.shape) if ry else None
        return gx, gy
    return record(xa @ ya, backward, x, y)


def _swap_last(ndim: int) -> List[int]:
    perm = list(range(ndim))
    if ndim >= 2:
        perm[-1], perm[-2] = perm[-2], perm[-1]
    return perm


def _compare(x: Tensor, other: Any, op: str) -> Any:
    try:
        other = _operand(other)
    except TypeError:
        return NotImplemented
    return _new(getattr(x._array, op)(_data(other)))


# ---- unary math ----------------------------------------------------------------------------

def tanh(x: Tensor) -> Tensor:
    x = _tensor(x)
    out = array_module(x._array).tanh(x._array)
    return record(out, lambda g: (g * (1 - out * out),), x)


def exp(x: Tensor) -> Tensor:
    x = _tensor(x)
    out = array_module(x._array).exp(x._array)
    return record(out, lambda g: (g * out,), x)


def log(x: Tensor) -> Tensor:
    x = _tensor(x)
    a = x._array
    return record(array_module(a).log(a), lambda g: (g / a,), x)


def sqrt(x: Tensor) -> Tensor:
    x = _tensor(x)
    out = array_module(x._array).sqrt(x._array)
    return record(out, lambda g: (g / (2 * out),), x)


def square(x: Tensor) -> Tensor:
    x = _tensor(x)
    a = x._array
    return record(a * a, lambda g: (g * (2 * a),), x)


def abs(x: Tensor) -> Tensor:  # noqa: A001 - paddle's name
    x = _tensor(x)
    a = x._array
    xp = array_module(a)
    return record(xp.abs(a), lambda g: (g * xp.sign(a),), x)


def relu(x: Tensor) -> Tensor:
    x = _tensor(x)
    out = array_module(x._array).maximum(x._array, 0)
    return record(out, lambda g: (g * (out > 0),), x)


def sigmoid(x: Tensor) -> Tensor:
    x = _tensor(x)
    xp = array_module(x._array)
    out = xp.exp(-xp.logaddexp(0, -x._array)).astype(x._array.dtype, copy=False)
    return record(out, lambda g: (g * out * (1 - out),), x)


def clip(x: Tensor, min: Optional[float] = None, max: Optional[float] = None) -> Tensor:  # noqa: A002
    x = _tensor(x)
    """Clamp to [min, max]; the gradient flows where x lies inside the range."""
    if min is None and max is None:
        raise ValueError("clip needs min or max, got neither")
    a = x._array
    xp = array_module(a)

    def backward(g: Any) -> tuple:
        mask = xp.ones(a.shape, dtype=bool)
        if min is not None:
            mask &= a >= min
        if max is not None:
            mask &= a <= max
        return (g * mask,)
    return record(xp.clip(a, min, max), backward, x)


def cast(x: Tensor, dtype: DTypeLike) -> Tensor:
    x = _tensor(x)
    dt = convert_dtype(dtype)
    src = x._array.dtype
    return record(x._array.astype(dt), lambda g: (g.astype(src),), x)


# ---- reductions ----------------------------------------------------------------------------

def _kept_shape(shape: tuple, axes: Optional[tuple]) -> tuple:
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def sum(x: Tensor, axis: Any = None, dtype: DTypeLike = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    x = _tensor(x)
    a = x._array
    axes = _axes(axis, a.ndim)
    shape, kept = a.shape, _kept_shape(a.shape, axes)
    xp = array_module(a)
    out = a.sum(axis=axes, keepdims=keepdim, dtype=convert_dtype(dtype))
    return record(out, lambda g: (xp.broadcast_to(g.reshape(kept), shape),), x)


def mean(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:
    x = _tensor(x)
    a = x._array
    axes = _axes(axis, a.ndim)
    shape, kept = a.shape, _kept_shape(a.shape, axes)
    count = a.size // _builtins.max(int(np.prod(kept)), 1) if a.size else 1
    xp = array_module(a)
    out = a.mean(axis=axes, keepdims=keepdim)
    return record(out, lambda g: (xp.broadcast_to(g.reshape(kept) / count, shape),), x)


def _extreme(x: Tensor, axis: Any, keepdim: bool, reduce: str) -> Tensor:
    x = _tensor(x)
    a = x._array
    axes = _axes(axis, a.ndim)
    kept = _kept_shape(a.shape, axes)
    full = getattr(a, reduce)(axis=axes, keepdims=True)

    def backward(g: Any) -> tuple:
        mask = a == full  # ties share the gradient equally
        return (g.reshape(kept) * mask / mask.sum(axis=axes, keepdims=True, dtype=g.dtype),)
    return record(full if keepdim else full.reshape([n for i, n in enumerate(a.shape)
                                                     if axes is not None and i not in axes]),
                  backward, x)


def max(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    return _extreme(x, axis, keepdim, "max")


def min(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    return _extreme(x, axis, keepdim, "min")


def argmax(x: Tensor, axis: Optional[int] = None, keepdim: bool = False) -> Tensor:
    x = _tensor(x)
    a = x._array
    out = a.argmax(axis=axis)
    if keepdim and axis is not None:
        out = array_module(a).expand_dims(out, axis)
    return _new(out.astype(int64))


# ---- methods ---------------------------------------------------------------------------------

for _name, _fn in {
    "add": add, "subtract": subtract, "multiply": multiply, "divide": divide, "pow": pow,
    "matmul": matmul, "tanh": tanh, "exp": exp, "log": log, "sqrt": sqrt, "square": square,
    "abs": abs, "relu": relu, "sigmoid": sigmoid, "clip": clip, "cast": cast, "astype": cast,
    "sum": sum, "mean": mean, "max": max, "min": min, "argmax": argmax,
}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
