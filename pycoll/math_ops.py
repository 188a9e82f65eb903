"""Elementwise arithmetic and comparisons, unary math and reductions (also Tensor methods and
operators: `x + y`, `x < y`, ...).

Broadcasting ops reduce their gradients back to each input's shape.
"""
from __future__ import annotations

import builtins as _builtins
import math
import operator
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from pycoll import _complex_grads, shape_ops
from pycoll._fp_quiet import SILENT, quiet, quietly, restore, silence
from pycoll._param_aliases import param_aliases
from pycoll._promotion import (INT_TO_FLOAT, accumulates_in_float32, back_to, cast_to, floating, integer_power, promoted,
                               sum_dtype)
from pycoll._tensor_ops import (as_tensor, check_broadcast, delivered, needs_grad, normalize_axes, one_number, op_output,
                                operand, paired, placed, reduction_axes, unwatched, value_output)
from pycoll.device import array_module, is_array
from pycoll.dtypes import DTypeLike, convert_dtype, is_floating
from pycoll.kernels import host_math
from pycoll.tensor import Tensor


# ---- elementwise arithmetic ----------------------------------------------------------------

_unbroadcast = shape_ops.unbroadcast


def binary_operands(x: Any, y: Any, name: str, to_float: bool = False) -> Tuple[Any, Any, Any, Any]:
    """x and y as operands (`operand`) and the arrays op ``name`` computes on, cast to the dtype
    paddle gives it (`pycoll._promotion`; ``to_float``: an integer result becomes float32)."""
    x, y = operand(x), operand(y)
    x, y = paired(x, y)
    if name in _NO_BOOL_KERNEL and _is_bool(x) and _is_bool(y):
        raise TypeError(f"{name}: operands of dtype bool are not supported (paddle has no bool kernel for "
                        f"{name}); cast them to an integer or floating dtype first")
    xa, ya = promoted(x, y, name, to_float)
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        if getattr(x, "placements", None) is not None or getattr(y, "placements", None) is not None:
            check_broadcast(name, "x", tuple(x.shape), "y", tuple(y.shape))  # distributed: the whole shapes
        check_broadcast(name, "x", xa.shape, "y", ya.shape)
    return x, y, xa, ya


# the binary ops paddle 3.3.1 has no bool kernel for (add and multiply have one: or, and)
_NO_BOOL_KERNEL = frozenset({"subtract", "pow", "floor_divide", "remainder", "maximum", "minimum", "fmax", "fmin",
                             "heaviside", "atan2", "logaddexp"})


def _is_bool(v: Any) -> bool:
    """Whether operand ``v`` (a Tensor or a number) holds bools."""
    return v._array.dtype == np.bool_ if isinstance(v, Tensor) else isinstance(v, bool)


def grad_meta(v: Any) -> Optional[Tuple[tuple, Any]]:
    """What an operand's gradient must match: a Tensor's shape and dtype; None for a number."""
    return (v._array.shape, v._array.dtype) if isinstance(v, Tensor) else None


def grad_for(g: Any, meta: Tuple[tuple, Any]) -> Any:
    """`g` summed back to an operand's shape and cast back to its dtype (promotion may have
    widened it: float32 with float64)."""
    g = _unbroadcast(g, meta[0])
    return g if g.dtype == meta[1] or not is_floating(meta[1]) else back_to(g, meta[1])


@param_aliases({"input": "x", "other": "y"})
def add(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    x, y, xa, ya = binary_operands(x, y, "add")
    mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)

    def backward(g: Any) -> tuple:
        return (grad_for(g, mx) if mx else None, grad_for(g, my) if my else None)
    saved = silence(SILENT)  # inf + -inf, overflows: NaN, inf, unwarned as paddle's
    try:
        out = xa + ya
    finally:
        restore(saved)
    return op_output(out, backward, x, y)


@param_aliases({"input": "x", "other": "y"})
def subtract(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    x, y, xa, ya = binary_operands(x, y, "subtract")
    mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)

    def backward(g: Any) -> tuple:
        return (grad_for(g, mx) if mx else None, grad_for(-g, my) if my else None)
    saved = silence(SILENT)  # inf - inf, overflows: NaN, inf, unwarned as paddle's
    try:
        out = xa - ya
    finally:
        restore(saved)
    return op_output(out, backward, x, y)


