"""More elementwise ops: maximum/minimum, floor (and truncating) division and remainder
(`x // y`, `x % y`), `equal`, `allclose`, `positive` and the value tests `isnan`, `isinf`, `isfinite`,
`isneginf`, `isposinf`, `isreal` (also Tensor methods).

Operand dtypes follow paddle's promotion rules (`pycoll._promotion`), as `math_ops`' do.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._promotion import promoted
from pycoll._tensor_ops import as_tensor, check_broadcast, needs_grad, op_output, operand, paired, placed, value_output
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.math_ops import binary_operands, grad_for, grad_meta, reflected
from pycoll.tensor import Tensor


def _pick(x: Any, y: Any, name: str, take_x: Callable[[Any, Any], Any]) -> Tensor:
    """maximum/minimum: x where take_x(xa, ya) holds, y where the other does; a tie gives each
    operand half the gradient (paddle's)."""
    x, y, xa, ya = binary_operands(x, y, name)
    mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)
    xp = array_module(xa if isinstance(x, Tensor) else ya)
    out = getattr(xp, name)(xa, ya)

    def backward(g: Any) -> tuple:
        share = xp.where(xa == ya, 0.5, take_x(xa, ya)).astype(g.dtype)
        return (grad_for(g * share, mx) if mx else None,
                grad_for(g * (1 - share), my) if my else None)
    backward.__pycoll_op__ = {"name": name}  # type: ignore[attr-defined]
    return op_output(out, backward, x, y)


