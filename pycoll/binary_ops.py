"""Elementwise maths of two tensors: atan2, hypot, logaddexp, fmax/fmin, heaviside and lerp
(also Tensor methods, with paddle's in-place ``hypot_`` and ``lerp_``), and ``clamp``, paddle's
other name for ``clip``.

Operands broadcast and follow paddle's dtype promotion (`pycoll._promotion`); gradients are
summed back to each operand's shape.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from pycoll import math_ops
from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import delivered, needs_grad, op_output
from pycoll.device import array_module
from pycoll.dtypes import float64, is_floating
from pycoll.inplace_ops import clip_, in_place
from pycoll.math_ops import binary_operands, grad_for, grad_meta
from pycoll.tensor import Tensor

Partials = Callable[[Any, Any, Any, Any], tuple]  # (xp, xa, ya, out) -> (d out/dx, d out/dy)


def _binary(fn_name: str, forward: Callable[[Any, Any, Any], Any], partials: Partials, to_float: bool,
            doc: str) -> Callable[..., Tensor]:
    """An elementwise op of x and y: ``forward(xp, xa, ya)``; each operand's gradient is g times its
    partial derivative. ``to_float``: integer operands compute in float32."""
    def op(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
        x, y, xa, ya = binary_operands(x, y, fn_name, to_float)
        mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)
        xp = array_module(xa if isinstance(x, Tensor) else ya)
        with quiet():
            out = forward(xp, xa, ya)

        def backward(g: Any) -> tuple:
            with quiet():
                dx, dy = partials(xp, xa, ya, out)
                return (grad_for(g * dx, mx) if mx else None, grad_for(g * dy, my) if my else None)
        backward.__qualname__ = f"{fn_name}.<locals>.backward"  # errors and create_graph rules name the op
        return op_output(out, backward, x, y)
    op.__name__ = op.__qualname__ = fn_name
    op.__doc__ = doc
    return op


def _hypot_partials(xp: Any, xa: Any, ya: Any, out: Any) -> tuple:
    return xa / out, ya / out


def _logaddexp_partials(xp: Any, xa: Any, ya: Any, out: Any) -> tuple:
    return xp.exp(xa - out), xp.exp(ya - out)


def _atan2_partials(xp: Any, xa: Any, ya: Any, out: Any) -> tuple:
    r2 = xa * xa + ya * ya
    return ya / r2, -xa / r2


def _atan2(xp: Any, xa: Any, ya: Any) -> Any:
    if not is_floating(xp.result_type(xa, ya)):  # paddle: integers give float64
        xa, ya = xp.asarray(xa, float64), xp.asarray(ya, float64)
    return xp.arctan2(xa, ya)


def _chooser(take_x: Callable[[Any, Any, Any], Any]) -> Partials:
    """fmax/fmin's partials: 1 for the operand picked (x at a tie, as paddle's), 0 for the other."""
    def partials(xp: Any, xa: Any, ya: Any, out: Any) -> tuple:
        pick = take_x(xp, xa, ya)
        return pick, ~pick
    return partials


atan2 = _binary("atan2", _atan2, _atan2_partials, False,
                "The angle of the point (y, x) -- atan(x / y) in the right quadrant; integers give float64.")
hypot = _binary("hypot", lambda xp, a, b: xp.hypot(a, b), _hypot_partials, True,
                "sqrt(x ** 2 + y ** 2) elementwise.")
logaddexp = _binary("logaddexp", lambda xp, a, b: xp.logaddexp(a, b), _logaddexp_partials, True,
                    "log(exp(x) + exp(y)), computed stably.")
fmax = _binary("fmax", lambda xp, a, b: xp.fmax(a, b),
               _chooser(lambda xp, a, b: (a >= b) | xp.isnan(b)), False,
               "The elementwise maximum, ignoring NaN (NaN only where both are NaN).")
fmin = _binary("fmin", lambda xp, a, b: xp.fmin(a, b),
               _chooser(lambda xp, a, b: (a <= b) | xp.isnan(b)), False,
               "The elementwise minimum, ignoring NaN (NaN only where both are NaN).")


def _heaviside(xp: Any, a: Any, b: Any) -> Any:
    """1 where a > 0, b where a == 0, else 0 (NaN too, as paddle's), in a's and b's dtype (integers
    stay integers, as paddle's). NumPy's heaviside takes 15x as long and gives float64 for integers."""
    out = xp.broadcast_to(a > 0, np.broadcast_shapes(a.shape, np.shape(b))).astype(xp.result_type(a, b))
    xp.copyto(out, b, where=a == 0)
    return out


heaviside = _binary("heaviside", _heaviside,
                    lambda xp, a, b, out: (xp.zeros((), out.dtype), (a == 0).astype(out.dtype)), False,
                    "0 where x < 0, y where x == 0, 1 where x > 0; x takes a zero gradient.")


@accumulates_in_float32
def lerp(x: Any, y: Any, weight: Any, name: Optional[str] = None) -> Tensor:
    """x + weight * (y - x); `weight` is a number or a tensor (broadcast with x and y). A tensor
    weight gets the gradient y - x (paddle 3.3.1 gives it none)."""
    if isinstance(weight, Tensor):
        return math_ops.add(x, math_ops.multiply(weight, math_ops.subtract(y, x)))
    w = float(weight)
    x, y, xa, ya = binary_operands(x, y, "lerp")
    mx, my = needs_grad(x) and grad_meta(x), needs_grad(y) and grad_meta(y)

    def backward(g: Any) -> tuple:
        return (grad_for(g * (1 - w), mx) if mx else None, grad_for(g * w, my) if my else None)
    with quiet():  # inf - inf: NaN, unwarned as paddle's
        out = xa + w * (ya - xa)
    return op_output(out, backward, x, y)


@param_aliases({"input": "x"})
def clamp(x: Any, min: Optional[float] = None, max: Optional[float] = None,  # noqa: A002 - paddle's names
          name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """paddle's other name for ``clip``."""
    return delivered(math_ops.clip(x, min, max), out)


def hypot_(x: Tensor, y: Any, name: Optional[str] = None) -> Tensor:
    """In place: x = hypot(x, y)."""
    return in_place(x, "hypot_", lambda: hypot(x, y))


def lerp_(x: Tensor, y: Any, weight: Any, name: Optional[str] = None) -> Tensor:
    """In place: x = lerp(x, y, weight)."""
    return in_place(x, "lerp_", lambda: lerp(x, y, weight))


clamp_ = clip_

for _name, _fn in {"atan2": atan2, "hypot": hypot, "logaddexp": logaddexp, "fmax": fmax, "fmin": fmin,
                   "heaviside": heaviside, "lerp": lerp, "clamp": clamp, "hypot_": hypot_, "lerp_": lerp_,
                   "clamp_": clip_}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
