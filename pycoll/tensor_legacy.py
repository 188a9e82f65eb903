"""paddle.tensor's names found nowhere else in paddle's API (``paddle.tensor.create_array``...,
reached through ``pycoll.tensor_namespace``): the tensor arrays of paddle's dynamic mode, which
are Python lists of Tensors (``create_array``, ``array_write``, ``array_read``,
``array_length``, ``tensor_array_to_tensor``), ``fill_constant`` (``full``, into ``out`` when
given) and ``gaussian_`` (``pycoll.inplace_random``'s)."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll._errors import AssertedArgument
from pycoll.creation import full
from pycoll.inplace_random import gaussian_
from pycoll.shape_ops import concat, stack
from pycoll.tensor import Tensor, to_tensor

__all__ = ["array_length", "array_read", "array_write", "create_array", "fill_constant", "gaussian_",
           "tensor_array_to_tensor"]


def create_array(dtype: Any, initialized_list: Optional[Sequence[Tensor]] = None) -> List[Tensor]:
    """A tensor array: a list, holding ``initialized_list``'s Tensors (``dtype`` is paddle's
    static-mode type of the array, kept by nothing here)."""
    if initialized_list is None:
        return []
    if not isinstance(initialized_list, (list, tuple)):
        raise TypeError(f"create_array: initialized_list must be a list or tuple of Tensors, got "
                        f"{type(initialized_list).__name__}")
    for k, item in enumerate(initialized_list):
        if not isinstance(item, Tensor):
            raise TypeError(f"create_array: initialized_list[{k}] must be a Tensor, got {type(item).__name__}")
    return list(initialized_list)


def _index(i: Any, fn: str) -> int:
    """paddle's index of a tensor array: a Tensor of shape [1] (an int is taken too)."""
    if isinstance(i, Tensor):
        if i.shape != [1]:
            raise ValueError(f"{fn}: i must be a Tensor of shape [1], got shape {i.shape}")
        return int(i.item())
    if isinstance(i, bool) or not isinstance(i, int):
        raise TypeError(f"{fn}: i must be a Tensor of shape [1], got {type(i).__name__}")
    return i


def array_write(x: Tensor, i: Any, array: Optional[List[Tensor]] = None) -> List[Tensor]:
    """``array`` (a new one when None) with ``x`` at position ``i``: replacing what is there, or
    appended where ``i`` is the array's length; returns the array."""
    if not isinstance(x, Tensor):
        raise TypeError(f"array_write: x must be a Tensor, got {type(x).__name__}")
    array = [] if array is None else array
    if not isinstance(array, list):
        raise TypeError(f"array_write: array must be a list (a tensor array), got {type(array).__name__}")
    at = _index(i, "array_write")
    if not 0 <= at <= len(array):
        raise ValueError(f"array_write: i={at} must be in [0, {len(array)}] (the array's length appends)")
    if at < len(array):
        array[at] = x
    else:
        array.append(x)
    return array


def array_read(array: List[Tensor], i: Any) -> Tensor:
    """The Tensor at position ``i`` of ``array``."""
    if not isinstance(array, list):
        raise TypeError(f"array_read: array must be a list (a tensor array), got {type(array).__name__}")
    at = _index(i, "array_read")
    if not -len(array) <= at < len(array):
        raise IndexError(f"array_read: i={at} is outside the array of length {len(array)}")
    return array[at]


def array_length(array: List[Tensor]) -> int:
    """How many Tensors ``array`` holds (an int, as paddle's dynamic mode gives it)."""
    if not isinstance(array, list):
        raise TypeError(f"array_length: array must be a list (a tensor array), got {type(array).__name__}")
    return len(array)


def tensor_array_to_tensor(input: List[Tensor], axis: int = 1, use_stack: bool = False,  # noqa: A002 - paddle's
                           name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """The tensor array ``input`` joined along ``axis`` (``concat``, or ``stack`` with
    ``use_stack``; the gradient flows back to each tensor), and an int64 tensor of each input's
    size along ``axis``, as paddle's dynamic mode gives them."""
    if not isinstance(input, list):
        raise AssertedArgument(f"tensor_array_to_tensor: input must be a list (a tensor array), got "
                               f"{type(input).__name__}")
    for k, item in enumerate(input):
        if not isinstance(item, Tensor):
            raise TypeError(f"tensor_array_to_tensor: input[{k}] must be a Tensor, got {type(item).__name__}")
    joined = (stack if use_stack else concat)(input, axis=axis)
    sizes = []
    for k, item in enumerate(input):
        if not -item.ndim <= axis < item.ndim:  # stack's new last axis: paddle's IndexError too
            raise IndexError(f"tensor_array_to_tensor: input[{k}] has {item.ndim} dimensions, so no size along "
                             f"axis={axis}")
        sizes.append(item.shape[axis])
    return joined, to_tensor(np.array(sizes, dtype=np.int64))


def fill_constant(shape: Any, dtype: Any, value: Any, force_cpu: bool = False, out: Optional[Tensor] = None,
                  place: Any = None, name: Optional[str] = None) -> Tensor:
    """A tensor of ``shape`` and ``dtype`` full of ``value`` (``full``); into ``out`` when given."""
    made = full(shape, value, dtype)
    if out is None:
        return made
    out.set_value(made)
    return out