@param_aliases({"input": "x", "other": "y"})
def multiply(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    x, y, xa, ya = binary_operands(x, y, "multiply")
    mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)
    saved = silence(SILENT)  # 0 * inf, overflows: NaN, inf, unwarned as paddle's
    try:
        out = xa * ya
    finally:
        restore(saved)
    xa, ya = xa if my else None, ya if mx else None  # the backward keeps only what it uses

    def backward(g: Any) -> tuple:
        saved = silence(SILENT)  # 0 * inf: NaN, as paddle's
        try:
            return (grad_for(g * ya, mx) if mx else None, grad_for(g * xa, my) if my else None)
        finally:
            restore(saved)
    return op_output(out, backward, x, y)


@param_aliases({"input": "x", "other": "y"})
def divide(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """True division; integer operands give float32 (paddle's)."""
    x, y, xa, ya = binary_operands(x, y, "divide", to_float=True)
    mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)

    def backward(g: Any) -> tuple:
        saved = silence(SILENT)  # a zero divisor: +-inf or NaN, as paddle's
        try:
            return (grad_for(g / ya, mx) if mx else None,
                    grad_for(-(g * xa) / (ya * ya), my) if my else None)
        finally:
            restore(saved)
    saved = silence(SILENT)  # x / 0: +-inf or NaN, unwarned as paddle's
    try:
        out = xa / ya
    finally:
        restore(saved)
    return op_output(out, backward, x, y)


def real_power(x: Any, y: Any) -> Any:
    """x ** y (arrays or numbers). For a float array and an integer-valued number y past NumPy's
    own quick cases (-1, 0, 1, 2): |x| ** y, its sign put back where y is odd: the C library's pow
    takes ~50x longer on a negative base (3.9 ms against 0.08 for 256 x 256 float32 cubed), to
    the same value within its last bit."""
    if not (is_array(x) and x.dtype.kind == "f" and isinstance(y, (int, float, np.integer, np.floating))
            and not isinstance(y, bool) and math.isfinite(y) and y == int(y) and not -1 <= y <= 2):
        return x ** y
    xp = array_module(x)
    out = xp.power(xp.abs(x), y if isinstance(y, (int, np.integer)) else x.dtype.type(y))
    return xp.copysign(out, x) if int(y) % 2 else out


def base_grad_exponent(y: Any) -> Any:
    """The exponent of x in d(x ** y)/dx = y * x ** (y - 1): y - 1, but 1 where y is 0 (there the
    slope is y * x ** 1 = 0, as paddle's, where x ** -1 would make 0 * inf = NaN at x = 0)."""
    if is_array(y) and y.ndim:
        return array_module(y).where(y == 0, 1, y - 1)
    return 1 if y == 0 else y - 1


def number_log(x: Any) -> float:
    """log of a number base for d(x ** y)/dy: -inf at 0 (its zero powers contribute nothing,
    see pow), NaN below 0 as paddle's (no real logarithm)."""
    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


@param_aliases({"input": "x", "exponent": "y"})
def pow(x: Any, y: Any, name: Optional[str] = None) -> Tensor:  # noqa: A001 - paddle's name
    """x ** y; either side may be a number. Integers to negative integer powers give paddle's
    integers (`integer_power`)."""
    x, y, xa, ya = binary_operands(x, y, "pow")
    mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)
    integer = _builtins.all(v.dtype.kind in "iu" if hasattr(v, "dtype") else type(v) in (int, bool)
                            for v in (xa, ya))  # (True ** an int tensor: paddle's integers too)
    with quiet():  # 0 ** -1, (-1) ** 0.5, 10 ** 100: inf, NaN, inf, as paddle's
        out = integer_power(xa, ya) if integer else real_power(xa, ya)

    def backward(g: Any) -> tuple:
        with quiet():  # 0 ** negative: inf, as paddle's
            gx = grad_for(g * ya * real_power(xa, base_grad_exponent(ya)), mx) if mx else None
            gy = None
            if my:
                xp = array_module(g)
                log_x = xp.log(xa) if isinstance(x, Tensor) else number_log(xa)
                # a zero power contributes nothing (0 * log 0 is taken as 0; 0 ** 0 too, as paddle
                # does, where 0 ** -1 gives inf * -inf), nor an underflowed one (0 * log of a
                # negative base: NaN)
                gy = grad_for(xp.where((out == 0) | ((xa == 0) & (ya == 0)), 0, g * out * log_x), my)
        return gx, gy
    return op_output(out, backward, x, y)


