"""paddle 3.3's torch-style arithmetic names: ``div`` (with ``rounding_mode`` and ``out``), ``sub``
and ``add`` (with ``alpha`` and ``out``), ``true_divide``, and the in-place ``div_`` / ``sub_``;
also the Tensor methods ``div``, ``sub`` and ``true_divide`` (paddle's are these same functions).
``pycoll.add``, ``pycoll.subtract`` and ``pycoll.divide`` are ``add``, ``sub`` and ``div``, as
paddle 3.3's take ``alpha`` / ``rounding_mode``.

They are compositions of pycoll's ops (divide, the rounded division, subtract, multiply), which
give them their gradients: the rounded quotients take none (zero), as in paddle.
"""
from __future__ import annotations

from typing import Any, Optional

from pycoll import math_ops
from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import delivered
from pycoll.elementwise_ops import rounded_divide
from pycoll.inplace_ops import divide_, subtract_
from pycoll.tensor import Tensor

div_, sub_ = divide_, subtract_  # paddle's in-place short names


@param_aliases({"input": "x", "other": "y"})
def div(x: Any, y: Any, name: Optional[str] = None, *, rounding_mode: Optional[str] = None,
        out: Optional[Tensor] = None) -> Tensor:
    """x / y (integers give float32), or with rounding_mode 'floor' / 'trunc' the quotient rounded
    towards minus infinity / zero in the operands' dtype (no gradient then). `out` also receives
    the result."""
    if rounding_mode not in (None, "floor", "trunc"):
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    result = math_ops.divide(x, y) if rounding_mode is None else rounded_divide(x, y, rounding_mode)
    return delivered(result, out, "div")


def true_divide(input: Any, other: Any, *, out: Optional[Tensor] = None) -> Tensor:  # noqa: A002 - paddle's
    """input / other, true division (integers give float32)."""
    return delivered(math_ops.divide(input, other), out, "true_divide")


@param_aliases({"input": "x", "other": "y"})
def sub(x: Any, y: Any, name: Optional[str] = None, *, alpha: Any = 1, out: Optional[Tensor] = None) -> Tensor:
    """x - alpha * y. An integer x takes an integer alpha only (paddle refuses to mix them)."""
    return delivered(math_ops.subtract(x, _times_alpha(x, y, alpha, "sub")), out, "sub")


@param_aliases({"input": "x", "other": "y"})
def add(x: Any, y: Any, name: Optional[str] = None, *, alpha: Any = 1, out: Optional[Tensor] = None) -> Tensor:
    """x + alpha * y (paddle 3.3's ``paddle.add``). An integer x takes an integer alpha only."""
    result = math_ops.add(x, _times_alpha(x, y, alpha, "add"))
    delivered(result, out, "add")
    return result if out is None else out  # as pycoll.add's out= always gave


def _times_alpha(x: Any, y: Any, alpha: Any, fn: str) -> Any:
    """``alpha * y``, checked as paddle checks ``alpha`` (a number; an integer for an integer x)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise TypeError(f"{fn}: alpha must be a number, got {type(alpha).__name__}")
    if isinstance(x, Tensor) and x.dtype.kind in "iu" and not float(alpha).is_integer():
        raise TypeError(f"{fn}: alpha must be an integer for an integer x (dtype {x.dtype}), got {alpha!r}")
    if isinstance(x, Tensor) and x.dtype.kind in "iu":
        alpha = int(alpha)
    return y if alpha == 1 else math_ops.multiply(y, alpha) if isinstance(y, Tensor) else y * alpha


# pycoll.add / subtract / divide are these (paddle 3.3's take alpha or rounding_mode, and out):
# they come with their out= already (pycoll/__init__.py's loop leaves them as they are)
for _fn in (add, sub, div):
    _fn.__pycoll_out__ = True
del _fn

Tensor.div, Tensor.sub, Tensor.true_divide = div, sub, true_divide
Tensor.add, Tensor.subtract, Tensor.divide = add, sub, div  # paddle 3.3's take alpha / rounding_mode too