@param_aliases({"input": "x", "other": "y"})
def maximum(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """The elementwise maximum (NaN wins, as in paddle)."""
    return _pick(x, y, "maximum", lambda a, b: a > b)


@param_aliases({"input": "x", "other": "y"})
def minimum(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """The elementwise minimum (NaN wins, as in paddle)."""
    return _pick(x, y, "minimum", lambda a, b: a < b)


@param_aliases({"input": "x", "other": "y"})
def floor_divide(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """x // y, rounded towards minus infinity; its gradient is zero (paddle's)."""
    return rounded_divide(x, y, "floor")


def rounded_divide(x: Any, y: Any, rounding_mode: str) -> Tensor:
    """x / y rounded towards minus infinity (rounding_mode 'floor') or zero ('trunc'), in the
    operands' dtype (integers stay integers: paddle's divide with a rounding_mode); its
    gradient is zero."""
    if rounding_mode not in ("floor", "trunc"):
        raise ValueError(f"rounding_mode must be 'floor' or 'trunc', got {rounding_mode!r}")
    x, y, xa, ya = binary_operands(x, y, "floor_divide")
    xp = array_module(xa if isinstance(x, Tensor) else ya)
    if xp.result_type(xa, ya).kind == "c":  # (NumPy has none, and neither has paddle's CPU build)
        raise TypeError("floor_divide (//): complex numbers have no floor division; divide them (x / y) or take "
                        "it of the real and imaginary parts")
    shapes = [v._array.shape if isinstance(v, Tensor) else None for v in (x, y)]
    dtypes = [v._array.dtype if isinstance(v, Tensor) else None for v in (x, y)]
    with quiet():  # float x // 0: +-inf or NaN, unwarned as paddle's
        out = xp.floor_divide(xa, ya)
        if rounding_mode == "trunc":  # a negative quotient that was rounded down goes one up
            out = xp.where((out < 0) & (out * ya != xa), out + 1, out)
    _refuse_integer_zero(out, ya, "floor_divide" if rounding_mode == "floor" else "divide")

    def backward(g: Any) -> tuple:
        return tuple(None if s is None else xp.zeros(s, d) for s, d in zip(shapes, dtypes))
    return op_output(out, backward, x, y)


@param_aliases({"input": "x", "other": "y"})
def remainder(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """x % y with the sign of y (Python's and paddle's); d/dx = 1, d/dy = -floor(x / y)."""
    x, y, xa, ya = binary_operands(x, y, "remainder")
    mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)
    xp = array_module(xa if isinstance(x, Tensor) else ya)
    kind = xp.result_type(xa, ya).kind
    if kind == "c":  # (NumPy has no complex remainder; paddle's rounds each part its own way)
        raise TypeError("remainder (%): complex numbers have no remainder; take it of the real and imaginary "
                        "parts (x.real() % y, x.imag() % y)")

    def backward(g: Any) -> tuple:
        with quiet():  # y == 0: x / 0 is +-inf or NaN, as paddle's
            return (grad_for(g, mx) if mx else None,
                    grad_for(-g * xp.floor(xa / ya), my) if my else None)
    with quiet():  # float x % 0 and inf % y: NaN, unwarned as paddle's
        out = _float_remainder(xp, xa, ya) if kind == "f" else xp.remainder(xa, ya)
    _refuse_integer_zero(out, ya, "remainder")
    return op_output(out, backward, x, y)


def _float_remainder(xp: Any, a: Any, b: Any) -> Any:
    """paddle's float remainder: fmod, moved by b where its sign is not b's (a zero keeps x's sign,
    as paddle's; NumPy gives it b's), in two vector passes: NumPy's own ufunc takes 5x as long (a
    divmod per element)."""
    r = xp.fmod(a, b)
    return xp.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)


def _refuse_integer_zero(out: Any, ya: Any, fn: str) -> None:
    """ValueError when an integer division's divisor ``ya`` holds a zero: paddle refuses it
    ("Integer division by zero") where NumPy gives 0. Float divisions are not checked (inf/NaN)."""
    if out.dtype.kind in "iu" and bool((ya == 0).any() if hasattr(ya, "any") else ya == 0):
        raise ValueError(f"{fn}: y holds a zero; integer division by zero is refused, as paddle refuses it "
                         f"(x and y give dtype {out.dtype}): use nonzero divisors or float operands")


mod = floor_mod = remainder


@param_aliases({"input": "x", "other": "y"})
def equal(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """x == y elementwise, a bool tensor (no gradient)."""
    x, y = paired(as_tensor(x), operand(y))  # auto-parallel: a whole y cut as a split x
    xa, ya = promoted(x, y, "equal")
    check_broadcast("equal", "x", xa.shape, "y", getattr(ya, "shape", ()))  # y: maybe a number
    return value_output(xa == ya, "compare", x, y)


def allclose(x: Any, y: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False,
             name: Optional[str] = None) -> Tensor:
    """Whether |x - y| <= atol + rtol * |y| everywhere, as a 0-d bool tensor."""
    x, y = placed("allclose", as_tensor(x), as_tensor(y), whole=True)  # auto-parallel: one answer for the whole
    xa, ya = promoted(x, y, "allclose")
    xp = array_module(xa)
    with quiet():  # inf - inf inside: NaN, unwarned
        ok = xp.allclose(xa, ya, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return value_output(xp.asarray(ok, dtype=bool), "allclose", x, y)


def _test(name: str) -> Any:
    def test(x: Any) -> Tensor:
        x = as_tensor(x)
        return value_output(getattr(array_module(x._array), name)(x._array), name, x)
    test.__name__ = test.__qualname__ = name
    test.__doc__ = f"Elementwise {name}, a bool tensor (no gradient)."
    return test


isnan, isinf, isfinite = (param_aliases({"input": "x"})(_test(n)) for n in ("isnan", "isinf", "isfinite"))


def _signed_inf(x: Any, name: str, sign: int) -> Tensor:
    x = as_tensor(x)
    a = x._array
    if a.dtype.kind == "c":
        raise TypeError(f"{name}: x must be a real tensor, got dtype {a.dtype}")
    xp = array_module(a)
    with quiet():  # bfloat16's comparisons warn of a NaN
        found = (xp.isinf(a) & ((a < 0) if sign < 0 else (a > 0))) if is_floating(a.dtype) else xp.zeros(a.shape, bool)
    return value_output(found, name, x)


def isneginf(x: Any, name: Optional[str] = None) -> Tensor:
    """Elementwise x == -inf, a bool tensor (all False for an integer x; no gradient)."""
    return _signed_inf(x, "isneginf", -1)


def isposinf(x: Any, name: Optional[str] = None) -> Tensor:
    """Elementwise x == +inf, a bool tensor (all False for an integer x; no gradient)."""
    return _signed_inf(x, "isposinf", 1)


def isreal(x: Any, name: Optional[str] = None) -> Tensor:
    """Elementwise: is the imaginary part zero (True everywhere for a real x; no gradient)."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    return value_output(a.imag == 0 if a.dtype.kind == "c" else xp.ones(a.shape, bool), "isreal", x)


def positive(x: Any, name: Optional[str] = None) -> Tensor:
    """+x: x itself (paddle's), refused for a bool x."""
    x = as_tensor(x)
    if x._array.dtype.kind == "b":
        raise TypeError("positive: x must not be a bool tensor (the + operator on bool is not supported)")
    return x


for _name, _fn in {
    "maximum": maximum, "minimum": minimum, "floor_divide": floor_divide, "remainder": remainder,
    "mod": remainder, "floor_mod": remainder, "equal": equal, "allclose": allclose,
    "isnan": isnan, "isinf": isinf, "isfinite": isfinite, "isneginf": isneginf, "isposinf": isposinf,
    "isreal": isreal, "positive": positive,
    "__floordiv__": floor_divide, "__rfloordiv__": reflected(floor_divide),
    "__mod__": remainder, "__rmod__": reflected(remainder),
}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