def neg(x: Any, name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """``-x``; a bool tensor keeps its values, as Paddle's (``-True`` is nonzero, so ``True``)."""
    x = as_tensor(x)
    a = x._array
    return delivered(op_output(a.copy() if a.dtype == bool else -a, lambda g: (-g,), x), out)


@param_aliases({"input": "x", "other": "y"})
@accumulates_in_float32
def matmul(x: Any, y: Any, transpose_x: bool = False, transpose_y: bool = False, name: Optional[str] = None) -> Tensor:
    """Matrix product with NumPy's rules for 1-D and batched operands."""
    x, y = operand(x), operand(y)
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError(f"matmul needs tensors or arrays, got {type(x).__name__} and {type(y).__name__}")
    y = integers_as_float(x, y)
    # transposed on their arrays, in matmul's own node, unless a hook must see the transposes
    # (a transpose op costs 6 us, three times a small product)
    swap_x, swap_y = transpose_x and x.ndim >= 2, transpose_y and y.ndim >= 2
    if (swap_x or swap_y) and not unwatched((x, y)):
        x = shape_ops.transpose(x, _swap_last(x.ndim)) if swap_x else x
        y = shape_ops.transpose(y, _swap_last(y.ndim)) if swap_y else y
        swap_x = swap_y = False
    x, y = placed("matmul", x, y)
    xa, ya = x._array, y._array
    xa, ya = xa.swapaxes(-1, -2) if swap_x else xa, ya.swapaxes(-1, -2) if swap_y else ya
    same_dtype("matmul", xa, ya, ("x", "y"), complex_mix=True)
    rx, ry = needs_grad(x), needs_grad(y)
    if xa.ndim == 0 or ya.ndim == 0:
        raise ValueError(f"matmul needs operands of at least 1 dimension, got shapes {x.shape} "
                         f"and {y.shape}")
    _check_matmul_shapes(xa.shape, ya.shape)

    def backward(g: Any) -> tuple:
        with quiet():  # inf * 0 in a product: NaN, as paddle's
            gx, gy = _matmul_grads(g, xa, ya, rx, ry)
        return (gx.swapaxes(-1, -2) if swap_x and gx is not None else gx,
                gy.swapaxes(-1, -2) if swap_y and gy is not None else gy)
    product = rows_matmul if xa.ndim > 2 and ya.ndim == 2 else operator.matmul
    return op_output(quietly(product, xa, ya), backward, x, y)


def integers_as_float(x: Tensor, y: Tensor) -> Tensor:
    """``y`` in x's dtype where x is floating and y holds integers, else ``y``: paddle 3.3.1's
    matmul and linear take a float32 x with an int32/int64 y (its kernel reads y as x's dtype;
    its float64 x refuses them, a quirk: pycoll takes every floating x)."""
    if is_floating(x._array.dtype) and y._array.dtype.kind in "iu":
        return cast(y, x.dtype)
    return y


def same_dtype(fn: str, a: Any, b: Any, names: Tuple[str, str], complex_mix: bool = False) -> None:
    """TypeError unless arrays a and b (the operands `names`) share a dtype: paddle's product and
    convolution kernels run in one dtype and refuse a second ("The type of data ... does not match")
    where NumPy would promote silently. With ``complex_mix`` a complex operand beside a real one
    passes (paddle's matmul promotes those); a floating x with integer y is cast first
    (``integers_as_float``)."""
    da, db = a.dtype, b.dtype
    if da == db or (complex_mix and "c" in (da.kind, db.kind)):
        return
    cast_name, to = (names[1], da) if is_floating(da) and not is_floating(db) else (names[0], db)
    raise TypeError(f"{fn}: {names[0]} has dtype {da} and {names[1]} {db}; both must have the same dtype "
                    f"(paddle refuses the mix too): cast one, e.g. {cast_name}.astype('{to}')")


def _matmul_operator(x: Tensor, y: Any, reflect: bool = False) -> Tensor:
    """``x @ y`` (``y @ x`` with ``reflect``): paddle's operator casts a real y of another dtype to
    x's (float32 @ float64 is float32), where ``matmul`` refuses the mix."""
    y = operand(y)
    if isinstance(y, Tensor) and y.dtype != x.dtype and "c" not in (x._array.dtype.kind, y._array.dtype.kind):
        y = cast(y, x.dtype)
    return matmul(y, x) if reflect else matmul(x, y)


def _check_matmul_shapes(x: Tuple[int, ...], y: Tuple[int, ...]) -> None:
    """ValueError naming x and y where their shapes cannot be multiplied (NumPy's own message
    names a gufunc signature and no argument)."""
    inner_y = y[0] if len(y) == 1 else y[-2]
    if x[-1] != inner_y:
        where = "size" if len(y) == 1 else "second-to-last dimension"
        raise ValueError(f"matmul: x's last dimension ({x[-1]}) must equal y's {where} ({inner_y}); "
                         f"got x of shape {list(x)} and y of shape {list(y)}")
    try:
        if len(x) > 2 and len(y) > 2:
            np.broadcast_shapes(x[:-2], y[:-2])
    except ValueError:
        raise ValueError(f"matmul: the batch dimensions of x {list(x[:-2])} and y {list(y[:-2])} do not "
                         f"broadcast; got x of shape {list(x)} and y of shape {list(y)}") from None


def rows_matmul(a: Any, w: Any) -> Any:
    """``a [..., k] @ w [k, n]`` as one 2-D product over a's rows. NumPy's stacked matmul
    broadcasts ``w`` and runs a product per leading index instead: 3-6x slower for a
    [batch, sequence, hidden] activation (measured: [8, 128, 256] @ [256, 2000])."""
    if a.ndim <= 2:
        return a @ w
    return (_rows(a) @ w).reshape(a.shape[:-1] + (w.shape[-1],))


def _rows(a: Any) -> Any:
    """``a [..., k]`` as a 2-D [rows, k] array (a view where a's layout allows)."""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def rows_gram(a: Any, g: Any) -> Any:
    """``sum over a's leading indices of a[i].T @ g[i]``: the gradient of w in ``a @ w``, for
    ``a [..., k]`` and ``g [..., n]``, as one 2-D product."""
    return _rows(a).T @ _rows(g)


def _matmul_grads(g: Any, xa: Any, ya: Any, rx: bool, ry: bool) -> tuple:
    """matmul's gradients for x (if `rx`) and y (if `ry`), NumPy's 1-D and batched rules undone."""
    if xa.ndim >= 2 and ya.ndim == 2:
        return (rows_matmul(g, ya.T) if rx else None, rows_gram(xa, g) if ry else None)
    a = xa if xa.ndim > 1 else xa[None, :]
    b = ya if ya.ndim > 1 else ya[:, None]
    xp = array_module(g)
    if ya.ndim == 1:
        g = g[..., None]
    if xa.ndim == 1:
        g = g[..., None, :]
    gx = _unbroadcast(g @ xp.swapaxes(b, -1, -2), a.shape).reshape(xa.shape) if rx else None
    gy = _unbroadcast(xp.swapaxes(a, -1, -2) @ g, b.shape).reshape(ya.shape) if ry else None
    return gx, gy


@param_aliases({"input": "x", "mat2": "y"})
def bmm(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Batched matrix product of 3-D tensors: [b, m, k] @ [b, k, n] -> [b, m, n]."""
    x, y = as_tensor(x), as_tensor(y)
    if x.ndim != 3 or y.ndim != 3:
        raise ValueError(f"bmm needs 3-D tensors, got shapes {x.shape} and {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"bmm: x and y must have the same batch size, got shapes {x.shape} and {y.shape}")
    if x.shape[2] != y.shape[1]:
        raise ValueError(f"bmm: x's width must equal y's height, got shapes {x.shape} and {y.shape}")
    return matmul(x, y)


def _swap_last(ndim: int) -> List[int]:
    perm = list(range(ndim))
    if ndim >= 2:
        perm[-1], perm[-2] = perm[-2], perm[-1]
    return perm


def _compare(x: Tensor, other: Any, op: str) -> Any:
    try:
        other = operand(other)
    except TypeError:
        return NotImplemented
    x, other = paired(as_tensor(x), other)
    xa, ya = promoted(x, other, "compare")
    check_broadcast(_COMPARISON_NAMES[op], "x", xa.shape, "y", getattr(ya, "shape", ()))  # y: maybe a number
    return value_output(getattr(xa, op)(ya), "compare", x, other)


_COMPARISON_NAMES = {"__lt__": "less_than", "__le__": "less_equal", "__gt__": "greater_than",
                     "__ge__": "greater_equal", "__eq__": "equal", "__ne__": "not_equal"}


# ---- unary math ----------------------------------------------------------------------------

@param_aliases({"input": "x"})
def tanh(x: Tensor, name: Optional[str] = None) -> Tensor:
    x = as_tensor(x)
    out = array_module(x._array).tanh(floating(x._array))
    return op_output(out, lambda g: (g * (1 - out * out),), x)


@param_aliases({"input": "x"})
def exp(x: Tensor, name: Optional[str] = None) -> Tensor:
    x = as_tensor(x)
    saved = silence(SILENT)  # an overflow: inf, unwarned as paddle's
    try:
        out = array_module(x._array).exp(floating(x._array))
    finally:
        restore(saved)
    return op_output(out, lambda g: (quietly(operator.mul, g, out),), x)


@param_aliases({"input": "x"})
def log(x: Tensor, name: Optional[str] = None) -> Tensor:
    x = as_tensor(x)
    a = floating(x._array)
    saved = silence(SILENT)  # log(0) = -inf, log(-1) = NaN, unwarned as paddle's
    try:
        out = array_module(a).log(a)
    finally:
        restore(saved)
    return op_output(out, lambda g: (quietly(operator.truediv, g, a),), x)  # 1 / 0 = inf


@param_aliases({"input": "x"})
def sqrt(x: Tensor, name: Optional[str] = None) -> Tensor:
    x = as_tensor(x)
    saved = silence(SILENT)  # sqrt(-1): NaN, unwarned as paddle's
    try:
        out = array_module(x._array).sqrt(floating(x._array))
    finally:
        restore(saved)
    return op_output(out, lambda g: (quietly(operator.truediv, g, 2 * out),), x)


def square(x: Tensor, name: Optional[str] = None) -> Tensor:
    x = as_tensor(x)
    a = x._array
    return op_output(quietly(operator.mul, a, a), lambda g: (quietly(_square_grad, g, a),), x)  # overflow: inf


def _square_grad(g: Any, a: Any) -> Any:
    return g * (2 * a)


@param_aliases({"input": "x"})
def abs(x: Tensor, name: Optional[str] = None) -> Tensor:  # noqa: A001 - paddle's name
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    # sign(z) is z/|z| for complex z; 0 at 0 whatever reaches it (paddle's: sqrt(abs(x)) at 0 gets 0, not NaN)
    return op_output(xp.abs(a), _complex_grads.conjugate_grads(lambda g: (xp.where(a == 0, 0, g) * xp.sign(a),)), x)


def relu(x: Tensor, name: Optional[str] = None) -> Tensor:
    """max(x, 0); NaN gives 0, as paddle's kernel (x > 0 ? x : 0) does."""
    x = as_tensor(x)
    out = array_module(x._array).fmax(x._array, 0)
    return op_output(out, lambda g: (g * (out > 0),), x)


@param_aliases({"input": "x"})
def sigmoid(x: Tensor, name: Optional[str] = None) -> Tensor:
    x = as_tensor(x)
    a = floating(x._array)
    out = sigmoid_array(array_module(a), a).astype(a.dtype, copy=False)
    return op_output(out, lambda g: (quietly(_sigmoid_grad, g, out),), x)


def sigmoid_array(xp: Any, a: Any) -> Any:
    """1 / (1 + exp(-a)) of a floating array, 16-bit floats in float32 (exp(-a) overflows to inf
    for a below -11 in float16, where the result is not yet 0). Where exp(-a) overflows the
    result is exp(a), as tiny as paddle's (sigmoid(-100) is 3.8e-44 in float32, not 0, so a log of
    it stays finite). ~6x faster than exp(-logaddexp(0, -a)) on float32."""
    work = a.astype(np.float32) if a.dtype.itemsize < 4 else a
    with quiet():  # exp overflowing, and sigmoid(NaN) NaN, unwarned as paddle's
        out = host_math.sigmoid(work)  # the same bits in one pass after the exp, on host arrays
        if out is not None:
            return out
        e = xp.exp(-work, out=xp.empty_like(work))  # (an array: NumPy gives a 0-d one's as a scalar)
        e += 1
        out = xp.reciprocal(e, out=e)
        return xp.where(out == 0, xp.exp(work), out)


def _sigmoid_grad(g: Any, out: Any) -> Any:
    dx = host_math.sigmoid_grad(g, out)
    return g * out * (1 - out) if dx is None else dx


def _bound(value: Any, which: str) -> Any:
    """clip's min or max: a number, or a Tensor holding one (paddle takes 0-d and [1] ones)."""
    value = one_number(value, f"clip: {which}")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, np.number))):
        raise TypeError(f"clip: {which} must be a number or a one-element Tensor, got {type(value).__name__}")
    return value


