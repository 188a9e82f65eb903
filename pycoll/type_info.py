"""paddle's ``finfo`` and ``iinfo``: the limits of a floating-point or integer dtype, given as a
pycoll dtype, a NumPy dtype or type, or a name ('float32', 'bfloat16', ...). Their fields are
paddle's: Python numbers, ``bits``, and ``dtype`` as the dtype's name (a complex dtype reports
the floating dtype of its parts, as paddle does)."""
from __future__ import annotations

from typing import Any

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll.dtypes import DTypeLike, convert_dtype

_FLOATS = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
_INTS = ("int8", "int16", "int32", "int64", "uint8")  # paddle's iinfo takes these only


def _dtype(dtype: DTypeLike, fn: str, allowed: tuple) -> np.dtype:
    try:
        dt = convert_dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.name not in allowed:
        raise ValueError(f"{fn}: dtype must be one of {', '.join(allowed)}, got {dtype!r}")
    return dt


class finfo:  # noqa: N801 - paddle's name
    """The limits of a floating-point (or complex) dtype: ``min``, ``max``, ``eps``, ``tiny`` (=
    ``smallest_normal``), ``resolution``, ``bits`` and ``dtype`` (its name)."""

    @param_aliases({"type": "dtype"})
    def __init__(self, dtype: DTypeLike):
        dt = _dtype(dtype, "finfo", _FLOATS)
        if dt.kind == "c":
            dt = np.dtype(f"float{dt.itemsize * 4}")
        if dt.name == "bfloat16":
            import ml_dtypes  # convert_dtype has imported it already
            info: Any = ml_dtypes.finfo(dt)
        else:
            info = np.finfo(dt)
        self.min = float(info.min)
        self.max = float(info.max)
        self.eps = float(info.eps)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # paddle's: exact powers of ten
        self.bits = int(info.bits)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return (f"pycoll.finfo(min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"resolution={self.resolution:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
                f"bits={self.bits}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - paddle's name
    """The limits of an integer dtype: ``min``, ``max``, ``bits`` and ``dtype`` (its name)."""

    def __init__(self, dtype: DTypeLike):
        dt = _dtype(dtype, "iinfo", _INTS)
        info = np.iinfo(dt)
        self.min, self.max, self.bits, self.dtype = int(info.min), int(info.max), int(info.bits), dt.name

    def __repr__(self) -> str:
        return f"pycoll.iinfo(min={self.min}, max={self.max}, bits={self.bits}, dtype={self.dtype})"
