"""Converting a layer's tensors in place (paddle's Layer.to / astype / float / double): every
parameter and buffer keeps its identity (optimizers and state_dicts that hold it still see it)
and gets a new array of the asked dtype and place; a parameter's gradient goes along."""
from __future__ import annotations

from typing import Any, Iterable, Optional

import numpy as np

from pycoll.device import move, parse_place
from pycoll.dtypes import DTypeLike, convert_dtype, is_floating
from pycoll.tensor import Tensor

# what paddle's Layer.astype accepts as a dtype name
ASTYPE_DTYPES = ("bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
                 "uint8", "complex64", "complex128", "bool")


def check_dtype_name(dtype: Any) -> np.dtype:
    """dtype (a name from ASTYPE_DTYPES or a numpy dtype) as a numpy dtype; ValueError otherwise."""
    if isinstance(dtype, np.dtype) or (isinstance(dtype, str) and dtype in ASTYPE_DTYPES):
        try:
            return np.dtype(dtype)
        except TypeError:  # bfloat16: NumPy has none
            pass
    raise ValueError(f"dtype must be one of {', '.join(ASTYPE_DTYPES[1:])} or a numpy dtype, got {dtype!r}")


def parse_device(device: Any) -> Any:
    """A pycoll place from 'cpu', 'gpu', 'gpu:N' or a place object; ValueError otherwise."""
    try:
        return parse_place(device)
    except TypeError:
        raise ValueError(f"device must be a str like 'cpu' or 'gpu:0', or a place, got "
                         f"{type(device).__name__}") from None


def _convert_array(array: Any, dtype: Optional[np.dtype], place: Any) -> Any:
    if dtype is not None and array.dtype != dtype:
        array = array.astype(dtype)
    return move(array, place) if place is not None else array


def convert_tensor(t: Tensor, dtype: Optional[np.dtype], place: Any) -> None:
    """Swap t's array (and its gradient's) for one of `dtype` on `place` (None: unchanged)."""
    t._array = _convert_array(t._array, dtype, place)
    if t._grad is not None:
        t._grad._array = _convert_array(t._grad._array, dtype, place)


def convert_layers(layers: Iterable[Any], dtype: DTypeLike = None, place: Any = None,
                   floating_only: bool = False, buffers: bool = True) -> None:
    """Convert each layer's own parameters (and buffers, unless buffers=False); floating_only
    leaves integer and bool tensors as they are. A floating dtype becomes each layer's default
    for the parameters it creates later."""
    dt = convert_dtype(dtype)
    for layer in layers:
        own = list(layer._parameters.values()) + (list(layer._buffers.values()) if buffers else [])
        for t in own:
            if t is None or (floating_only and not (is_floating(t._array.dtype) or t._array.dtype.kind == "c")):
                continue
            convert_tensor(t, dt, place)
        if dt is not None and is_floating(dt):
            object.__setattr__(layer, "_dtype", dt)