@param_aliases({"input": "x"})
def clip(x: Tensor, min: Optional[float] = None, max: Optional[float] = None,  # noqa: A002
         name: Optional[str] = None) -> Tensor:
    """Clamp to [min, max] (numbers or one-element Tensors; neither: x unchanged); the gradient
    flows where x lies inside the range. An integer x with a float bound gives float32, as
    paddle's."""
    x = as_tensor(x)
    lo, hi = _bound(min, "min"), _bound(max, "max")
    if lo is None and hi is None:  # paddle's: x as it is
        return op_output(x._array.copy(), lambda g: (g,), x)
    if lo is not None and hi is not None and lo > hi:  # paddle refuses it too
        raise ValueError(f"clip: max must be greater than or equal to min, got min={lo} and max={hi}")
    a = x._array
    if a.dtype.kind in "iub" and _builtins.any(isinstance(v, (float, np.floating)) for v in (lo, hi)):
        a = a.astype(INT_TO_FLOAT)
    xp = array_module(a)

    def backward(g: Any) -> tuple:
        mask = xp.ones(a.shape, dtype=bool)
        if lo is not None:
            mask &= a >= lo
        if hi is not None:
            mask &= a <= hi
        return (g * mask,)
    return op_output(xp.clip(a, lo, hi).astype(a.dtype, copy=False), backward, x)


