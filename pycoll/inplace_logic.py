"""paddle's in-place forms of the comparisons (``equal_``, ``not_equal_``, ``less_than_``,
``less_``, ``less_equal_``, ``greater_than_``, ``greater_equal_``), the logical ops
(``logical_and_``, ``logical_or_``, ``logical_xor_``, ``logical_not_``) and the bit ops
(``bitwise_invert_``, ``bitwise_left_shift_``, ``bitwise_right_shift_``), with ``addmm_`` and
``masked_scatter_``: functions (``pycoll.equal_``...) and Tensor methods.

``addmm_`` and ``masked_scatter_`` follow `pycoll.inplace_ops.in_place` (the gradient flows
through the op; a leaf that takes a gradient is refused). The others give a result that takes no
gradient, so, as in paddle, they run on any tensor (a leaf that takes a gradient too: its flag
stays as it was) and x takes the result's dtype, bool for the comparisons and logical ops; the
result may not broadcast beyond x's shape (ValueError).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from pycoll import _graph
from pycoll._tensor_ops import as_tensor
from pycoll.bit_operators import bitwise_invert, bitwise_left_shift, bitwise_right_shift
from pycoll.elementwise_ops import equal
from pycoll.inplace_ops import in_place
from pycoll.logic_ops import (greater_equal, greater_than, less_equal, less_than, logical_and, logical_not, logical_or,
                              logical_xor, not_equal)
from pycoll.product_ops import addmm
from pycoll.search_ops import masked_scatter
from pycoll.tensor import Tensor


def _value_in_place(x: Tensor, op: str, compute: Callable[[], Tensor]) -> Tensor:
    """x takes ``compute()``, a result outside the graph: written into x's memory where dtype and
    shape agree, else x takes its array; x leaves the graph (its stop_gradient stays, as paddle's)."""
    x = as_tensor(x)
    with _graph.no_grad():
        in_place(x, op, compute)
    x.grad_node, x.output_index = None, 0
    return x


def _binary_form(op: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def form(x: Tensor, y: Any, name: Optional[str] = None) -> Tensor:
        return _value_in_place(x, form.__name__, lambda: op(x, y))
    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"In place: x = {op.__name__}(x, y), which takes x's place (and its dtype, bool)."
    return form


equal_ = _binary_form(equal, "equal_")
not_equal_ = _binary_form(not_equal, "not_equal_")
less_than_ = _binary_form(less_than, "less_than_")
less_ = _binary_form(less_than, "less_")
less_equal_ = _binary_form(less_equal, "less_equal_")
greater_than_ = _binary_form(greater_than, "greater_than_")
greater_equal_ = _binary_form(greater_equal, "greater_equal_")
logical_and_ = _binary_form(logical_and, "logical_and_")
logical_or_ = _binary_form(logical_or, "logical_or_")
logical_xor_ = _binary_form(logical_xor, "logical_xor_")


def logical_not_(x: Tensor, name: Optional[str] = None) -> Tensor:
    """In place: x = logical_not(x), a bool tensor."""
    return _value_in_place(x, "logical_not_", lambda: logical_not(x))


def bitwise_invert_(x: Tensor, name: Optional[str] = None) -> Tensor:
    """In place: x = ~x (bool or integer x)."""
    return _value_in_place(x, "bitwise_invert_", lambda: bitwise_invert(x))


def bitwise_left_shift_(x: Tensor, y: Any, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                        name: Optional[str] = None) -> Tensor:
    """In place: x = x << y (integer tensors; see ``pycoll.bitwise_left_shift``)."""
    return _value_in_place(x, "bitwise_left_shift_", lambda: bitwise_left_shift(x, y, is_arithmetic))


def bitwise_right_shift_(x: Tensor, y: Any, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                         name: Optional[str] = None) -> Tensor:
    """In place: x = x >> y, arithmetic or logical (see ``pycoll.bitwise_right_shift``)."""
    return _value_in_place(x, "bitwise_right_shift_", lambda: bitwise_right_shift(x, y, is_arithmetic))


def addmm_(input: Tensor, x: Tensor, y: Tensor, beta: float = 1.0, alpha: float = 1.0,  # noqa: A002
           name: Optional[str] = None) -> Tensor:
    """In place: input = beta * input + alpha * (x @ y); the gradient flows to all three."""
    return in_place(input, "addmm_", lambda: addmm(input, x, y, beta, alpha))


def masked_scatter_(x: Tensor, mask: Any, value: Any, name: Optional[str] = None) -> Tensor:
    """In place: x = masked_scatter(x, mask, value), value's leading elements written where mask holds."""
    return in_place(x, "masked_scatter_", lambda: masked_scatter(x, mask, value))


_FORMS = (equal_, not_equal_, less_than_, less_, less_equal_, greater_than_, greater_equal_, logical_and_,
          logical_or_, logical_xor_, logical_not_, bitwise_invert_, bitwise_left_shift_, bitwise_right_shift_,
          addmm_, masked_scatter_)
for _fn in _FORMS:
    setattr(Tensor, _fn.__name__, _fn)
del _fn
