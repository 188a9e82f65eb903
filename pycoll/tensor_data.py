"""The array a new Tensor holds: `array_from` (``to_tensor``'s conversion of numbers, nested
lists, arrays, DLPack objects and Tensors) and `constructor_array` (what the ``Tensor(...)``
constructor takes: paddle's data forms and its torch-style ``Tensor(2, 3)``).

A Tensor is recognised by pycoll's array protocol (``__pycoll_array__``), so this module does not
import `pycoll.tensor`, which imports it.
"""
from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from pycoll.device import current_place, import_cupy, is_array, move, parse_place
from pycoll.dtypes import DTypeLike, convert_dtype, default_float, is_floating


def _target(place: Any) -> Tuple[str, int]:
    """Where a new tensor's array goes: `place` parsed; paddle's ``CUDAPinnedPlace()`` is host
    memory here (pycoll has no page-locked place: ``Tensor.pin_memory()`` gives a host tensor
    too), where paddle's CUDA build makes a pinned tensor."""
    from pycoll.device.other_places import CUDAPinnedPlace

    return ("cpu", 0) if isinstance(place, CUDAPinnedPlace) else parse_place(place)


def array_from(data: Any, dtype: DTypeLike = None, place: Any = None, copy: bool = False) -> Any:
    """`data` as an array of `dtype` on `place` (default: the current device); Python floats take
    the default dtype (float32), as in paddle. Where `data` already is a writeable array (or a
    Tensor, or a DLPack / CUDA array interface exporter) of that dtype there, it is that memory
    unless ``copy`` asks for memory of its own (`writeable`: a read-only one is copied anyway)."""
    dt = convert_dtype(dtype)
    target = current_place() if place is None else _target(place)
    borrowed = True  # the caller's memory, until a conversion below makes new
    own = getattr(type(data), "__pycoll_array__", None)
    if own is not None:
        arr = own(data)
    elif is_array(data):
        arr = _numbers(data, data)
    elif hasattr(data, "__cuda_array_interface__"):
        arr = import_cupy().asarray(data)
    elif hasattr(data, "__dlpack__") and not isinstance(data, np.generic):
        if data.__dlpack_device__()[0] == 1:  # kDLCPU
            arr = np.from_dlpack(data)
        else:
            arr = import_cupy().from_dlpack(data)
    else:
        borrowed = False  # numbers, nested lists: NumPy builds a new array
        data, holds_tensors = _tensors_as_arrays(data)
        arr = _numbers(np.asarray(data), data)
        if dt is None and not holds_tensors and not isinstance(data, np.generic):  # Python numbers: paddle's default dtypes
            if is_floating(arr.dtype):  # NumPy floats in a list too (float16, float64: float32)
                dt = default_float()
            elif arr.dtype == np.int32:  # a list of np.int32 is int64 (int8, int16, uint8 stay)
                dt = np.dtype(np.int64)
            elif arr.dtype == np.complex128:  # complex64 unless the default is float64 (paddle's)
                dt = arr.dtype if default_float() == np.float64 else np.dtype(np.complex64)
    placed_arr = move(arr, target)
    borrowed = borrowed and placed_arr is arr
    arr = placed_arr
    if dt is not None and arr.dtype != dt:
        arr, borrowed = arr.astype(dt), False
    made = writeable(arr)
    return made.copy() if copy and borrowed and made is arr else made


def _numbers(arr: Any, data: Any) -> Any:
    """``arr``, made from ``data``, unless it holds something other than numbers of a tensor
    dtype: objects (ragged lists), strings, or NumPy's extended-precision floats (which paddle
    refuses too; a TypeError, where they would fail later in some op)."""
    if (arr.dtype.kind not in "biufc" and not is_floating(arr.dtype)) or arr.dtype.itemsize > 16 or (
            arr.dtype.kind == "f" and arr.dtype.itemsize > 8):
        raise TypeError(f"data must be numbers (nested lists of them, arrays or Tensors) of a tensor dtype, got "
                        f"{type(data).__name__} of dtype {arr.dtype}" + (" (cast it to float64 first)"
                                                                         if arr.dtype.kind in "fc" else ""))
    return arr


def _tensors_as_arrays(data: Any) -> Tuple[Any, bool]:
    """``data`` (numbers, nested lists) with each Tensor in it as its host array, and whether it
    held Tensors: a list of Tensors keeps their dtypes, NumPy's promotion of them, as paddle's
    ``to_tensor([t1, t2])`` does (float64 tensors stay float64, bfloat16 ones bfloat16). Only a
    list whose first leaf is a Tensor is walked: a long list of numbers costs nothing more."""
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    if getattr(type(first), "__pycoll_array__", None) is None or first is data:
        return data, False
    leaves: list = []
    data = _host_leaves(data, leaves)
    halves = {a.dtype for a in leaves if a.dtype.itemsize == 2 and is_floating(a.dtype)}
    if len(halves) > 1:  # float16 with bfloat16: float32, as paddle's (NumPy knows no common dtype)
        data = _host_leaves(data, [], np.dtype(np.float32))
    return data, True