def scaled_array(a: Any, scale: float, bias: float, bias_after_scale: bool) -> Any:
    """scale * a + bias (or scale * (a + bias)) in a's dtype; for an integer array paddle
    truncates scale and bias to integers first."""
    if a.dtype.kind in "iu":
        scale, bias = int(scale), int(bias)
    with quiet():  # overflow: inf, as paddle's
        out = a * scale + bias if bias_after_scale else (a + bias) * scale
    return out.astype(a.dtype, copy=False)


def scale(x: Tensor, scale: Any = 1.0, bias: float = 0.0, bias_after_scale: bool = True,
          act: Optional[str] = None, name: Optional[str] = None) -> Tensor:
    """scale * x + bias (``bias_after_scale=False``: scale * (x + bias)), then the activation
    `act` ('relu', 'tanh' or 'sigmoid') if given. A Tensor `scale` is read as its number and
    takes no gradient, as in paddle."""
    x = as_tensor(x)
    factor = float(scale.item() if isinstance(scale, Tensor) else scale)
    if act is not None and act not in _SCALE_ACTS:
        raise ValueError(f"scale: act must be None or one of {sorted(_SCALE_ACTS)}, got {act!r}")
    out = op_output(scaled_array(x._array, factor, bias, bias_after_scale),
                    lambda g: (quietly(operator.mul, g, factor),), x)
    return out if act is None else _SCALE_ACTS[act](out)


