"""More reductions: cumsum, prod, var, std, logsumexp, amax, amin, and the truth tests all and
any (also Tensor methods).

Dtypes are paddle's: an integer tensor's cumsum is int64 and its prod keeps its dtype; its var is
truncated to its dtype and its std is float32 (the square root of that truncated var). float16
and bfloat16 accumulate in float32 (`_promotion.accumulates_in_float32`).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from pycoll import math_ops
from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._promotion import INT_TO_FLOAT, accumulates_in_float32, floating
from pycoll._tensor_ops import as_tensor, delivered, normalize_axes, op_output, placed, reduction_axes, value_output
from pycoll.device import array_module
from pycoll.math_ops import kept_shape
from pycoll.shape_ops import axis_arg
from pycoll.dtypes import DTypeLike, convert_dtype, int64
from pycoll.kernels import host_math
from pycoll.tensor import Tensor
from pycoll._scalar_axis import along_axis_of_scalar


def _reduced_shape(shape: tuple, axes: Optional[tuple]) -> tuple:
    return tuple(n for i, n in enumerate(shape) if axes is not None and i not in axes)


def _count(shape: tuple, axes: Optional[tuple]) -> int:
    """How many elements each reduced group has."""
    n = 1
    for i, size in enumerate(shape):
        if axes is None or i in axes:
            n *= size
    return n


@param_aliases({"input": "x", "dim": "axis"})
@accumulates_in_float32
@along_axis_of_scalar("axis", none_flattens=True)
def cumsum(x: Tensor, axis: Optional[int] = None, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """Running sums along `axis`; None: along x flattened."""
    x = as_tensor(x)
    x, = placed("cumsum", x, axes=None if axis is None else normalize_axes(axis, x.ndim))
    a = x._array
    xp = array_module(a)
    src = a.shape
    if axis is None:
        a, ax = a.reshape(-1), 0
    else:
        ax = normalize_axes(axis, a.ndim)[0]
    dt = convert_dtype(dtype)
    if dt is None and a.dtype.kind == "u":  # NumPy would run unsigned (uint64); paddle gives int64
        dt = int64
    with quiet():  # inf + -inf: NaN, a sum past the range inf, silently as paddle's
        out = running_sums(xp, a, ax, dt)

    def backward(g: Any) -> tuple:
        fast = host_math.cumsum(g, ax, reverse=True)  # the running sums from the end
        if fast is not None:
            return (fast.reshape(src),)
        return (xp.flip(xp.cumsum(xp.flip(g, ax), axis=ax), ax).reshape(src),)
    return op_output(out, backward, x)


def running_sums(xp: Any, a: Any, axis: int, dtype: Any = None) -> Any:
    """xp.cumsum(a, axis, dtype): for host float32/float64/int64 in pycoll's kernel (NumPy's
    running sum along a contiguous axis runs one element at a time; the kernel adds the same
    numbers in the same order, eight rows at a time)."""
    if dtype is None or a.dtype == dtype:
        fast = host_math.cumsum(a, axis)
        if fast is not None:
            return fast
    return xp.cumsum(a, axis=axis, dtype=dtype)


def _others_product(a: Any, axes: Optional[tuple]) -> Any:
    """For every element of `a`, the product of the other elements of its group along `axes`
    (the gradient of prod, with no division, so zeros are handled)."""
    xp = array_module(a)
    if not a.size:  # no element, no product to leave out
        return xp.zeros_like(a)
    axes = tuple(range(a.ndim)) if axes is None else axes
    rest = [i for i in range(a.ndim) if i not in axes]
    perm = rest + list(axes)
    t = a.transpose(perm)
    moved = t.shape
    t = t.reshape(moved[:len(rest)] + (-1,))
    ones = xp.ones(t.shape[:-1] + (1,), dtype=a.dtype)
    left = xp.cumprod(xp.concatenate([ones, t[..., :-1]], axis=-1), axis=-1)
    right = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(t, -1)[..., :-1]], axis=-1), axis=-1), -1)
    inverse = [perm.index(i) for i in range(a.ndim)]
    return (left * right).reshape(moved).transpose(inverse)


@param_aliases({"input": "x", "dim": "axis"})
@accumulates_in_float32
def prod(x: Tensor, axis: Any = None, keepdim: bool = False, dtype: DTypeLike = None,
         out: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
    x, = placed("prod", as_tensor(x), axes=None)  # auto-parallel: computed whole, as paddle's is
    a = x._array
    axes = reduction_axes(axis, a.ndim, "prod")
    kept = kept_shape(a.shape, axes)
    dt = convert_dtype(dtype) or (a.dtype if a.dtype.kind in "iu" else None)
    with quiet():  # inf * 0: NaN, a product past the range inf, silently as paddle's
        product = a.prod(axis=axes, keepdims=keepdim, dtype=dt)
    return delivered(op_output(product, lambda g: (g.reshape(kept) * _others_product(a, axes),), x), out)


@param_aliases({"input": "x", "dim": "axis"})
@accumulates_in_float32
def var(x: Tensor, axis: Any = None, unbiased: Optional[bool] = None, keepdim: bool = False,
        name: Optional[str] = None, *,
        correction: float = 1) -> Tensor:
    """The variance over `axis`, divided by N - correction (`unbiased` True: 1, False: 0; giving
    both is refused, as paddle's refuses a correction other than 1 beside unbiased)."""
    if unbiased is not None and correction != 1:
        raise ValueError(f"var: give unbiased or correction, not both (got unbiased={unbiased!r} and "
                         f"correction={correction!r})")
    return _spread(x, axis, correction if unbiased is None else int(bool(unbiased)), keepdim, False)


@accumulates_in_float32
def std(x: Tensor, axis: Any = None, unbiased: bool = True, keepdim: bool = False,
        name: Optional[str] = None) -> Tensor:
    """The standard deviation over `axis` (divided by N - 1 unless `unbiased` is False)."""
    return _spread(x, axis, int(bool(unbiased)), keepdim, True)


def _spread(x: Tensor, axis: Any, ddof: float, keepdim: bool, root: bool) -> Tensor:
    x = as_tensor(x)
    axes = reduction_axes(axis, x.ndim, "std" if root else "var")
    x, = placed("std" if root else "var", x, axes=axes)
    a = x._array
    xp = array_module(a)
    kept = kept_shape(a.shape, axes)
    n = _count(a.shape, axes)
    scale = 1.0 / (n - ddof) if n > ddof else float("nan")  # paddle: nan, no warning
    integer = a.dtype.kind in "biu"
    af = a.astype("float64") if integer else a
    with quiet():  # infinities: NaN (inf - inf), squares past the range inf, silently as paddle's
        d = af - af.mean(axis=axes, keepdims=True)
        full = (d * d).sum(axis=axes, keepdims=True) * scale
    if integer:  # paddle truncates an integer var to the dtype (and std takes the root of that)
        full = full.astype(a.dtype)
        if root:
            full = full.astype(INT_TO_FLOAT)
    if root:
        full = xp.sqrt(full)
    out = full if keepdim else full.reshape(_reduced_shape(a.shape, axes))

    def backward(g: Any) -> tuple:
        gv = g.reshape(kept) * (2 * scale) * d
        return ((gv / (2 * full) if root else gv).astype(g.dtype, copy=False),)
    backward.__pycoll_op__ = {"name": "std" if root else "var", "axes": axes}  # type: ignore[attr-defined]
    return op_output(out, backward, x)


@param_aliases({"input": "x", "dim": "axis"})
@accumulates_in_float32
def logsumexp(x: Tensor, axis: Any = None, keepdim: bool = False, name: Optional[str] = None) -> Tensor:
    """log(sum(exp(x))) over `axis`, computed stably; integers give float32 (paddle's).

    Where every element reduced is -inf the result is -inf, log(0), the mathematical value (and
    torch's and NumPy's); paddle 3.3.1 gives NaN there. pycoll keeps -inf on purpose."""
    x = as_tensor(x)
    axes = reduction_axes(axis, x.ndim, "logsumexp")
    x, = placed("logsumexp", x, axes=axes)
    a = floating(x._array)
    xp = array_module(a)
    kept = kept_shape(a.shape, axes)
    m = a.max(axis=axes, keepdims=True) if a.size else xp.zeros(kept, a.dtype)  # over nothing: log(0) = -inf
    m = xp.where(xp.isfinite(m), m, 0)
    with quiet():  # beside an inf, exp of a large finite value overflows to inf: the answer, silently
        total = xp.exp(a - m).sum(axis=axes, keepdims=True)
    empty = total == 0  # every element -inf: the result is -inf, without log(0)'s warning
    full = xp.log(xp.where(empty, 1, total)) + xp.where(empty, -xp.inf, m)
    out = full if keepdim else full.reshape(_reduced_shape(a.shape, axes))
    backward = lambda g: (g.reshape(kept) * xp.exp(a - full),)  # noqa: E731 (its name keys the higher-order rule)
    backward.__pycoll_op__ = {"name": "logsumexp", "axes": axes}  # type: ignore[attr-defined]  # for placements
    return op_output(out, backward, x)


def trapezoid_terms(y: Any, x: Any, dx: Optional[float], axis: int, fn: str) -> Tuple[Tensor, int, float]:
    """The trapezoidal rule's terms of y along `axis` (each interval's (y1 + y0), times its width
    when `x` gives the sample points: 1-D of y's length there, or y's shape), that axis, and the
    factor (dx / 2, or 1 / 2 with x) that makes their sum the integral (``trapezoid``) or their
    running sum the running integral (``cumulative_trapezoid``)."""
    if x is not None and dx is not None:
        raise ValueError(f"{fn}: give x or dx, not both")
    y = as_tensor(y)
    ax = axis_arg(axis, y.ndim)
    lead = (slice(None),) * ax
    pairs = math_ops.add(y[lead + (slice(1, None),)], y[lead + (slice(None, -1),)])
    if x is None:
        return pairs, ax, 0.5 * (1.0 if dx is None else dx)
    x = as_tensor(x)
    if x.ndim == 1:
        if x.shape[0] != y.shape[ax]:
            raise ValueError(f"{fn}: x has {x.shape[0]} points, y has {y.shape[ax]} along axis {axis}")
        x = x.reshape([-1 if i == ax else 1 for i in range(y.ndim)])
    steps = math_ops.subtract(x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)])
    return math_ops.multiply(pairs, steps), ax, 0.5