def _host_leaves(data: Any, leaves: list, half_to: Any = None) -> Any:
    """``data`` with each Tensor (or, with ``half_to``, each 16-bit float array) in it as a host
    array (in ``half_to``), each noted in ``leaves``."""
    own = getattr(type(data), "__pycoll_array__", None)
    if own is not None:
        data = move(own(data), ("cpu", 0))
    if isinstance(data, np.ndarray):
        if half_to is not None and data.dtype.itemsize == 2 and is_floating(data.dtype):
            data = data.astype(half_to)
        leaves.append(data)
        return data
    return [_host_leaves(item, leaves, half_to) for item in data] if isinstance(data, (list, tuple)) else data


def writeable(arr: Any) -> Any:
    """`arr` itself, or a C-contiguous copy where it is read-only (``np.frombuffer`` of bytes,
    ``np.broadcast_to``, a read-only DLPack export): a tensor's memory takes in-place ops and
    collectives, as paddle's does (its constructors copy); pycoll shares writeable arrays only.
    CuPy arrays have no read-only flag."""
    return arr if getattr(arr.flags, "writeable", True) else arr.copy()


_PARAMS = ("data", "dtype", "place", "stop_gradient")
# paddle's other keywords for Tensor(value, place, persistable, zero_copy, name, stop_gradient)
_EXTRAS = ("persistable", "zero_copy", "name")


def constructor_array(args: tuple, kwargs: Dict[str, Any]) -> Tuple[Any, bool, Dict[str, Any]]:
    """The array, stop_gradient and the other keywords (``persistable``, ``name``) of
    ``Tensor(*args, **kwargs)``, paddle 3.3's forms:

    - ``Tensor(data, dtype=None, place=None, stop_gradient=True)`` (``value=`` for data, paddle's
      name; ``persistable``, ``name`` and ``zero_copy`` as keywords): a tensor of a copy of `data`,
      as paddle's (``zero_copy=True``: over the memory of an array of that dtype and place itself;
      arrays and Tensors keep their dtype; nested lists of ints or bools become the default float
      dtype, as paddle's ``Tensor([1, 2])`` is float32);
    - ``Tensor(2, 3)``: ints, the shape of an uninitialised tensor of the default float dtype
      (``dtype=``, ``place=`` and ``stop_gradient=`` may follow as keywords);
    - ``Tensor()``: an empty one, of shape [0].
    A lone number is refused (``Tensor(2.5)``; ``to_tensor`` makes a tensor holding one)."""
    if args and all(type(a) is int for a in args):
        if set(kwargs) - set(_PARAMS[1:]):
            raise TypeError(f"Tensor(*shape) takes dtype, place and stop_gradient as keywords, got "
                            f"{sorted(set(kwargs) - set(_PARAMS[1:]))}")
        if any(d < 0 for d in args):
            raise ValueError(f"Tensor(*shape): the sizes must be >= 0, got {list(args)}")
        dtype = convert_dtype(kwargs.get("dtype")) or default_float()
        array = move(np.empty(args, dtype=dtype), _place(kwargs.get("place")))
        return array, bool(kwargs.get("stop_gradient", True)), {}
    if len(args) > len(_PARAMS):
        raise TypeError(f"Tensor() takes at most {len(_PARAMS)} arguments {_PARAMS} or ints (a shape), "
                        f"got {len(args)}")
    bound = dict(zip(_PARAMS, args))
    for key, value in kwargs.items():
        key = "data" if key == "value" else key
        if key not in _PARAMS + _EXTRAS:
            raise TypeError(f"Tensor() got an unexpected keyword argument {key!r}")
        if key in bound:
            raise TypeError(f"Tensor() got multiple values for argument {key!r}")
        bound[key] = value
    data, dtype, place = bound.get("data"), bound.get("dtype"), bound.get("place")
    if data is None:
        data = np.empty(0, dtype=convert_dtype(dtype) or default_float())
    elif isinstance(data, (bool, int, float, complex, np.generic)):
        raise TypeError(f"Tensor(data): data must be a list, an array or a Tensor, got the number {data!r} "
                        f"(ints one by one are a shape, Tensor(2, 3); to_tensor makes a tensor holding one number)")
    elif dtype is None and isinstance(data, (list, tuple)) and np.asarray(data).dtype.kind in "biu":
        dtype = default_float()
    extras = {key: bound[key] for key in ("persistable", "name") if key in bound}
    array = array_from(data, dtype, place, copy=not bound.get("zero_copy", False))
    return array, bool(bound.get("stop_gradient", True)), extras


def _place(place: Any) -> Any:
    return current_place() if place is None else parse_place(place)
