"""Comparisons, logical and bitwise ops, and the tests on a tensor as a whole (equal_all,
isclose, is_empty, is_floating_point, is_integer, is_complex); also Tensor methods. None of them
takes a gradient.

Comparisons promote their operands as arithmetic does (`pycoll._promotion`) and give bool
tensors; the logical ops read any dtype as truth values; the bitwise ops take bool and integer
tensors only.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Optional

from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._promotion import promoted
from pycoll._tensor_ops import as_tensor, check_broadcast, delivered, operand, paired, placed, value_output
from pycoll.device import array_module, to_module
from pycoll.dtypes import is_bfloat16
from pycoll.tensor import Tensor


def _comparison(fn_name: str, compare: Callable[[Any, Any], Any], doc: str) -> Callable[..., Tensor]:
    def op(x: Any, y: Any, name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
        x, y = paired(as_tensor(x), operand(y))  # auto-parallel: a whole y cut as a split x
        xa, ya = promoted(x, y, fn_name)
        check_broadcast(fn_name, "x", xa.shape, "y", getattr(ya, "shape", ()))  # y: maybe a number
        return delivered(value_output(compare(xa, ya), "compare", x, y), out)
    op.__name__ = op.__qualname__ = fn_name
    op.__doc__ = doc + " elementwise, a bool tensor."
    return param_aliases({"input": "x", "other": "y"})(op)


greater_than = _comparison("greater_than", operator.gt, "x > y")
greater_equal = _comparison("greater_equal", operator.ge, "x >= y")
less_than = _comparison("less_than", operator.lt, "x < y")
less_equal = _comparison("less_equal", operator.le, "x <= y")
not_equal = _comparison("not_equal", operator.ne, "x != y")


def _pair(x: Any, y: Any) -> tuple:
    x, y = paired(as_tensor(x), as_tensor(y))  # auto-parallel: a whole y cut as a split x
    xp = array_module(x._array)
    return x, y, xp, x._array, to_module(y._array, xp)


def _logical(fn_name: str) -> Callable[..., Tensor]:
    def op(x: Any, y: Any, name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
        x, y, xp, xa, ya = _pair(x, y)
        return delivered(value_output(getattr(xp, fn_name)(xa, ya), fn_name, x, y), out)
    op.__name__ = op.__qualname__ = fn_name
    op.__doc__ = f"Elementwise {fn_name.replace('_', ' ')} of x and y read as truth values (non-zero is True)."
    return param_aliases({"input": "x", "other": "y"})(op)


logical_and = _logical("logical_and")
logical_or = _logical("logical_or")
logical_xor = _logical("logical_xor")


@param_aliases({"input": "x"})
def logical_not(x: Any, name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """Elementwise not of x read as truth values (non-zero is True), a bool tensor."""
    x = as_tensor(x)
    return delivered(value_output(array_module(x._array).logical_not(x._array), "logical_not", x), out)


def _bits(t: Tensor, fn_name: str, arg: str) -> None:
    if t.dtype.kind not in "biu":
        raise TypeError(f"{fn_name}: {arg} must be a bool or integer tensor, got dtype {t.dtype}")


def _bitwise(fn_name: str, ufunc: str) -> Callable[..., Tensor]:
    def op(x: Any, y: Any, out: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
        x, y = paired(as_tensor(x), as_tensor(y))  # auto-parallel: a whole y cut as a split x
        _bits(x, fn_name, "x")
        _bits(y, fn_name, "y")
        xa, ya = promoted(x, y, fn_name)
        xp = array_module(xa)
        return delivered(value_output(getattr(xp, ufunc)(xa, to_module(ya, xp)), fn_name, x, y), out)
    op.__name__ = op.__qualname__ = fn_name
    op.__doc__ = f"Elementwise {ufunc.replace('bitwise_', 'bitwise ')} of bool or integer tensors."
    return op


bitwise_and = _bitwise("bitwise_and", "bitwise_and")
bitwise_or = param_aliases({"input": "x", "other": "y"})(_bitwise("bitwise_or", "bitwise_or"))
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor")


def bitwise_not(x: Any, out: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
    """Elementwise bitwise not of a bool or integer tensor (not, for bools)."""
    x = as_tensor(x)
    _bits(x, "bitwise_not", "x")
    return delivered(value_output(array_module(x._array).invert(x._array), "bitwise_not", x), out)


@param_aliases({"input": "x", "other": "y"})
def isclose(x: Any, y: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False,
            name: Optional[str] = None) -> Tensor:
    """|x - y| <= atol + rtol * |y| elementwise, a bool tensor (NaNs equal with ``equal_nan``)."""
    x, y, xp, xa, ya = _pair(x, y)
    xa, ya = promoted(x, y, "isclose")
    with quiet():  # NumPy's |x - y| overflows past the dtype's range (inf, not close), silently as paddle's
        close = xp.isclose(xa, ya, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return value_output(close, "isclose", x, y)


def equal_all(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Whether x and y have the same shape and equal elements, as a 0-d bool tensor."""
    x, y = placed("equal_all", as_tensor(x), as_tensor(y), whole=True)  # auto-parallel: one answer for the whole
    x, y, xp, xa, ya = _pair(x, y)
    same = xa.shape == ya.shape and bool((xa == ya).all())
    return value_output(xp.asarray(same), "equal_all", x, y)


def is_empty(x: Any, name: Optional[str] = None) -> Tensor:
    """Whether x has no elements, as a 0-d bool tensor."""
    x, = placed("is_empty", as_tensor(x), whole=True)  # auto-parallel: a piece may be empty, the whole not
    return value_output(array_module(x._array).asarray(x._array.size == 0), "is_empty", x)


@param_aliases({"input": "x"})
def is_floating_point(x: Tensor) -> bool:
    """Whether x holds floating-point numbers (float16/32/64, bfloat16)."""
    return _tensor(x, "is_floating_point").dtype.kind == "f" or is_bfloat16(x.dtype)


def is_integer(x: Tensor) -> bool:
    """Whether x holds integers (bool does not count)."""
    return _tensor(x, "is_integer").dtype.kind in "iu"


@param_aliases({"input": "x"})
def is_complex(x: Tensor) -> bool:
    """Whether x holds complex numbers."""
    return _tensor(x, "is_complex").dtype.kind == "c"


def _tensor(x: Any, fn_name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn_name}: x must be a Tensor, got {type(x).__name__}")
    return x


for _fn in (greater_than, greater_equal, less_than, less_equal, not_equal, logical_and, logical_or, logical_xor,
            logical_not, bitwise_and, bitwise_or, bitwise_xor, bitwise_not, isclose, equal_all, is_empty,
            is_floating_point, is_integer, is_complex):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