def trapezoid(y: Tensor, x: Optional[Tensor] = None, dx: Optional[float] = None, axis: int = -1,
              name: Optional[str] = None) -> Tensor:
    """The trapezoidal rule's integral of y along `axis`: at the sample points `x` (a 1-D tensor
    of y's length there, or y's shape), or spaced `dx` apart (default 1); not both."""
    terms, ax, factor = trapezoid_terms(y, x, dx, axis, "trapezoid")
    return math_ops.multiply(math_ops.sum(terms, axis=ax), factor)


@param_aliases({"input": "x", "dim": "axis"})
def amax(x: Tensor, axis: Any = None, keepdim: bool = False, name: Optional[str] = None, *,
         out: Optional[Tensor] = None) -> Tensor:
    """max; ties share the gradient equally (as paddle's amax and max both do)."""
    return delivered(math_ops.max(x, axis, keepdim), out)


@param_aliases({"input": "x", "dim": "axis"})
def amin(x: Tensor, axis: Any = None, keepdim: bool = False, name: Optional[str] = None, *,
         out: Optional[Tensor] = None) -> Tensor:
    """min; ties share the gradient equally (as paddle's amin and min both do)."""
    return delivered(math_ops.min(x, axis, keepdim), out)


def _truth(x: Tensor, axis: Any, keepdim: bool, name: str) -> Tensor:
    x = as_tensor(x)
    a = x._array
    axes = reduction_axes(axis, a.ndim, name)
    out = getattr(a.astype(bool, copy=False), name)(axis=axes, keepdims=keepdim)
    return value_output(out, name, x, axes=axes)


@param_aliases({"input": "x", "dim": "axis"})
def all(x: Tensor, axis: Any = None, keepdim: bool = False, name: Optional[str] = None, *,  # noqa: A001
        out: Optional[Tensor] = None) -> Tensor:
    """Whether every element over `axis` (None: all of them) is non-zero, a bool tensor."""
    return delivered(_truth(x, axis, keepdim, "all"), out)


@param_aliases({"input": "x", "dim": "axis"})
def any(x: Tensor, axis: Any = None, keepdim: bool = False, name: Optional[str] = None, *,  # noqa: A001
        out: Optional[Tensor] = None) -> Tensor:
    """Whether some element over `axis` (None: all of them) is non-zero, a bool tensor."""
    return delivered(_truth(x, axis, keepdim, "any"), out)


for _name, _fn in {"all": all, "any": any, "cumsum": cumsum, "prod": prod, "var": var, "std": std,
                   "logsumexp": logsumexp, "amax": amax, "amin": amin, "trapezoid": trapezoid}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
