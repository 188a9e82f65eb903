"""pycoll's dtypes: NumPy's (paddle's names: ``pycoll.float32`` is ``numpy.dtype('float32')``,
bfloat16 and the float8 types are ml_dtypes'), how a dtype argument is read, and paddle's default
floating dtype. paddle 3.3's torch-style names of them (``pycoll.float``, ``long``, ...) are
``pycoll``'s own attributes: here they would hide Python's ``float`` and ``int``."""
from __future__ import annotations

from typing import Optional, Union

import numpy as np

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

DTypeLike = Union[str, np.dtype, type, None]
DType = np.dtype  # the type of every dtype (paddle's ``paddle.dtype``): isinstance(x.dtype, DType)

_ML_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")  # ml_dtypes' names, imported on first use


def convert_dtype(dtype: DTypeLike) -> Optional[np.dtype]:
    """A NumPy dtype for 'float32', numpy.float32, numpy.dtype(...); None stays None. Dtypes no
    tensor holds (object, str, bytes, records, NumPy's extended-precision float128/complex256)
    are refused, as paddle refuses them."""
    if dtype is None:
        return dtype
    if isinstance(dtype, np.dtype):
        dt = dtype
    elif isinstance(dtype, str) and dtype in _ML_DTYPES:
        return ml_dtype(dtype)
    else:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"dtype must be a dtype name like 'float32' or a numpy dtype, got {dtype!r}") from None
    if dt.kind not in "biufc" and dt.name not in _ML_DTYPES or dt.itemsize > (16 if dt.kind == "c" else 8):
        raise TypeError(f"dtype {dtype!r} ({dt}) is no tensor dtype: tensors hold bool, integers, float16/32/64, "
                        f"bfloat16, float8 and complex64/128")
    return dt


def ml_dtype(name: str) -> np.dtype:
    """NumPy's dtype `name` of ``ml_dtypes`` (bfloat16, float8_e4m3fn, float8_e5m2; CuPy uses
    the same), imported on first use."""
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError(f"dtype {name} needs the ml_dtypes package on the host: pip install ml_dtypes") from None
    return np.dtype(getattr(ml_dtypes, name))


def bfloat16() -> np.dtype:
    """NumPy's bfloat16 (``ml_dtypes``', which CuPy also uses), imported on first use."""
    return ml_dtype("bfloat16")


def is_bfloat16(dtype: np.dtype) -> bool:
    """Whether `dtype` is ml_dtypes' bfloat16 (NumPy kind 'V'; the kind is tested first, as
    ``dtype.name`` costs microseconds)."""
    return dtype.kind == "V" and dtype.name == "bfloat16"


def is_floating(dtype: np.dtype) -> bool:
    """Whether `dtype` holds floating-point numbers: NumPy's kind 'f', and bfloat16 (ml_dtypes'
    bfloat16 has NumPy kind 'V', so a kind test alone misses it)."""
    return dtype.kind == "f" or is_bfloat16(dtype)


def is_half(dtype: np.dtype) -> bool:
    """Whether `dtype` is a 16-bit floating dtype: float16 or bfloat16."""
    return dtype.itemsize == 2 and is_floating(dtype)


_default_float = float32  # paddle's default dtype: what floats become unless a dtype is given


def get_default_dtype() -> str:
    """paddle's ``get_default_dtype``: the dtype of new floating-point tensors and parameters."""
    return _default_float.name


def set_default_dtype(d: DTypeLike) -> None:
    """paddle's ``set_default_dtype``: float16, bfloat16, float32 (the start) or float64."""
    global _default_float
    dt = convert_dtype(d)
    if dt not in (float16, float32, float64) and dt.name != "bfloat16":
        raise TypeError(f"set_default_dtype: d must be float16, bfloat16, float32 or float64, got {d!r}")
    _default_float = dt


def default_float() -> np.dtype:
    return _default_float
