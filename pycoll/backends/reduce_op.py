"""Reduction operators shared by every backend.

As in paddle, ``ReduceOp`` is a namespace of int constants (cheap to pass and to hash on the
hot path of every collective); ``op_name`` turns one back into its name for messages.
"""
from typing import Any, Callable, Dict, Optional, Tuple


class ReduceOp:
    """How a reducing collective combines the ranks' values."""

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3
    AVG = 4


_NAMES = {v: k for k, v in vars(ReduceOp).items() if k.isupper()}


def is_reduce_op(op: object) -> bool:
    return type(op) is int and op in _NAMES


def op_name(op: int) -> str:
    """``"ReduceOp.SUM"`` for ``ReduceOp.SUM``."""
    return f"ReduceOp.{_NAMES[op]}"


def not_a_reduce_op(op: object) -> str:
    return f"op={op!r} is not a ReduceOp; use ReduceOp.SUM, MAX, MIN, PROD or AVG"


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
        try:
            return self._made[(dtype, op)]
        except (KeyError, TypeError):  # TypeError: an unhashable op, refused below
            why = self._why(dtype, op)
            if why is not None:
                raise plan_error(op, why) from None
            plan = self._made[(dtype, op)] = self._make(dtype, op)
            return plan

    def can(self, dtype: Any, op: Any) -> bool:
        return self._why(dtype, op) is None
