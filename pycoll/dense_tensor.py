"""paddle's ``Tensor.get_tensor()``: the storage behind a tensor, as older paddle code reaches it to
load weights (``param.value().get_tensor().set(array, place)``) or to read them (``np.array(t)``)."""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from pycoll.device import device_place, move, place_of, to_module
from pycoll.tensor import Tensor


class DenseTensor:
    """The storage of one tensor (paddle's ``DenseTensor``): it follows the tensor, and ``set``
    replaces the tensor's values, shape and dtype with a copy of an array, outside autograd as
    paddle's does (a parameter can be loaded this way)."""

    def __init__(self, owner: Tensor):
        self._owner = owner

    def set(self, array: Any, place: Any = None) -> None:
        """The tensor takes a copy of ``array`` (its shape and dtype too) on ``place`` (default:
        where the tensor is)."""
        target = place_of(self._owner._array) if place is None else device_place(place)
        self._owner._array = move(np.array(array), target)
        self._owner._bump_inplace_version()

    def shape(self) -> List[int]:
        return list(self._owner.shape)

    def _dtype(self) -> Any:
        return self._owner.dtype

    def _place(self) -> Any:
        return self._owner.place

    def _numel(self) -> int:
        return int(self._owner._array.size)

    def _is_initialized(self) -> bool:
        return True

    def _layout(self) -> str:
        return "NCHW"

    def lod(self) -> list:
        return []

    def __array__(self, dtype: Optional[Any] = None, copy: Optional[bool] = None) -> np.ndarray:
        """A copy of the values on the host (paddle's ``np.array(t)`` copies too)."""
        return np.array(to_module(self._owner._array, np), dtype=dtype)

    def __str__(self) -> str:
        return (f"  - shape: {self.shape()}\n  - layout: NCHW\n  - place: {self._owner.place}\n"
                f"  - dtype: {self._owner.dtype}\n  - data: {np.array(self).ravel()}")

    __repr__ = __str__


def get_tensor(x: Tensor) -> DenseTensor:
    """x's storage (see ``DenseTensor``)."""
    return DenseTensor(x)
