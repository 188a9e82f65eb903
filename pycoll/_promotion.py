"""Paddle 3.3's dtype rules for ops on operands of different dtypes (checked against paddle 3.3.1).

* Two tensors of the same dtype give that dtype. Two floating-point tensors of different widths
  give the wider one. Any other mix of n-d tensors (int32 with int64, float32 with int64, a float
  tensor with a bool mask) is a TypeError, as in paddle.
* A 0-d tensor next to an n-d one acts like a number: of the same kind (both int, both float) the
  n-d tensor's dtype wins; of a higher kind (a float 0-d tensor with an int tensor) its own dtype
  wins. Two 0-d tensors: the higher kind, else the wider dtype.
* A Python (or NumPy) number keeps the tensor's dtype unless it is of a higher kind: an int or bool
  tensor with a float number gives float32, a bool tensor with an int number gives int64.
* Integers that go through true division or through float maths (exp, sqrt, log, tanh, sigmoid)
  become float32: paddle casts them to float32 whatever the default dtype.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from pycoll.dtypes import float32, int64

from pycoll.tensor import Tensor

BOOL = np.dtype("bool")
INT_TO_FLOAT = float32  # what paddle's int -> float promotions give, whatever the default dtype


def _kind(dtype: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating point (paddle's order of kinds)."""
    return 0 if dtype.kind == "b" else 1 if dtype.kind in "iu" else 2


def _number_kind(v: Any) -> int:
    return 0 if isinstance(v, bool) else 1 if isinstance(v, int) else 2


def _two_tensors(a: Tensor, b: Tensor, name: str, strict: bool) -> np.dtype:
    da, db = a._array.dtype, b._array.dtype
    if da == db:
        return da
    ka, kb = _kind(da), _kind(db)
    a0, b0 = a._array.ndim == 0, b._array.ndim == 0
    if (a0 or b0) and not strict:
        if ka != kb:
            return da if ka > kb else db
        if a0 != b0:
            return db if a0 else da
        return np.promote_types(da, db)
    if ka == kb == 2:
        return np.promote_types(da, db)
    raise TypeError(
        f"{name}: x has dtype {da} and y has dtype {db}; paddle promotes only between "
        f"floating-point dtypes, so cast one first (e.g. y.astype('{da}'))")


def binary_dtype(x: Any, y: Any, name: str, strict: bool = False) -> Optional[np.dtype]:
    """The dtype of op ``name`` on operands x and y (Tensors or Python numbers, see
    ``_tensor_ops.operand``); None when neither is a Tensor. TypeError for a mix paddle refuses.
    ``strict``: 0-d tensors follow the rule of n-d ones (paddle's ``where``)."""
    xt, yt = isinstance(x, Tensor), isinstance(y, Tensor)
    if xt and yt:
        return _two_tensors(x, y, name, strict)
    if not (xt or yt):
        return None
    t, number = (x, y) if xt else (y, x)
    dt = t._array.dtype
    k = _number_kind(number)
    if k <= _kind(dt):
        return dt
    return int64 if k == 1 else INT_TO_FLOAT


def promoted(x: Any, y: Any, name: str, to_float: bool = False, strict: bool = False) -> Tuple[Any, Any]:
    """The arrays (or numbers) op ``name`` computes on: each Tensor's array cast to the dtype the
    op gives (see `binary_dtype`); ``to_float``: an integer result dtype becomes float32 (true
    division); ``strict``: see `binary_dtype`. Numbers stay numbers: NumPy keeps the array's
    dtype for them."""
    dt = binary_dtype(x, y, name, strict)
    if to_float and dt is not None and dt.kind != "f":
        dt = INT_TO_FLOAT
    return _cast(x, dt), _cast(y, dt)


def _cast(v: Any, dt: Optional[np.dtype]) -> Any:
    if not isinstance(v, Tensor):
        return v
    a = v._array
    return a if dt is None or a.dtype == dt else a.astype(dt)


def floating(a: Any) -> Any:
    """Array `a` as paddle's float maths sees it: bool and integer arrays as float32."""
    return a.astype(INT_TO_FLOAT) if a.dtype.kind in "biu" else a

