"""Python's bit operators on Tensors, as paddle has them: ``~x``, ``x & y``, ``x | y``, ``x ^ y``
(bool and integer tensors; on bools they are the logical ops), ``x << y`` and ``x >> y`` (integer
tensors), with a Python int or bool, or a NumPy array, on either side; and the shift ops
``bitwise_left_shift`` / ``bitwise_right_shift`` behind ``<<`` and ``>>`` (also Tensor methods).

A Python number next to a tensor takes the tensor's dtype (paddle's rule: ``3 & int32_tensor`` is
int32, ``1 & bool_tensor`` is bool; one outside the dtype's range wraps into its bits, ``-2 &
uint8_tensor`` reads 254); a float number is refused, and so is a float tensor (the ops
name its dtype). None of these takes a gradient.

The and/or/xor/not ops are `pycoll.logic_ops`', called as the Tensor methods it attaches (when
`import pycoll` imports it): importing logic_ops here would close an import circle, as it imports
`pycoll.unary_ops`, which imports `pycoll.inplace_ops`, which imports this module.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._promotion import promoted
from pycoll._tensor_ops import as_tensor, delivered, paired, value_output
from pycoll.device import array_module, is_array, to_module
from pycoll.tensor import Tensor, wrap

_SYMBOLS = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
            "bitwise_left_shift": "<<", "bitwise_right_shift": ">>"}


def _other_operand(x: Tensor, y: Any, fn_name: str, reflected: bool) -> Any:
    """The Tensor that number or array `y` becomes next to tensor `x`; NotImplemented for
    other objects (Python then tries y's own operator)."""
    if isinstance(y, Tensor):
        return y
    if isinstance(y, np.generic):
        y = y.item()
    xp = array_module(x._array)
    if isinstance(y, (bool, int)):
        try:
            return wrap(xp.asarray(y, dtype=x._array.dtype))
        except OverflowError:  # wrapped into the dtype's bits, as paddle does (-2 & uint8 5 is 4)
            pass
        try:
            return wrap(xp.asarray(y, dtype=np.int64).astype(x._array.dtype))
        except OverflowError:
            raise ValueError(f"{fn_name}: {y} does not fit in 64 bits, nor the tensor's dtype {x.dtype}") from None
    if isinstance(y, float):
        pair = ("float", "Tensor") if reflected else ("Tensor", "float")
        raise TypeError(f"unsupported operand type(s) for {_SYMBOLS[fn_name]}: '{pair[0]}' and '{pair[1]}'")
    if is_array(y):
        return wrap(to_module(y, xp))
    return NotImplemented


def _operator(fn_name: str, reflected: bool) -> Callable[[Tensor, Any], Any]:
    def method(x: Tensor, y: Any) -> Any:
        other = _other_operand(x, y, fn_name, reflected)
        if other is NotImplemented:
            return NotImplemented
        op = _op(fn_name)
        return op(other, x) if reflected else op(x, other)
    method.__name__ = method.__qualname__ = ("__r" if reflected else "__") + _DUNDERS[fn_name] + "__"
    return method


def _op(fn_name: str) -> Callable[..., Tensor]:
    """The op `fn_name`: a shift of this module's, else logic_ops' (see the module docstring)."""
    if fn_name.startswith("bitwise_") and fn_name.endswith("_shift"):
        return globals()[fn_name]
    return getattr(Tensor, fn_name)


def bitwise_invert(x: Tensor, out: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
    """``~x`` (paddle's other name of bitwise_not): logical not of a bool tensor, bitwise not of
    an integer one."""
    return _op("bitwise_not")(x, out)


def _shift(x: Any, y: Any, fn_name: str, left: bool, is_arithmetic: bool, out: Optional[Tensor]) -> Tensor:
    x, y = paired(as_tensor(x), as_tensor(y))  # auto-parallel: a whole y cut as a split x
    for t, arg in ((x, "x"), (y, "y")):
        if t.dtype.kind not in "iu":
            raise TypeError(f"{fn_name}: {arg} must be an integer tensor, got dtype {t.dtype}")
    xa, ya = promoted(x, y, fn_name)
    xp = array_module(xa)
    ya = to_module(ya, xp)
    bits = xa.dtype.itemsize * 8
    beyond = (ya < 0) | (ya >= bits)  # shifted out entirely (paddle's kernels, not C's undefined result)
    count = xp.where(beyond, 0, ya).astype(xa.dtype, copy=False)
    signed = xa.dtype.kind == "i"
    if left:
        result, fill = xp.left_shift(xa, count), 0
    elif is_arithmetic or not signed:
        result = xp.right_shift(xa, count)
        fill = xp.where(xa < 0, -1, 0) if signed else 0  # the sign fills the word
    else:  # a logical shift of a signed tensor: its bits read as unsigned
        unsigned = np.dtype(f"u{xa.dtype.itemsize}")
        result, fill = xp.right_shift(xa.view(unsigned), count.view(unsigned)).view(xa.dtype), 0
    result = xp.where(beyond, fill, result).astype(xa.dtype, copy=False)
    return delivered(value_output(result, fn_name, x, y), out, fn_name)


def bitwise_left_shift(x: Any, y: Any, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                       name: Optional[str] = None) -> Tensor:
    """x shifted left by y bits, elementwise, for integer tensors (a count below 0 or past the
    dtype's width gives 0; `is_arithmetic` makes no difference to a left shift)."""
    return _shift(x, y, "bitwise_left_shift", True, is_arithmetic, out)


def bitwise_right_shift(x: Any, y: Any, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                        name: Optional[str] = None) -> Tensor:
    """x shifted right by y bits, elementwise, for integer tensors: the sign fills in
    (`is_arithmetic`) or zeros do (a logical shift, which reads a signed x's bits as unsigned). A
    count below 0 or past the dtype's width shifts every bit out."""
    return _shift(x, y, "bitwise_right_shift", False, is_arithmetic, out)


_DUNDERS = {"bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
            "bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift"}

for _name in _DUNDERS:
    for _reflected in (False, True):
        _method = _operator(_name, _reflected)
        setattr(Tensor, _method.__name__, _method)
for _method in (bitwise_left_shift, bitwise_right_shift, bitwise_invert):
    setattr(Tensor, _method.__name__, _method)
Tensor.__invert__ = bitwise_invert
Tensor.__or__ = param_aliases({"input": "x", "other": "y"})(Tensor.__or__)  # paddle's is bitwise_or itself
del _name, _reflected, _method
