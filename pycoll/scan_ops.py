"""Running (cumulative) ops along an axis: cumprod, cummax, cummin, logcumsumexp, and diff
(also Tensor methods, with paddle's in-place ``cumprod_``). With no axis they run along x
flattened, as paddle's do."""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

import numpy as np

from pycoll import math_ops, shape_ops
from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._promotion import accumulates_in_float32, floating
from pycoll._tensor_ops import as_tensor, op_output, placed, value_output
from pycoll.device import array_module
from pycoll.dtypes import DTypeLike, convert_dtype
from pycoll.kernels import host_math
from pycoll.inplace_ops import in_place
from pycoll.shape_ops import axis_arg
from pycoll.tensor import Tensor
from pycoll._scalar_axis import along_axis_of_scalar


def _line(a: Any, axis: Optional[int]) -> Tuple[Any, int]:
    """`a` and the axis to run along (None: `a` flattened, along 0)."""
    if axis is None:
        return a.reshape(-1), 0
    return a, axis_arg(axis, a.ndim)


def _reverse_cumsum(xp: Any, g: Any, ax: int) -> Any:
    return xp.flip(xp.cumsum(xp.flip(g, ax), axis=ax), ax)


@param_aliases({"input": "x"})
@accumulates_in_float32
@along_axis_of_scalar("dim", none_flattens=True)
def cumprod(x: Any, dim: Optional[int] = None, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """Running products along `dim` (None: x flattened); zeros are handled in the gradient. An
    integer tensor keeps its dtype (paddle's; NumPy's would widen int32 to int64)."""
    x, = placed("cumprod", as_tensor(x), axes=None)  # auto-parallel: computed whole, as paddle's is
    src = x._array.shape
    a, ax = _line(x._array, dim)
    if dtype is not None:
        a = a.astype(convert_dtype(dtype))
    xp = array_module(a)
    with quiet():  # inf * 0: NaN, a product past the range inf, silently as paddle's
        out = host_math.cumprod(a, ax)
        if out is None:
            out = xp.cumprod(a, axis=ax, dtype=a.dtype if a.dtype.kind in "iu" else None)

    def backward(g: Any) -> tuple:  # run in the backward walk, with NumPy's warnings off
        quick = _reverse_cumsum(xp, g * out, ax) / a  # right wherever no zero comes at or before
        moved = xp.moveaxis(a, ax, -1)
        zero_rows = (moved == 0).any(-1)
        if not bool(zero_rows.any()):
            return (quick.reshape(src),)
        gm, qm = xp.moveaxis(g, ax, -1), xp.moveaxis(quick, ax, -1).copy()
        qm[zero_rows] = _cumprod_grad_rows(xp, moved[zero_rows], gm[zero_rows])
        return (xp.moveaxis(qm, -1, ax).reshape(src),)
    return op_output(out, backward, x)


def _cumprod_grad_rows(xp: Any, a: Any, g: Any) -> Any:
    """cumprod's gradient for rows [R, n] that hold zeros, without dividing: d out_j / d a_i is
    prod_{k<i} a_k * prod_{i<k<=j} a_k (O(n^2) per row)."""
    n = a.shape[-1]
    before = xp.cumprod(xp.concatenate([xp.ones_like(a[:, :1]), a[:, :-1]], axis=1), axis=1)  # prod_{k<i}
    later = xp.where(xp.arange(n)[None, :, None] < xp.arange(n)[None, None, :], a[:, None, :], 1)  # [R, i, k]
    between = xp.cumprod(later, axis=2)  # [R, i, j] = prod_{i<k<=j} a_k
    upper = xp.arange(n)[:, None] <= xp.arange(n)[None, :]  # j >= i
    return before * (xp.where(upper, between, 0) * g[:, None, :]).sum(-1)


def accumulate(xp: Any, ufunc: str, a: Any, ax: int) -> Any:
    """The running ``ufunc`` (maximum, minimum) of `a` along `ax`: NumPy's ``accumulate`` (one
    pass); on CuPy, whose ufuncs have no ``accumulate`` beyond add and multiply, in log2(n)
    elementwise steps (Hillis-Steele)."""
    combine = getattr(xp, ufunc)
    if xp is np:
        return combine.accumulate(a, axis=ax)
    n = a.shape[ax]
    lead = (slice(None),) * ax
    out, shift = a, 1
    while shift < n:
        head = out[lead + (slice(0, shift),)]
        later, earlier = out[lead + (slice(shift, n),)], out[lead + (slice(0, n - shift),)]
        out = xp.concatenate([head, combine(later, earlier)], axis=ax)
        shift *= 2
    return out


def _running_extreme(x: Any, axis: Optional[int], dtype: DTypeLike, ufunc: str) -> Tuple[Tensor, Tensor]:
    index_dtype = convert_dtype(dtype)
    if index_dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError(f"cum{ufunc[:3]}: dtype is the indices' dtype and must be int32 or int64, got {dtype!r}")
    x = as_tensor(x)
    x, = placed("_running_extreme", x, axes=None if axis is None else (axis_arg(axis, x.ndim),))
    src = x._array.shape
    a, ax = _line(x._array, axis)
    xp = array_module(a)
    values = accumulate(xp, ufunc, a, ax)
    # the index of the latest element that reached the running extreme (paddle's choice at ties);
    # a NaN propagates, and each NaN counts as reaching it (paddle's indices)
    shape = [1] * a.ndim
    shape[ax] = a.shape[ax] if a.ndim else 1
    where = xp.where((a == values) | (a != a), xp.arange(shape[ax]).reshape(shape), -1)
    index = accumulate(xp, "maximum", where, ax)

    def backward(g: Any) -> tuple:
        # each element's gradient goes to the element its running extreme came from (summed where
        # several share one): flat place (i_before * n + index) * stride + i_after, a 1-D scatter
        n, stride = shape[ax], math.prod(a.shape[ax + 1:])
        before = math.prod(a.shape[:ax])
        base = (xp.arange(before)[:, None, None] * (n * stride) + xp.arange(stride)[None, None, :])
        flat = (index if stride == 1 else index * stride) + base.reshape(a.shape[:ax] + (1,) + a.shape[ax + 1:])
        z = xp.zeros(a.size, g.dtype)
        shape_ops.scatter_add(z, flat.reshape(-1), xp.ascontiguousarray(g).reshape(-1))
        return (z.reshape(src),)
    return op_output(values, backward, x), value_output(index.astype(index_dtype), ufunc, x)


@along_axis_of_scalar("axis", none_flattens=True)
def cummax(x: Any, axis: Optional[int] = None, dtype: DTypeLike = "int64",
           name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """The running maximum along `axis` and the index where each was reached (the latest at a tie;
    from a NaN on, NaN and the latest NaN's index)."""
    return _running_extreme(x, axis, dtype, "maximum")


@along_axis_of_scalar("axis", none_flattens=True)
def cummin(x: Any, axis: Optional[int] = None, dtype: DTypeLike = "int64",
           name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """The running minimum along `axis` and the index where each was reached (the latest at a tie;
    from a NaN on, NaN and the latest NaN's index)."""
    return _running_extreme(x, axis, dtype, "minimum")


@accumulates_in_float32
@along_axis_of_scalar("axis", none_flattens=True)
def logcumsumexp(x: Any, axis: Optional[int] = None, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """log(cumsum(exp(x))) along `axis`, computed stably; integers give float32."""
    x, = placed("logcumsumexp", as_tensor(x), axes=None)  # auto-parallel: computed whole, as paddle's is
    src = x._array.shape
    a, ax = _line(floating(x._array) if dtype is None else x._array.astype(convert_dtype(dtype)), axis)
    xp = array_module(a)
    if not a.size:  # nothing to run over: an empty result, an empty gradient
        return op_output(a.copy(), lambda g: (xp.zeros(src, g.dtype),), x)
    m = a.max(axis=ax, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    with quiet():  # log(0) is -inf; beside an inf, exp of a large finite value overflows to inf
        out = (xp.log(xp.cumsum(xp.exp(a - m), axis=ax)) + m).astype(a.dtype, copy=False)

    def backward(g: Any) -> tuple:
        low = out.min(axis=ax, keepdims=True)  # the running result only grows: scale by its start
        low = xp.where(xp.isfinite(low), low, 0)
        # where out is -inf every x so far is -inf: no gradient there (paddle's 0), not 0 * inf
        terms = xp.where(out == -xp.inf, 0, g * xp.exp(low - out))
        return ((xp.exp(a - low) * _reverse_cumsum(xp, terms, ax)).reshape(src),)
    return op_output(out, backward, x)


@param_aliases({"input": "x", "dim": "axis"})
def diff(x: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None,
         name: Optional[str] = None) -> Tensor:
    """The n-th forward difference along `axis` (x[i + 1] - x[i], n times), after putting
    `prepend` before x and `append` after it along that axis; bool tensors give x[i + 1] != x[i]."""
    x = as_tensor(x)
    ax = axis_arg(axis, x.ndim)
    parts = [as_tensor(p) for p in (prepend, x, append) if p is not None]
    x = shape_ops.concat(parts, axis=ax) if len(parts) > 1 else x
    lead = (slice(None),) * ax
    for _ in range(n):
        later, earlier = x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)]
        if x.dtype.kind == "b":
            x = value_output(later._array != earlier._array, "diff", x)
        else:
            x = math_ops.subtract(later, earlier)
    return x


def cumprod_(x: Tensor, dim: Optional[int] = None, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """In place: x = cumprod(x, dim, dtype)."""
    return in_place(x, "cumprod_", lambda: cumprod(x, dim, dtype).reshape(x.shape))


for _fn in (cumprod, cummax, cummin, logcumsumexp, diff, cumprod_):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
