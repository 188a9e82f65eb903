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
* bfloat16 is a floating dtype like float16 (a float number keeps it: ``x * 0.5`` is bfloat16);
  float16 with bfloat16 gives float32.
* An integer raised to a negative integer power is paddle's integer: 1 for a base of 1, +-1 for
  -1, else 0 (NumPy refuses).
* Reductions, running ops and products of float16/bfloat16 accumulate in float32 and round once
  to the 16-bit dtype (`accumulates_in_float32`), as paddle's and torch's kernels do.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional, Tuple, TypeVar

import numpy as np

from pycoll._fp_quiet import quietly
from pycoll._tensor_ops import op_output
from pycoll.device import array_module
from pycoll.dtypes import convert_dtype, float32, int64, is_bfloat16, is_floating, is_half
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
        return _wider(da, db)
    if ka == kb == 2:
        return _wider(da, db)
    if "c" in (da.kind, db.kind):  # paddle's: a complex tensor with an integer or bool one stays complex
        return da if da.kind == "c" else db
    raise TypeError(
        f"{name}: x has dtype {da} and y has dtype {db}; paddle promotes only between "
        f"floating-point dtypes, so cast one first (e.g. y.astype('{da}'))")


def _wider(da: np.dtype, db: np.dtype) -> np.dtype:
    """The wider of two dtypes of one kind; float16 with bfloat16 (no common 16-bit dtype, and
    NumPy knows none) gives float32, as paddle."""
    if is_half(da) and is_half(db):
        return INT_TO_FLOAT
    return np.promote_types(da, db)


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
    op gives (see `binary_dtype`); ``to_float``: an integer (or bool) result dtype becomes float32
    (true division), a complex one stays; ``strict``: see `binary_dtype`. Numbers stay numbers (NumPy keeps the array's
    dtype for them), bfloat16 scalars next to a bfloat16 array (ml_dtypes would give float32)."""
    dt = binary_dtype(x, y, name, strict)
    if to_float and dt is not None and not is_floating(dt) and dt.kind != "c":
        dt = INT_TO_FLOAT
    return _cast(x, dt), _cast(y, dt)


def _cast(v: Any, dt: Optional[np.dtype]) -> Any:
    if not isinstance(v, Tensor):  # a bfloat16 array with a Python float: ml_dtypes gives float32
        if dt is not None and is_bfloat16(dt):
            return dt.type(v) if not isinstance(v, complex) else np.complex64(v)  # bfloat16 with 1j: complex64
        return _wrapped(v, dt) if isinstance(v, int) and dt is not None and dt.kind in "iu" else v
    a = v._array
    return a if dt is None or a.dtype == dt else a.astype(dt)


def _wrapped(v: int, dt: np.dtype) -> Any:
    """Python int ``v`` in integer dtype ``dt``, wrapped around where it lies outside its range
    (uint8 + -3 adds 253, int32 + 2**31 adds -2**31), as paddle's cast of the scalar does; NumPy
    refuses such a number (OverflowError)."""
    low, high = _INT_RANGES[dt]
    if low <= v <= high:
        return v
    bits = 8 * dt.itemsize
    w = v % (1 << bits)
    return dt.type(w - (1 << bits) if low < 0 and w > high else w)


_INT_RANGES = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
               for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}


def floating(a: Any) -> Any:
    """Array `a` as paddle's float maths sees it: bool and integer arrays as float32."""
    return a.astype(INT_TO_FLOAT) if a.dtype.kind in "biu" else a



def sum_dtype(dtype: np.dtype) -> Optional[np.dtype]:
    """The dtype paddle's sum (and nansum) gives a tensor of `dtype` when none is asked for: bool
    and int32 become int64, int8, uint8 and int16 keep their dtype (and wrap around), as paddle
    3.3.1; None: NumPy's own (floats keep theirs)."""
    if dtype.kind == "b" or dtype == np.dtype("int32"):
        return int64
    return dtype if dtype.kind in "iu" else None


def integer_power(base: Any, exponent: Any) -> Any:
    """base ** exponent for integers (arrays of one dtype, or one side a Python int): where the
    exponent is negative, paddle's integer value, 1 / base ** -e truncated: 1 for a base of 1, +-1
    for -1 (by the exponent's parity), else 0 (a base of 0 too); NumPy refuses those."""
    if isinstance(exponent, int):
        if exponent >= 0:
            return base ** exponent
        xp = array_module(base)
        return xp.where(base == 1, 1, xp.where(base == -1, -1 if exponent % 2 else 1, 0)).astype(base.dtype)
    xp = array_module(exponent)
    negative = exponent < 0
    if not bool(negative.any()):
        return base ** exponent
    out = base ** xp.where(negative, 0, exponent)
    small = xp.where(base == 1, 1, xp.where(base == -1, xp.where(exponent % 2 == 1, -1, 1), 0))
    return xp.where(negative, small, out).astype(out.dtype, copy=False)


