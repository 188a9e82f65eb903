"""paddle's legacy typed tensor names (``paddle.FloatTensor``, ``paddle.device.LongTensor``, ...).

In paddle 3.3 they are no tensor types (``isinstance(x, FloatTensor)`` is False) but factories of
the dtype: ``FloatTensor()`` an empty tensor, ``FloatTensor([1, 2])`` that data, ``FloatTensor(2, 3)``
an uninitialised tensor of that shape, anything else ``Tensor(*args, dtype=..., **kwargs)``.
"""
from __future__ import annotations

from typing import Any

from pycoll.creation import empty
from pycoll.tensor import Tensor, to_tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
           "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


def _factory(name: str, dtype: str) -> type:
    def __new__(cls: type, *args: Any, **kwargs: Any) -> Tensor:
        if not args:
            return empty([0], dtype=dtype)
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            return to_tensor(args[0], dtype=dtype)
        if all(isinstance(arg, int) for arg in args):
            return empty(list(args), dtype=dtype)
        kwargs.setdefault("dtype", dtype)
        return Tensor(*args, **kwargs)

    return type(name, (), {"__new__": __new__, "__doc__": f"Makes {dtype} tensors (paddle's {name}).",
                           "__module__": __name__})


FloatTensor = _factory("FloatTensor", "float32")
DoubleTensor = _factory("DoubleTensor", "float64")
HalfTensor = _factory("HalfTensor", "float16")
BFloat16Tensor = _factory("BFloat16Tensor", "bfloat16")
ByteTensor = _factory("ByteTensor", "uint8")
CharTensor = _factory("CharTensor", "int8")
ShortTensor = _factory("ShortTensor", "int16")
IntTensor = _factory("IntTensor", "int32")
LongTensor = _factory("LongTensor", "int64")
BoolTensor = _factory("BoolTensor", "bool")