def cast(x: Tensor, dtype: DTypeLike) -> Tensor:
    return cast_to(as_tensor(x), convert_dtype(dtype))


def astype(x: Tensor, dtype: DTypeLike) -> Tensor:
    """``Tensor.astype``: ``cast``, except that to x's own dtype it is a view of x, as paddle's
    (``cast`` copies)."""
    x = as_tensor(x)
    target = convert_dtype(dtype)
    if target == x._array.dtype and getattr(x, "placements", None) is None:
        return shape_ops.reshape(x, x.shape)  # a view, recorded as one (in-place ops reach x)
    return cast_to(x, target)


_SCALE_ACTS = {"relu": relu, "tanh": tanh, "sigmoid": sigmoid}


# ---- reductions ----------------------------------------------------------------------------

def kept_shape(shape: tuple, axes: Optional[tuple]) -> tuple:
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


@param_aliases({"input": "x", "dim": "axis"})
@accumulates_in_float32
def sum(x: Tensor, axis: Any = None, dtype: DTypeLike = None, keepdim: bool = False,
        name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:  # noqa: A001
    x = as_tensor(x)
    a = x._array
    axes = reduction_axes(axis, a.ndim, "sum")
    shape, kept = a.shape, kept_shape(a.shape, axes)
    xp = array_module(a)
    with quiet():  # a sum past the dtype's range is inf, unwarned as paddle's
        total = a.sum(axis=axes, keepdims=keepdim, dtype=convert_dtype(dtype) or sum_dtype(a.dtype))

    def backward(g: Any) -> tuple:
        return (xp.broadcast_to(g.reshape(kept), shape),)
    backward.__pycoll_op__ = {"name": "sum", "axes": axes}  # type: ignore[attr-defined]  # for placements
    return delivered(op_output(total, backward, x), out)


@param_aliases({"input": "x", "dim": "axis"})
@accumulates_in_float32
def mean(x: Tensor, axis: Any = None, keepdim: bool = False, name: Optional[str] = None, *,
         dtype: DTypeLike = None, out: Optional[Tensor] = None) -> Tensor:
    """The mean (of x cast to `dtype` first, when given); an integer tensor's mean is truncated
    to its dtype, and a bool tensor's is a bool (whether it is not 0), as paddle's are."""
    x = as_tensor(x)
    if dtype is not None:
        x = cast(x, dtype)
    axes = reduction_axes(axis, x.ndim, "mean")
    x, = placed("mean", x, axes=axes)  # auto-parallel: an uneven split made whole
    a = x._array
    shape, kept = a.shape, kept_shape(a.shape, axes)
    count = a.size // _builtins.max(math.prod(kept), 1) if a.size else 1
    xp = array_module(a)
    with quiet():  # a sum past the dtype's range: inf, unwarned as paddle's
        if a.size and (a.dtype.kind not in "fc" or xp is not np):  # (CuPy's mean: one kernel)
            average = a.mean(axis=axes, keepdims=keepdim)
        else:  # a host float x's sum / count is NumPy's mean without its dispatch (half the time
            # of a small one); over nothing: NaN, without NumPy's "Mean of empty slice" warning (as paddle)
            average = a.sum(axis=axes, keepdims=keepdim) / (count if a.size else 0)
    if a.dtype.kind in "iub":
        average = average.astype(a.dtype)

    def backward(g: Any) -> tuple:
        return (xp.broadcast_to(g.reshape(kept) / count, shape),)
    backward.__pycoll_op__ = {"name": "mean", "axes": axes}  # type: ignore[attr-defined]  # for placements
    return delivered(op_output(average, backward, x), out)


def _extreme(x: Tensor, axis: Any, keepdim: bool, reduce: str) -> Tensor:
    x = as_tensor(x)
    axes = reduction_axes(axis, x.ndim, reduce)
    x, = placed(reduce, x, axes=axes)
    a = x._array
    empty = [i for i in (range(a.ndim) if axes is None else axes) if a.shape[i] == 0]
    if empty:  # paddle refuses it too: there is no extreme of nothing
        raise ValueError(f"{reduce}: cannot reduce x of shape {list(x.shape)} along axis {empty[0]}, of size 0: "
                         f"there is no {reduce}imum of nothing")
    kept = kept_shape(a.shape, axes)
    full = getattr(a, reduce)(axis=axes, keepdims=True)

    def backward(g: Any) -> tuple:
        mask = a == full  # ties share the gradient equally
        with quiet():  # a NaN maximum matches nothing: 0 / 0 = NaN everywhere, as paddle's
            return (g.reshape(kept) * mask / mask.sum(axis=axes, keepdims=True, dtype=g.dtype),)
    backward.__pycoll_op__ = {"name": reduce, "axes": axes}  # type: ignore[attr-defined]  # for placements
    return op_output(full if keepdim else full.reshape([n for i, n in enumerate(a.shape)
                                                     if axes is not None and i not in axes]),
                  backward, x)


def max(x: Tensor, axis: Any = None, keepdim: bool = False, name: Optional[str] = None) -> Tensor:  # noqa: A001
    return _extreme(x, axis, keepdim, "max")


def min(x: Tensor, axis: Any = None, keepdim: bool = False, name: Optional[str] = None) -> Tensor:  # noqa: A001
    return _extreme(x, axis, keepdim, "min")


@param_aliases({"input": "x", "dim": "axis"})
def argmax(x: Tensor, axis: Optional[int] = None, keepdim: bool = False, dtype: DTypeLike = "int64",
           name: Optional[str] = None) -> Tensor:
    """The index of the largest element (of x flattened, or along `axis`; keepdim without an axis
    gives shape [1] * x.ndim, as paddle's), int64 unless `dtype` says int32; the first at a tie."""
    x = as_tensor(x)
    x, = placed("argmax", x, axes=normalize_axes(axis, x.ndim))
    a = x._array
    dt = convert_dtype(dtype)
    if dt not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError(f"argmax: dtype must be int32 or int64, got {dtype!r}")
    out = a.argmax(axis=axis)
    if keepdim:
        out = out.reshape([1] * a.ndim) if axis is None else array_module(a).expand_dims(out, axis)
    return value_output(out.astype(dt), "argmax", x, axes=normalize_axes(axis, a.ndim))


# ---- methods and operators (tensor.py imports no op module: the ops attach themselves) ------

def reflected(fn: Callable[[Any, Any], Tensor]) -> Callable[[Tensor, Any], Tensor]:
    """Tensor's reflected operator for `fn`: `other <op> tensor`."""
    def method(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)
    return method


def _times_operator(reflect: bool) -> Callable[[Tensor, Any], Any]:
    """Tensor's ``*`` (``reflect``: its ``__rmul__``). A list, tuple or str times a 0-d integer
    tensor is Python's repetition (``[0] * n``, through the tensor's ``__index__``, as paddle's),
    not an elementwise product; a str times any other tensor is Python's to refuse."""
    def method(self: Tensor, other: Any) -> Any:
        if isinstance(other, str) or (isinstance(other, (list, tuple)) and self.ndim == 0
                                      and self.dtype.kind in "iu"):
            return NotImplemented
        return multiply(other, self) if reflect else multiply(self, other)
    return method


def _comparison(op: str) -> Callable[[Tensor, Any], Any]:
    """Tensor's comparison operator `op` ('__lt__', ...): elementwise, no gradient."""
    def method(self: Tensor, other: Any) -> Any:
        return _compare(self, other, op)
    return method


_METHODS = {
    "add": add, "subtract": subtract, "multiply": multiply, "divide": divide, "pow": pow,
    "matmul": matmul, "bmm": bmm, "scale": scale, "tanh": tanh, "exp": exp, "log": log, "sqrt": sqrt, "square": square,
    "abs": abs, "relu": relu, "sigmoid": sigmoid, "clip": clip, "cast": cast, "astype": astype,
    "sum": sum, "mean": mean, "max": max, "min": min, "argmax": argmax,
}
_OPERATORS = {
    "__add__": add, "__radd__": reflected(add), "__sub__": subtract,
    "__rsub__": reflected(subtract), "__mul__": _times_operator(False), "__rmul__": _times_operator(True),
    "__truediv__": divide, "__rtruediv__": reflected(divide), "__pow__": pow,
    "__rpow__": reflected(pow), "__matmul__": _matmul_operator,
    "__rmatmul__": lambda x, y: _matmul_operator(x, y, reflect=True),
    "__neg__": neg, "__abs__": abs,
    **{f"__{op}__": _comparison(f"__{op}__") for op in ("lt", "le", "gt", "ge", "eq", "ne")},
}
for _name, _fn in {**_METHODS, **_OPERATORS}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
