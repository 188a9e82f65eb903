"""Tensor attributes about the memory behind a tensor, paddle's names: ``data`` (read and
written), ``data_ptr()``, ``strides`` / ``get_strides()`` / ``stride(dim)``, ``persistable`` and
``device``. Strides count elements, as paddle's do (NumPy's and CuPy's count bytes)."""
from __future__ import annotations

from typing import Any, List, Optional, Union

import numpy as np

from pycoll.device import place_of, place_str
from pycoll.nn.parameter import Parameter
from pycoll.shape_ops import axis_arg
from pycoll.tensor import Tensor, wrap


def _get_data(x: Tensor) -> Tensor:
    """A tensor over x's memory, outside the graph (stop_gradient True): writing it writes x."""
    return wrap(x._array)


def _set_data(x: Tensor, value: Tensor) -> None:
    """x takes `value`'s memory (its shape and dtype too); x's stop_gradient and place in the
    graph stay, as paddle's ``x.data = value`` leaves them."""
    if not isinstance(value, Tensor):
        raise TypeError(f"Tensor.data must be set to a Tensor, got {type(value).__name__}")
    x._array = value._array


def data_ptr(x: Tensor) -> int:
    """The address of x's first element (host memory, or device memory for a GPU tensor)."""
    a = x._array
    return int(a.ctypes.data if isinstance(a, np.ndarray) else a.data.ptr)


def get_strides(x: Tensor) -> List[int]:
    """How many elements apart consecutive entries of each dimension lie in memory."""
    a = x._array
    return [s // a.itemsize for s in a.strides] if a.itemsize else [0] * a.ndim


def stride(x: Tensor, dim: Optional[int] = None) -> Union[int, List[int]]:
    """``get_strides()``, or the stride of dimension `dim` alone."""
    strides = get_strides(x)
    return strides if dim is None else strides[axis_arg(dim, x.ndim)]


def _get_persistable(x: Tensor) -> bool:
    return bool(x.__dict__.get("_persistable", isinstance(x, Parameter)))


def _set_persistable(x: Tensor, value: Any) -> None:
    x.__dict__["_persistable"] = bool(value)


Tensor.data = property(_get_data, _set_data, doc=_get_data.__doc__)
Tensor.data_ptr, Tensor.get_strides, Tensor.stride = data_ptr, get_strides, stride
Tensor.strides = property(get_strides, doc=get_strides.__doc__)
Tensor.persistable = property(_get_persistable, _set_persistable,
                              doc="Whether the tensor is kept with a model's variables: True for a Parameter.")
Tensor.device = property(lambda x: place_str(place_of(x._array)), doc="Where x lives: 'cpu' or 'gpu:N'.")