def cast_to(x: Tensor, dtype: np.dtype) -> Tensor:
    """x cast to `dtype`, recorded: its gradient is cast back to x's dtype (a real x takes the
    real part of a complex gradient, without NumPy's warning about the imaginary one). NaN or
    inf to integers and overflows to a narrower float give what NumPy's cast gives, silently as
    paddle's."""
    src = x._array.dtype
    out = quietly(x._array.astype, dtype) if src.kind in "fc" else x._array.astype(dtype)
    return op_output(out, lambda g: (back_to(g, src),), x)


def back_to(g: Any, dtype: np.dtype) -> Any:
    """Gradient ``g`` in ``dtype``, the dtype of what an op promoted: its real part for a real
    dtype (the imaginary part belongs to no direction of a real input)."""
    if g.dtype.kind == "c" and dtype.kind != "c":
        g = g.real
    return g.astype(dtype, copy=False)


F = TypeVar("F", bound=Callable[..., Any])


def accumulates_in_float32(fn: F) -> F:
    """Op `fn` (a reduction, running op or product) made to follow paddle's and torch's rule for
    float16 and bfloat16: accumulate in float32, round once to the 16-bit dtype.

    NumPy's bfloat16 loops (ml_dtypes') accumulate in bfloat16, where 256 + 1 == 256, so a sum of
    3000 ones is 256; its float16 running sums stall at 2048 the same way. The wrapped op runs on
    its 16-bit floating Tensor arguments cast to float32 (recorded casts, so the gradient is
    computed in float32 too and cast back) and its float32 results are rounded to the 16-bit
    dtype. A 16-bit ``dtype=`` asked for is computed in float32 and rounded to it the same way.
    Other calls (no 16-bit operand, a mix with wider floats) go straight through."""
    params = inspect.signature(fn).parameters
    names = list(params)
    at = names.index("dtype") if "dtype" in params else None
    positional = at is not None and params["dtype"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD

    @functools.wraps(fn)
    def op(*args: Any, **kwargs: Any) -> Any:
        by_position = positional and len(args) > at
        asked = args[at] if by_position else kwargs.get("dtype") if at is not None else None
        if asked is not None:
            target = convert_dtype(asked)
            if not is_half(target):
                return fn(*args, **kwargs)
        else:
            target = common_half((*args, *kwargs.values()) if kwargs else args)
            if target is None:
                return fn(*args, **kwargs)
        args = tuple(_widened(v) for v in args)
        kwargs = {k: _widened(v) for k, v in kwargs.items()}
        if by_position:
            args = args[:at] + (float32,) + args[at + 1:]
        elif asked is not None:
            kwargs["dtype"] = float32
        return _rounded(fn(*args, **kwargs), target)
    return op  # type: ignore[return-value]


def common_half(values: Tuple[Any, ...]) -> Optional[np.dtype]:
    """The 16-bit floating dtype the floating Tensors among `values` share; None where there is
    none, or another floating dtype comes with it."""
    dtypes = [v._array.dtype for v in values if isinstance(v, Tensor)]
    if all(dt.itemsize != 2 for dt in dtypes):  # the common case, checked cheaply
        return None
    floats = {dt for dt in dtypes if is_floating(dt)}
    return floats.pop() if len(floats) == 1 and is_half(next(iter(floats))) else None


def normalized_in_float32(norm: Callable[[Tensor], Tensor], x: Tensor, *params: Optional[Tensor]) -> Optional[Tensor]:
    """``norm(x)`` run on x widened to float32 and rounded back to x's dtype, where x holds 16-bit
    floats and a weight or bias among ``params`` is float32 (AMP O2 keeps the norms' parameters in
    float32; paddle's norm kernels take the mix and give x's dtype). None otherwise: the caller
    normalises as it is."""
    if not is_half(x._array.dtype) or not any(p is not None and p._array.dtype == float32 for p in params):
        return None
    return _rounded(norm(cast_to(x, float32)), x._array.dtype)


def _widened(v: Any) -> Any:
    return cast_to(v, float32) if isinstance(v, Tensor) and is_half(v._array.dtype) else v


def _rounded(out: Any, dtype: np.dtype) -> Any:
    if isinstance(out, Tensor):
        return cast_to(out, dtype) if out._array.dtype == float32 else out
    if isinstance(out, (tuple, list)):
        return type(out)(_rounded(v, dtype) for v in out)
    return out
