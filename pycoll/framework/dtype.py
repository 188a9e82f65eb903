"""paddle's ``paddle.framework.dtype`` module: the dtype names (NumPy dtypes here, see
``pycoll.dtypes``), ``iinfo``/``finfo`` and ``convert_np_dtype_to_dtype_``. ``bfloat16`` and the float8
names are ml_dtypes', loaded when first asked for (so not in ``__all__``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from pycoll.dtypes import (DType as dtype, complex64, complex128, convert_dtype, float16, float32, float64, int8,
                           int16, int32, int64, ml_dtype, uint8, uint32, uint64)
from pycoll._promotion import BOOL as bool  # noqa: A001 - paddle's name
from pycoll.type_info import finfo, iinfo

uint16 = np.dtype("uint16")  # NumPy's; paddle's ``uint16`` is its bfloat16 storage type
half, double, short, long, cfloat, cdouble = float16, float64, int16, int64, complex64, complex128
float, int = float32, int32  # noqa: A001 - paddle's torch-style names

__all__ = ["dtype", "iinfo", "finfo", "convert_np_dtype_to_dtype_", "bool", "uint8", "uint16", "uint32", "uint64",
           "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128",
           "half", "double", "short", "long", "cfloat", "cdouble",
           "float", "int"]

_ML_NAMES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def convert_np_dtype_to_dtype_(np_dtype: Any) -> np.dtype:
    """The dtype pycoll uses for a NumPy dtype (or its name): the same dtype, except that NumPy's
    uint16 is bfloat16, as paddle reads it (the storage of its bfloat16 tensors)."""
    found = convert_dtype(np_dtype)
    if found is None:
        raise TypeError("convert_np_dtype_to_dtype_: np_dtype must be a NumPy dtype or its name, got None")
    return ml_dtype("bfloat16") if found == np.uint16 else found


def __getattr__(name: str) -> Any:
    if name in _ML_NAMES:
        return ml_dtype(name)
    raise AttributeError(f"module 'pycoll.framework.dtype' has no attribute {name!r}")
