"""The argument checks the host and the device paths share, and what each path serves.

Every message starts with the public function's name (``fn``) and names the argument, what it got
and what it needs.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np
from numpy.typing import DTypeLike


@dataclass(frozen=True)
class Served:
    """What one path serves, by dtype name (native byte order only): the floating types a scale
    needs, and the casts."""

    floats: Tuple[str, ...]
    casts: Tuple[Tuple[str, str], ...]
    where: str  # how a message names the path: "" (the host) or " on the device"

    def is_float(self, dt: np.dtype) -> bool:
        return dt.name in self.floats and dt.isnative

    def can_cast(self, src: np.dtype, dst: np.dtype) -> bool:
        return (src.name, dst.name) in self.casts and src.isnative and dst.isnative


HOST = Served(
    floats=("float16", "bfloat16", "float32", "float64"),
    casts=(("float32", "float16"), ("float16", "float32"), ("float64", "float32"),
           ("float32", "float64"), ("float32", "bfloat16"), ("bfloat16", "float32")),
    where="",
)
# bfloat16 is ml_dtypes', which NumPy knows only once ml_dtypes is imported: hence names.
DEVICE = Served(
    floats=HOST.floats,
    casts=HOST.casts,
    where=" on the device",
)


def type_name(obj: Any) -> str:
    cls = type(obj)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def is_device(obj: Any) -> bool:
    """Whether obj is a device array: its type has ``__cuda_array_interface__`` (asked of the type
    for CuPy's arrays, as CuPy builds the interface, stream and all, each time the instance is
    asked) and, for other types, the instance too (a CPU ``pycoll.Tensor``'s type has the property,
    which the instance refuses)."""
    kind = type(obj)
    if isinstance(obj, np.ndarray) or not hasattr(kind, "__cuda_array_interface__"):
        return False
    return kind.__module__.partition(".")[0] == "cupy" or hasattr(obj, "__cuda_array_interface__")


def check_list(fn: str, arrays: Any) -> None:
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(
            f"{fn}: arrays must be a list or tuple of numpy.ndarray or cupy.ndarray, "
            f"got {type_name(arrays)}"
        )
    if not arrays:
        raise ValueError(f"{fn}: arrays is empty; pass at least one array")


def as_dtype(fn: str, dtype: DTypeLike) -> np.dtype:
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{fn}: dtype must be a numpy dtype, got {dtype!r}") from None


def check_flat(fn: str, name: str, buf: Any, dtype: np.dtype, total: int, *,
               writeable: bool) -> None:
    """Checks the flat buffer `name` (a host or device array) against the arrays: its dtype,
    layout, writeability and size."""
    if buf.dtype != dtype:
        raise TypeError(
            f"{fn}: {name} has dtype {buf.dtype}, need {dtype}"
            + (" (pass dtype= to cast)" if name == "out" else "")
        )
    if not buf.flags.c_contiguous:
        raise ValueError(
            f"{fn}: {name} is not C-contiguous (shape {buf.shape}, strides {buf.strides}); "
            "pass a contiguous buffer"
        )
    if writeable and not getattr(buf.flags, "writeable", True):  # CuPy arrays are always writeable
        raise ValueError(f"{fn}: {name} is read-only; it is written in place")
    if buf.size != total:
        raise ValueError(
            f"{fn}: {name} has {buf.size} elements (shape {buf.shape}), need exactly {total}, "
            "the arrays' total"
        )


def check_scale_and_cast(
    fn: str, served: Served, scale: Any, src: np.dtype, dst: np.dtype, src_name: str,
    dst_name: str
) -> Optional[float]:
    """Checks the cast src -> dst (named for messages) and the scale against what `served`
    serves; returns the scale as a float, or None."""
    if src != dst and not served.can_cast(src, dst):
        casts = ", ".join(f"{a}->{b}" for a, b in served.casts)
        raise TypeError(
            f"{fn}: cannot cast {src_name} ({src}) to {dst_name} {dst}; "
            f"the casts served{served.where} are {casts}"
        )
    if scale is None:
        return None
    value = _scale_value(fn, scale)
    for dt in (src, dst):
        if not served.is_float(dt):
            floats = ", ".join(served.floats[:-1]) + " or " + served.floats[-1]
            raise TypeError(
                f"{fn}: scale needs {floats} data (native byte order), got {dt}"
            )
    return value


def _scale_value(fn: str, scale: Any) -> float:
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{fn}: scale must be an int or float, got {type_name(scale)} ({scale!r})")
    try:
        return float(scale)
    except OverflowError:
        raise ValueError(f"{fn}: scale {scale!r} is too large for a float") from None
