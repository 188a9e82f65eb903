"""Reduction operators shared by every backend.

As in paddle, ``ReduceOp`` is a namespace of int constants (cheap to pass and to hash on the
hot path of every collective); ``op_name`` turns one back into its name for messages. Since the
ops are ints, paddle takes any integer that names one (``op=np.int64(1)`` is MAX); so does
pycoll (:func:`reduce_op_value`), but not a bool or a float, which paddle also takes.
"""
import numbers
from typing import Any, Callable, Dict, Optional, Tuple


class ReduceOp:
    """How a reducing collective combines the ranks' values."""

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3
    AVG = 4


_NAMES = {v: k for k, v in vars(ReduceOp).items() if k.isupper()}


def reduce_op_value(op: object) -> Optional[int]:
    """``op`` as the int of a ReduceOp (an int, or another integral number such as NumPy's, that
    names one); None when it names none, or is a bool or not integral."""
    if type(op) is not int:
        if isinstance(op, bool) or not isinstance(op, numbers.Integral):
            return None
        op = int(op)
    return op if op in _NAMES else None


def is_reduce_op(op: object) -> bool:
    return reduce_op_value(op) is not None


def op_name(op: int) -> str:
    """``"ReduceOp.SUM"`` for ``ReduceOp.SUM``."""
    return f"ReduceOp.{_NAMES[op]}"


def not_a_reduce_op(op: object) -> str:
    what = "a bool, not a ReduceOp" if isinstance(op, bool) else "not a ReduceOp"
    return f"op={op!r} is {what}; use ReduceOp.SUM, MAX, MIN, PROD or AVG (the ints {sorted(_NAMES)})"


def plan_error(op: object, why: str) -> Exception:
    """The exception an engine's ``plan`` raises: ValueError for an ``op`` that is not a
    ReduceOp, TypeError (the dtype cannot be reduced with it) otherwise."""
    return TypeError(why) if is_reduce_op(op) else ValueError(why)


class Plans:
    """One engine's reduction plans, each made once per (dtype, op): ``why(dtype, op)`` says why
    the engine cannot reduce ``dtype`` with ``op`` (None when it can), ``make(dtype, op)`` builds
    the plan. ``get`` is the engine's ``plan`` and ``can`` its ``can_reduce``."""

    def __init__(self, why: Callable[[Any, Any], Optional[str]], make: Callable[[Any, Any], Any]):
        self._why, self._make = why, make
        self._made: Dict[Tuple[Any, Any], Any] = {}

    def get(self, dtype: Any, op: Any) -> Any:
        if type(op) is not int:  # keyed by int alone: True and 1.0 would find MAX's plan
            value = reduce_op_value(op)
            if value is None:
                raise ValueError(not_a_reduce_op(op))
            op = value
        try:
            return self._made[(dtype, op)]
        except KeyError:
            why = self._why(dtype, op)
            if why is not None:
                raise plan_error(op, why) from None
            plan = self._made[(dtype, op)] = self._make(dtype, op)
            return plan

    def can(self, dtype: Any, op: Any) -> bool:
        return self._why(dtype, op) is None
